# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nac_device against the emulator with devices as an AWX survey answer (YAML or JSON text), text that spells no
list, and fail_on_drift: each told in one line, never with Ansible's argument specification."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.netaccess.nac.plugins.modules import nac_device
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import printed
from ansible_collections.netaccess.nac.tests.unit.helpers import run_module as run

KEY = "nac-demo-admin-key"


@pytest.fixture(scope="module")
def server():
    with Emulator(dict(DEFAULT_CONFIG)).start() as running:
        yield running


@pytest.fixture
def emu(server):
    server.reset()
    return server


def module(emu, capsys, **args):
    run(nac_device.main, api_url=emu.url, api_key=KEY, max_retries=0, settle_timeout=0, **args)
    return printed(capsys)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([dict(hostname="sv-cam-01", group="Cameras", profile="Camera", macs=["02:00:00:99:00:01"])]),
        "- hostname: sv-cam-01\n  group: Cameras\n  profile: Camera\n  macs: [02:00:00:99:00:01]\n",
    ],
)
def test_a_survey_answer_creates_its_devices(emu, capsys, text):
    result, _out = module(emu, capsys, devices=text)
    assert result["changed"] and not result.get("failed") and result["created"] == 1
    created = [r for r in emu.records() if r["hostname"] == "sv-cam-01"]
    assert len(created) == 1 and created[0]["macs"] == ["02:00:00:99:00:01"]


@pytest.mark.parametrize(
    "text, told",
    [
        ("cam-01", "devices is the text 'cam-01', not a list of devices: give a list, for example ["),
        ("[{hostname: x", "devices is text that is neither YAML nor JSON ("),
        (
            '[{"hostname": "sv-cam-02", "mac": "02:00:00:99:00:02"}]',
            (
                "devices[0] has the key 'mac', which is not an "
                "option of an item (did you mean macs?). Each item of devices is one device"
            ),
        ),
        ('["sv-cam-03"]', "devices[0] is the string 'sv-cam-03', not a device. Each item of devices is one device"),
    ],
)
def test_text_that_spells_no_devices_fails_in_one_line_without_the_argument_spec(emu, capsys, text, told):
    result, out = module(emu, capsys, devices=text)
    assert result["failed"] and result["msg"].startswith(told), result["msg"]
    assert "\n" not in result["msg"] and "argument_spec" not in out and KEY not in out
    assert emu.request_counts() == {}


def test_fail_on_drift_fails_naming_the_device_and_each_field(emu, capsys):
    existing = [r for r in emu.records() if r["hostname"] == "cam-01"][0]
    asked = dict(hostname="cam-01", group="Printers", profile=existing["profile"])
    warned, _out = module(emu, capsys, devices=[asked])
    assert not warned.get("failed") and "differs from the request: group is Cameras, not Printers" in (
        json.dumps(warned.get("warnings"))
    )
    result, _out = module(emu, capsys, devices=[asked], fail_on_drift=True)
    assert result["failed"] and result["failures"] == 1 and result["devices"][0]["id"] == existing["id"]
    assert result["devices"][0]["error"].startswith(
        "device cam-01 (id %d) differs from the request: group is Cameras, not Printers (fail_on_drift)"
        % existing["id"]
    )
