# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A second resource, made up here (a switch, named by ``name``, at /api/switch) with a verb the device does not
have (a deletion, for ``state: absent``), declared in this file only and carried by the generic machinery as it
is: NacClient.list_records and NacClient.send (the requests, over a fake server), record_specs (the checks of the
declared fields), ensure_devices.ensure (the plan of each wanted state, the counts of a result) and the apply
engine's operations (tasks/operations.py: a creation settled once shown, a deletion once its id is gone). No
plugin file knows of the switch: a next resource or verb is a declaration (nac/resources.py) and a module."""

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.nac.resources import (
    CREATE,
    DELETE,
    GONE,
    LIST,
    NAME,
    SHOWN,
    TEXT,
    VALUES,
    Field,
    Resource,
    Verb,
    Wanted,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import DONE, FAILED, Wording
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    ABSENT,
    EXISTING,
    LEAVE,
    ensure,
    failure_message,
    summary,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.record_specs import InvalidRequest, device_specs
from ansible_collections.netaccess.nac.tests.unit.helpers import KEY, URL, Routes, mounted


def _serial(value):
    """A switch's serial number in capitals; anything but letters and digits is refused."""
    if not isinstance(value, str) or not value.isalnum():
        raise ValueError("'%s' is not a serial number (letters and digits)" % (value,))
    return value.upper()


def _words(verb):
    """Every sentence the apply engine may say, in this resource's own (short) words: the field's name and the
    values it is given, so that a test sees which sentence was said."""
    return dict((field, "%s %s: {name}" % (verb, field)) for field in Wording._fields)


SWITCH = Resource(
    "switch",
    "switches",
    fields=(
        Field("name", NAME, "name", None),
        Field("site", TEXT, "site", None),
        Field("serials", VALUES, "serial", _serial),
    ),
    verbs={
        LIST: Verb("GET", "/api/switch", False, True, None, None, None),
        CREATE: Verb("POST", "/api/switch", True, False, SHOWN, "created", _words("creation")),
        DELETE: Verb("DELETE", "/api/switch/{id}", True, False, GONE, "deleted", _words("deletion")),
    },
    states={"present": Wanted(listed=None, missing=CREATE), "absent": Wanted(listed=DELETE, missing=None)},
    needed=("site",),
)


class Switches:
    """A server of switches behind the real client: its list, its creations, and deletions that may lose their
    reply (HTTP 500) after they removed the switch (``lost``) or without removing it (``failing``)."""

    def __init__(self, *names):
        self.records = [dict(id=index, name=name, site="HQ") for index, name in enumerate(names, 1)]
        self.bodies, self.lost, self.failing = [], set(), set()
        routes = {"GET /api/switch": lambda body: (200, list(self.records)), "POST /api/switch": self.create}
        for ident in range(1, 10):
            routes["DELETE /api/switch/%d" % ident] = lambda body, ident=ident: self.delete(ident)
        self.wire = Routes(routes)
        self.client = mounted(NacClient(URL, api_key=KEY, max_retries=0, sleep=lambda seconds: None), self.wire)

    def create(self, body):
        self.bodies.append(body)
        self.records.append(dict(body, id=len(self.records) + 1))
        return 201, {"id": len(self.records)}

    def delete(self, ident):
        if ident in self.failing:
            return 500, {"error": "database busy"}
        self.records = [record for record in self.records if record["id"] != ident]
        return (500, {"error": "reply lost"}) if ident in self.lost else (204, None)

    def ensure(self, items, state="present", **settling):
        """Run the generic machinery on ``items`` for ``state``, on a clock that a wait advances."""
        now = [0.0]
        settling.setdefault("clock", lambda: now[0])
        settling.setdefault("sleep", lambda seconds: now.__setitem__(0, now[0] + seconds))
        writes = {
            CREATE: lambda body: self.client.send(SWITCH, CREATE, body=body),
            DELETE: lambda ident: self.client.send(SWITCH, DELETE, ident=ident),
        }
        specs = device_specs(items, "switches", resource=SWITCH)
        return ensure(SWITCH, specs, lambda: self.client.list_records(SWITCH), writes, state, **settling)


