# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Devices to ensure (no Ansible imports; I/O only through the callables given): validating and
normalising the requested devices, planning against the device list, and the results and messages
of nac_device.

The flow of ``ensure_devices``: validate every requested item (no request yet), list the devices once,
``plan`` an action for each (leave an existing device, create a missing one, or fail), then let the
apply engine (apply.py) carry out the creations (device_creation.py: the operation of the verb CREATE) and
settle what is uncertain from the device list. Every item ends existing, created (or "would be
created" in check mode) or failed with its error.

The device is one declared resource (nac/resources.py): ``ensure`` and ``plan`` read the declaration (its
states, its verbs, its fields), so that another resource or another verb goes through the same code. The checks
of a requested item are in record_specs.py, named here as before.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from typing import Callable, Dict, List, Optional, Sequence

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown as quoted
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    lookalike_text,
    lookalikes,
    repeated_ids,
    repeated_ids_warning,
    stored_forms,
    stored_text,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.resources import (
    CREATE,
    DEVICE,
    SHOWN,
    Resource,
    normalise_ip,
    normalise_mac,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import DONE, FAILED, PENDING, Action, apply
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_creation import name_stored_form
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.operations import operations
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.record_specs import (
    InvalidRequest,
    device_spec,
    device_specs,
    differences,
    item_problems,
)

# The names other files import from here, the checks of a requested item (record_specs.py) among them.
__all__ = (
    "ABSENT",
    "CREATE",
    "CREATED",
    "EXACT",
    "EXISTING",
    "FAILED",
    "GUARD",
    "LEAVE",
    "PENDING",
    "InvalidRequest",
    "Outcome",
    "device_spec",
    "device_specs",
    "differences",
    "ensure",
    "ensure_devices",
    "failure_message",
    "item_problems",
    "normalise_ip",
    "normalise_mac",
    "plan",
    "summary",
    "warnings_of",
)

# The verbs of a plan: a write the resource declares (CREATE, carried out by its operation: tasks/operations.py),
# or LEAVE, nothing to do. A record a wanted state leaves missing ends ABSENT.
LEAVE = "leave"
CREATED, EXISTING, ABSENT = DONE, "existing", "absent"
MESSAGE_HOSTS = 10
MESSAGE_REASONS = 3  # reasons a failure message names (each with its first MESSAGE_HOSTS hostnames)
MESSAGE_REASON_CHARS = 300  # characters of a reason a failure message shows at most

LOOKALIKE_NOT_CREATED = (
    "%s; not created: a NAC that compares names loosely would refuse it or confuse the two. Rename one of them, "
    "or create it in the NAC"
)

# nac_device's stored_names: GUARD, a device to create whose probable stored form is listed is not created;
# EXACT, names are compared as the same name only (hostnames.hostname_key).
GUARD, EXACT = "guard", "exact"
STORED_NOT_CREATED = (
    "not created: %s, probably this very device as stored by a NAC that shortens names (creating it again would "
    "add one more device on every run). If it is, use the stored name %s as the hostname; if it is another "
    "device, set stored_names: exact to create %s beside it"
)


class Outcome(Action):
    """What to do to one requested device (``verb``, from ``plan``), and what became of it."""

    def __init__(self, spec, verb=None, resource=DEVICE):
        super(Outcome, self).__init__(spec[resource.name_field], verb)
        self.spec, self.name_field = spec, resource.name_field
        self.stored_before = set()  # ids listed under a probable stored form of its name when planned
        self.stored_after = []  # listed devices under such a form that appeared since (device_creation)

    @property
    def hostname(self):
        """Return the device's hostname, its name (nac_device's word for it)."""
        return self.name

    def entry(self) -> dict:
        """Return the item's entry in the bulk result: its id, its name (under its resource's name field), the rest."""
        entry = {"id": self.id, self.name_field: self.name, "changed": self.changed}
        if self.error:
            entry["error"] = self.error
            if self.failure:
                entry["failure"] = self.failure
        if self.warnings:
            entry["warnings"] = list(self.warnings)
        return entry


def plan(
    specs: Sequence[dict],
    records: Sequence,
    stored_names: str = GUARD,
    fail_on_drift: bool = False,
    resource: Resource = DEVICE,
    state: str = "present",
) -> List[Outcome]:
    """Give each spec one action against the list (pure), as the wanted ``state`` of ``resource`` says
    (resources.Wanted): for a device present, LEAVE an existing device, CREATE a missing one (pending until
    applied), or fail.

    A device exists when a listed device has the same name (hostnames.hostname_key). A listed name that
    matches only by a looser rule (a lookalike) is never taken for it: a device to create whose name has
    a lookalike fails, unwritten, naming it with its id; an existing one gets a warning naming it. With
    ``stored_names`` GUARD, a device to create whose probable stored form is listed (hostnames.stored_forms:
    its first DNS label, without or with a trailing dot) fails, unwritten, naming it with its id. With
    ``fail_on_drift``, an existing device that visibly differs from its spec fails naming each field, instead of
    getting a warning. A state whose verb for a listed record is a write (a deletion) gives that verb, with the
    listed id; one with no verb for a missing record leaves it ABSENT.
    """
    wanted, noun = resource.states[state], resource.noun
    index = resource.by_name(records)
    alike = lookalikes(records, [spec[resource.name_field] for spec in specs], resource.name_field)
    outcomes = []
    for spec in specs:
        outcome = Outcome(spec, wanted.missing, resource)
        found = index.get(resource.name_key(outcome.name), [])
        similar = alike.get(outcome.name)
        if len(found) > 1:
            ids = ", ".join(str(record[resource.key]) for record in found)
            outcome.fail(
                "%d %s are named %s (ids %s): the API does not promise unique hostnames and this one is "
                "ambiguous; remove or rename the extra %s in the NAC" % (len(found), noun, outcome.name, ids, noun)
            )
        elif found:
            _listed(outcome, found[0], similar, wanted, fail_on_drift, resource)
        elif wanted.missing is None:
            outcome.verb, outcome.state = LEAVE, ABSENT
        elif similar:
            outcome.fail(LOOKALIKE_NOT_CREATED % lookalike_text(outcome.name, similar, resource.name_field))
        else:
            _guard_stored(outcome, index, stored_names, resource)
        outcomes.append(outcome)
    return outcomes


def _listed(outcome, record, similar, wanted, fail_on_drift, resource):
    """Plan a wanted record that is listed: its state's verb on the listed id, or LEAVE it existing."""
    if wanted.listed is not None:
        outcome.verb, outcome.id, outcome.record = wanted.listed, record[resource.key], record
        return
    _existing(outcome, record, fail_on_drift, resource)
    if similar:
        outcome.warnings.append(
            "%s: it is not %s (id %s), which exists"
            % (
                lookalike_text(outcome.name, similar, resource.name_field),
                quoted(resource.name_of(record)),
                record["id"],
            )
        )


def _guard_stored(outcome, index, stored_names, resource):
    """Keep the ids listed under a probable stored form of a missing record's name, and fail its creation when
    ``stored_names`` is GUARD and there are any."""
    name = outcome.name
    stored = [(record, relation) for key, relation in stored_forms(name) for record in index.get(key, ())]
    outcome.stored_before = set(record[resource.key] for record, _relation in stored)
    if stored and stored_names == GUARD:
        names = " or ".join(sorted(set(quoted(resource.name_of(record)) for record, _relation in stored)))
        outcome.fail(STORED_NOT_CREATED % (stored_text(stored, resource.name_field), names, name))


def _existing(outcome, record, fail_on_drift=False, resource=DEVICE):
    """Leave a listed record EXISTING, with a warning, or a failure under ``fail_on_drift``, when it differs."""
    outcome.verb, outcome.state, outcome.id, outcome.record = LEAVE, EXISTING, record[resource.key], record
    differ = differences(outcome.spec, record, resource)
    if differ and fail_on_drift:
        outcome.fail(
            "device %s (id %s) differs from the request: %s (fail_on_drift). Nothing was changed: the API cannot "
            "update a device, change it in the NAC itself or change the request"
            % (quoted(record["hostname"]), record["id"], "; ".join(differ))
        )
        outcome.id, outcome.record = record["id"], record
    elif differ:
        outcome.warnings.append(
            "device %s (id %s) exists but differs from the request: %s. Nothing was "
            "changed: the API cannot update a device, change it in the NAC itself"
            % (quoted(record["hostname"]), record["id"], "; ".join(differ))
        )


def ensure_devices(
    specs: Sequence[dict],
    list_devices: Callable,
    create: Callable,
    concurrency: int = 8,
    check_mode: bool = False,
    warn: Optional[Callable] = None,
    stored_names: str = GUARD,
    fail_on_drift: bool = False,
    **settling,
) -> List[Outcome]:
    """Make every spec's device exist; return one Outcome per spec, in request order.

    ``list_devices()`` returns the device records and ``create(body)`` POSTs one device and returns
    the reply dict or None; both raise NacError. The first list failing fails the whole call (before
    anything is written). In check mode ``create`` is never called: the devices to create are
    reported CREATED with the would-be body as their record.

    Every creation is decided from the server's state, never guessed from an error: the apply engine
    (apply.apply), given ``concurrency``, ``check_mode`` and ``settling``, its other arguments of the same
    names (``settle_timeout``, ``max_resends``, ``should_stop``, ``clock``, ``sleep``). ``warn(message)`` is
    told of ids the list shows for several devices. ``stored_names`` and ``fail_on_drift``: see ``plan``.
    """
    writes = {CREATE: create}
    how = dict(concurrency=concurrency, check_mode=check_mode, warn=warn, stored_names=stored_names)
    return ensure(DEVICE, specs, list_devices, writes, fail_on_drift=fail_on_drift, **how, **settling)


def ensure(
    resource: Resource,
    specs: Sequence[dict],
    list_records: Callable,
    writes: Dict[str, Callable],
    state: str = "present",
    concurrency: int = 8,
    check_mode: bool = False,
    warn: Optional[Callable] = None,
    stored_names: str = GUARD,
    fail_on_drift: bool = False,
    **settling,
) -> List[Outcome]:
    """Bring every spec's record of ``resource`` to the wanted ``state``; return one Outcome per spec, in request
    order. ``list_records()`` reads the list; ``writes`` is {verb: the callable that sends one write of it}
    (tasks/operations.py). The rest: as ``ensure_devices``, which is this for the device present."""
    if not specs:
        return []
    records = list_records()
    repeated = repeated_ids_warning(repeated_ids(records))
    if repeated and warn is not None:
        warn(repeated)
    outcomes = plan(specs, records, stored_names, fail_on_drift, resource, state)
    _check_complete([outcome for outcome in outcomes if outcome.state == PENDING], resource)
    outcomes = apply(outcomes, operations(resource, writes), list_records, concurrency, check_mode, **settling)
    for outcome in outcomes:
        name_stored_form(outcome, resource)
    return outcomes


def _check_complete(pending, resource=DEVICE):
    """Raise InvalidRequest naming every record to create that lacks a field its creation needs."""
    incomplete = [
        "%s does not exist and needs %s to be created" % (o.name, " and ".join(needs))
        for o, needs in ((o, [key for key in resource.needed if key not in o.spec]) for o in pending)
        if needs and resource.verb(o.verb).settles == SHOWN
    ]
    if incomplete:
        raise InvalidRequest("Invalid %s request, nothing was created: %s" % (resource.name, "; ".join(incomplete)))


def summary(outcomes: Sequence[Outcome], resource: Resource = DEVICE) -> Dict[str, int]:
    """Count the outcomes per final state, for the bulk result: the records each write verb changed, under the name
    its declaration counts them by (``created``), then ``existing`` and ``failures`` (``failed`` is Ansible's own
    key)."""
    counts = dict((verb.counted, 0) for verb in resource.verbs.values() if verb.counted)
    for outcome in outcomes:
        if outcome.state == DONE:
            counts[resource.verb(outcome.verb).counted] += 1
    counts["existing"] = sum(1 for outcome in outcomes if outcome.state == EXISTING)
    counts["failures"] = sum(1 for outcome in outcomes if outcome.state == FAILED)
    return counts


def warnings_of(outcomes: Sequence[Outcome], limit: int = MESSAGE_HOSTS) -> List[str]:
    """Gather the items' warnings, at most ``limit`` of them and a line saying how many more there are, so that a
    large task does not flood the output."""
    warnings = [warning for outcome in outcomes for warning in outcome.warnings]
    if len(warnings) > limit:
        more = len(warnings) - limit
        warnings[limit:] = ["%d more warnings about other devices: see the entries in devices" % more]
    return warnings


def failure_message(outcomes: Sequence[Outcome], resource: Resource = DEVICE) -> Optional[str]:
    """Say what failed in one short message: the counts, then the failed names grouped by reason, the first
    MESSAGE_REASONS reasons (the first MESSAGE_HOSTS names of each) and how many more; None when nothing failed.
    Every item's outcome is in the result's ``devices``."""
    reasons = {}
    for outcome in outcomes:
        if outcome.state == FAILED:
            reasons.setdefault(outcome.error, []).append(outcome.name)
    if not reasons:
        return None
    counts = summary(outcomes, resource)
    noun, parts = resource.noun, []
    for reason, hosts in list(reasons.items())[:MESSAGE_REASONS]:
        named = ", ".join(hosts[:MESSAGE_HOSTS])
        if len(hosts) > MESSAGE_HOSTS:
            named += " and %d more" % (len(hosts) - MESSAGE_HOSTS)
        parts.append("%s: %s" % (named, quoted(reason, MESSAGE_REASON_CHARS)))
    if len(reasons) > MESSAGE_REASONS:
        others = list(reasons.values())[MESSAGE_REASONS:]
        more = sum(len(hosts) for hosts in others)
        parts.append("%d more %s failed for %d other reasons" % (more, noun, len(others)))
    done = ", ".join("%d %s" % (count, name) for name, count in counts.items() if name != "failures")
    message = "%d of %d %s failed (%s): %s" % (counts["failures"], len(outcomes), noun, done, " | ".join(parts))
    if len(outcomes) > 1:
        message += ". Every %s's outcome, with its error, is in the result's %s (register the task)" % (
            resource.name,
            noun,
        )
    return message
