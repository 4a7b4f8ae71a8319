# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic about device records (no Ansible imports; I/O only through the callables given)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re
import unicodedata
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.netaccess.nac.plugins.module_utils.api import NacConfigError, NacConnectionError, NacError, body_reason, excerpt


def hostname_key(hostname):
    """Hostnames are compared case-insensitively."""
    return hostname.casefold()


HOSTNAME_MAX = 253  # a DNS name's limit


def hostname_problem(value):
    """Why ``value`` cannot be a requested hostname, or None: one string (a whole number is read as one) of
    at most 253 characters, without whitespace or control characters."""
    if isinstance(value, (list, tuple, dict, set)):
        return "must be one name (a string), got a %s: %s" % ("mapping" if isinstance(value, dict) else "list", excerpt(repr(value), 80))
    if not isinstance(value, str) or not value:
        return "is required" if value in (None, "") else "must be a name (a string), got %r" % (value,)
    if len(value) > HOSTNAME_MAX:
        return "has %d characters, more than the %d a hostname may have: %s" % (len(value), HOSTNAME_MAX, excerpt(value, 40))
    if any(unicodedata.category(char)[0] in "CZ" for char in value):
        return "%r contains whitespace or a control character, which a hostname cannot have" % (value,)
    return None


def hostname_value(value):
    """A requested hostname as a string: whole numbers (YAML reads ``1234`` as one) become their digits."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def check_hostnames(hostnames, name="hostname"):
    """Raise NacConfigError naming every unusable hostname of a list option; return the names as strings."""
    names = [hostname_value(value) for value in hostnames]
    problems = ["%s[%d] %s" % (name, index, problem) for index, problem in enumerate(map(hostname_problem, names)) if problem]
    if problems:
        raise NacConfigError("Invalid %s, nothing was sent: %s" % (name, "; ".join(problems)))
    return names


def index_by_hostname(records):
    """{hostname key: [records with that hostname]} (the API does not promise unique hostnames)."""
    index = {}
    for record in records:
        index.setdefault(hostname_key(record["hostname"]), []).append(record)
    return index


def select(records, hostnames=None, ids=None):
    """Records matching any of ``hostnames`` (case-insensitive) or ``ids``; all when neither is given
    (None): an empty list is given, and matches nothing.

    Returns ``(selected, missing)``: the matching records in the server's order, and the requested
    hostnames and ids that matched nothing, in the order they were asked for.
    """
    if hostnames is None and ids is None:
        return list(records), []
    wanted_names = set(hostname_key(name) for name in hostnames or ())
    wanted_ids = set(ids or ())
    selected = [r for r in records if hostname_key(r["hostname"]) in wanted_names or r["id"] in wanted_ids]
    found_names = set(hostname_key(r["hostname"]) for r in selected)
    found_ids = set(r["id"] for r in selected)
    missing = [name for name in hostnames or () if hostname_key(name) not in found_names]
    missing += [ident for ident in ids or () if ident not in found_ids]
    return selected, missing


# -- ensuring devices exist (nac_device) ---------------------------------------------------------
#
# The flow: validate every requested item (no request yet), list the devices once, classify each
# item (existing / to create / error), create the missing ones ``concurrency`` at a time, then one
# more list when some creation's outcome or new id is unknown. Every item ends existing, created
# (or "would be created" in check mode) or failed with its error.

DEVICE_KEYS = ("hostname", "group", "profile", "macs", "ips")
EXISTING, CREATED, FAILED = "existing", "created", "failed"
_PENDING, _UNKNOWN = "pending", "unknown"
MESSAGE_HOSTS = 10

_MAC = re.compile(r"^(?:[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){4}|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}|[0-9a-f]{12})$",
                  re.IGNORECASE)
_DOTTED_QUAD = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")


class InvalidRequest(ValueError):
    """The requested devices cannot be sent as they are; the message lists every problem."""


def normalise_mac(value):
    """'00-1A-2B-3C-4D-5E', '001a.2b3c.4d5e', '001A2B3C4D5E', any case -> '00:1a:2b:3c:4d:5e'."""
    text = value.strip() if isinstance(value, str) else ""
    if not _MAC.match(text):
        raise ValueError("'%s' is not a MAC address (expected six colon-separated hex pairs such as 00:1a:2b:3c:4d:5e; "
                         "00-1a-2b-3c-4d-5e, 001a.2b3c.4d5e and 001a2b3c4d5e are accepted too)" % (value,))
    digits = re.sub(r"[^0-9a-f]", "", text.lower())
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


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


def device_specs(items, name="devices"):
    """Validate every item before anything is sent; raise InvalidRequest listing all problems.

    A hostname (case-insensitively), MAC or IP requested for two items is a problem too: it could
    only ever create one of them.
    """
    specs, problems, seen = [], [], {}
    for index, item in enumerate(items):
        spec, item_problems = device_spec(item)
        where = "%s[%d]" % (name, index) if name else ""
        if hostname_problem(spec["hostname"]) is None:
            where = "%s (%s)" % (where, spec["hostname"]) if where else spec["hostname"]
            values = [("hostname", hostname_key(spec["hostname"]), spec["hostname"])]
            values += [(label, value, value) for key, label in (("macs", "MAC"), ("ips", "IP")) for value in spec.get(key, ())]
            for label, key, value in values:
                first = seen.setdefault((label, key), where)
                if first != where:
                    item_problems.append("%s %s is also requested by %s" % (label, value, first))
        problems.extend("%s: %s" % (where, problem) if where else problem for problem in item_problems)
        specs.append(spec)
    if problems:
        raise InvalidRequest("Invalid device request, nothing was sent: %s" % "; ".join(problems))
    return specs


def creation_body(spec):
    """The POST /api/device body: hostname, group, profile, and macs / ips only when given."""
    return dict((key, spec[key]) for key in DEVICE_KEYS if key in spec)


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
            found.append("%s is %s, not %s" % (key, shown, spec[key]))
    for key, normalise in (("macs", normalise_mac), ("ips", normalise_ip)):
        shown = _shown_values(record.get(key), normalise)
        if key in spec and shown is not None and set(shown) != set(spec[key]):
            found.append("%s are %s, not %s" % (key, ", ".join(shown) or "none", ", ".join(spec[key])))
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


class Outcome:
    """What became of one requested device."""

    def __init__(self, spec):
        self.spec = spec
        self.hostname = spec["hostname"]
        self.state = _PENDING
        self.id = None
        self.record = None
        self.reply = None  # the creation's reply, when it was a JSON object
        self.error = None
        self.failure = None
        self.warnings = []

    @property
    def changed(self):
        return self.state == CREATED

    def fail(self, message, failure=None):
        self.state, self.error, self.failure = FAILED, message, failure

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


def plan(specs, records):
    """Classify each spec against the device list: existing, to create (pending), or failed."""
    index = index_by_hostname(records)
    outcomes = []
    for spec in specs:
        outcome = Outcome(spec)
        found = index.get(hostname_key(spec["hostname"]), [])
        if len(found) > 1:
            outcome.fail("%d devices are named %s (ids %s): the API does not promise unique hostnames and this one is "
                         "ambiguous; remove or rename the extra devices in the NAC"
                         % (len(found), spec["hostname"], ", ".join(str(r["id"]) for r in found)))
        elif found:
            outcome.state, outcome.id, outcome.record = EXISTING, found[0]["id"], found[0]
            differ = differences(spec, found[0])
            if differ:
                outcome.warnings.append("device %s (id %s) exists but differs from the request: %s. Nothing was changed: "
                                        "the API cannot update a device, change it in the NAC itself"
                                        % (found[0]["hostname"], found[0]["id"], "; ".join(differ)))
        outcomes.append(outcome)
    return outcomes


def ensure_devices(specs, list_devices, create, concurrency=8, check_mode=False):
    """Make every spec's device exist; return one Outcome per spec, in request order.

    ``list_devices()`` returns the device records and ``create(body)`` POSTs one device and returns
    the reply dict or None; both raise NacError. The first list failing fails the whole call (before
    anything is written). In check mode ``create`` is never called: the devices to create are
    reported CREATED with the would-be body as their record.
    """
    if not specs:
        return []
    outcomes = plan(specs, list_devices())
    pending = [outcome for outcome in outcomes if outcome.state == _PENDING]
    incomplete = ["%s does not exist and needs %s to be created" % (o.hostname, " and ".join(needs))
                  for o, needs in ((o, [key for key in ("group", "profile") if key not in o.spec]) for o in pending) if needs]
    if incomplete:
        raise InvalidRequest("Invalid device request, nothing was created: %s" % "; ".join(incomplete))
    if check_mode:
        for outcome in pending:
            outcome.state, outcome.record = CREATED, creation_body(outcome.spec)
    elif pending:
        with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(pending)))) as pool:
            list(pool.map(lambda outcome: _create(outcome, create), pending))
        _settle(outcomes, list_devices)
    return outcomes


def _create(outcome, create):
    """One POST, never repeated: its outcome is decided from the reply, or later by _settle."""
    body = creation_body(outcome.spec)
    try:
        reply = create(body)
    except NacConnectionError as error:
        if not error.outcome_unknown:
            outcome.fail(error.message, error.failure)
        else:
            outcome.state, outcome.error, outcome.failure = _UNKNOWN, error.message, error.failure
        return
    except NacError as error:
        outcome.fail(error.message, error.failure)
        return
    new_id = reply.get("id") if isinstance(reply, dict) else None
    outcome.state, outcome.reply = CREATED, reply
    outcome.id = new_id if isinstance(new_id, int) and not isinstance(new_id, bool) else None
    outcome.record = dict(body, **(reply or {}))
    outcome.record["id"] = outcome.id


def _settle(outcomes, list_devices):
    """One fresh list for every creation whose outcome (timeout, dropped connection) or new id is unknown."""
    waiting = [o for o in outcomes if o.state == _UNKNOWN or (o.state == CREATED and o.id is None)]
    if not waiting:
        return
    try:
        index = index_by_hostname(list_devices())
    except NacError as error:
        for outcome in waiting:
            if outcome.state == _UNKNOWN:
                outcome.fail("%s; whether the device was created is unknown, and listing the devices to find out failed too "
                             "(%s). Run the task again: it looks for %s before creating anything"
                             % (outcome.error, error.message, outcome.hostname), outcome.failure)
            else:
                outcome.warnings.append("created, but its id is unknown: the reply carried none and listing the devices "
                                        "failed (%s)" % error.message)
        return
    for outcome in waiting:
        found = index.get(hostname_key(outcome.hostname), [])
        if len(found) == 1:
            outcome.state, outcome.id, outcome.record = CREATED, found[0]["id"], found[0]
            outcome.error = outcome.failure = None
        elif outcome.state == CREATED and not found:
            said = " (the server said: %s)" % body_reason(outcome.reply) if outcome.reply else ""
            outcome.fail("POST /api/device was answered without a device id%s, and the device list, checked afterwards, has "
                         "no device %s: it was not created. It is safe to run the task again" % (said, outcome.hostname))
        elif outcome.state == CREATED:
            outcome.warnings.append("created, but its id is unknown: the reply carried none and the device list shows "
                                    "%d devices named %s" % (len(found), outcome.hostname))
        elif not found:
            outcome.fail("%s; the device list, checked afterwards, has no device %s, so it was not created: "
                         "it is safe to run the task again" % (outcome.error, outcome.hostname), outcome.failure)
        else:
            outcome.fail("%s; the device list, checked afterwards, shows %d devices named %s (ids %s): check them in the NAC"
                         % (outcome.error, len(found), outcome.hostname, ", ".join(str(r["id"]) for r in found)), outcome.failure)


def summary(outcomes):
    """Counts per final state, for the bulk result (``failures``: ``failed`` is Ansible's own key)."""
    count = dict((state, sum(1 for o in outcomes if o.state == state)) for state in (CREATED, EXISTING, FAILED))
    return dict(created=count[CREATED], existing=count[EXISTING], failures=count[FAILED])


def warnings_of(outcomes, limit=MESSAGE_HOSTS):
    """The items' warnings, at most ``limit`` of them and a line saying how many more there are."""
    warnings = [warning for outcome in outcomes for warning in outcome.warnings]
    if len(warnings) > limit:
        warnings[limit:] = ["%d more warnings about other devices: see the entries in devices" % (len(warnings) - limit)]
    return warnings


def failure_message(outcomes):
    """One message naming every failed hostname, grouped by reason; None when nothing failed."""
    reasons = {}
    for outcome in outcomes:
        if outcome.state == FAILED:
            reasons.setdefault(outcome.error, []).append(outcome.hostname)
    if not reasons:
        return None
    counts = summary(outcomes)
    parts = []
    for reason, hosts in reasons.items():
        named = ", ".join(hosts[:MESSAGE_HOSTS]) + (" and %d more" % (len(hosts) - MESSAGE_HOSTS) if len(hosts) > MESSAGE_HOSTS else "")
        parts.append("%s: %s" % (named, reason))
    return "%d of %d devices failed (%d created, %d existing): %s" % (
        counts["failures"], len(outcomes), counts["created"], counts["existing"], " | ".join(parts))
