# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 16, "the same device only when it has the same name" and "every requested device keeps its entry",
at every entry point's logic: nac_device's plan (ensure_devices.py), the status targets and queries
(dot1x_query.py) and the event source's round (dot1x_events.py), with scripted clients and, end to end, the
emulator."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import unicodedata

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.options import settle_seconds
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import poll_once
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_targets import NOT_LISTED, resolve
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    CREATED,
    EXISTING,
    FAILED,
    device_specs,
    ensure_devices,
)
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient

STRASSE = "stra\u00dfe-01"
KELVIN = "\u212aiosk-01"
NFD_CAFE = unicodedata.normalize("NFD", "caf\u00e9-01")
LISTED = [
    dict(id=7, hostname="strasse-01"),
    dict(id=8, hostname="Kiosk-01"),
    dict(id=9, hostname=unicodedata.normalize("NFC", "caf\u00e9-01")),
    dict(id=10, hostname="CAF\u00c9-02"),
]
SHARED = [dict(id=500, hostname="shared-a"), dict(id=1, hostname="cam-01"), dict(id=500, hostname="shared-b")]


def fake_client(records):
    """A fake client whose status queries answer AUTHENTICATED, HELD for the shared id 500."""
    return FakeClient(
        records,
        default_reply=lambda ident: dict(
            status="AUTHENTICATED" if ident != 500 else "HELD", authMethod="EAP-TLS", username="u"
        ),
    )


def ensure(client, names, warned=None):
    specs = device_specs([dict(hostname=name, group="Cameras", profile="Camera") for name in names])
    return ensure_devices(
        specs, client.list_devices, client.create_device, warn=(warned if warned is not None else []).append
    )


# -- nac_device ----------------------------------------------------------------------------------------


def test_a_lookalike_is_never_the_requested_device_and_its_creation_fails_unwritten():
    client = fake_client(LISTED)
    outcomes = ensure(client, [STRASSE, KELVIN, NFD_CAFE, "caf\u00e9-02", "new-01"])
    assert [(o.state, o.id) for o in outcomes] == [
        (FAILED, None),
        (EXISTING, 8),  # the KELVIN SIGN is canonically K: the same name
        (EXISTING, 9),  # NFD is canonically NFC: the same name
        (FAILED, None),
        (CREATED, 101),
    ]
    assert [b["hostname"] for b in client.bodies] == ["new-01"]  # the lookalikes were never sent
    assert outcomes[0].error == (
        "strasse-01 (id 7) is listed, which matches stra\u00dfe-01 only when compared loosely (Unicode case folding); "
        "not created: a NAC that compares names loosely would refuse it or confuse the two. Rename one of them, "
        "or create it in the NAC"
    )
    assert outcomes[3].error.startswith("CAF\u00c9-02 (id 10) is listed, which matches caf\u00e9-02 only when")
    assert all(o.warnings == [] for o in outcomes)


def test_an_existing_device_with_a_lookalike_is_found_with_a_warning_naming_the_lookalike():
    client = fake_client(LISTED + [dict(id=11, hostname=STRASSE)])
    (outcome,) = ensure(client, [STRASSE])
    assert (outcome.state, outcome.id, client.bodies) == (EXISTING, 11, [])
    assert outcome.warnings == [
        (
            "strasse-01 (id 7) is listed, which matches stra\u00dfe-01 only when compared loosely (Unicode case "
            "folding): it is not stra\u00dfe-01 (id 11), which exists"
        )
    ]


def test_nac_device_warns_about_ids_the_list_repeats():
    warned = []
    outcomes = ensure(fake_client(SHARED), ["shared-a", "shared-b"], warned)
    assert [(o.state, o.id) for o in outcomes] == [(EXISTING, 500), (EXISTING, 500)]
    assert len(warned) == 1 and "(id 500: shared-a, shared-b)" in warned[0]


@pytest.mark.parametrize(
    "settle_timeout, timeout, seconds", [(None, 5, 60), (None, 1, 60), (None, 30, 60), (None, 300, 300), (0, 5, 0)]
)
def test_the_default_settle_window_is_60_s_whatever_a_shorter_timeout(settle_timeout, timeout, seconds):
    assert settle_seconds(settle_timeout, timeout) == seconds


# -- nac_dot1x_status and the event source -------------------------------------------------------------


