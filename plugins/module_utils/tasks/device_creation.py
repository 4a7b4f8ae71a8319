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

from typing import Callable

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown as quoted
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import stored_forms
from ansible_collections.netaccess.nac.plugins.module_utils.nac.resources import CREATE, DEVICE, Resource
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import (
    CONFIRMED,
    FAILED,
    MISSING,
    Answer,
    Operation,
    Wording,
)

DEVICE_KEYS = tuple(field.name for field in DEVICE.fields)

# What the apply engine says about a creation (nac_device's messages): the words the declaration gives the verb.
CREATION_WORDING = Wording(**DEVICE.verb(CREATE).words)


def creation_body(spec: dict) -> dict:
    """Return the POST /api/device body: hostname, group, profile, and macs / ips only when given."""
    return DEVICE.body(spec)


def creation(create: Callable, resource: Resource = DEVICE, verb: str = CREATE) -> Operation:
    """Return the operation that creates the record of an action (ensure_devices.Outcome) with ``create(body)``,
    which POSTs one record and returns the reply dict or None, raising NacError. ``resource`` (resources.py)
    declares the body's fields, how the list is indexed and, for its ``verb``, the words said. When ``create`` is a
    method with a steps form beside it (NacClient.create_device and its ``create_device_steps``), the writes use
    that form: they run on the apply engine's event loop instead of its helper thread."""
    steps = _steps_form(create)
    return Operation(
        write=_writer(create, resource),
        write_steps=None if steps is None else _steps_writer(steps, resource),
        index=resource.index,
        shows=lambda outcome, index: _same_hostname(outcome, index, resource),
        settled=lambda outcome, shown: bool(shown),
        confirm=lambda outcome, index: _confirmed(outcome, index, resource),
        preview=lambda outcome: resource.body(outcome.spec),
        wording=Wording(**resource.verb(verb).words),
    )


def _writer(create, resource):
    """Return the write of one creation attempt: the new record's id from the reply when it has an integer one,
    and the body sent merged with the reply as its record."""

    def write(outcome):
        body = resource.body(outcome.spec)
        return _answer(body, create(body))

    return write


def _steps_writer(create_steps, resource):
    """Return ``_writer``'s write as steps (http/loop.py), over ``create_steps(body)``."""

    def write_steps(outcome):
        body = resource.body(outcome.spec)
        return _answer(body, (yield from create_steps(body)))

    return write_steps


def _steps_form(create):
    """Return the steps form of ``create`` when it is a bound method with a ``<name>_steps`` method beside it, else
    None."""
    owner, name = getattr(create, "__self__", None), getattr(create, "__name__", None)
    return getattr(owner, name + "_steps", None) if owner is not None and name else None


def _answer(body, reply):
    """Return the Answer of a creation answered ``reply``: the new record's id when the reply has an integer one, and
    the body sent merged with the reply as its record."""
    new_id = reply.get("id") if isinstance(reply, dict) else None
    new_id = new_id if isinstance(new_id, int) and not isinstance(new_id, bool) else None
    record = dict(body, **(reply or {}))
    record["id"] = new_id
    return Answer(new_id, record, reply)


STORED_OTHERWISE = (
    "created, but the NAC lists the new device (id {id}) as {stored}, not as {name}: it stored another name than "
    "the one sent. The next run would not find {name} and would create another device: use the stored name "
    "{stored} as the hostname"
)


STORED_UNIDENTIFIED = (
    "POST /api/device was answered as a success without a device id, and the device list does not show {name}, "
    "but it lists {stored} (id {id}), a device that was not listed before this creation: probably this very device, "
    "stored under another name than the one sent. The next run would not find {name} and would create another "
    "device: use the stored name {stored} as the hostname"
)


def _same_hostname(outcome, index, resource):
    """Return the listed records that have the outcome's name; when there are none, the outcome keeps (``stored_after``)
    the listed records under a probable stored form of its name that were not listed when it was planned."""
    found = index.by_name.get(resource.name_key(outcome.name), [])
    if not found:
        before = getattr(outcome, "stored_before", ())
        outcome.stored_after = [
            record
            for key, _relation in stored_forms(outcome.name)
            for record in index.by_name.get(key, ())
            if record[resource.key] not in before
        ]
    return found


def name_stored_form(outcome, resource: Resource = DEVICE) -> None:
    """Say, of a creation answered without an id and never listed under its name, the record that appeared under a
    probable stored form of its name, as a creation answered with an id is told (STORED_OTHERWISE)."""
    stored = getattr(outcome, "stored_after", None)
    if outcome.state == FAILED and outcome.answered and outcome.written_id is None and stored:
        outcome.error = STORED_UNIDENTIFIED.format(
            name=outcome.name,
            stored=" or ".join(sorted(set(quoted(resource.name_of(record)) for record in stored))),
            id=", ".join(str(record[resource.key]) for record in stored),
        )


def _confirmed(outcome, index, resource):
    """Say what the list says of a creation answered with an id: CONFIRMED when that id is listed under the requested
    name, MISSING when it is not listed, else the message naming the name it is stored under."""
    listed = index.by_id.get(outcome.written_id)
    if not listed:
        return MISSING
    key = resource.name_key(outcome.name)
    if any(resource.name_key(resource.name_of(record)) == key for record in listed):
        return CONFIRMED
    stored = quoted(resource.name_of(listed[0]))
    return STORED_OTHERWISE.format(id=outcome.written_id, stored=stored, name=outcome.name)
