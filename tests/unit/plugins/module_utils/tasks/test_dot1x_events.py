# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the event source's logic: change detection (previous map + results -> events),
error events, one round against a fake client, and the arguments with their NAC_* fallbacks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.options import CONNECTION_DEFAULTS
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacAuthError,
    NacConfigError,
    NacConnectionError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import (
    FIRST_ROUND,
    Round,
    bug_round,
    detect,
    poll_once,
    round_summary,
    secret_forms,
    source_options,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient

KEY = "k3y-that-must-never-show"


def entry(ident, status, hostname=None, **extra):
    result = dict(
        id=ident, hostname=hostname or "dev-%d" % ident, status=status, auth_method=None, username=None, message=None
    )
    result.update(extra)
    return result


def failed(ident, error="No reply from the NAC API", hostname=None):
    return dict(
        id=ident,
        hostname=hostname or "dev-%d" % ident,
        status="ERROR",
        auth_method=None,
        username=None,
        message=None,
        error=error,
    )


def changes(events):
    """(hostname, previous_status, status) of the change events, in order."""
    return [
        (e["nac_dot1x"]["hostname"], e["nac_dot1x"]["previous_status"], e["nac_dot1x"]["status"])
        for e in events
        if "nac_dot1x" in e
    ]


def errors(events):
    return [e["nac_dot1x_error"] for e in events if "nac_dot1x_error" in e]


# ---- detect ----------------------------------------------------------------------------------


def test_first_round_is_silent_unless_initial():
    results = [entry(1, "AUTHENTICATED"), entry(2, "UNAUTHENTICATED")]
    events, known = detect(None, results)
    assert events == [] and known == {1: results[0], 2: results[1]}
    events, known = detect(None, results, initial=True)
    assert changes(events) == [("dev-1", None, "AUTHENTICATED"), ("dev-2", None, "UNAUTHENTICATED")]


def test_a_changed_device_gives_one_event_with_previous_status_and_unchanged_ones_none():
    _events, known = detect(None, [entry(1, "AUTHENTICATED"), entry(2, "AUTHENTICATED")])
    now = entry(1, "UNAUTHENTICATED", auth_method="MAB", username="cam", message="Certificate rejected")
    events, known = detect(known, [now, entry(2, "AUTHENTICATED")])
    assert events == [
        {
            "nac_dot1x": dict(
                id=1,
                hostname="dev-1",
                status="UNAUTHENTICATED",
                previous_status="AUTHENTICATED",
                auth_method="MAB",
                username="cam",
                message="Certificate rejected",
            )
        }
    ]
    assert known[1] is now
    events, _known = detect(known, [now, entry(2, "AUTHENTICATED")])  # the same again: nothing
    assert events == []


def test_only_the_status_counts_as_a_change():
    _events, known = detect(None, [entry(1, "HELD", message="one")])
    assert detect(known, [entry(1, "HELD", message="two")])[0] == []


def test_a_newly_listed_device_changes_from_null_and_a_vanished_one_is_forgotten():
    _events, known = detect(None, [entry(1, "AUTHENTICATED")])
    events, known = detect(known, [entry(1, "AUTHENTICATED"), entry(7, "CONNECTING")])
    assert changes(events) == [("dev-7", None, "CONNECTING")]
    events, known = detect(known, [entry(7, "CONNECTING")])
    assert events == [] and list(known) == [7]
    events, known = detect(known, [entry(1, "AUTHENTICATED"), entry(7, "CONNECTING")])
    assert changes(events) == [("dev-1", None, "AUTHENTICATED")]


def test_a_flapping_device_gives_an_event_at_every_change():
    _events, known = detect(None, [entry(1, "AUTHENTICATED")])
    seen = []
    for status in ("UNAUTHENTICATED", "AUTHENTICATED", "UNAUTHENTICATED", "UNAUTHENTICATED", "AUTHENTICATED"):
        events, known = detect(known, [entry(1, status)])
        seen.extend(changes(events))
    assert seen == [
        ("dev-1", "AUTHENTICATED", "UNAUTHENTICATED"),
        ("dev-1", "UNAUTHENTICATED", "AUTHENTICATED"),
        ("dev-1", "AUTHENTICATED", "UNAUTHENTICATED"),
        ("dev-1", "UNAUTHENTICATED", "AUTHENTICATED"),
    ]


def test_a_device_that_fails_is_named_in_one_error_event_and_keeps_its_last_known_status():
    _events, known = detect(None, [entry(1, "AUTHENTICATED"), entry(2, "AUTHENTICATED")])
    events, known = detect(known, [failed(1, "No reply within 30s"), entry(2, "AUTHENTICATED")])
    assert changes(events) == []
    (error,) = errors(events)
    assert error["devices"] == [dict(id=1, hostname="dev-1", error="No reply within 30s")]
    assert "1 of 2" in error["message"] and "dev-1 (id 1): No reply within 30s" in error["message"]
    assert known[1]["status"] == "AUTHENTICATED"
    events, known = detect(known, [entry(1, "UNAUTHENTICATED"), entry(2, "AUTHENTICATED")])
    assert changes(events) == [("dev-1", "AUTHENTICATED", "UNAUTHENTICATED")] and errors(events) == []


def test_a_device_failing_at_the_first_round_gets_its_baseline_later_without_an_event():
    events, known = detect(None, [failed(1), entry(2, "AUTHENTICATED")])
    assert changes(events) == [] and len(errors(events)) == 1 and known[1] is FIRST_ROUND
    events, known = detect(known, [failed(1), entry(2, "AUTHENTICATED")])
    assert known[1] is FIRST_ROUND
    events, known = detect(known, [entry(1, "AUTHENTICATED"), entry(2, "AUTHENTICATED")])
    assert events == [] and known[1]["status"] == "AUTHENTICATED"


def test_a_new_device_failing_at_a_later_round_changes_from_null_once_it_answers():
    _events, known = detect(None, [entry(1, "AUTHENTICATED")])
    events, known = detect(known, [entry(1, "AUTHENTICATED"), failed(9)])
    assert 9 not in known and errors(events)[0]["devices"][0]["id"] == 9
    events, known = detect(known, [entry(1, "AUTHENTICATED"), entry(9, "CONNECTING")])
    assert changes(events) == [("dev-9", None, "CONNECTING")]


# ---- poll_once -------------------------------------------------------------------------------


def fake_client(records, statuses, list_error=None):
    """The fake client of a round: ``statuses`` {id: status or a NacError to raise}, as ``replies``."""
    return FakeClient(records, statuses, list_error=list_error, compact_only=True)


RECORDS = [dict(id=1, hostname="cam-01"), dict(id=2, hostname="cam-02"), dict(id=3, hostname="Printer-01")]


def test_poll_once_watches_every_device_by_default_and_reports_changes():
    client = fake_client(RECORDS, {1: "AUTHENTICATED", 2: "AUTHENTICATED", 3: "UNAUTHENTICATED"})
    first = poll_once(client, concurrency=2)
    assert first.events == [] and sorted(first.known) == [1, 2, 3] and sorted(client.fired) == [1, 2, 3]
    client.replies[2] = "HELD"
    second = poll_once(client, concurrency=2, known=first.known)
    assert second.events == [
        {
            "nac_dot1x": dict(
                id=2,
                hostname="cam-02",
                status="HELD",
                previous_status="AUTHENTICATED",
                auth_method="EAP-TLS",
                username="u2",
                message=None,
            )
        }
    ]


def test_poll_once_fires_only_for_the_chosen_hostnames_and_reports_unknown_ones():
    client = fake_client(RECORDS, {1: "AUTHENTICATED", 3: "AUTHENTICATED"})
    result = poll_once(client, hostnames=["printer-01", "cam-01", "cam-99"], initial=True)
    assert sorted(client.fired) == [1, 3]
    assert changes(result.events) == [("Printer-01", None, "AUTHENTICATED"), ("cam-01", None, "AUTHENTICATED")]
    (error,) = errors(result.events)
    assert error["devices"] == [dict(id=None, hostname="cam-99", error="not in the device list (GET /api/device)")]


def test_poll_once_duplicate_hostnames_give_a_warning_and_both_devices():
    records = RECORDS + [dict(id=4, hostname="CAM-01")]
    result = poll_once(fake_client(records, {1: "AUTHENTICATED", 4: "HELD"}), hostnames=["cam-01"], initial=True)
    assert [e["nac_dot1x"]["id"] for e in result.events] == [1, 4] and "ids 1, 4" in result.warnings[0]


@pytest.mark.parametrize(
    "failure",
    [
        NacConnectionError("Could not connect to the NAC API at http://nac: connection refused"),
        NacAuthError("The NAC API answered 'Server error' (HTTP 500) to GET /api/device."),
    ],
)
def test_a_round_whose_device_list_fails_gives_one_error_event_and_keeps_what_is_known(failure):
    known = {1: entry(1, "AUTHENTICATED")}
    result = poll_once(fake_client(RECORDS, {}, list_error=failure), known=known)
    assert result.events == [{"nac_dot1x_error": {"message": failure.message, "devices": []}}]
    assert result.known is known


def test_credentials_refused_while_querying_fail_the_whole_round():
    refused = NacAuthError("Access refused (HTTP 403) to POST /api/intent/dot1x_status/fire")
    client = fake_client(RECORDS, {1: refused, 2: refused, 3: refused})
    result = poll_once(client, concurrency=1, known={})
    assert result.events == [{"nac_dot1x_error": {"message": refused.message, "devices": []}}] and result.known == {}
    assert client.fired == [1]  # the rest of the round is dropped


def test_a_device_that_alone_fails_is_in_the_error_event_and_the_others_are_reported():
    client = fake_client(RECORDS, {1: "AUTHENTICATED", 2: "AUTHENTICATED", 3: "AUTHENTICATED"})
    known = poll_once(client).known
    client.replies.update({1: NacConnectionError("No reply from the NAC API at http://nac within 30s"), 3: "HELD"})
    result = poll_once(client, known=known)
    assert changes(result.events) == [("Printer-01", "AUTHENTICATED", "HELD")]
    (error,) = errors(result.events)
    assert [d["id"] for d in error["devices"]] == [1] and result.known[1]["status"] == "AUTHENTICATED"


# ---- source_options --------------------------------------------------------------------------

ENV = {"NAC_API_URL": "https://nac.example.com", "NAC_API_KEY": KEY}


def test_options_defaults_and_environment_fallbacks():
    client, options = source_options({}, ENV)
    assert client == dict(
        CONNECTION_DEFAULTS, api_url="https://nac.example.com", api_key=KEY, read_only=True, pool_size=8
    )
    assert options == dict(hostname=None, interval=60.0, concurrency=8, initial=False, encode_all_strings=False)


def test_interval_falls_back_to_nac_watch_interval_and_the_argument_wins():
    assert source_options({}, dict(ENV, NAC_WATCH_INTERVAL="15"))[1]["interval"] == 15.0
    assert source_options({}, dict(ENV, NAC_WATCH_INTERVAL=" "))[1]["interval"] == 60.0  # empty: the default
    assert source_options({"interval": 2}, dict(ENV, NAC_WATCH_INTERVAL="15"))[1]["interval"] == 2.0
    for value, words in (("soon", "interval (from NAC_WATCH_INTERVAL) must be a number"), ("0", "greater than 0")):
        with pytest.raises(NacConfigError) as caught:
            source_options({}, dict(ENV, NAC_WATCH_INTERVAL=value))
        assert words in caught.value.message and "(from NAC_WATCH_INTERVAL)" in caught.value.message


def test_round_summary_counts_statuses_changes_and_failures():
    first = detect(None, [entry(1, "AUTHENTICATED"), entry(2, "AUTHENTICATED"), entry(3, "UNAUTHENTICATED")])
    events, known = detect(
        first[1],
        [entry(1, "AUTHENTICATED"), entry(2, "UNAUTHENTICATED"), dict(id=3, hostname="h3", error="timed out")],
    )
    line = round_summary(2, Round(events, known, []), 0.125)
    assert (
        line == "round 2: 3 devices in 0.12 s (AUTHENTICATED 1, UNAUTHENTICATED 1), 1 status change"
        " (dev-2 AUTHENTICATED -> UNAUTHENTICATED), 1 could not be queried"
    )
    assert round_summary(1, Round(*first, warnings=[]), 0.5) == (
        "round 1: 3 devices in 0.50 s (AUTHENTICATED 2, UNAUTHENTICATED 1), 0 status changes"
    )
    failed = Round([{"nac_dot1x_error": {"message": "refused", "devices": []}}], known, [])
    assert round_summary(3, failed, 1.0) == "round 3 failed after 1.00 s (the warning says why); polling goes on"


def test_round_summary_names_the_first_devices_that_changed_then_counts_the_others():
    first = detect(None, [entry(ident, "UNAUTHENTICATED") for ident in range(1, 6)])
    results = [entry(ident, "AUTHENTICATED") for ident in range(1, 6)] + [entry(6, "AUTHENTICATED", "new\x1b[2J")]
    events, known = detect(first[1], results)
    assert round_summary(2, Round(events, known, []), 1.0) == (
        "round 2: 6 devices in 1.00 s (AUTHENTICATED 6), 6 status changes (dev-1 UNAUTHENTICATED -> AUTHENTICATED,"
        " dev-2 UNAUTHENTICATED -> AUTHENTICATED, dev-3 UNAUTHENTICATED -> AUTHENTICATED and 3 more)"
    )
    events, known = detect(known, [entry(6, "UNAUTHENTICATED", "new\x1b[2J")])
    assert round_summary(3, Round(events, known, []), 1.0).endswith(
        "1 status change (new\\x1b[2J AUTHENTICATED -> UNAUTHENTICATED)"
    )


def test_options_arguments_win_over_the_environment_and_strings_are_parsed():
    env = dict(ENV, NAC_VALIDATE_CERTS="no", NAC_TIMEOUT="2.5", NAC_TENANT="site-1", NAC_CA_PATH="~/ca.pem")
    env["NAC_UNREACHABLE_TIMEOUT"] = "20"
    client, options = source_options(
        {
            "api_url": "http://127.0.0.1:8787",
            "interval": "1",
            "concurrency": "32",
            "initial": "yes",
            "hostname": "cam-01",
            "eda_feedback_queue": object(),
        },
        env,
    )
    assert (
        client["api_url"] == "http://127.0.0.1:8787" and client["validate_certs"] is False and client["timeout"] == 2.5
    )
    assert client["tenant"] == "site-1" and not client["ca_path"].startswith("~") and client["pool_size"] == 32
    assert client["unreachable_timeout"] == 20.0
    assert options == dict(hostname=["cam-01"], interval=1.0, concurrency=32, initial=True, encode_all_strings=False)


@pytest.mark.parametrize(
    "args, env, words",
    [
        ({"intervall": 5}, ENV, "unknown argument(s) intervall"),
        ({}, {"NAC_API_KEY": KEY}, "api_url is required"),
        ({"interval": 0}, ENV, "interval must be a number of seconds greater than 0"),
        ({"interval": "soon"}, ENV, "interval must be a number"),
        ({"interval": True}, ENV, "interval must be a number"),
        ({"concurrency": 0}, ENV, "concurrency must be a whole number from 1 to 256"),
        ({"concurrency": 2.5}, ENV, "concurrency must be a whole number"),
        ({"initial": "maybe"}, ENV, "initial must be a boolean (yes/no, true/false"),
        ({"hostname": []}, ENV, "hostname must list device names"),
        ({"hostname": ["cam-01", ""]}, ENV, "hostname must list device names"),
        ({"hostname": {"cam-01": 1}}, ENV, "hostname must be a list of names"),
        ({}, dict(ENV, NAC_VALIDATE_CERTS="perhaps"), "validate_certs (from NAC_VALIDATE_CERTS) must be a boolean"),
        ({}, dict(ENV, NAC_TIMEOUT="long"), "timeout (from NAC_TIMEOUT) must be a number"),
        ({"api_key": 12345678}, ENV, "api_key must be a string, got int"),
    ],
)
def test_options_bad_arguments_are_named(args, env, words):
    with pytest.raises(NacConfigError) as caught:
        source_options(args, env)
    assert words in caught.value.message
    assert KEY not in caught.value.message and "12345678" not in caught.value.message


@pytest.mark.parametrize(
    "shown", [KEY + "/ü", "k3y-that-must-never-show%2F%C3%BC", "k3y-that-must-never-show/\\u00fc", "p%40ss/word"]
)
def test_a_bug_gives_an_error_event_with_every_form_of_the_secrets_masked(shown):
    """The source's secrets are masked as the client's and the modules' are (masking.mask): escaped and
    URL-encoded forms too, and a password inside api_url."""
    client, options = source_options(
        {"api_url": "https://svc:p%40ss%2Fword@nac.example.com", "api_key": KEY + "/\u00fc"}, environ={}
    )
    known, warnings = {1: entry(1, "AUTHENTICATED")}, ["a warning"]
    round_ = bug_round(ValueError("reply had %s" % shown), known, warnings, secret_forms(client))
    (event,) = round_.events
    assert event["nac_dot1x_error"]["message"].startswith(
        "internal error in netaccess.nac.dot1x_status: ValueError: reply had "
    )
    assert "********" in event["nac_dot1x_error"]["message"] and shown not in event["nac_dot1x_error"]["message"]
    assert (round_.known, round_.warnings) == (known, warnings)
