# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes that cannot multiply (issue 34). A requested name whose probable stored form is listed (its first DNS
label, without or with a trailing dot) is not created again unless ``stored_names: exact`` (the plan, nac_device,
check mode), and the first creation of a task is confirmed by reading before any other is sent: a server that
shortens names or caps its list costs one device per run, never a bulk. Each server run three times in a row
against the emulator, counting the devices it holds after each run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import stored_forms
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    CREATED,
    EXACT,
    EXISTING,
    FAILED,
    GUARD,
    PENDING,
    device_specs,
    ensure_devices,
    plan,
)
from ansible_collections.netaccess.nac.plugins.modules import nac_device
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import printed
from ansible_collections.netaccess.nac.tests.unit.helpers import run_module as run

KEY = "nac-demo-admin-key"
LIST = "GET /api/device"
CREATE = "POST /api/device"
CAMERA = dict(group="Cameras", profile="Camera")
RECORDS = [
    {"id": 1, "hostname": "cam-01"},
    {"id": 2, "hostname": "CAM-02"},
    {"id": 3, "hostname": "cam-03.example.com."},
    {"id": 4, "hostname": "cam-04.example.com"},
    {"id": 5, "hostname": "cam-05"},
    {"id": 6, "hostname": "cam-05"},
]


def specs_of(*names):
    return device_specs([dict(hostname=name, **CAMERA) for name in names])


# -- the probable stored forms of a name -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, forms",
    [
        (
            "cam-01.example.com",
            [
                ("cam-01", "the first DNS label of cam-01.example.com"),
                ("cam-01.example.com.", "cam-01.example.com with a trailing dot"),
            ],
        ),
        (
            "CAM-01.Example.COM.",
            [
                ("cam-01", "the first DNS label of CAM-01.Example.COM."),
                ("cam-01.example.com", "CAM-01.Example.COM. without its trailing dot"),
            ],
        ),
        ("cam-01", [("cam-01.", "cam-01 with a trailing dot")]),
        ("cam-01.", [("cam-01", "cam-01. without its trailing dot")]),
        (".hidden", [(".hidden.", ".hidden with a trailing dot")]),  # no label before the dot: no first label
    ],
)
def test_the_probable_stored_forms_of_a_name(name, forms):
    assert stored_forms(name) == forms


# -- the plan: guard (the default) and exact -------------------------------------------------------------------


def test_a_name_whose_first_label_is_listed_is_not_created_and_the_message_says_how_to_proceed():
    outcome = plan(specs_of("cam-01.example.com"), RECORDS)[0]
    assert (outcome.state, outcome.changed, outcome.id) == (FAILED, False, None)
    assert outcome.error == (
        "not created: cam-01 (id 1), the first DNS label of cam-01.example.com, is listed, probably this very device "
        "as stored by a NAC that shortens names (creating it again would add one more device on every run). If it "
        "is, use the stored name cam-01 as the hostname; if it is another device, set stored_names: exact to create "
        "cam-01.example.com beside it"
    )


@pytest.mark.parametrize(
    "name, listed",
    [
        ("Cam-02.lab.example", "CAM-02 (id 2), the first DNS label of Cam-02.lab.example"),  # and in another case
        ("cam-03.example.com", "cam-03.example.com. (id 3), cam-03.example.com with a trailing dot"),
        ("CAM-04.example.com.", "cam-04.example.com (id 4), CAM-04.example.com. without its trailing dot"),
        ("cam-05.b", "cam-05 (id 5), the first DNS label of cam-05.b, is listed; cam-05 (id 6)"),  # every id named
    ],
)
def test_every_probable_stored_form_is_named_with_its_id(name, listed):
    outcome = plan(specs_of(name), RECORDS)[0]
    assert outcome.state == FAILED and outcome.error.startswith("not created: " + listed)


def test_exact_compares_names_only_as_the_same_name():
    outcomes = plan(specs_of("cam-01.example.com", "cam-03.example.com", "cam-01"), RECORDS, EXACT)
    assert [(o.state, o.error) for o in outcomes] == [(PENDING, None), (PENDING, None), (EXISTING, None)]


def test_the_same_name_listed_is_the_device_whatever_its_stored_forms():
    outcomes = plan(specs_of("CAM-01", "cam-04.example.com"), RECORDS + [{"id": 7, "hostname": "cam-04"}])
    assert [(o.state, o.id, o.warnings) for o in outcomes] == [(EXISTING, 1, []), (EXISTING, 4, [])]


def test_a_name_with_no_stored_form_listed_is_created():
    assert [o.state for o in plan(specs_of("cam-09.example.com", "cam-10"), RECORDS, GUARD)] == [PENDING] * 2


def test_check_mode_reports_the_guarded_item_and_writes_nothing():
    created, lists = [], []
    outcomes = ensure_devices(
        specs_of("cam-01.example.com", "cam-09.example.com"),
        lambda: lists.append(1) or list(RECORDS),
        created.append,
        check_mode=True,
    )
    assert [(o.state, o.changed) for o in outcomes] == [(FAILED, False), (CREATED, True)]
    assert outcomes[0].error.startswith("not created: cam-01 (id 1), the first DNS label of cam-01.example.com")
    assert (created, lists) == ([], [1])


# -- nac_device, single form and bulk form, against the emulator -----------------------------------------------


