# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every creation confirmed by reading (issue 25): after a task's creations, one list read for all of them checks
that each created id is listed, under the requested name, and whether another device has that name. Against the
emulator's servers that confirm nothing (a list capped without a sign, another client racing ours, a server
storing a normalised name, a read replica behind the writes), through the real client and nac_device's flow
(ensure_devices.ensure_devices), on a fake clock that the emulator's own clock follows (the replica catches up)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    CREATED,
    EXISTING,
    FAILED,
    device_specs,
    ensure_devices,
    summary,
)
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator

KEY = "nac-demo-admin-key"
LIST = "GET /api/device"
CREATE = "POST /api/device"
SEEDED = 30  # bulk-000001 ... bulk-000030, ids 6 ... 35 after the configured devices


@pytest.fixture(scope="module")
def server():
    with Emulator(dict(DEFAULT_CONFIG, seed_devices=SEEDED - 5)).start() as running:
        yield running


@pytest.fixture
def emu(server):
    server.reset()
    return server


class Run:
    """ensure_devices against the emulator, on a fake clock: each pause of the settle window moves the
    emulator's clock too, so a lagging replica catches up as it would in real time. ``lists``: when each list
    of the devices was read."""

    def __init__(self, emu, settle_timeout=60):
        self.emu, self.settle_timeout = emu, settle_timeout
        self.now, self.lists = 0.0, []
        self.client = NacClient(emu.url, api_key=KEY, max_retries=0, sleep=lambda seconds: None)

    def sleep(self, seconds):
        self.now += seconds
        self.emu.advance_clock(seconds)

    def list_devices(self):
        self.lists.append(self.now)
        return self.client.list_devices(compact=True)

    def ensure(self, names, **fields):
        fields = fields or dict(group="Cameras", profile="Camera")
        specs = device_specs([dict(hostname=name, **fields) for name in names])
        return ensure_devices(
            specs,
            self.list_devices,
            self.client.create_device,
            settle_timeout=self.settle_timeout,
            clock=lambda: self.now,
            sleep=self.sleep,
        )


def held(emu, name):
    """The ids of the devices the server holds under ``name`` (its whole list, never capped nor lagging)."""
    return [record["id"] for record in emu.records() if record["hostname"].lower() == name.lower()]


def names_every_id(outcome, ids):
    words = " | ".join([outcome.error or ""] + outcome.warnings)
    return all(re.search(r"(?<![0-9])%d(?![0-9])" % ident, words) for ident in ids)


def assert_consistent(outcomes):
    """A result never contradicts itself: the counts are those of the items, an item with an error is never
    counted created, and every item that wrote something says so (changed) whatever its state."""
    counts = summary(outcomes)
    assert counts["created"] == sum(1 for o in outcomes if o.state == CREATED and o.error is None)
    assert counts["failures"] == sum(1 for o in outcomes if o.error is not None)
    assert all(o.changed for o in outcomes if o.state == CREATED)


# -- everything confirmed at once: the request budget ---------------------------------------------------------


@pytest.mark.parametrize("count", [1, 20])
def test_creations_confirmed_at_once_cost_one_list_for_the_whole_task(emu, count):
    run = Run(emu)
    outcomes = run.ensure(["new-%03d" % n for n in range(count)])
    assert [(o.state, o.error, o.warnings) for o in outcomes] == [(CREATED, None, [])] * count
    assert [o.id for o in outcomes] == [held(emu, o.hostname)[0] for o in outcomes]
    # the plan's list, one list confirming the first creation, one confirming the others: N + 3 (one device: 3)
    assert emu.request_counts() == {LIST: 2 if count == 1 else 3, CREATE: count}
    assert run.lists == [0] * (2 if count == 1 else 3)


# -- a list capped without a sign ------------------------------------------------------------------------------


UNPROVEN = (
    "not attempted: the first creation of this task, %s (id %d), was not confirmed by the device list (its entry "
    "says why), so no other device was sent: a list that hides or renames the devices it holds would have had each of "
    "them created again"
)


@pytest.mark.parametrize("count", [1, 3])
def test_a_creation_that_a_capped_list_never_shows_fails_loudly_after_the_window(emu, count):
    emu.settings(list_cap=20, allow_duplicate_hostnames=True)  # 30 devices, the first 20 listed
    hidden = [record["hostname"] for record in emu.records()[20 : 20 + count]]  # exist, the list never shows them
    run = Run(emu)
    outcomes = run.ensure(hidden)
    assert run.lists == [0, 0, 1, 3, 7, 15, 31, 60]  # waited for during the whole settle window, then reported
    first = outcomes[0]
    ours = first.written_id
    assert (first.state, first.id, first.changed) == (FAILED, ours, True)
    assert held(emu, first.hostname)[-1] == ours  # created (a duplicate of the hidden device)
    assert first.error == (
        "created %s (id %d in the reply), but the device list did not list id %d during the settle window of "
        "60 s (its last read listed 20 devices), so whether another device named %s exists is unknown: the "
        "list is probably capped (it shows only its first devices, without a sign) or served by a read replica "
        "lagging more than 60 s behind the writes. A next run that does not find %s would create it again: "
        "check %s in the NAC (a lagging list: raise settle_timeout)"
        % ((first.hostname, ours, ours) + (first.hostname,) * 3)
    )
    assert first.entry()["changed"] is True and first.entry()["id"] == ours
    for outcome in outcomes[1:]:  # never sent: one device at risk per run, never a bulk
        assert (outcome.state, outcome.id, outcome.changed) == (FAILED, None, False)
        assert outcome.error == UNPROVEN % (first.hostname, ours)
        assert len(held(emu, outcome.hostname)) == 1
    assert_consistent(outcomes)
    assert emu.request_counts()[CREATE] == 1  # a creation answered with an id is never sent again


