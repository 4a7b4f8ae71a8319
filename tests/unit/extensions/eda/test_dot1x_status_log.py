# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source's log as ansible-rulebook shows it: a server's status, hostname or error never forges a log
line nor reaches the terminal raw, while the events keep the exact values; one warning when TLS is not
verified. Against the in-process NAC emulator."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.options import INSECURE_TLS
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import run_source

KEY = "nac-demo-admin-key"

FORGED = "AUTHENTICATED\n2026-01-01 00:00:00 INFO round 9: 0 devices\x1b]0;pwned\x07"
HOSTNAME = "cam\x1b[2J-01\u2028"


@pytest.fixture
def emulator(monkeypatch):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD", "NAC_TENANT", "NAC_API_URL", "NAC_VALIDATE_CERTS"):
        monkeypatch.delenv(name, raising=False)
    devices = [dict(id=1, hostname=HOSTNAME, group="Cameras", profile="Camera", macs=["02:00:00:20:00:10"])]
    overrides = {HOSTNAME: {"status": FORGED, "message": "\x1b[31mred\x1b[0m"}}
    with Emulator(config=dict(devices=devices, dot1x=dict(overrides=overrides))).start() as running:
        yield running


def test_a_forged_status_is_logged_escaped_and_emitted_exact(emulator, caplog):
    caplog.set_level(logging.DEBUG, logger="netaccess.nac.dot1x_status")
    events = run_source(
        {"api_url": emulator.url, "api_key": KEY, "interval": 0.05, "initial": True, "validate_certs": "no"},
        [(lambda events: len(events) >= 1, None), (lambda events: True, None)],
    )
    assert events[0]["nac_dot1x"]["status"] == FORGED and events[0]["nac_dot1x"]["hostname"] == HOSTNAME
    lines = [record.getMessage() for record in caplog.records if record.name == "netaccess.nac.dot1x_status"]
    assert any("AUTHENTICATED\\n2026-01-01" in line for line in lines), lines
    assert all(not CONTROL.search(line) for line in lines), lines
    assert lines.count(INSECURE_TLS) == 1