def test_status_targets_by_name_never_take_a_lookalike_and_warn_naming_it():
    targets, warnings = resolve(LISTED, hostnames=[STRASSE, KELVIN, NFD_CAFE])
    assert [(t.id, t.hostname, t.error) for t in targets] == [
        (None, STRASSE, NOT_LISTED),
        (8, "Kiosk-01", None),
        (9, LISTED[2]["hostname"], None),
    ]
    assert warnings == [
        (
            "strasse-01 (id 7) is listed, which matches stra\u00dfe-01 only when compared loosely (Unicode case "
            "folding): not queried as stra\u00dfe-01, which is not listed"
        )
    ]


def test_two_hostnames_sharing_an_id_each_keep_their_entry_and_the_id_is_fired_once():
    client = fake_client(SHARED)
    report = dot1x_status(client, hostname=["shared-a", "shared-b", "cam-01"])
    assert [(e["id"], e["hostname"], e["status"]) for e in report.results] == [
        (500, "shared-a", "HELD"),
        (500, "shared-b", "HELD"),
        (1, "cam-01", "AUTHENTICATED"),
    ]
    assert sorted(client.fired) == [1, 500] and report.summary == {"AUTHENTICATED": 1, "HELD": 2}
    assert any("(id 500: shared-a, shared-b)" in w for w in report.warnings)


@pytest.mark.parametrize("options", [dict(all_devices=True), dict(device_id=[500, 1])])
def test_all_devices_and_ids_give_every_record_of_a_repeated_id(options):
    client = fake_client(SHARED)
    report = dot1x_status(client, **options)
    assert sorted((e["id"], e["hostname"]) for e in report.results) == [
        (1, "cam-01"),
        (500, "shared-a"),
        (500, "shared-b"),
    ]
    assert sorted(client.fired) == [1, 500]


def test_waiting_for_a_status_polls_a_shared_id_once_per_round():
    client = fake_client(SHARED)
    now = [0.0]
    report = dot1x_status(
        client,
        hostname=["shared-a", "shared-b"],
        wait_for="AUTHENTICATED",
        wait_timeout=10,
        wait_interval=5,
        clock=lambda: now[0],
        sleep=lambda seconds: now.__setitem__(0, now[0] + seconds),
    )
    assert client.fired == [500, 500, 500]  # rounds at 0, 5 and 10 s, one fire each
    assert [e["hostname"] for e in report.results] == ["shared-a", "shared-b"] and "shared-b" in report.failure


def test_the_event_source_watches_both_records_of_a_shared_id_and_warns():
    client = fake_client(SHARED)
    result = poll_once(client, hostnames=["shared-a", "shared-b", STRASSE], initial=True)
    assert [(e["nac_dot1x"]["hostname"], e["nac_dot1x"]["status"]) for e in result.events[:2]] == [
        ("shared-a", "HELD"),
        ("shared-b", "HELD"),
    ]
    assert client.fired == [500]
    assert result.events[2]["nac_dot1x_error"]["devices"] == [dict(id=None, hostname=STRASSE, error=NOT_LISTED)]
    assert any("(id 500: shared-a, shared-b)" in w for w in result.warnings)
    client = fake_client(LISTED)
    assert poll_once(client, hostnames=[STRASSE]).warnings[0].startswith("strasse-01 (id 7) is listed")


# -- end to end with the emulator (hostnames byte for byte, lookalikes and repeated ids seeded) -----------------


@pytest.fixture
def emulator():
    config = dict(DEFAULT_CONFIG, hostname_chars="unicode")
    with Emulator(config).start() as emu:
        emu.seed([dict(id=700, hostname="strasse-01"), dict(id=701, hostname="Kiosk-01")])
        emu.seed([dict(id=500, hostname="shared-a"), dict(id=500, hostname="shared-b")])
        yield emu


def test_emulator_lookalikes_and_repeated_ids(emulator):
    client = NacClient(emulator.url, api_key="nac-demo-admin-key", max_retries=0)
    warned = []
    outcomes = ensure_devices(
        device_specs([dict(hostname=name, group="Cameras", profile="Camera") for name in (STRASSE, KELVIN)]),
        client.list_devices,
        client.create_device,
        warn=warned.append,
    )
    assert [(o.state, o.id) for o in outcomes] == [(FAILED, None), (EXISTING, 701)]
    assert "strasse-01 (id 700)" in outcomes[0].error and "(id 500: shared-a, shared-b)" in warned[0]
    assert emulator.request_counts() == {"GET /api/device": 1}
    report = dot1x_status(client, hostname=["shared-a", "shared-b"])
    assert [e["hostname"] for e in report.results] == ["shared-a", "shared-b"]
    assert emulator.request_counts()["POST /api/intent/dot1x_status/fire"] == 1
