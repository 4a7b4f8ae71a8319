# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Servers whose replies confirm nothing (issue 25), through the real client against the emulator: a creation
answered with a redirect has an unknown outcome and is looked up, never reported "not created"; pages that
shift while they are read (a device inserted at the front, the first one deleted) are read again from the
start, and a list that shifts again fails loudly. For each caller that lists: the client (the inventory
plugin reads ``list_devices`` whole), nac_device's ensure, nac_dot1x_status and the event source's round."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient, NacError, NacResponseError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import Shifts
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import poll_once
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    CREATED,
    EXISTING,
    device_specs,
    ensure_devices,
)
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator

KEY = "nac-demo-admin-key"
LIST = "GET /api/device"
CREATE = "POST /api/device"
SHIFTS = ("insert-front", "delete-front")


@pytest.fixture(scope="module")
def server():
    config = dict(DEFAULT_CONFIG, seed_devices=25)  # 30 devices: 3 pages of 10
    with Emulator(config).start() as running:
        yield running


@pytest.fixture
def emu(server):
    server.reset()
    server.settings(page_size=10)
    return server


def client(emu):
    return NacClient(emu.url, api_key=KEY, max_retries=0, sleep=lambda seconds: None)


def ensure(emu, names, **fields):
    specs = device_specs([dict(hostname=name, **fields) for name in names])
    nac = client(emu)
    now = [0.0]  # a fake clock: the settle window passes without real sleeping
    return ensure_devices(
        specs,
        lambda: nac.list_devices(compact=True),
        nac.create_device,
        clock=lambda: now[0],
        sleep=lambda seconds: now.__setitem__(0, now[0] + seconds),
    )


def ids(records):
    return [record["id"] for record in records]


# -- a creation answered with a redirect ----------------------------------------------------------


@pytest.mark.parametrize("status", [303, 302, 301, 307, 308])
def test_a_creation_answered_with_a_redirect_is_looked_up_and_reported_created(emu, status):
    emu.settings(page_size=0, creation_redirect=status)
    outcomes = ensure(emu, ["moved-01", "moved-02"], group="Cameras", profile="Camera")
    created = dict((r["hostname"], r["id"]) for r in emu.records() if r["hostname"].startswith("moved-"))
    assert [(o.state, o.id, o.error) for o in outcomes] == [
        (CREATED, created["moved-01"], None),
        (CREATED, created["moved-02"], None),
    ]
    assert all(outcome.changed for outcome in outcomes)
    counts = emu.request_counts()
    # never followed, never re-sent: the plan's list, one list settling the first (sent alone), one the second
    assert (counts[CREATE], counts[LIST]) == (2, 3)
    assert "GET /api/device/%d" % created["moved-01"] not in counts


def test_a_redirected_creation_error_states_the_outcome_unknown(emu):
    emu.settings(creation_redirect=303)
    with pytest.raises(NacError) as raised:
        client(emu).create_device(dict(hostname="moved-03", group="Cameras", profile="Camera"))
    assert raised.value.outcome_unknown is True and raised.value.status == 303
    assert "may have been processed" in raised.value.message


# -- pages that shift while they are read -----------------------------------------------------------


