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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import ipaddress
import re

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown as quoted
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    hostname_key,
    hostname_problem,
    hostname_value,
    index_by_hostname,
    lookalike_text,
    lookalikes,
    repeated_ids,
    repeated_ids_warning,
    stored_forms,
    stored_text,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import DONE, FAILED, PENDING, Action, apply
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_creation import creation, name_stored_form

# The verbs of a plan: CREATE is carried out by the operation device_creation.creation; LEAVE is nothing to do.
# A deletion would be one more verb and its operation (docs/docsite/rst/developing.rst).
CREATE, LEAVE = "create", "leave"
CREATED, EXISTING = DONE, "existing"
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

_MAC = re.compile(
    r"^(?:[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){4}|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}"
    r"|[0-9a-f]{12})$",
    re.IGNORECASE,
)
_DOTTED_QUAD = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")


class InvalidRequest(ValueError):
    """The requested devices cannot be sent as they are; the message lists every problem."""


def normalise_mac(value):
    """'00-1A-2B-3C-4D-5E', '001a.2b3c.4d5e', '001A2B3C4D5E', any case -> '00:1a:2b:3c:4d:5e'."""
    text = value.strip() if isinstance(value, str) else ""
    if not _MAC.match(text):
        raise ValueError(
            "'%s' is not a MAC address (expected six colon-separated hex pairs such as 00:1a:2b:3c:4d:5e; "
            "00-1a-2b-3c-4d-5e, 001a.2b3c.4d5e and 001a2b3c4d5e are accepted too)" % (value,)
        )
    digits = re.sub(r"[^0-9a-f]", "", text.lower())
    return ":".join(digits[i : i + 2] for i in range(0, 12, 2))


def normalise_ip(value):
    """An IPv4 address in dotted notation, e.g. '10.20.0.15' (no other spelling is accepted)."""
    text = value.strip() if isinstance(value, str) else ""
    try:
        if _DOTTED_QUAD.match(text):
            return str(ipaddress.IPv4Address(text))
    except ValueError:
        pass
    raise ValueError("'%s' is not an IPv4 address in dotted notation (such as 10.20.0.15)" % (value,))


def device_spec(item):
    """One requested device, validated and normalised: ``(spec, problems)``.

    ``spec`` has hostname, and group, profile, macs and ips only when given (an empty list counts
    as not given: the absence of macs / ips selects the server's creation rule).
    """
    problems = []
    spec = dict(hostname=hostname_value(item.get("hostname")))
    problem = hostname_problem(spec["hostname"])
    if problem:
        problems.append("hostname %s" % problem)
    for key in ("group", "profile"):
        if item.get(key) is None:
            continue  # needed only to create the device: checked once the device list is known
        if not isinstance(item[key], str) or not item[key].strip():
            problems.append("%s must not be empty" % key)
        spec[key] = item[key]
    for key, normalise in (("macs", normalise_mac), ("ips", normalise_ip)):
        values = []
        for value in item.get(key) or ():
            try:
                value = normalise(value)
            except ValueError as error:
                problems.append("%s: %s" % (key, error))
                continue
            if value in values:
                problems.append("%s: %s is given twice" % (key, value))
            values.append(value)
        if values:
            spec[key] = values
    return spec, problems


def item_problems(items, keys, name="devices", strict=False):
    """What is wrong with the items of the bulk option ``name`` as given (before Ansible reads them as mappings of
    ``keys``), naming each item by its index and what to write instead; None when nothing is (what Ansible reads
    as a mapping, a JSON or ``key=value`` string, passes unless ``strict``: then only a mapping is a device)."""
    if not isinstance(items, list):
        return None
    problems = []
    for index, item in enumerate(items):
        where = "%s[%d]" % (name, index)
        if isinstance(item, dict):
            problems.extend("%s %s" % (where, problem) for problem in _key_problems(item, keys))
        elif strict or not (isinstance(item, str) and (item.lstrip().startswith("{") or "=" in item)):
            problems.append("%s is %s, not a device" % (where, _described(item)))
    if not problems:
        return None
    example = "%s: [{hostname: cam-01, group: Cameras, profile: Camera}]" % name
    return "%s. Each item of %s is one device, a mapping with the keys %s (hostname required), for example: %s" % (
        "; ".join(problems),
        name,
        ", ".join(keys),
        example,
    )


def _key_problems(item, keys):
    problems = []
    for key in item:
        if key in keys:
            continue
        text = quoted(str(key))
        head, colon, tail = str(key).partition(":")
        if colon and head.strip() in keys and item[key] is None:
            problems.append(
                "has the key '%s', which YAML reads as one key because no space follows the colon: write '%s: %s'"
                % (text, head.strip(), quoted(tail.strip()))
            )
            continue
        close = difflib.get_close_matches(str(key), keys, 1)
        hint = " (did you mean %s?)" % close[0] if close else ""
        problems.append("has the key '%s', which is not an option of an item%s" % (text, hint))
    if "hostname" not in item and not problems:
        problems.append("has no hostname: each item needs one")
    return problems


