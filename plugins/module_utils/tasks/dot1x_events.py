# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""802.1x status changes as events, for the event source ``netaccess.nac.dot1x_status``: pure logic,
no Ansible imports (the event source runs in ansible-rulebook, not in Ansible).

``source_options(args, environ)`` reads the source's arguments with their ``NAC_*`` fallbacks,
``poll_once(client, ...)`` runs one round (one device list, the intent fired for the chosen devices,
``dot1x_query.query``) and ``detect(known, results)`` turns the round's results into events: one per
device whose status differs from what ``known`` holds, and one ``nac_dot1x_error`` for the devices
that could not be queried. The event source is a thin asyncio loop around ``poll_once``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import contextlib
import math
import os

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError, NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import hidden_forms, mask
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    CONNECTION_OPTIONS as ALL_CONNECTION_OPTIONS,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    INSECURE_TLS,
    SECRET_OPTIONS,
    WAIT_INTERVAL_MAX,
    boolean,
    check_concurrency,
    check_number,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import query_all, resolve
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_results import failure_message

# The source's connection options: name -> (environment variable, kind, default), from options.CONNECTION_OPTIONS
# with the kind of a secret set to "secret" (its value is never shown, not even in a message about its type).
CONNECTION_OPTIONS = collections.OrderedDict(
    (option.name, (option.env, "secret" if option.secret else option.type, option.default))
    for option in ALL_CONNECTION_OPTIONS.values()
)
SOURCE_OPTIONS = collections.OrderedDict(
    (
        ("hostname", "list"),
        ("interval", "float"),
        ("concurrency", "int"),
        ("initial", "bool"),
        ("encode_all_strings", "bool"),
    )
)
SOURCE_DEFAULTS = dict(hostname=None, interval=60.0, concurrency=8, initial=False, encode_all_strings=False)
# The source's own options that fall back to an environment variable (as the connection options do).
SOURCE_ENVIRONMENT = dict(interval="NAC_WATCH_INTERVAL")
FIRST_ROUND = object()  # ``known`` value of a device listed at the first round whose status is not known yet
CHANGES_NAMED = 3  # devices that changed named by the log line of a round, before a count of the others

Round = collections.namedtuple("Round", "events known warnings")


def source_options(args, environ=None):
    """``(client_kwargs, options)`` from the source's arguments, each connection option falling back
    to its ``NAC_*`` environment variable. Raises NacConfigError naming the first unusable argument
    (never showing the value of a secret). Arguments starting with ``eda_`` belong to ansible-rulebook."""
    environ = os.environ if environ is None else environ
    args = dict((name, value) for name, value in (args or {}).items() if not str(name).startswith("eda_"))
    unknown = sorted(set(args) - set(CONNECTION_OPTIONS) - set(SOURCE_OPTIONS), key=str)
    if unknown:
        raise NacConfigError(
            "netaccess.nac.dot1x_status: unknown argument(s) %s; the arguments are %s"
            % (", ".join(map(str, unknown)), ", ".join(list(CONNECTION_OPTIONS) + list(SOURCE_OPTIONS)))
        )
    client = {}
    for name, (variable, kind, default) in CONNECTION_OPTIONS.items():
        value, where = args.get(name), name
        if value is None and variable and environ.get(variable):
            value, where = environ[variable], "%s (from %s)" % (name, variable)
        client[name] = default if value is None else _convert(value, kind, where)
    if not client["api_url"]:
        raise NacConfigError("api_url is required: give the address of the NAC service as api_url or in NAC_API_URL")
    options, where = dict(SOURCE_DEFAULTS), dict((name, name) for name in SOURCE_OPTIONS)
    for name, kind in SOURCE_OPTIONS.items():
        value, variable = args.get(name), SOURCE_ENVIRONMENT.get(name)
        if value is None and variable and environ.get(variable, "").strip():
            value, where[name] = environ[variable], "%s (from %s)" % (name, variable)
        if value is not None:
            options[name] = _convert(value, kind, where[name])
    hostnames = options["hostname"]
    if hostnames is not None and not (hostnames and all(isinstance(n, str) and n.strip() for n in hostnames)):
        raise NacConfigError("hostname must list device names (or be left out for every device), got %r" % (hostnames,))
    check_number(where["interval"], options["interval"], 0, WAIT_INTERVAL_MAX, low_open=True)
    check_concurrency(options["concurrency"])
    client.update(read_only=True, pool_size=options["concurrency"])
    return client, options