# -- another client creates the same name between our list and our POST --------------------------------------


def test_a_twin_created_by_another_client_is_named_with_every_id(emu):
    emu.settings(race_twins=10, allow_duplicate_hostnames=True)
    run = Run(emu)
    outcome = run.ensure(["raced-00"])[0]
    ids = held(emu, outcome.hostname)
    assert len(ids) == 2 and outcome.id == outcome.written_id == ids[1]
    assert (outcome.state, outcome.error, outcome.changed) == (CREATED, None, True)
    assert outcome.warnings == [
        "created raced-00 (id %d), but the device list shows 2 devices named raced-00 (ids %d, %d): another client "
        "created one too (the API cannot prevent it); remove the extra device in the NAC" % (ids[1], ids[0], ids[1])
    ]
    assert emu.request_counts() == {LIST: 2, CREATE: 1}
    assert_consistent([outcome])


def test_a_twin_of_the_first_creation_stops_the_others(emu):
    emu.settings(race_twins=10, allow_duplicate_hostnames=True)
    outcomes = Run(emu).ensure(["raced-%02d" % n for n in range(5)])
    first = outcomes[0]
    assert first.state == CREATED and len(held(emu, "raced-00")) == 2 and names_every_id(first, held(emu, "raced-00"))
    assert [o.error for o in outcomes[1:]] == [UNPROVEN % ("raced-00", first.id)] * 4
    assert all(held(emu, o.hostname) == [] for o in outcomes[1:])
    assert emu.request_counts() == {LIST: 2, CREATE: 1}
    assert_consistent(outcomes)


# -- a server that stores a normalised name -------------------------------------------------------------------


@pytest.mark.parametrize("rule, stored", [("first-label", "Cam-77"), ("first-label-lower", "cam-77")])
def test_a_device_stored_under_another_name_fails_with_its_id_and_the_stored_name(emu, rule, stored):
    emu.settings(stored_hostname=rule)
    run = Run(emu)
    outcome = run.ensure(["Cam-77.lab.example"])[0]
    listed = [record for record in emu.records() if record["hostname"] == stored]
    assert len(listed) == 1 and (outcome.state, outcome.id, outcome.changed) == (FAILED, listed[0]["id"], True)
    assert outcome.error == (
        "created, but the NAC lists the new device (id %d) as %s, not as Cam-77.lab.example: it stored another name "
        "than the one sent. The next run would not find Cam-77.lab.example and would create another device: use the "
        "stored name %s as the hostname" % (listed[0]["id"], stored, stored)
    )
    assert run.lists == [0, 0]  # decided by the first list: no waiting
    assert_consistent([outcome])


def test_a_stored_name_equal_by_the_same_name_rule_is_confirmed(emu):
    emu.settings(stored_hostname="lower")  # CAM-78 stored as cam-78: the same name (ASCII without case)
    outcome = Run(emu).ensure(["CAM-78"])[0]
    assert (outcome.state, outcome.error, outcome.warnings) == (CREATED, None, [])


# -- a read replica behind the writes -------------------------------------------------------------------------


def test_a_lagging_list_is_waited_for_until_it_lists_the_creations(emu):
    emu.settings(list_lag=10)
    run = Run(emu)
    outcomes = run.ensure(["lag-01", "lag-02"])
    assert [(o.state, o.error, o.warnings) for o in outcomes] == [(CREATED, None, [])] * 2
    # lag-01 alone, listed from 10 s on: the list at 15 s confirms it (one settle at most); then lag-02, sent at
    # 15 s and listed from 25 s on: the list at 30 s confirms it
    assert run.lists == [0, 0, 1, 3, 7, 15, 15, 16, 18, 22, 30]
    rerun = Run(emu).ensure(["lag-01", "lag-02"])  # the replica has caught up: nothing created again
    assert [o.state for o in rerun] == [EXISTING] * 2 and emu.request_counts()[CREATE] == 2


def test_a_second_run_within_the_lag_names_the_duplicate_once_the_list_catches_up(emu):
    emu.settings(list_lag=10, allow_duplicate_hostnames=True)
    first = Run(emu)
    first.settle_timeout = 0  # the first run does not wait: its creations are not listed yet
    assert [o.state for o in first.ensure(["lag-03"])] == [FAILED]
    outcome = Run(emu).ensure(["lag-03"])[0]  # its plan's list lags: it creates lag-03 again
    ids = held(emu, "lag-03")
    assert len(ids) == 2 and outcome.state == CREATED and names_every_id(outcome, ids)


def test_a_list_lagging_beyond_the_window_fails_saying_why(emu):
    emu.settings(list_lag=100)
    run = Run(emu, settle_timeout=30)
    outcome = run.ensure(["lag-04"])[0]
    assert (outcome.state, outcome.changed, outcome.id) == (FAILED, True, held(emu, "lag-04")[0])
    assert "did not list id %d during the settle window of 30 s" % outcome.id in outcome.error
    assert "lagging more than 30 s behind the writes" in outcome.error and "unknown" in outcome.error
    assert run.lists == [0, 0, 1, 3, 7, 15, 30]