def _described(item):
    if item is None:
        return "null"
    if isinstance(item, str):
        return "the string '%s'" % quoted(item, 80)
    return "a %s (%s)" % ("list" if isinstance(item, list) else type(item).__name__, quoted(str(item), 80))


def device_specs(items, name="devices", labels=None):
    """Validate every item before anything is sent; raise InvalidRequest listing all problems.

    A hostname (the same name: hostnames.hostname_key), MAC or IP requested for two items is a problem
    too: it could only ever create one of them. ``labels`` name the items instead of ``name[index]`` (a file's
    lines).
    """
    specs, problems, seen = [], [], {}
    for index, item in enumerate(items):
        spec, item_problems = device_spec(item)
        where = labels[index] if labels else "%s[%d]" % (name, index) if name else ""
        if hostname_problem(spec["hostname"]) is None:
            where = "%s (%s)" % (where, spec["hostname"]) if where else spec["hostname"]
            values = [("hostname", hostname_key(spec["hostname"]), spec["hostname"])]
            values += [
                (label, value, value) for key, label in (("macs", "MAC"), ("ips", "IP")) for value in spec.get(key, ())
            ]
            for label, key, value in values:
                first = seen.setdefault((label, key), where)
                if first != where:
                    item_problems.append("%s %s is also requested by %s" % (label, value, first))
        problems.extend("%s: %s" % (where, problem) if where else problem for problem in item_problems)
        specs.append(spec)
    if problems:
        raise InvalidRequest("Invalid device request, nothing was sent: %s" % "; ".join(problems))
    return specs


def differences(spec, record):
    """How a listed record visibly differs from the request, as readable phrases.

    Only fields that the request gives and the record shows in a recognisable form are compared
    (the API promises nothing beyond id and hostname): group and profile exactly (a string, or an
    object's ``name``), MACs normalised and IPs as sets (a list, or a comma/space separated string).
    """
    found = []
    for key in ("group", "profile"):
        shown = _shown_name(record.get(key))
        if key in spec and shown is not None and shown != spec[key]:
            found.append("%s is %s, not %s" % (key, quoted(shown), spec[key]))
    for key, normalise in (("macs", normalise_mac), ("ips", normalise_ip)):
        shown = _shown_values(record.get(key), normalise)
        if key in spec and shown is not None and set(shown) != set(spec[key]):
            found.append("%s are %s, not %s" % (key, quoted(", ".join(shown)) or "none", ", ".join(spec[key])))
    return found


def _shown_name(value):
    if isinstance(value, dict):
        value = value.get("name")
    return value.strip() if isinstance(value, str) else None


def _shown_values(value, normalise):
    if isinstance(value, str):
        value = re.split(r"[\s,;]+", value.strip()) if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    shown = []
    for item in value:
        try:
            shown.append(normalise(item))
        except ValueError:
            shown.append(item.strip().lower())
    return shown


class Outcome(Action):
    """What to do to one requested device (``verb``, from ``plan``), and what became of it."""

    def __init__(self, spec, verb=None):
        super(Outcome, self).__init__(spec["hostname"], verb)
        self.spec = spec
        self.stored_before = set()  # ids listed under a probable stored form of its name when planned
        self.stored_after = []  # listed devices under such a form that appeared since (device_creation)

    @property
    def hostname(self):
        return self.name

    def entry(self):
        """The item's entry in the bulk result."""
        entry = dict(id=self.id, hostname=self.hostname, changed=self.changed)
        if self.error:
            entry["error"] = self.error
            if self.failure:
                entry["failure"] = self.failure
        if self.warnings:
            entry["warnings"] = list(self.warnings)
        return entry


