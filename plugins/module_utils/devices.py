# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic about device records (no Ansible imports; I/O only through the callables given)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re
import threading
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.netaccess.nac.plugins.module_utils.api import (
    NacAuthError,
    NacConfigError,
    NacError,
    body_reason,
    excerpt,
)


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
# item (existing / to create / error), create the missing ones ``concurrency`` at a time, then settle
# what is uncertain from the device list (one list for all pending items at a time). Every item ends
# existing, created (or "would be created" in check mode) or failed with its error.
#
# The outcome of each POST /api/device (api.py retries only a 429 and a connection never made):
#   2xx with an id               -> created
#   2xx without an id            -> created; its id from the list (not listed during the window: failed, unknown)
#   4xx (400, 404, 409, ...)     -> failed with the server's reason (a re-send refused: the list decides first)
#   401/403                      -> failed, and no further POST is sent (the others: "not attempted")
#   5xx, reset or dropped after sending, timed out
#                                -> uncertain: listed during the settle window -> created (its id from the list);
#                                   never listed during the whole window -> re-sent (at most max_resends times),
#                                   then failed saying the outcome is unknown and the list did not show it
#   listed twice after a re-send -> failed naming both ids (an earlier attempt landed after the window)
#
# What no client can prevent without an idempotency key on the server: a commit that lands after the
# whole settle window, when the creation was already re-sent, duplicates the device; the next list
# (this run's, or a later run's) shows both and names them.

DEVICE_KEYS = ("hostname", "group", "profile", "macs", "ips")
EXISTING, CREATED, FAILED = "existing", "created", "failed"
_PENDING, _UNKNOWN, _REFUSED = "pending", "unknown", "refused"  # _REFUSED: a re-send refused (an earlier one may land)
MESSAGE_HOSTS = 10
# How long (seconds) an uncertain creation is looked for in the device list before it may be re-sent,
# when the caller does not say (nac_device passes settle_timeout, by default its timeout), and the
# first pause between two lists of that window (doubled after each list).
SETTLE_TIMEOUT = 30.0
SETTLE_FIRST_PAUSE = 1.0

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
        self.attempts = 0  # POSTs sent for it
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