@pytest.mark.parametrize("compact", [False, True], ids=["whole", "compact"])
@pytest.mark.parametrize("shift", SHIFTS)
def test_a_list_that_shifted_is_read_again_whole(emu, shift, compact):
    emu.settings(page_shift=shift)
    listed = client(emu).list_devices(compact=compact)
    truth = emu.records()
    assert ids(listed) == ids(truth) and len(set(ids(listed))) == len(listed)  # every device once, none unread
    assert [record["hostname"] for record in listed] == [record["hostname"] for record in truth]
    assert emu.variant_counts()["shifts"] == 1
    # pages 1-2 (the shift shows on page 2), then every page again (31 or 29 devices now)
    assert emu.request_counts()[LIST] == 2 + -(-len(truth) // 10)


@pytest.mark.parametrize("shift", SHIFTS)
def test_a_list_that_shifts_again_fails_loudly(emu, shift):
    emu.settings(page_shift=shift, page_shifts=2)
    with pytest.raises(NacResponseError) as raised:
        client(emu).list_devices()
    message = raised.value.message
    assert "the list changed while its pages were read, and again when it was read once more" in message
    if shift == "insert-front":  # the last record of page 1 comes again first on page 2
        assert "(the same record (id 10, 'bulk-000005') was listed on two pages, the second time on page 2; " in message
        assert "then the same record (id 9, 'bulk-000004')" in message
    else:
        assert "(X-Total-Count: 30) to page 2 (X-Total-Count: 29); then " in message
        assert "(X-Total-Count: 29) to page 2 (X-Total-Count: 28)" in message
    assert emu.request_counts()[LIST] == 4


def test_a_repeated_id_with_another_record_is_data_not_a_shift(emu):
    emu.seed([{"id": 25, "hostname": "another-25"}])  # id 25 twice: on page 3 (after 24 others of ids < 25)
    emu.seed([{"id": 5, "hostname": "another-05"}])  # id 5 twice, on page 1
    listed = client(emu).list_devices()
    assert ids(listed) == ids(emu.records()) and emu.request_counts()[LIST] == 4  # read once


@pytest.mark.parametrize("shift", SHIFTS)
def test_nac_device_ensures_existing_devices_without_a_false_claim_or_a_duplicate(emu, shift):
    emu.settings(page_shift=shift)
    names = [record["hostname"] for record in emu.records()[1:]]  # the first may be deleted by the shift
    outcomes = ensure(emu, names)
    assert [(o.state, o.error) for o in outcomes] == [(EXISTING, None)] * len(names)
    assert CREATE not in emu.request_counts()
    assert [o.id for o in outcomes] == [r["id"] for r in emu.records() if r["hostname"] in names]


@pytest.mark.parametrize("shift", SHIFTS)
def test_dot1x_status_of_all_devices_is_one_result_per_device(emu, shift):
    emu.settings(page_shift=shift)
    report = dot1x_status(client(emu), all_devices=True)
    truth = emu.records()
    assert sorted(r["id"] for r in report.results) == sorted(ids(truth))
    assert not report.warnings and not [r for r in report.results if r.get("error")]


@pytest.mark.parametrize("shift", SHIFTS)
def test_the_event_source_round_knows_every_device_once(emu, shift):
    emu.settings(page_shift=shift)
    round_ = poll_once(client(emu), initial=True)
    assert not [event for event in round_.events if "nac_dot1x_error" in event]
    events = sorted(event["nac_dot1x"]["id"] for event in round_.events)
    assert events == sorted(ids(emu.records())) == sorted(round_.known)  # one event per device, none unread


# -- the signs, one by one --------------------------------------------------------------------------


def test_a_count_header_that_changes_between_pages_is_a_shift():
    shifts = Shifts("id")
    records = [{"id": 1, "hostname": "a"}, {"id": 2, "hostname": "b"}]
    assert shifts.page(records, 0, 1, {"X-Total-Count": "4"}, False) is None
    records += [{"id": 3, "hostname": "c"}]
    sign = shifts.page(records, 2, 2, {"X-Total-Count": "3"}, False)
    assert sign == "the count changed from page 1 (X-Total-Count: 4) to page 2 (X-Total-Count: 3)"


def test_a_content_range_whole_that_changes_is_a_shift_but_not_its_range():
    shifts = Shifts("id")
    assert shifts.page([{"id": 1}], 0, 1, {"Content-Range": "items 0-0/2"}, False) is None
    assert shifts.page([{"id": 1}, {"id": 2}], 1, 2, {"Content-Range": "items 1-1/2"}, True) is None
    shifts = Shifts("id")
    shifts.page([{"id": 1}], 0, 1, {"Content-Range": "items 0-0/2"}, False)
    assert "to page 2 (Content-Range: /3)" in shifts.page(
        [{"id": 1}, {"id": 2}], 1, 2, {"Content-Range": "items 1-1/3"}, False
    )


def test_a_last_page_that_counts_fewer_than_were_read_is_a_shift():
    shifts = Shifts("id")
    shifts.page([{"id": 1}], 0, 1, {"X-Total-Count": "1"}, False)
    sign = shifts.page([{"id": 1}, {"id": 2}], 1, 2, {"X-Total-Count": "1"}, True)
    assert sign == "the last page counts 1 records (X-Total-Count: 1), 2 were read"


def test_the_same_key_and_record_on_two_pages_is_a_shift():
    shifts = Shifts("tag")
    shifts.page([{"tag": "a"}], 0, 1, {}, False)
    assert shifts.page([{"tag": "a"}, {"tag": "a"}], 1, 2, {}, True).startswith("the same record (tag a")
    shifts = Shifts("id")
    shifts.page([{"id": 1, "hostname": "a"}], 0, 1, {}, False)
    assert shifts.page([{"id": 1, "hostname": "a"}, {"id": 1, "hostname": "b"}], 1, 2, {}, True) is None


def test_an_id_that_cannot_identify_a_record_is_left_to_the_shape_checks():
    shifts = Shifts("id")
    shifts.page([{"id": 1}, {"id": [1]}], 0, 1, {}, False)
    assert shifts.page([{"id": [1]}, {"id": 1, "x": 2}, {"id": {"a": 1}}], 2, 2, {}, True) is None


def test_a_single_page_keeps_no_keys():
    shifts = Shifts("id")
    assert shifts.page([{"id": 1}, {"id": 1}], 0, 1, {"X-Total-Count": "1"}, True) is None  # one page: data
    assert shifts.keys is None