def test_a_made_up_resource_is_listed_and_created_by_its_declaration():
    server = Switches("sw-01")
    outcomes = server.ensure([dict(name="SW-01"), dict(name="sw-02", site="Lab", serials=["ab12"])])
    assert [(outcome.name, outcome.state, outcome.id) for outcome in outcomes] == [
        ("SW-01", EXISTING, 1),
        ("sw-02", DONE, 2),
    ]
    assert server.bodies == [{"name": "sw-02", "site": "Lab", "serials": ["AB12"]}]  # the declared fields, normalised
    assert server.wire.sent == ["GET /api/switch", "POST /api/switch", "GET /api/switch"]  # listed, created, confirmed
    assert summary(outcomes, SWITCH) == {"created": 1, "deleted": 0, "existing": 1, "failures": 0}


def test_a_made_up_verb_deletes_the_listed_id_and_leaves_a_missing_record_absent():
    server = Switches("sw-01", "sw-02")
    outcomes = server.ensure([dict(name="sw-02"), dict(name="sw-09")], state="absent")
    assert [(outcome.verb, outcome.state, outcome.id) for outcome in outcomes] == [
        (DELETE, DONE, 2),
        (LEAVE, ABSENT, None),
    ]
    assert server.wire.sent == ["GET /api/switch", "DELETE /api/switch/2", "GET /api/switch"]
    assert [record["name"] for record in server.records] == ["sw-01"]
    assert summary(outcomes, SWITCH) == {"created": 0, "deleted": 1, "existing": 0, "failures": 0}


def test_an_uncertain_deletion_is_decided_from_the_list_and_not_sent_again():
    server = Switches("sw-01")
    server.lost.add(1)
    outcome = server.ensure([dict(name="sw-01")], state="absent")[0]
    assert (outcome.state, outcome.error, outcome.attempts) == (DONE, None, 1)
    assert server.wire.sent == ["GET /api/switch", "DELETE /api/switch/1", "GET /api/switch"]


def test_an_uncertain_deletion_still_listed_fails_in_the_declared_words():
    server = Switches("sw-01")
    server.failing.add(1)
    outcome = server.ensure([dict(name="sw-01")], state="absent", settle_timeout=2, max_resends=0)[0]
    assert outcome.state == FAILED
    assert outcome.error == "deletion unknown_not_shown: sw-01"
    assert server.wire.sent.count("DELETE /api/switch/1") == 1
    assert failure_message(outcomes=[outcome], resource=SWITCH).startswith(
        "1 of 1 switches failed (0 created, 0 deleted, 0 existing): sw-01: "
    )


def test_check_mode_writes_nothing_and_reports_what_would_be_done():
    server = Switches("sw-01")
    created = server.ensure([dict(name="sw-05", site="Lab")], check_mode=True)[0]
    deleted = server.ensure([dict(name="sw-01")], state="absent", check_mode=True)[0]
    assert (created.state, created.record) == (DONE, {"name": "sw-05", "site": "Lab"})
    assert (deleted.state, deleted.verb, deleted.id) == (DONE, DELETE, 1)
    assert server.wire.sent == ["GET /api/switch", "GET /api/switch"]


def test_the_declared_fields_are_checked_before_anything_is_sent():
    server = Switches("sw-01")
    with pytest.raises(InvalidRequest) as bad:
        server.ensure([dict(name="sw-02", site="Lab", serials=["ab-12"])])
    assert str(bad.value) == (
        "Invalid switch request, nothing was sent: switches[0] (sw-02): serials: 'ab-12' is not a serial number "
        "(letters and digits)"
    )
    with pytest.raises(InvalidRequest) as incomplete:
        server.ensure([dict(name="sw-02")])
    assert str(incomplete.value) == (
        "Invalid switch request, nothing was created: sw-02 does not exist and needs site to be created"
    )
    assert server.wire.sent == ["GET /api/switch"]  # the list, read to know sw-02 is missing; no write


def test_a_verb_or_a_path_the_declaration_does_not_give_is_refused_before_sending():
    server = Switches("sw-01")
    with pytest.raises(ValueError, match="the switch resource declares no verb 'update'"):
        server.client.send(SWITCH, "update", body={})
    with pytest.raises(ValueError, match=r"DELETE /api/switch/\{id\} needs the integer id of a switch, not None"):
        server.client.send(SWITCH, DELETE)
    assert server.wire.sent == []