def ensure_devices(specs, list_devices, create, concurrency=8, check_mode=False, settle_timeout=SETTLE_TIMEOUT,
                   max_resends=3, should_stop=None, clock=time.monotonic, sleep=time.sleep):
    """Make every spec's device exist; return one Outcome per spec, in request order.

    ``list_devices()`` returns the device records and ``create(body)`` POSTs one device and returns
    the reply dict or None; both raise NacError. The first list failing fails the whole call (before
    anything is written). In check mode ``create`` is never called: the devices to create are
    reported CREATED with the would-be body as their record.

    Every creation is decided from the server's state, never guessed from an error (see
    ``_settle``): a POST whose outcome is uncertain is looked for in the device list for
    ``settle_timeout`` seconds, and re-sent (at most ``max_resends`` times) only when the list kept
    not showing it for that whole window. ``should_stop()`` is asked before each POST: when it returns
    a reason (the controller that started the task is gone), nothing more is sent and what was sent
    is still settled. ``clock`` and ``sleep`` are injectable for tests.
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
        return outcomes
    stop = _Stop(should_stop)
    window = _Window(settle_timeout, clock, sleep)
    to_send = pending
    while to_send:
        with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(to_send)))) as pool:
            list(pool.map(lambda outcome: _send(outcome, create, stop), to_send))
        # A re-sent creation is looked for even when answered with an id: the list shows a duplicate, if any.
        unsettled = [o for o in to_send if o.state in (_UNKNOWN, _REFUSED) or (o.state == CREATED and (o.id is None or o.attempts > 1))]
        listed = _settle(unsettled, list_devices, window)
        to_send = _after_window(unsettled, listed, window, max_resends, stop)
    return outcomes


class _Stop:
    """Why no further POST may be sent, or None: the controller is gone, or the credentials were refused."""

    def __init__(self, should_stop):
        self._should_stop = should_stop
        self._reason = None
        self._lock = threading.Lock()

    def refuse(self, error):
        with self._lock:
            self._reason = self._reason or "a creation was refused for lack of access, so no other was sent (%s)" % error.message

    def reason(self):
        with self._lock:
            if self._reason is None and self._should_stop is not None:
                gone = self._should_stop()
                if gone:
                    self._reason = gone if isinstance(gone, str) else "the task was told to stop"
            return self._reason


class _Window:
    """The settle window: how long, and the clock and sleep to wait it out with."""

    def __init__(self, seconds, clock, sleep):
        self.seconds, self.clock, self.sleep = seconds, clock, sleep

    def text(self):
        return "%g s" % self.seconds


def _send(outcome, create, stop):
    """One POST for ``outcome``, unless the task must stop; its result decided from the reply or error."""
    reason = stop.reason()
    if reason:
        if outcome.attempts:
            outcome.fail("%s; the outcome is unknown: the device list did not show it during the settle window, and it "
                         "was not sent again: %s" % (outcome.error, reason), outcome.failure)
        else:
            outcome.fail("not attempted: %s" % reason)
        return
    outcome.attempts += 1
    body = creation_body(outcome.spec)
    try:
        reply = create(body)
    except NacError as error:
        outcome.error, outcome.failure = error.message, error.failure
        if error.outcome_unknown:
            outcome.state = _UNKNOWN  # the server may have committed it: the device list decides
        elif outcome.attempts > 1:
            outcome.state = _REFUSED  # refused now, but an earlier attempt may yet land: the list decides
        else:
            outcome.state = FAILED
        if isinstance(error, NacAuthError) and not error.outcome_unknown:
            stop.refuse(error)
        return
    new_id = reply.get("id") if isinstance(reply, dict) else None
    outcome.state, outcome.reply, outcome.error, outcome.failure = CREATED, reply, None, None
    outcome.id = new_id if isinstance(new_id, int) and not isinstance(new_id, bool) else None
    outcome.record = dict(body, **(reply or {}))
    outcome.record["id"] = outcome.id


def _settle(unsettled, list_devices, window):
    """Look for the unsettled devices in the device list, one list for all of them at a time, until
    each is shown or ``window`` has passed: lists at once, then after 1, 2, 4, ... s, and a last
    one at the end of the window. Resolves what a list shows; returns whether the last list worked
    (a device not shown is only ever re-sent when the list kept not showing it for the whole window).
    """
    waiting = list(unsettled)
    deadline = window.clock() + window.seconds
    pause = SETTLE_FIRST_PAUSE
    while waiting:
        try:
            index = index_by_hostname(list_devices())
        except NacError as error:
            listed = error
        else:
            listed = True
            for outcome in list(waiting):
                found = index.get(hostname_key(outcome.hostname), [])
                if found:
                    _resolve(outcome, found, window)
                    waiting.remove(outcome)
        now = window.clock()
        if not waiting or now >= deadline:
            return listed
        window.sleep(min(pause, deadline - now))
        pause *= 2
    return True


def _resolve(outcome, found, window):
    """A waiting creation that the device list shows: created, with its id (or ambiguous)."""
    ids = ", ".join(str(r["id"]) for r in found)
    if len(found) == 1:
        outcome.state, outcome.id, outcome.record = CREATED, found[0]["id"], found[0]
        outcome.error = outcome.failure = None
    elif outcome.state == CREATED and outcome.attempts == 1:
        outcome.warnings.append("created, but its id is unknown: the reply carried none and the device list shows "
                                "%d devices named %s (ids %s)" % (len(found), outcome.hostname, ids))
    elif outcome.attempts > 1:
        outcome.fail("the device list shows %d devices named %s (ids %s): the creation was sent %d times because the "
                     "list did not show it within the settle window of %s, so an earlier attempt was probably committed "
                     "later than that (or another client created one meanwhile); remove the extra device in the NAC"
                     % (len(found), outcome.hostname, ids, outcome.attempts, window.text()), outcome.failure)
    else:
        outcome.fail("%s; the device list, checked afterwards, shows %d devices named %s (ids %s): check them in the NAC"
                     % (outcome.error, len(found), outcome.hostname, ids), outcome.failure)


def _after_window(unsettled, listed, window, max_resends, stop):
    """Decide what the device list did not show: re-send, or fail saying what is known. Returns the re-sends."""
    resend = []
    for outcome in unsettled:
        if outcome.state == _UNKNOWN and listed is True and outcome.attempts <= max_resends:
            resend.append(outcome)  # _send checks ``stop`` before sending it again
        elif outcome.state == CREATED and outcome.id is None:
            if listed is True:
                said = " (the server said: %s)" % body_reason(outcome.reply) if outcome.reply else ""
                outcome.fail("POST /api/device was answered as a success but without a device id%s, and the device list "
                             "did not show %s during the settle window of %s: whether it was created is unknown. Check "
                             "the NAC; a later run looks for it before creating anything"
                             % (said, outcome.hostname, window.text()))
            else:
                outcome.warnings.append("created, but its id is unknown: the reply carried none and listing the devices "
                                        "failed (%s)" % listed.message)
        elif outcome.state in (_UNKNOWN, _REFUSED) and listed is not True:
            outcome.fail("%s; whether the device was created is unknown, and listing the devices to find out failed too "
                         "(%s). Check the NAC; a later run looks for %s before creating anything"
                         % (outcome.error, listed.message, outcome.hostname), outcome.failure)
        elif outcome.state in (_UNKNOWN, _REFUSED):
            outcome.fail("%s; the outcome is unknown: the device list did not show %s during the settle window of %s "
                         "after %s. Check the NAC; a later run looks for it before creating anything"
                         % (outcome.error, outcome.hostname, window.text(),
                            "the only attempt" if outcome.attempts == 1 else "each of %d attempts" % outcome.attempts),
                         outcome.failure)
    return resend


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