def plan(specs, records, stored_names=GUARD, fail_on_drift=False):
    """One action per spec against the device list (pure): LEAVE an existing device, CREATE a missing one
    (pending until applied), or fail.

    A device exists when a listed device has the same name (hostnames.hostname_key). A listed name that
    matches only by a looser rule (a lookalike) is never taken for it: a device to create whose name has
    a lookalike fails, unwritten, naming it with its id; an existing one gets a warning naming it. With
    ``stored_names`` GUARD, a device to create whose probable stored form is listed (hostnames.stored_forms:
    its first DNS label, without or with a trailing dot) fails, unwritten, naming it with its id. With
    ``fail_on_drift``, an existing device that visibly differs from its spec fails naming each field, instead of
    getting a warning.
    """
    index = index_by_hostname(records)
    alike = lookalikes(records, [spec["hostname"] for spec in specs])
    outcomes = []
    for spec in specs:
        outcome = Outcome(spec, CREATE)
        found = index.get(hostname_key(spec["hostname"]), [])
        similar = alike.get(spec["hostname"])
        if len(found) > 1:
            outcome.fail(
                "%d devices are named %s (ids %s): the API does not promise unique hostnames and this one is "
                "ambiguous; remove or rename the extra devices in the NAC"
                % (len(found), spec["hostname"], ", ".join(str(r["id"]) for r in found))
            )
        elif found:
            _existing(outcome, found[0], fail_on_drift)
            if similar:
                outcome.warnings.append(
                    "%s: it is not %s (id %s), which exists"
                    % (lookalike_text(spec["hostname"], similar), quoted(found[0]["hostname"]), found[0]["id"])
                )
        elif similar:
            outcome.fail(LOOKALIKE_NOT_CREATED % lookalike_text(spec["hostname"], similar))
        else:
            stored = [
                (record, relation) for key, relation in stored_forms(spec["hostname"]) for record in index.get(key, ())
            ]
            outcome.stored_before = set(record["id"] for record, _relation in stored)
            if stored and stored_names == GUARD:
                names = " or ".join(sorted(set(quoted(record["hostname"]) for record, _relation in stored)))
                outcome.fail(STORED_NOT_CREATED % (stored_text(stored), names, spec["hostname"]))
        outcomes.append(outcome)
    return outcomes


def _existing(outcome, record, fail_on_drift=False):
    outcome.verb, outcome.state, outcome.id, outcome.record = LEAVE, EXISTING, record["id"], record
    differ = differences(outcome.spec, record)
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
    specs,
    list_devices,
    create,
    concurrency=8,
    check_mode=False,
    warn=None,
    stored_names=GUARD,
    fail_on_drift=False,
    **settling,
):
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
    if not specs:
        return []
    records = list_devices()
    repeated = repeated_ids_warning(repeated_ids(records))
    if repeated and warn is not None:
        warn(repeated)
    outcomes = plan(specs, records, stored_names, fail_on_drift)
    _check_complete([outcome for outcome in outcomes if outcome.state == PENDING])
    outcomes = apply(outcomes, {CREATE: creation(create)}, list_devices, concurrency, check_mode, **settling)
    for outcome in outcomes:
        name_stored_form(outcome)
    return outcomes


def _check_complete(pending):
    """Raise InvalidRequest naming every device to create that lacks its group or profile."""
    incomplete = [
        "%s does not exist and needs %s to be created" % (o.hostname, " and ".join(needs))
        for o, needs in ((o, [key for key in ("group", "profile") if key not in o.spec]) for o in pending)
        if needs
    ]
    if incomplete:
        raise InvalidRequest("Invalid device request, nothing was created: %s" % "; ".join(incomplete))


def summary(outcomes):
    """Counts per final state, for the bulk result (``failures``: ``failed`` is Ansible's own key)."""
    count = dict((state, sum(1 for o in outcomes if o.state == state)) for state in (CREATED, EXISTING, FAILED))
    return dict(created=count[CREATED], existing=count[EXISTING], failures=count[FAILED])


def warnings_of(outcomes, limit=MESSAGE_HOSTS):
    """The items' warnings, at most ``limit`` of them and a line saying how many more there are."""
    warnings = [warning for outcome in outcomes for warning in outcome.warnings]
    if len(warnings) > limit:
        more = len(warnings) - limit
        warnings[limit:] = ["%d more warnings about other devices: see the entries in devices" % more]
    return warnings


def failure_message(outcomes):
    """One short message: the counts, then the failed hostnames grouped by reason, the first MESSAGE_REASONS
    reasons (the first MESSAGE_HOSTS names of each) and how many more; None when nothing failed. Every item's
    outcome is in the result's ``devices``."""
    reasons = {}
    for outcome in outcomes:
        if outcome.state == FAILED:
            reasons.setdefault(outcome.error, []).append(outcome.hostname)
    if not reasons:
        return None
    counts = summary(outcomes)
    parts = []
    for reason, hosts in list(reasons.items())[:MESSAGE_REASONS]:
        named = ", ".join(hosts[:MESSAGE_HOSTS])
        if len(hosts) > MESSAGE_HOSTS:
            named += " and %d more" % (len(hosts) - MESSAGE_HOSTS)
        parts.append("%s: %s" % (named, quoted(reason, MESSAGE_REASON_CHARS)))
    if len(reasons) > MESSAGE_REASONS:
        others = list(reasons.values())[MESSAGE_REASONS:]
        parts.append("%d more devices failed for %d other reasons" % (sum(len(hosts) for hosts in others), len(others)))
    message = "%d of %d devices failed (%d created, %d existing): %s" % (
        counts["failures"],
        len(outcomes),
        counts["created"],
        counts["existing"],
        " | ".join(parts),
    )
    if len(outcomes) > 1:
        message += ". Every device's outcome, with its error, is in the result's devices (register the task)"
    return message
