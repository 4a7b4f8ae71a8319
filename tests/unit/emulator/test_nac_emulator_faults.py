# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the emulator's fault injection (README, "Faults") and of allow_duplicate_hostnames."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import subprocess
import sys
import time

import pytest
import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import FAULT_MODES, Emulator, Faults, load_config
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import (
    INTEGRATION_CONFIG,
    SCRIPT,
    Api,
    by_hostname,
    start_cli,
)

CAMERA = dict(group="Cameras", profile="Camera")


def admin(api, path, body=None):
    if body is None:
        return requests.get(api.url + path, timeout=10)
    return requests.post(api.url + path, json=body, timeout=10)


def wait_until_nothing_held(emu, limit=10):
    deadline = time.monotonic() + limit
    while emu.faults()["holding"]:
        assert time.monotonic() < deadline, "a slow request is still held after %s s" % limit
        time.sleep(0.02)


def hostnames(api):
    return [device["hostname"] for device in api.devices()]


# ---- off in normal use -----------------------------------------------------------------------


def test_faults_are_off_unless_asked_for(emu, api):
    for _index in range(200):
        assert api.get("/api/device").status_code == 200
    snapshot = emu.faults()
    assert snapshot["rate"] == 0 and snapshot["total"] == 0
    assert snapshot["modes"] == list(FAULT_MODES) and snapshot["injected"] == dict.fromkeys(FAULT_MODES, 0)


# ---- each mode -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, status, content_type, text",
    [
        ("500", 500, "text/html", "Server error"),
        ("502", 502, "text/html", "502 Bad Gateway"),
        ("503", 503, "text/html", "503 Service Unavailable"),
        ("429", 429, "application/json", "Too many requests"),
    ],
)
def test_fault_answered_in_front_of_the_service_processes_nothing(emu, api, mode, status, content_type, text):
    emu.faults(rate=1, modes=[mode], retry_after=7)
    reply = api.create(hostname="flt-front", **CAMERA)
    assert (reply.status_code, reply.headers["Content-Type"]) == (status, content_type) and text in reply.text
    assert reply.headers.get("Retry-After") == ("7" if mode == "429" else None)
    emu.faults(rate=0)
    assert "flt-front" not in hostnames(api)
    assert emu.faults()["injected"][mode] == 1 and emu.faults()["total"] == 1


def test_fault_reset_aborts_the_connection_before_processing(emu, api):
    emu.faults(rate=1, modes=["reset"])
    with pytest.raises(requests.ConnectionError, match="reset by peer"):
        api.create(hostname="flt-reset", **CAMERA)
    emu.faults(rate=0)
    assert "flt-reset" not in hostnames(api)


def test_fault_commit_drop_creates_the_device_and_closes_without_reply(emu, api):
    emu.faults(rate=1, modes=["commit_drop"])
    with pytest.raises(requests.ConnectionError, match="without response"):
        api.create(hostname="flt-drop", **CAMERA)
    emu.faults(rate=0)
    assert by_hostname(api.devices(), "flt-drop")


def test_fault_commit_500_creates_the_device_and_answers_server_error(emu, api):
    emu.faults(rate=1, modes=["commit_500"])
    reply = api.create(hostname="flt-c500", **CAMERA)
    assert reply.status_code == 500 and "Server error" in reply.text
    emu.faults(rate=0)
    assert by_hostname(api.devices(), "flt-c500")


def test_fault_processed_with_an_error_still_loses_the_reply(emu, api):
    emu.faults(rate=1, modes=["commit_500"])
    assert api.create(hostname="seed-cam-01", **CAMERA).status_code == 500  # the 409 is lost
    emu.faults(rate=0)
    assert len(by_hostname(api.devices(), "seed-cam-01")) == 1


def test_fault_slow_commits_only_after_the_client_gave_up(emu, api):
    emu.faults(rate=1, modes=["slow"], slow=1.0)
    with pytest.raises(requests.ReadTimeout):
        api.session.post(api.url + "/api/device", json=dict(hostname="flt-slow", **CAMERA), timeout=0.2)
    emu.faults(rate=0)
    if emu.faults()["holding"] == 1:  # normally so; a machine stalled for a second may have committed it already
        assert "flt-slow" not in hostnames(api)
    wait_until_nothing_held(emu)
    assert by_hostname(api.devices(), "flt-slow")


