# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source netaccess.nac.dot1x_status as ansible-rulebook runs it (a file run by path,
``await main(queue, args)``), against the in-process NAC emulator."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging
import os
import subprocess
import sys

import pytest
import requests

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacConfigError
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import EVENT_SOURCE as SOURCE
from ansible_collections.netaccess.nac.tests.unit.helpers import run_source

KEY = "nac-demo-admin-key"
BAD_KEY = "wrong-key-that-must-never-show-0123"


@pytest.fixture
def emulator(monkeypatch):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD", "NAC_TENANT", "NAC_API_URL"):
        monkeypatch.delenv(name, raising=False)
    with Emulator().start() as running:  # cam-01, cam-02, printer-01, ws-01: AUTHENTICATED; ws-02: UNAUTHENTICATED
        yield running


def changes(events):
    return [
        (e["nac_dot1x"]["hostname"], e["nac_dot1x"]["previous_status"], e["nac_dot1x"]["status"])
        for e in events
        if "nac_dot1x" in e
    ]


def test_the_source_emits_initial_statuses_then_each_change(emulator, monkeypatch):
    monkeypatch.setenv("NAC_API_KEY", KEY)  # the credential from the environment, as the docs recommend

    def flip():
        requests.post(
            emulator.url + "/_emulator/dot1x", json={"hostname": "cam-01", "status": "UNAUTHENTICATED"}, timeout=10
        )

    events = run_source(
        {"api_url": emulator.url, "hostname": ["cam-01", "CAM-02"], "interval": 0.05, "initial": True},
        [
            (lambda events: len(events) >= 2, flip),
            (lambda events: len(events) >= 3, None),
        ],
    )
    assert changes(events)[:3] == [
        ("cam-01", None, "AUTHENTICATED"),
        ("cam-02", None, "AUTHENTICATED"),
        ("cam-01", "AUTHENTICATED", "UNAUTHENTICATED"),
    ]
    assert events[2]["nac_dot1x"] == dict(
        id=1,
        hostname="cam-01",
        status="UNAUTHENTICATED",
        previous_status="AUTHENTICATED",
        auth_method=None,  # as the guides' events show: an unauthenticated device has no method or user
        username=None,
        message=None,
    )
    assert set(emulator.request_counts()) == {
        "GET /api/device",
        "POST /api/intent/dot1x_status/fire",
    }  # never an intent list


def test_a_bad_key_gives_error_events_round_after_round_without_the_key(emulator, caplog):
    caplog.set_level(logging.DEBUG)
    events = run_source(
        {"api_url": emulator.url, "api_key": BAD_KEY, "interval": 0.05, "max_retries": 0},
        [(lambda events: len(events) >= 3, None)],
    )
    assert all(list(e) == ["nac_dot1x_error"] and e["nac_dot1x_error"]["devices"] == [] for e in events)
    assert "Server error" in events[0]["nac_dot1x_error"]["message"]
    assert BAD_KEY not in repr(events) and BAD_KEY not in caplog.text
    assert "Server error" in caplog.text  # the failure is logged too


def test_an_unreachable_service_gives_error_events_and_polling_goes_on(emulator):
    url = emulator.url
    emulator.stop()
    events = run_source(
        {"api_url": url, "api_key": KEY, "interval": 0.05, "max_retries": 0, "timeout": 2},
        [(lambda events: len(events) >= 2, None)],
    )
    assert "Could not connect to the NAC API at %s" % url in events[0]["nac_dot1x_error"]["message"]


def test_a_service_that_stops_answering_gives_an_error_event_during_the_outage_and_polling_goes_on(emulator):
    """Silent outage (connections accepted, nothing answered) of 8 s, interval 1 s: the round under way
    gives its error event within about one interval, while the outage is still on, not after it; once the
    service answers again, the next round reports the change that happened meanwhile."""
    seen = {}

    def go_silent():
        emulator.outage(8, mode="silent")

    def note_error_and_flip():
        seen["outage"] = emulator.outage_state()["state"]  # when the first error event was there
        requests.post(
            emulator.url + "/_emulator/dot1x", json={"hostname": "cam-01", "status": "UNAUTHENTICATED"}, timeout=10
        )  # the admin endpoints answer during a silent outage

    def changed_after_the_outage(events):
        return ("cam-01", "AUTHENTICATED", "UNAUTHENTICATED") in changes(events)

    args = {"api_url": emulator.url, "api_key": KEY, "hostname": ["cam-01"], "interval": 1, "timeout": 0.5}
    events = run_source(
        dict(args, initial=True),
        [
            (lambda events: len(events) >= 1, go_silent),
            (lambda events: any("nac_dot1x_error" in e for e in events), note_error_and_flip),
            (changed_after_the_outage, None),
        ],
        timeout=60,
    )
    assert seen["outage"] == "active"
    first_error = next(e["nac_dot1x_error"] for e in events if "nac_dot1x_error" in e)
    assert "The NAC API at %s could not be reached" % emulator.url in first_error["message"]
    assert "nothing has answered for 1 s (the interval of the event source)" in first_error["message"]
    assert changes(events)[0] == ("cam-01", None, "AUTHENTICATED")
    assert emulator.outage_state()["state"] == "over"


def test_bad_arguments_end_the_source_with_a_clear_error(emulator):
    with pytest.raises(NacConfigError) as caught:
        run_source({"api_url": emulator.url, "api_key": BAD_KEY, "intervall": 5}, [(lambda events: False, None)])
    assert "unknown argument(s) intervall" in caught.value.message and BAD_KEY not in caught.value.message
    with pytest.raises(NacConfigError, match="no credentials"):
        run_source({"api_url": emulator.url}, [(lambda events: False, None)])


def test_the_source_file_makes_its_own_collection_importable():
    """ansible-rulebook runs the file by path, with no collections path on sys.path."""
    env = dict(
        (k, v)
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS")
    )

    def isolated(code):
        done = subprocess.run(
            [sys.executable, "-I", "-c", code, SOURCE],
            cwd="/",
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=60,
            check=False,
        )
        return done.stdout.decode()

    assert "ModuleNotFoundError" in isolated("import ansible_collections.netaccess.nac.plugins.module_utils.nac.client")
    output = isolated(
        "import runpy, sys; module = runpy.run_path(sys.argv[1]); "
        "print(module['main'].__name__, 'DOCUMENTATION' in module)"
    )
    assert output.strip().endswith("main True"), output


def test_a_server_string_that_could_be_a_template_is_sent_as_a_template_of_its_value(emulator):
    from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.template_guard import (  # pylint: disable=import-outside-toplevel
        literal_template,
    )

    evil = "{{ lookup('pipe', 'id') }}"

    def flip():
        requests.post(
            emulator.url + "/_emulator/dot1x",
            json={"hostname": "cam-01", "status": "UNAUTHENTICATED", "message": evil, "username": "plain"},
            timeout=10,
        )

    events = run_source(
        {"api_url": emulator.url, "api_key": KEY, "hostname": ["cam-01"], "interval": 0.05, "initial": True},
        [(lambda events: events, flip), (lambda events: len(events) >= 2, None)],
    )
    device = events[1]["nac_dot1x"]
    assert (device["status"], device["previous_status"], device["username"]) == (
        "UNAUTHENTICATED",
        "AUTHENTICATED",
        "plain",
    )  # rule conditions see the server's words
    assert device["message"] == literal_template(evil)