def _convert(value, kind, where):
    """The value as ``kind``; a string (from the environment or a rulebook variable) is parsed."""
    if kind in ("str", "secret", "path"):
        if not isinstance(value, str):
            got = type(value).__name__ if kind == "secret" else repr(value)
            raise NacConfigError("%s must be a string, got %s" % (where, got))
        return os.path.expanduser(value) if kind == "path" else value
    if kind == "list":
        if isinstance(value, str):
            return [value]
        return list(value) if isinstance(value, (list, tuple)) else _bad(value, where, "a list of names")
    if kind == "bool":
        return boolean(value, where)
    try:
        number = float(value) if kind == "float" else int(str(value).strip())
    except (ValueError, OverflowError):  # float(10**400) overflows
        number = None
    if isinstance(value, bool) or number is None or not math.isfinite(number):
        return _bad(value, where, "a number" if kind == "float" else "a whole number")
    return number


def _bad(value, where, wanted):
    raise NacConfigError("%s must be %s, got %r" % (where, wanted, value))


def start_warnings(client_kwargs):
    """What the source says once when it starts: that TLS is not verified, when ``validate_certs`` is false."""
    return [] if client_kwargs.get("validate_certs", True) else [INSECURE_TLS]


def log_text(text, secrets=()):
    """A line of the source's log from ``text``: every form of the ``secrets`` masked, the server's text in it
    shown safely (server_text.shown: no raw line break forges a log line, no escape sequence reaches a terminal)."""
    return mask(shown(text), secrets)


def secret_forms(client_kwargs, client=None):
    """The forms of the source's secrets (``api_key``, ``password``, a password in ``api_url``, the Basic token)
    to mask, with those of the ``client`` (NacClient.secrets: a proxy's credentials too): masking.hidden_forms of
    the client arguments that ``source_options`` returned."""
    return hidden_forms(
        [client_kwargs.get(name) for name in SECRET_OPTIONS],
        client_kwargs.get("api_url"),
        basic=[(client_kwargs.get("username"), client_kwargs.get("password"))],
        forms=client.secrets if client is not None else (),
    )


def bug_round(bug, known, warnings, secrets):
    """The round of a bug (an exception that is not a NacError): one ``nac_dot1x_error`` event naming it, every
    form of the ``secrets`` masked, and ``known`` and ``warnings`` as they were, so that the watch goes on."""
    message = "internal error in netaccess.nac.dot1x_status: %s: %s (please report it)" % (type(bug).__name__, bug)
    return Round([error_event(log_text(message, secrets))], known, warnings)


def poll_once(client, hostnames=None, concurrency=8, initial=False, known=None, time_limit=None):
    """One round: ``Round(events, known, warnings)``. ``known`` is what ``detect`` returned last
    time (None before the first round). A round that fails as a whole (the device list cannot be
    read, the credentials are refused) gives one ``nac_dot1x_error`` event and leaves ``known`` as it was.

    ``time_limit`` (the source's interval): the round's deadline for a service that answers nothing.
    The client waits for an unreachable service (its ``unreachable_timeout``), but within this round only
    until nothing has answered for ``time_limit`` seconds (client.limit_waiting): an outage then gives its
    error event within one interval of its start, and the next round waits on. A round that keeps
    getting replies is never cut short, however long it takes."""
    waiting = client.limit_waiting(time_limit, "the interval of the event source") if time_limit else _no_limit()
    try:
        with waiting:
            targets, warnings = resolve(
                client.list_devices(compact=True), hostnames=hostnames, all_devices=hostnames is None
            )
            results = query_all(client, [t for t in targets if t.error is None], concurrency)
    except NacError as failure:
        return Round([error_event(failure.message)], known, [])
    results.extend(dict(id=t.id, hostname=t.hostname, error=t.error) for t in targets if t.error is not None)
    events, known = detect(known, results, initial)
    return Round(events, known, warnings)