def test_fault_slow_reply_arrives_for_a_patient_client(emu, api):
    emu.faults(rate=1, modes=["slow"], slow=0.1)
    assert api.create(hostname="flt-patient", **CAMERA).status_code == 201


# ---- scope, mix, reproducibility -------------------------------------------------------------


def test_faults_never_touch_the_admin_endpoints(emu, api):
    emu.faults(rate=1, modes=["reset", "500"])
    for _index in range(30):
        assert admin(api, "/_emulator/health").json() == {"ok": True}
        assert admin(api, "/_emulator/requests").status_code == 200
    assert emu.faults()["total"] == 0


def test_faulty_requests_are_counted_like_the_others(emu, api):
    emu.faults(rate=1, modes=["503"])
    for _index in range(3):
        api.get("/api/device")
    assert emu.request_counts() == {"GET /api/device": 3}


def test_fault_rate_and_mode_mix_follow_the_settings():
    faults = Faults(dict(rate=0.2, seed=8))
    drawn = collections.Counter(faults.draw() for _index in range(8000))
    assert 1400 < 8000 - drawn[None] < 1800  # 20 %: 1600 expected
    assert set(drawn) == set(FAULT_MODES) | {None}
    assert all(120 < drawn[mode] < 280 for mode in FAULT_MODES)  # each of the eight: 200 expected
    assert faults.snapshot()["injected"] == dict((mode, drawn[mode]) for mode in FAULT_MODES)
    only = Faults(dict(rate=1, modes=["429", "slow"], seed=8))
    assert set(only.draw() for _index in range(200)) == {"429", "slow"}


def test_fault_sequence_is_reproducible_from_the_seed():
    def sequence(seed):
        with Emulator(
            faults=dict(rate=0.5, modes=["500", "502", "503", "429"], seed=seed, retry_after=0)
        ).start() as running:
            session = Api(running.url)
            return [session.get("/api/intent").status_code for _index in range(60)]

    first = sequence(42)
    assert first == sequence(42)
    assert first != sequence(43)
    assert 200 in first and set(first) - {200}


def test_status_faults_keep_the_connection_alive(emu, api):
    before = emu.server_stats()["connections"]
    emu.faults(rate=0.5, modes=["500", "502", "503", "429", "commit_500"], seed=1)
    statuses = set(api.get("/api/intent").status_code for _index in range(50))
    assert {200, 500, 502, 503, 429} <= statuses
    assert emu.server_stats()["connections"] - before == 1


# ---- admin endpoint and reset ----------------------------------------------------------------


def test_admin_faults_endpoint_sets_and_shows_settings_and_counters(emu, api):
    reply = admin(api, "/_emulator/faults", {"rate": 1, "modes": ["503"], "seed": 5, "retry_after": 2, "slow": 0.5})
    assert reply.status_code == 200
    assert api.get("/api/device").status_code == 503
    shown = admin(api, "/_emulator/faults").json()
    assert dict((k, shown[k]) for k in ("rate", "modes", "seed", "retry_after", "slow")) == {
        "rate": 1,
        "modes": ["503"],
        "seed": 5,
        "retry_after": 2,
        "slow": 0.5,
    }
    assert shown["injected"]["503"] == 1 and shown["total"] == 1 and shown["holding"] == 0
    assert admin(api, "/_emulator/faults", {"rate": 0}).json()["modes"] == ["503"]  # omitted settings are kept
    assert api.get("/api/device").status_code == 200


