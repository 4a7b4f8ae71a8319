# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the 802.1x status logic: target resolution, result shaping, summary, concurrency,
the wait loop (on a fake clock: no real sleeps) and, end to end, the in-process NAC emulator."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import threading

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacAuthError,
    NacClient,
    NacConfigError,
    NacConnectionError,
    NacHTTPError,
    NacNotFound,
    NacServerError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks import dot1x_query
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import (
    NOT_QUERIED,
    BatchStopped,
    check_options,
    dot1x_status,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_results import (
    ERROR,
    UNKNOWN,
    failure_message,
    shape,
    summarize,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_targets import NOT_LISTED, Target, resolve
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator, load_config
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient

FIRE = "POST /api/intent/dot1x_status/fire"
RECORDS = [
    dict(id=1, hostname="cam-01"),
    dict(id=2, hostname="Printer-01"),
    dict(id=3, hostname="dup-host"),
    dict(id=4, hostname="DUP-HOST"),
    dict(id=5, hostname="ws-01"),
]


def authenticated(device_id):
    return dict(status="AUTHENTICATED", authMethod="EAP-TLS", username="user%d" % device_id, message=None)


def fake_client(records=None, scripts=None, **kwargs):
    """The fake client of a status query: RECORDS unless told, and each id's replies from ``scripts`` (each item a
    reply dict or a NacError to raise, the last repeating), AUTHENTICATED for the others."""
    records = RECORDS if records is None else records
    return FakeClient(records, scripts, default_reply=authenticated, compact_only=True, **kwargs)


class FakeClock:
    """clock() and sleep() of the wait loop: sleeping advances the time, nothing waits."""

    def __init__(self):
        self.now = 1000.0
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds > 0
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def status(client, clock=None, **options):
    clock = clock or FakeClock()
    return dot1x_status(client, clock=clock.clock, sleep=clock.sleep, **options)


def by_id(report):
    return dict((entry["id"], entry) for entry in report.results)


# -- options ------------------------------------------------------------------------------------

GOOD = dict(
    device_id=None, hostname=None, all_devices=False, concurrency=8, wait_for=None, wait_timeout=300, wait_interval=5.0
)


@pytest.mark.parametrize(
    "changes, fragment",
    [
        (dict(), "got none (all_devices: false chooses nothing)"),
        (dict(device_id=[1], hostname=["a"]), "got device_id and hostname"),
        (dict(hostname=["a"], all_devices=True), "got hostname and all_devices"),
        (dict(device_id=[1], concurrency=0), "concurrency must be a whole number from 1 to 256, got 0"),
        (dict(device_id=[1], concurrency=257), "got 257"),
        (dict(device_id=[1], concurrency=True), "concurrency must be"),
        (
            dict(device_id=[1], wait_interval=0),
            "wait_interval must be a number of seconds greater than 0 and at most 86400, got 0",
        ),
        (dict(device_id=[1], wait_interval=-1.5), "got -1.5"),
        (dict(device_id=[1], wait_timeout=-1), "wait_timeout must be a number of seconds from 0 to 604800, got -1"),
        (dict(device_id=[1], wait_for="  "), "wait_for must be a status such as AUTHENTICATED"),
    ],
)
def test_unusable_options_are_named(changes, fragment):
    with pytest.raises(NacConfigError) as caught:
        check_options(**dict(GOOD, **changes))
    assert fragment in caught.value.message


@pytest.mark.parametrize(
    "changes, wait_for",
    [
        (dict(device_id=[]), None),
        (dict(hostname=["a"], all_devices=False), None),
        (dict(all_devices=True, wait_for=" AUTHENTICATED "), "AUTHENTICATED"),
        (dict(device_id=[1], concurrency=256, wait_timeout=0, wait_interval=0.1), None),
    ],
)
def test_usable_options(changes, wait_for):
    assert check_options(**dict(GOOD, **changes)) == wait_for


def test_bad_options_fail_before_any_request():
    client = fake_client()
    with pytest.raises(NacConfigError):
        status(client, device_id=[1], concurrency=0)
    assert client.calls == [] and client.fired == []


@pytest.mark.parametrize(
    "hostname, fragment",
    [
        ([["cam-01", "cam-02"]], "hostname[0] must be one name (a string), got a list"),
        (["cam-01", {"name": "x"}], "hostname[1] must be one name (a string), got a mapping"),
        (["cam 01"], "hostname[0] 'cam 01' contains whitespace"),
        (["x" * 254], "hostname[0] has 254 characters"),
    ],
)
def test_unusable_hostnames_fail_before_any_request(hostname, fragment):
    client = fake_client()
    with pytest.raises(NacConfigError) as raised:
        status(client, hostname=hostname)
    assert fragment in str(raised.value)
    assert client.calls == [] and client.fired == []


# -- target resolution ----------------------------------------------------------------------------


def test_all_devices_in_the_server_order():
    targets, warnings = resolve(RECORDS, all_devices=True)
    assert targets == [Target(r["id"], r["hostname"], None) for r in RECORDS]
    assert warnings == []


def test_ids_in_the_order_asked_each_once_and_unknown_ids_are_errors():
    targets, warnings = resolve(RECORDS, device_ids=[5, 1, 99, 5, 99])
    assert targets == [Target(5, "ws-01", None), Target(1, "cam-01", None), Target(99, None, NOT_LISTED)]
    assert warnings == []


def test_hostnames_case_insensitive_with_the_servers_spelling():
    targets, _warnings = resolve(RECORDS, hostnames=["printer-01", "CAM-01", "Cam-01", "no-such-host", "NO-SUCH-HOST"])
    assert targets == [
        Target(2, "Printer-01", None),
        Target(1, "cam-01", None),
        Target(None, "no-such-host", NOT_LISTED),
    ]


def test_a_shared_hostname_selects_every_device_with_a_warning_naming_their_ids():
    targets, warnings = resolve(RECORDS, hostnames=["Dup-Host", "dup-host", "ws-01"])
    assert [t.id for t in targets] == [3, 4, 5]
    assert warnings == ["hostname Dup-Host matches 2 devices (ids 3, 4): the status of each is returned"]


def test_an_empty_list_selects_nothing_and_queries_nothing():
    client = fake_client()
    report = status(client, hostname=[])
    assert report == dot1x_query.Report([], {}, [], None, 0)
    assert client.fired == []


# -- result shaping and summary -------------------------------------------------------------------

TARGET = Target(7, "cam-07", None)


def test_a_reply_is_shaped_with_snake_case_keys():
    reply = dict(status="AUTHENTICATED", authMethod="EAP-TLS", username="user1", message=None, extra="ignored")
    assert shape(TARGET, reply) == dict(
        id=7, hostname="cam-07", status="AUTHENTICATED", auth_method="EAP-TLS", username="user1", message=None
    )


@pytest.mark.parametrize("reply", [{}, dict(status=None), dict(status="")])
def test_a_missing_status_reads_as_unknown(reply):
    entry = shape(TARGET, reply)
    assert entry["status"] == UNKNOWN and "error" not in entry
    assert entry["auth_method"] is None and entry["username"] is None and entry["message"] is None


@pytest.mark.parametrize("value", ["HELD", "connecting", "Quarantined"])
def test_other_statuses_are_passed_through_as_spelled(value):
    assert shape(TARGET, dict(status=value, authMethod="MAB"))["status"] == value


def test_a_status_that_is_not_a_string_is_an_error_of_that_target():
    entry = shape(TARGET, dict(status=3))
    assert entry["status"] == ERROR
    assert (
        entry["error"]
        == "unexpected reply to POST /api/intent/dot1x_status/fire for target 7: 'status' is int 3, expected a string"
    )


def test_summary_counts_per_status_sorted_with_errors_under_their_own_key():
    results = [dict(status=s) for s in ("UNKNOWN", "AUTHENTICATED", ERROR, "AUTHENTICATED", "HELD")]
    summary = summarize(results)
    assert summary == {"AUTHENTICATED": 2, "ERROR": 1, "HELD": 1, "UNKNOWN": 1}
    assert list(summary) == sorted(summary)
    assert summarize([]) == {}


# -- access check, errors --------------------------------------------------------------------------


def test_no_intent_access_fails_naming_tag_and_intent_before_any_fire():
    client = fake_client(intents=("ping",))
    with pytest.raises(NacAuthError) as caught:
        status(client, all_devices=True)
    message = caught.value.message
    assert "dot1x_status" in message and "'Check 802.1x' / '802.1x status'" in message
    assert "needs access to that intent" in message
    assert client.calls == ["has_intent"] and client.fired == []


def test_check_access_false_skips_the_intent_list():
    client = fake_client(intents=())
    report = status(client, device_id=[1], check_access=False)
    assert client.calls == ["list_devices"] and report.summary == {"AUTHENTICATED": 1}


def test_a_target_that_fails_is_reported_and_the_others_are_answered():
    errors = {
        2: NacHTTPError("The NAC API refused POST /api/intent/dot1x_status/fire with HTTP 502."),
        4: NacNotFound("Not found (HTTP 404): POST /api/intent/dot1x_status/fire."),
    }
    client = fake_client(scripts=dict((k, [v]) for k, v in errors.items()))
    report = status(client, all_devices=True, concurrency=3)
    assert sorted(client.fired) == [1, 2, 3, 4, 5]
    entries = by_id(report)
    assert entries[2]["status"] == ERROR and entries[2]["error"] == errors[2].message
    assert entries[4]["error"] == errors[4].message
    assert [entries[i]["status"] for i in (1, 3, 5)] == ["AUTHENTICATED"] * 3
    assert report.summary == {"AUTHENTICATED": 3, "ERROR": 2}
    assert report.failure == (
        "2 of 5 targets could not be queried: Printer-01 (id 2): %s; DUP-HOST (id 4): %s."
        % (errors[2].message, errors[4].message)
    )


def test_unknown_targets_are_named_in_the_failure_and_never_fired():
    client = fake_client()
    report = status(client, hostname=["cam-01", "ghost"])
    assert client.fired == [1]
    assert [e["status"] for e in report.results] == ["AUTHENTICATED", ERROR]
    assert (
        report.failure
        == "1 of 2 targets could not be queried: hostname ghost: not in the device list (GET /api/device)."
    )
    report = status(fake_client(), device_id=[42, 1])
    assert report.failure == "1 of 2 targets could not be queried: id 42: not in the device list (GET /api/device)."


def test_refused_credentials_stop_the_batch_and_what_was_answered_is_kept():
    refused = NacAuthError("Access refused (HTTP 403) to POST /api/intent/dot1x_status/fire.", status=403)
    client = fake_client(
        records=[dict(id=i, hostname="d%d" % i) for i in range(1, 101)],
        scripts=dict((i, [refused]) for i in range(3, 101)),
    )
    with pytest.raises(BatchStopped) as caught:
        status(client, all_devices=True, concurrency=1, check_access=False)
    assert (
        isinstance(caught.value, NacAuthError) and caught.value.cause is refused
    )  # callers catching NacAuthError still do
    assert client.fired == [1, 2, 3]
    report = caught.value.report
    assert [e["status"] for e in report.results[:2]] == ["AUTHENTICATED"] * 2
    assert report.results[2]["error"] == refused.message
    assert all(e["error"] == NOT_QUERIED for e in report.results[3:]) and len(report.results) == 100
    assert report.summary == {"AUTHENTICATED": 2, "ERROR": 98}
    assert (
        report.failure
        == caught.value.message
        == (
            "Access refused (HTTP 403) to POST /api/intent/dot1x_status/fire. The batch stopped there: "
            "2 of 100 targets were answered before, the others were not queried "
            "(results has every target, each failed one with its error)."
        )
    )
    assert caught.value.failure["status"] == 403


def test_refused_credentials_while_waiting_stop_the_polling_too():
    refused = NacAuthError("Access refused (HTTP 401)", status=401)
    client = fake_client(scripts={1: [dict(status="CONNECTING"), refused], 2: [authenticated(2)]})
    with pytest.raises(BatchStopped) as caught:
        status(client, device_id=[1, 2], wait_for="AUTHENTICATED", wait_timeout=60, wait_interval=5)
    assert client.fired.count(1) == 2 and client.fired.count(2) == 1
    assert [e.get("error") for e in caught.value.report.results] == [refused.message, None]


@pytest.mark.parametrize(
    "error",
    [
        NacServerError(
            "The NAC API failed on POST /api/intent/dot1x_status/fire with HTTP 500 (4 attempts): a fault of the server"
        ),
        NacConnectionError("No reply from the NAC API within 30s", outcome_unknown=True),
        NacHTTPError("The NAC API refused POST /api/intent/dot1x_status/fire with HTTP 429 (4 attempts)."),
    ],
)
def test_a_server_fault_on_some_targets_never_throws_the_batch_away(error):
    client = fake_client(scripts={2: [error], 5: [error]})
    report = status(client, all_devices=True, concurrency=2)
    entries = by_id(report)
    assert [entries[i].get("error") for i in (1, 2, 3, 4, 5)] == [None, error.message, None, None, error.message]
    assert report.summary == {"AUTHENTICATED": 3, "ERROR": 2}
    assert report.failure.startswith("2 of 5 targets could not be queried")


# -- concurrency ------------------------------------------------------------------------------------


class Gate:
    """Holds each call until ``expected`` calls are in flight at once (then lets all through);
    records the peak. A serial caller never reaches it: the first wait times out, the gate opens,
    and the peak says so."""

    def __init__(self, expected):
        self.expected = expected
        self.cond = threading.Condition()
        self.in_flight = self.peak = 0
        self.open = False

    def __call__(self, _target_id):
        with self.cond:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            if self.in_flight >= self.expected:
                self.open = True
                self.cond.notify_all()
            self.open = self.cond.wait_for(lambda: self.open, timeout=2) or True  # a timeout opens it for good
            self.in_flight -= 1


@pytest.mark.parametrize("concurrency", [2, 8, 32])
def test_concurrency_requests_are_in_flight_at_once_and_never_more(concurrency):
    gate = Gate(concurrency)
    records = [dict(id=i, hostname="d%d" % i) for i in range(1, 201)]
    client = fake_client(records=records, on_fire=gate)
    report = status(client, all_devices=True, concurrency=concurrency)
    assert gate.peak == concurrency
    assert [e["id"] for e in report.results] == list(range(1, 201))


def test_results_keep_the_targets_order_when_later_targets_answer_first():
    last_done = threading.Event()

    def hold_first(target_id):
        if target_id == 1:
            assert last_done.wait(5)
        elif target_id == 6:
            last_done.set()

    records = [dict(id=i, hostname="d%d" % i) for i in range(1, 7)]
    client = fake_client(records=records, on_fire=hold_first)
    report = status(client, device_id=[6, 1, 5, 2, 4, 3], concurrency=6)
    assert [e["id"] for e in report.results] == [6, 1, 5, 2, 4, 3]


# -- waiting (fake clock) --------------------------------------------------------------------------

CONNECTING = dict(status="CONNECTING", authMethod=None, username=None, message="Authentication in progress")
REJECTED = dict(status="UNAUTHENTICATED", authMethod=None, username=None, message="Certificate rejected")


def test_devices_that_reach_the_status_stop_being_polled():
    client = fake_client(scripts={1: [CONNECTING, CONNECTING, authenticated(1)], 5: [CONNECTING, authenticated(5)]})
    clock = FakeClock()
    report = status(client, clock, device_id=[1, 2, 5], wait_for="AUTHENTICATED", wait_interval=5, wait_timeout=60)
    assert sorted(client.fired) == [1, 1, 1, 2, 5, 5]
    assert clock.sleeps == [5, 5]
    assert report.failure is None and report.summary == {"AUTHENTICATED": 3}


def test_the_wait_status_is_compared_case_insensitively():
    client = fake_client()
    report = status(client, device_id=[1], wait_for="authenticated", wait_timeout=0)
    assert report.failure is None and client.fired == [1]


def test_each_round_sleeps_what_is_left_of_the_interval():
    clock = FakeClock()

    def takes_two_seconds(_target_id):
        clock.now += 2

    client = fake_client(scripts={1: [CONNECTING, CONNECTING, authenticated(1)]}, on_fire=takes_two_seconds)
    status(client, clock, device_id=[1], concurrency=1, wait_for="AUTHENTICATED", wait_interval=5, wait_timeout=60)
    assert clock.sleeps == [3, 3]


def test_a_round_longer_than_the_interval_is_followed_at_once():
    clock = FakeClock()

    def takes_seven_seconds(_target_id):
        clock.now += 7

    client = fake_client(scripts={1: [CONNECTING, authenticated(1)]}, on_fire=takes_seven_seconds)
    report = status(
        client, clock, device_id=[1], concurrency=1, wait_for="AUTHENTICATED", wait_interval=5, wait_timeout=60
    )
    assert clock.sleeps == [] and client.fired == [1, 1] and report.failure is None


def test_timeout_polls_until_the_deadline_never_past_it_and_names_only_the_laggards():
    client = fake_client(scripts={3: [REJECTED]})
    clock = FakeClock()
    start = clock.now
    report = status(client, clock, device_id=[1, 3, 2], wait_for="AUTHENTICATED", wait_interval=7, wait_timeout=30)
    assert clock.sleeps == [7, 7, 7, 7, 2]
    assert clock.now - start == 30
    assert client.fired.count(3) == 6 and client.fired.count(1) == 1 and client.fired.count(2) == 1
    assert report.failure == (
        "1 of 3 devices did not reach AUTHENTICATED within 30 s: "
        "dup-host (id 3): UNAUTHENTICATED (Certificate rejected)."
    )
    assert [e["status"] for e in report.results] == ["AUTHENTICATED", "UNAUTHENTICATED", "AUTHENTICATED"]
    assert report.summary == {"AUTHENTICATED": 2, "UNAUTHENTICATED": 1}


def test_wait_timeout_zero_queries_once():
    client = fake_client(scripts={1: [CONNECTING, authenticated(1)]})
    clock = FakeClock()
    report = status(client, clock, device_id=[1], wait_for="AUTHENTICATED", wait_timeout=0)
    assert client.fired == [1] and clock.sleeps == []
    assert report.failure == (
        "1 of 1 devices did not reach AUTHENTICATED within 0 s: cam-01 (id 1): CONNECTING (Authentication in progress)."
    )


def test_an_error_while_waiting_is_retried_at_the_next_round():
    flaky = NacConnectionError("No reply from the NAC API at http://nac within 30s", outcome_unknown=True)
    client = fake_client(scripts={1: [CONNECTING, flaky, authenticated(1)]})
    report = status(client, device_id=[1], wait_for="AUTHENTICATED", wait_interval=1, wait_timeout=10)
    assert client.fired == [1, 1, 1]
    assert report.failure is None and "error" not in report.results[0]


def test_an_error_that_lasts_until_the_deadline_is_reported_as_the_last_error():
    broken = NacHTTPError("The NAC API refused POST /api/intent/dot1x_status/fire with HTTP 502.")
    client = fake_client(scripts={1: [CONNECTING, broken]})
    report = status(client, device_id=[1, 2], wait_for="AUTHENTICATED", wait_interval=1, wait_timeout=3)
    assert client.fired.count(1) == 4 and client.fired.count(2) == 1
    assert report.results[0]["error"] == broken.message
    assert report.failure == "1 of 2 targets could not be queried: cam-01 (id 1): %s." % broken.message


def test_timeout_and_unknown_targets_are_both_named():
    client = fake_client(scripts={2: [CONNECTING]})
    report = status(
        client, hostname=["printer-01", "ghost", "cam-01"], wait_for="AUTHENTICATED", wait_interval=10, wait_timeout=20
    )
    assert client.fired.count(2) == 3 and client.fired.count(1) == 1
    assert report.failure == (
        "1 of 3 devices did not reach AUTHENTICATED within 20 s: Printer-01 (id 2): CONNECTING "
        "(Authentication in progress). 1 of 3 targets could not be queried: hostname ghost: "
        "not in the device list (GET /api/device)."
    )


def test_a_long_failure_message_names_a_hundred_devices_then_counts():
    results = [dict(id=i, hostname="d%d" % i, status="CONNECTING", message=None) for i in range(150)]
    message = failure_message(results, "AUTHENTICATED", 300)
    assert message.startswith("150 of 150 devices did not reach AUTHENTICATED within 300 s: d0 (id 0): CONNECTING; ")
    assert "d99 (id 99)" in message and "d100 (id 100)" not in message
    assert message.endswith("; and 50 more (see results).")
    assert failure_message(results[:1]) is None


# -- end to end against the in-process emulator -------------------------------------------------------

CONFIG = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "emulator", "integration_config.json"
)


@pytest.fixture(scope="module")
def emulator():
    with Emulator(config=load_config(CONFIG)).start() as emu:
        yield emu


@pytest.fixture
def emu(emulator):
    emulator.reset()
    return emulator


def client_for(emu, key="nac-demo-admin-key", **kwargs):
    return NacClient(emu.url, api_key=key, max_retries=0, **kwargs)


def test_emulator_all_devices_one_list_one_fire_each(emu):
    report = dot1x_status(client_for(emu), all_devices=True, concurrency=4)
    assert [(e["hostname"], e["status"]) for e in report.results] == [
        ("seed-cam-01", "AUTHENTICATED"),
        ("seed-printer-01", "UNAUTHENTICATED"),
        ("dup-host", "AUTHENTICATED"),
        ("dup-host", "AUTHENTICATED"),
    ]
    assert report.results[0]["auth_method"] == "EAP-TLS" and report.results[0]["username"] == "seed-cam-01"
    assert report.summary == {"AUTHENTICATED": 3, "UNAUTHENTICATED": 1} and report.failure is None
    assert emu.request_counts() == {"GET /api/intent": 1, "GET /api/device": 1, FIRE: 4}


def test_emulator_missing_status_is_unknown_and_held_passes_through(emu):
    admin = client_for(emu)
    for number, name in enumerate(("nostatus-01", "held-01")):
        admin.create_device(dict(hostname=name, group="Lab", profile="Camera", macs=["02:00:00:99:00:0%d" % number]))
    report = dot1x_status(admin, hostname=["NOSTATUS-01", "held-01"])
    assert [(e["hostname"], e["status"]) for e in report.results] == [("nostatus-01", UNKNOWN), ("held-01", "HELD")]
    assert report.results[1]["auth_method"] == "MAB" and report.summary == {"HELD": 1, "UNKNOWN": 1}


def test_emulator_no_intent_access_sends_no_fire(emu):
    with pytest.raises(NacAuthError) as caught:
        dot1x_status(client_for(emu, "nac-demo-noaccess-key"), all_devices=True)
    assert "dot1x_status" in caught.value.message
    assert emu.request_counts() == {"GET /api/intent": 1}


def test_emulator_without_the_access_check_a_refused_fire_stops_the_rest(emu):
    with pytest.raises(BatchStopped) as caught:
        dot1x_status(client_for(emu, "nac-demo-noaccess-key"), all_devices=True, concurrency=1, check_access=False)
    assert caught.value.status == 403 and "Check 802.1x" in caught.value.message
    assert emu.request_counts() == {"GET /api/device": 1, FIRE: 1}
    results = caught.value.report.results
    assert len(results) > 1 and results[0]["error"].startswith("Access refused (HTTP 403)")
    assert all(entry["error"] == NOT_QUERIED for entry in results[1:])


def test_emulator_wait_until_a_new_device_authenticates(emu):
    admin = client_for(emu)
    created = admin.create_device(
        dict(hostname="new-cam-01", group="Cameras", profile="Camera", macs=["02:00:00:20:00:99"])
    )
    clock = FakeClock()

    def sleep(seconds):  # the emulator's 802.1x clock moves with the fake one
        clock.sleep(seconds)
        emu.advance_clock(seconds)

    report = dot1x_status(
        admin,
        device_id=[created["id"], 1],
        wait_for="AUTHENTICATED",
        wait_interval=0.4,
        wait_timeout=10,
        clock=clock.clock,
        sleep=sleep,
    )
    assert report.failure is None and report.summary == {"AUTHENTICATED": 2}
    assert clock.sleeps == [0.4, 0.4, 0.4]
    assert emu.request_counts()[FIRE] == 5  # the new device four times (0, 0.4, 0.8, 1.2 s), device 1 once