@contextlib.contextmanager
def _no_limit():
    yield


def detect(known, results, initial=False):
    """``(events, known)``: the events of one round and the map {id: last good result} for the next.

    ``known`` None means the first round: it emits every device only when ``initial``. Later, a
    device whose status differs from its known one emits an event with ``previous_status``; a
    device not known before (newly listed) changes from null. A result with ``error`` keeps the
    device's last known status and is named in one ``nac_dot1x_error`` event at the end.
    """
    first = known is None
    known = known or {}
    now, events, failed = {}, [], []
    for entry in results:
        before = known.get(entry["id"])
        if "error" in entry:
            failed.append(dict(id=entry["id"], hostname=entry["hostname"], error=entry["error"]))
            if entry["id"] is not None:
                now[entry["id"]] = FIRST_ROUND if first else before
            continue
        now[entry["id"]] = entry
        previous = before["status"] if isinstance(before, dict) else None
        if initial if first else before is not FIRST_ROUND and (before is None or previous != entry["status"]):
            events.append(change_event(entry, previous))
    now = dict((ident, value) for ident, value in now.items() if value is not None)
    if failed:
        events.append(error_event(failure_message(results), failed))
    return events, now


def round_summary(number, result, seconds):
    """The log line of one round: how many devices have which status, the changes (the first few devices by name)
    and the errors (no credential: counts, statuses, hostnames and the number of the round)."""
    errors = [event["nac_dot1x_error"] for event in result.events if "nac_dot1x_error" in event]
    if any(not error["devices"] for error in errors):
        return "round %d failed after %.2f s (the warning says why); polling goes on" % (number, seconds)
    failed = [device for error in errors for device in error["devices"]]
    unqueried = set(device["id"] for device in failed)
    statuses = collections.Counter(
        entry["status"] for ident, entry in result.known.items() if isinstance(entry, dict) and ident not in unqueried
    )
    devices = sum(statuses.values()) + len(failed)
    changed = [event["nac_dot1x"] for event in result.events if "nac_dot1x" in event]
    return "round %d: %d device%s in %.2f s (%s), %d status change%s%s%s" % (
        number,
        devices,
        "" if devices == 1 else "s",
        seconds,
        ", ".join("%s %d" % (shown(status), count) for status, count in sorted(statuses.items())) or "no status",
        len(changed),
        "" if len(changed) == 1 else "s",
        changes_named(changed),
        ", %d could not be queried" % len(failed) if failed else "",
    )


def changes_named(changed, limit=CHANGES_NAMED):
    """`` (cam-01 UNAUTHENTICATED -> AUTHENTICATED, ... and N more)``: the first ``limit`` devices that changed, by
    name (shown safely), then how many more; empty when none did."""
    if not changed:
        return ""
    named = [
        "%s %s-> %s"
        % (
            shown(change["hostname"], 80),
            "" if change["previous_status"] is None else "%s " % shown(change["previous_status"], 40),
            shown(change["status"], 40),
        )
        for change in changed[:limit]
    ]
    more = " and %d more" % (len(changed) - limit) if len(changed) > limit else ""
    return " (%s%s)" % (", ".join(named), more)


def change_event(entry, previous_status):
    return {
        "nac_dot1x": dict(
            id=entry["id"],
            hostname=entry["hostname"],
            status=entry["status"],
            previous_status=previous_status,
            auth_method=entry.get("auth_method"),
            username=entry.get("username"),
            message=entry.get("message"),
        )
    }


def error_event(message, devices=()):
    """``devices``: the devices that could not be queried, each ``{id, hostname, error}``; empty when
    the round failed as a whole."""
    return {"nac_dot1x_error": dict(message=message, devices=list(devices))}
