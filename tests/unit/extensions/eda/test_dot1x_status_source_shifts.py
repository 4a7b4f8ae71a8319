# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source netaccess.nac.dot1x_status against pages that shift while they are read (issue 25): the
round reads the list again and gives one event per device; a list that shifts again is an error event."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import run_source

KEY = "nac-demo-admin-key"


@pytest.fixture
def emulator(monkeypatch):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD", "NAC_TENANT", "NAC_API_URL"):
        monkeypatch.delenv(name, raising=False)
    with Emulator(config=dict(DEFAULT_CONFIG, seed_devices=15)).start() as running:  # 20 devices: pages of 5
        running.settings(page_size=5)
        yield running


@pytest.mark.parametrize("shift", ["insert-front", "delete-front"])
def test_the_first_round_gives_one_event_per_device(emulator, shift):
    emulator.settings(page_shift=shift)
    args = {"api_url": emulator.url, "api_key": KEY, "interval": 30, "initial": True}
    events = run_source(args, [(lambda events: len(events) >= len(emulator.records()), None)])
    truth = emulator.records()
    assert not [event for event in events if "nac_dot1x_error" in event]
    assert sorted(e["nac_dot1x"]["id"] for e in events) == sorted(r["id"] for r in truth)  # each once, none unread


def test_a_list_that_shifts_again_is_an_error_event(emulator):
    emulator.settings(page_shift="delete-front", page_shifts=2)
    args = {"api_url": emulator.url, "api_key": KEY, "interval": 30, "initial": True}
    events = run_source(args, [(lambda events: len(events) >= 1, None)])
    assert [list(event) for event in events] == [["nac_dot1x_error"]]
    assert "changed while its pages were read, and again" in events[0]["nac_dot1x_error"]["message"]
