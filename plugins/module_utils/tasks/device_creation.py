# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The creation of a device as an operation of the apply engine (apply.Operation; no Ansible imports): its
write (``POST /api/device``), how the device list shows it (a listed device has its hostname), when it is
settled (the list shows it), when the list confirms a creation answered with an id (that id is listed, under
the requested name: hostnames.hostname_key), and what is said of it (nac_device's messages). What each failure
of ``POST /api/device`` becomes: the table "Retries and outcomes" of the API guide (docs/docsite/rst/api.rst).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown as quoted
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    hostname_key,
    index_by_hostname,
    stored_forms,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import (
    CONFIRMED,
    FAILED,
    MISSING,
    Answer,
    Operation,
    Wording,
)

DEVICE_KEYS = ("hostname", "group", "profile", "macs", "ips")

# What the apply engine says about a creation (nac_device's messages). An item's error never says the list
# "did not show" it while the list shows it: the engine reports what the last list shows (apply_report.report).
CREATION_WORDING = Wording(
    not_attempted="not attempted: {reason}",
    unproven="the first creation of this task, {name}{id}, was not confirmed by the device list (its entry says why), "
    "so no other device was sent: a list that hides or renames the devices it holds would have had each of them "
    "created again",
    stopped="{error}; the outcome is unknown: the device list did not show it during the settle window, and it "
    "was not sent again: {reason}",
    refused_access="a creation was refused for lack of access, so no other was sent ({error})",
    several_known="created {name} (id {id}), but the device list shows {count} devices named {name} (ids {ids}): "
    "another client created one too (the API cannot prevent it); remove the extra device in the NAC",
    several_unidentified="POST /api/device was answered as a success without a device id, and the device list shows "
    "{count} devices named {name} (ids {ids}): one of them was created by this task, which one is unknown (another "
    "client created the other); remove the extra device in the NAC",
    several_after_resends="the device list shows {count} devices named {name} (ids {ids}): the creation was sent "
    "{attempts} times because it was missing from the device list for a whole settle window of {window}, "
    "so an earlier attempt was probably committed later than that (or another client created "
    "one meanwhile); remove the extra device in the NAC",
    several="{error}; the device list, checked afterwards, shows {count} devices named {name} (ids {ids}): check "
    "them in the NAC",
    not_listed="created {name} (id {id} in the reply), but the device list read afterwards does not list it yet",
    unconfirmed="created {name} (id {id} in the reply), but the device list did not list id {id} during the settle "
    "window of {window} (its last read listed {listed} devices), so whether another device named {name} exists is "
    "unknown: the list is probably capped (it shows only its first devices, without a sign) or served by a read "
    "replica lagging more than {window} behind the writes. A next run that does not find {name} would create it "
    "again: check {name} in the NAC (a lagging list: raise settle_timeout)",
    unconfirmed_list_failed="created {name} (id {id} in the reply), but listing the devices to confirm it failed "
    "({list_error}): check {name} in the NAC",
    unidentified_not_shown="POST /api/device was answered as a success but without a device id{said}, and the device "
    "list did not show {name} during the settle window of {window}: whether it was created is "
    "unknown. Check the NAC; a later run looks for it before creating anything",
    unidentified_list_failed="created, but its id is unknown: the reply carried none and listing the devices failed "
    "({list_error})",
    unknown_list_failed="{error}; whether the device was created is unknown, and listing the devices to find out "
    "failed too ({list_error}). Check the NAC; a later run looks for {name} before creating "
    "anything",
    unknown_not_shown="{error}; the outcome is unknown: the device list did not show {name} during the settle window "
    "of {window} after {each_attempt}. Check the NAC; a later run looks for it before creating "
    "anything",
    final_list_failed="{name} was sent {attempts} times; listing the devices once more at the end, to find a "
    "duplicate, failed ({list_error}): check {name} in the NAC",
)


def creation_body(spec):
    """The POST /api/device body: hostname, group, profile, and macs / ips only when given."""
    return dict((key, spec[key]) for key in DEVICE_KEYS if key in spec)


def creation(create):
    """The operation that creates the device of an action (ensure_devices.Outcome) with ``create(body)``, which POSTs
    one device and returns the reply dict or None, raising NacError. When ``create`` is a method with a steps form
    beside it (NacClient.create_device and its ``create_device_steps``), the writes use that form: they run on the
    apply engine's event loop instead of its helper threads."""
    steps = _steps_form(create)
    return Operation(
        write=_writer(create),
        write_steps=None if steps is None else _steps_writer(steps),
        index=_index,
        shows=_same_hostname,
        settled=lambda outcome, shown: bool(shown),
        confirm=_confirmed,
        preview=lambda outcome: creation_body(outcome.spec),
        wording=CREATION_WORDING,
    )


def _writer(create):
    """One creation attempt: the new device's id from the reply when it has an integer one, and the body sent
    merged with the reply as its record."""

    def write(outcome):
        body = creation_body(outcome.spec)
        return _answer(body, create(body))

    return write


def _steps_writer(create_steps):
    """``_writer`` as steps (http/loop.py), over ``create_steps(body)``."""

    def write_steps(outcome):
        body = creation_body(outcome.spec)
        return _answer(body, (yield from create_steps(body)))

    return write_steps


def _steps_form(create):
    """The steps form of ``create`` when it is a bound method with a ``<name>_steps`` method beside it, else None."""
    owner, name = getattr(create, "__self__", None), getattr(create, "__name__", None)
    return getattr(owner, name + "_steps", None) if owner is not None and name else None


def _answer(body, reply):
    """The Answer of a creation answered ``reply``: the new device's id when the reply has an integer one, and the
    body sent merged with the reply as its record."""
    new_id = reply.get("id") if isinstance(reply, dict) else None
    new_id = new_id if isinstance(new_id, int) and not isinstance(new_id, bool) else None
    record = dict(body, **(reply or {}))
    record["id"] = new_id
    return Answer(new_id, record, reply)


Listed = collections.namedtuple("Listed", "by_hostname by_id")

STORED_OTHERWISE = (
    "created, but the NAC lists the new device (id {id}) as {stored}, not as {name}: it stored another name than "
    "the one sent. The next run would not find {name} and would create another device: use the stored name "
    "{stored} as the hostname"
)


def _index(records):
    """One list read, indexed by hostname (hostnames.index_by_hostname) and by id."""
    by_id = {}
    for record in records:
        by_id.setdefault(record["id"], []).append(record)
    return Listed(index_by_hostname(records), by_id)


STORED_UNIDENTIFIED = (
    "POST /api/device was answered as a success without a device id, and the device list does not show {name}, "
    "but it lists {stored} (id {id}), a device that was not listed before this creation: probably this very device, "
    "stored under another name than the one sent. The next run would not find {name} and would create another "
    "device: use the stored name {stored} as the hostname"
)


def _same_hostname(outcome, index):
    """The listed devices that have the outcome's hostname; when there are none, the outcome keeps (``stored_after``)
    the listed devices under a probable stored form of its name that were not listed when it was planned."""
    found = index.by_hostname.get(hostname_key(outcome.hostname), [])
    if not found:
        before = getattr(outcome, "stored_before", ())
        outcome.stored_after = [
            record
            for key, _relation in stored_forms(outcome.hostname)
            for record in index.by_hostname.get(key, ())
            if record["id"] not in before
        ]
    return found


def name_stored_form(outcome):
    """Say, of a creation answered without an id and never listed under its name, the device that appeared under a
    probable stored form of its name, as a creation answered with an id is told (STORED_OTHERWISE)."""
    stored = getattr(outcome, "stored_after", None)
    if outcome.state == FAILED and outcome.answered and outcome.written_id is None and stored:
        outcome.error = STORED_UNIDENTIFIED.format(
            name=outcome.hostname,
            stored=" or ".join(sorted(set(quoted(record["hostname"]) for record in stored))),
            id=", ".join(str(record["id"]) for record in stored),
        )


def _confirmed(outcome, index):
    """What the list says of a creation answered with an id: CONFIRMED when that id is listed under the requested
    name, MISSING when it is not listed, else the message naming the name it is stored under."""
    listed = index.by_id.get(outcome.written_id)
    if not listed:
        return MISSING
    key = hostname_key(outcome.hostname)
    if any(hostname_key(record["hostname"]) == key for record in listed):
        return CONFIRMED
    return STORED_OTHERWISE.format(id=outcome.written_id, stored=quoted(listed[0]["hostname"]), name=outcome.hostname)