@pytest.mark.parametrize(
    "body, bad",
    [
        ({"rate": 1.5}, "rate"),
        ({"rate": "0.2"}, "rate"),
        ({"rate": True}, "rate"),
        ({"modes": []}, "modes"),
        ({"modes": ["500", "teapot"]}, "modes"),
        ({"modes": "500"}, "modes"),
        ({"seed": "x"}, "seed"),
        ({"retry_after": -1}, "retry_after"),
        ({"retry_after": 0.5}, "retry_after"),
        ({"slow": -1}, "slow"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_admin_faults_endpoint_refuses_bad_settings_and_changes_nothing(emu, api, body, bad):
    reply = admin(api, "/_emulator/faults", dict(body, rate=body.get("rate", 1)))
    assert reply.status_code == 400 and list(reply.json()["fields"]) == [bad]
    assert emu.faults()["rate"] == 0


def test_reset_returns_to_the_start_up_fault_settings():
    with Emulator(faults=dict(rate=1, modes=["503"], seed=3)).start() as running:
        client = Api(running.url)
        assert client.get("/api/intent").status_code == 503
        running.faults(rate=0)
        running.reset()
        snapshot = running.faults()
        assert (snapshot["rate"], snapshot["modes"], snapshot["total"]) == (1, ["503"], 0)


def test_a_null_seed_is_replaced_by_a_shown_random_one():
    seed = Faults().snapshot()["seed"]
    assert isinstance(seed, int)
    with pytest.raises(ValueError, match="modes"):
        Faults(dict(modes=["nope"]))


# ---- duplicate hostnames ---------------------------------------------------------------------


def test_duplicate_hostnames_are_refused_unless_allowed(emu, api):
    assert admin(api, "/_emulator/settings").json()["allow_duplicate_hostnames"] is False
    assert api.create(hostname="SEED-CAM-01", **CAMERA).status_code == 409
    assert (
        admin(api, "/_emulator/settings", {"allow_duplicate_hostnames": True}).json()["allow_duplicate_hostnames"]
        is True
    )
    reply = api.create(hostname="SEED-CAM-01", **CAMERA)
    assert reply.status_code == 201
    assert [d["id"] for d in api.devices() if d["hostname"].lower() == "seed-cam-01"] == [1, reply.json()["id"]]
    conflict = api.create(hostname="seed-cam-01", macs=["02:00:00:20:00:10"], **CAMERA)  # MACs and IPs still conflict
    assert conflict.status_code == 409 and "MAC address" in conflict.json()["message"]
    emu.reset()
    assert admin(api, "/_emulator/settings").json()["allow_duplicate_hostnames"] is False


@pytest.mark.parametrize("body", [{"allow_duplicate_hostnames": "yes"}, {"allow_duplicates": True}])
def test_admin_settings_endpoint_refuses_bad_settings(api, body):
    assert admin(api, "/_emulator/settings", body).status_code == 400


def test_duplicate_hostnames_from_the_config_and_its_check():
    config = load_config(INTEGRATION_CONFIG)
    config["allow_duplicate_hostnames"] = True
    with Emulator(config).start() as running:
        assert (
            Api(running.url).create(hostname="dup-host", group="Workstations", profile="Workstation").status_code == 201
        )
    config["allow_duplicate_hostnames"] = "yes"
    with pytest.raises(ValueError, match="allow_duplicate_hostnames"):
        Emulator(config)


# ---- command line ----------------------------------------------------------------------------


def test_cli_fault_flags(tmp_path):
    process, port = start_cli(
        tmp_path,
        "--quiet",
        "--faults",
        "1",
        "--fault-modes",
        "429",
        "--fault-retry-after",
        "3",
        "--fault-seed",
        "9",
        "--fault-slow",
        "0.5",
        "--allow-duplicate-hostnames",
    )
    try:
        url = "http://127.0.0.1:%d" % port
        reply = Api(url).get("/api/device")
        assert reply.status_code == 429 and reply.headers["Retry-After"] == "3"
        snapshot = requests.get(url + "/_emulator/faults", timeout=10).json()
        assert (snapshot["seed"], snapshot["slow"], snapshot["injected"]["429"]) == (9, 0.5, 1)
        assert requests.get(url + "/_emulator/settings", timeout=10).json()["allow_duplicate_hostnames"] is True
    finally:
        process.terminate()
        process.communicate(timeout=10)


@pytest.mark.parametrize(
    "flags, named", [(["--faults", "2"], "rate"), (["--faults", "0.2", "--fault-modes", "500,teapot"], "modes")]
)
def test_cli_bad_fault_flags_exit_with_message(flags, named):
    result = subprocess.run(
        [sys.executable, SCRIPT, "--port", "0"] + flags,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=10,
        check=False,
    )
    assert result.returncode == 2 and "cannot start" in result.stderr and named in result.stderr