@pytest.fixture(scope="module")
def server():
    with Emulator(dict(DEFAULT_CONFIG, seed_devices=25)).start() as running:  # 30 devices
        yield running


@pytest.fixture
def emu(server):
    server.reset()
    return server


def module(emu, capsys, **args):
    run(nac_device.main, api_url=emu.url, api_key=KEY, max_retries=0, settle_timeout=0, **args)
    return printed(capsys)[0]


@pytest.mark.parametrize("check_mode", [False, True])
def test_nac_device_refuses_a_name_whose_stored_form_is_listed_single_and_bulk(emu, capsys, check_mode):
    emu.settings(stored_hostname="first-label")
    stored = [r for r in emu.records() if r["hostname"] == "cam-01"]  # a device of the emulator's initial state
    assert len(stored) == 1
    mode = dict(_ansible_check_mode=True) if check_mode else {}
    single = module(emu, capsys, hostname="cam-01.lab.example", **dict(CAMERA, **mode))
    assert single["failed"] and not single["changed"]
    assert single["msg"].startswith("not created: cam-01 (id %d), the first DNS label of" % stored[0]["id"])
    bulk = module(emu, capsys, devices=[dict(hostname="CAM-01.lab.example", **CAMERA)], **mode)
    assert bulk["failed"] and bulk["devices"][0]["error"].startswith("not created: cam-01 (id %d)" % stored[0]["id"])
    assert emu.request_counts() == {LIST: 2}


def test_nac_device_with_stored_names_exact_creates_it(emu, capsys):
    result = module(emu, capsys, hostname="cam-01.lab.example", stored_names="exact", **CAMERA)
    assert result["changed"] and not result.get("failed") and result["device"]["hostname"] == "cam-01.lab.example"


def test_nac_device_refuses_an_unknown_stored_names(emu, capsys):
    result = module(emu, capsys, hostname="cam-01.lab.example", stored_names="loose", **CAMERA)
    assert result["failed"] and "stored_names" in result["msg"] and emu.request_counts() == {}


# -- three runs in a row against the servers of issue 34 -------------------------------------------------------


def three_runs(emu, names, stored_names=GUARD):
    """Ensure ``names`` three times in a row (settle window 0: nothing to wait for on these servers); the devices
    the server holds after each run and each run's outcomes."""
    held, runs = [], []
    nac = NacClient(emu.url, api_key=KEY, max_retries=0, sleep=lambda seconds: None)
    for _run in range(3):
        runs.append(
            ensure_devices(
                specs_of(*names),
                lambda: nac.list_devices(compact=True),
                nac.create_device,
                stored_names=stored_names,
                settle_timeout=0,
            )
        )
        held.append(len(emu.records()))
    return held, runs


def test_a_server_storing_the_first_label_gets_one_device_per_run_never_a_duplicate(emu):
    emu.settings(stored_hostname="first-label")
    before = len(emu.records())
    names = ["nn-%02d.lab.example" % n for n in range(5)]
    held, runs = three_runs(emu, names)
    assert [count - before for count in held] == [1, 2, 3]  # before issue 34: 5, 10, 15
    stored = sorted(r["hostname"] for r in emu.records()[before:])
    assert stored == ["nn-00", "nn-01", "nn-02"]  # one new device per run, none twice
    last = runs[2]
    assert [o.state for o in last] == [FAILED] * 5 and [o.changed for o in last] == [False, False, True, False, False]
    assert last[0].error.startswith("not created: nn-00 (id ") and last[1].error.startswith("not created: nn-01 (id ")
    assert "lists the new device (id %d) as nn-02" % last[2].id in last[2].error
    assert last[3].error.startswith("not attempted: the first creation of this task, nn-02.lab.example (id ")


def test_stored_names_exact_on_such_a_server_costs_one_duplicate_per_run_never_a_bulk(emu):
    emu.settings(stored_hostname="first-label", allow_duplicate_hostnames=True)
    before = len(emu.records())
    held, _runs = three_runs(emu, ["ex-%02d.lab.example" % n for n in range(5)], stored_names=EXACT)
    assert [count - before for count in held] == [1, 2, 3]
    assert sorted(r["hostname"] for r in emu.records()[before:]) == ["ex-00"] * 3


def test_a_capped_list_gets_one_device_per_run_never_a_bulk(emu):
    emu.settings(list_cap=20, allow_duplicate_hostnames=True)  # 30 devices, the first 20 listed
    hidden = [record["hostname"] for record in emu.records()[20:]]
    held, runs = three_runs(emu, hidden)
    assert held == [31, 32, 33]  # before issue 34: 40, 50, 60
    for outcomes in runs:
        assert [o.changed for o in outcomes] == [True] + [False] * 9
        assert "the list is probably capped" in outcomes[0].error
        assert all(o.error.startswith("not attempted: the first creation of this task") for o in outcomes[1:])
    assert emu.request_counts()[CREATE] == 3


def test_an_honest_server_gets_a_bulk_in_n_plus_3_requests(emu):
    held, runs = three_runs(emu, ["ok-%02d" % n for n in range(10)])
    assert held == [40, 40, 40] and [o.state for o in runs[0]] == [CREATED] * 10
    assert [o.state for o in runs[2]] == [EXISTING] * 10
    assert emu.request_counts() == {LIST: 3 + 1 + 1, CREATE: 10}  # N + 3, then one list per rerun
