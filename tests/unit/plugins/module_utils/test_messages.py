# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The messages a user meets first (issue 35): an item of nac_device's devices that is not a device names the
option, the item and what to write; a failed bulk's message stays short however many reasons; unknown hostnames of
nac_device_info are named in a warning; the progress lines of a module reach the file its action plugin reads."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import (
    PROGRESS_FILE,
    progress_file_writer,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    MESSAGE_REASON_CHARS,
    Outcome,
    failure_message,
    item_problems,
)
from ansible_collections.netaccess.nac.plugins.modules import nac_device, nac_device_info
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient, printed
from ansible_collections.netaccess.nac.tests.unit.helpers import run_module as run

KEYS = ["hostname", "group", "profile", "macs", "ips"]
KEY = "unit-k3y-0123456789"
EXAMPLE = "devices: [{hostname: cam-01, group: Cameras, profile: Camera}]"


@pytest.mark.parametrize(
    "devices, said",
    [
        (
            ["cam-a", "cam-b"],
            "devices[0] is the string 'cam-a', not a device; devices[1] is the string 'cam-b', not a device",
        ),
        (
            [{"hostname:x": None}],
            (
                "devices[0] has the key 'hostname:x', which YAML reads as one key because no space "
                "follows the colon: write 'hostname: x'"
            ),
        ),
        (
            [{"hostname": "a"}, {"hostname": "b", "mac": ["00:11:22:33:44:55"]}],
            "devices[1] has the key 'mac', which is not an option of an item (did you mean macs?)",
        ),
        ([{"group": "Cameras"}], "devices[0] has no hostname: each item needs one"),
        (
            [None, 5, ["a"]],
            (
                "devices[0] is null, not a device; devices[1] is a int (5), not a device; "
                "devices[2] is a list (['a']), not a device"
            ),
        ),
    ],
)
def test_items_that_are_not_devices_are_named_with_what_to_write(devices, said):
    message = item_problems(devices, KEYS)
    assert message.startswith(said + ". ")
    assert message.endswith(EXAMPLE)
    assert "hostname, group, profile, macs, ips (hostname required)" in message


@pytest.mark.parametrize(
    "devices",
    [None, "cam-a", [], [{"hostname": "a", "group": "g"}], ['{"hostname": "a"}'], ["hostname=a group=g"]],
)
def test_what_ansible_reads_as_devices_is_left_to_it(devices):
    assert item_problems(devices, KEYS) is None


def test_a_control_character_in_a_key_is_shown_escaped():
    assert "'ho\\x1bst'" in item_problems([{"ho\x1bst": 1, "hostname": "a"}], KEYS)


@pytest.mark.parametrize(
    "devices, said",
    [
        (["cam-a", "cam-b"], "devices[0] is the string 'cam-a', not a device"),
        ([{"hostname:x": None}], "write 'hostname: x'"),
    ],
)
def test_nac_device_says_it_instead_of_ansibles_words(capsys, devices, said):
    run(nac_device.main, api_key=KEY, devices=devices)
    result, out = printed(capsys)
    assert result["failed"] is True
    assert said in result["msg"] and result["msg"].endswith(EXAMPLE)
    assert "dictionary requested" not in out and "missing required arguments" not in out
    assert KEY not in out


def test_other_argument_errors_keep_ansibles_words(capsys):
    run(nac_device.main, api_key=KEY, devices=[{"hostname": "a"}], concurrency="many")
    result, _out = printed(capsys)
    assert "concurrency" in result["msg"] and "devices[" not in result["msg"]


def failed(name, reason):
    outcome = Outcome(dict(hostname=name), "create")
    outcome.fail(reason)
    return outcome


def test_a_bulk_failure_message_names_three_reasons_and_counts_the_others():
    outcomes = [failed("d-%03d" % n, "reason %d " % (n % 50) + "x" * 500) for n in range(106)]
    message = failure_message(outcomes)
    assert message.startswith("106 of 106 devices failed (0 created, 0 existing): d-000, d-050, d-100: reason 0 ")
    assert message.count(" | ") == 3 and "97 more devices failed for 47 other reasons." in message, message[-300:]
    assert message.endswith("Every device's outcome, with its error, is in the result's devices (register the task)")
    assert len(message) < 3 * (MESSAGE_REASON_CHARS + 100) + 300


def test_a_single_device_failure_is_its_reason_alone():
    assert failure_message([failed("a", "refused")]) == "1 of 1 devices failed (0 created, 0 existing): a: refused"


def test_nac_device_info_warns_naming_hostnames_and_ids_that_match_no_device(capsys, monkeypatch):
    client = FakeClient([dict(id=1, hostname="cam-01")])
    monkeypatch.setattr(nac_device_info, "NacModule", _with_client(nac_device_info.NacModule, client))
    run(nac_device_info.main, api_key=KEY, hostname=["cam-01", "no-such-cam"], id=[42])
    result, _out = printed(capsys)
    assert result["missing"] == ["no-such-cam", 42]
    warned = "2 of the requested hostnames and ids match no device of the NAC: no-such-cam, 42 (the result's missing "
    assert warned + "lists them)" in json.dumps(result["warnings"])  # a string, or (2.19+) an event holding it


def test_the_missing_warning_is_capped():
    message = nac_device_info.missing_warning(["h-%02d" % n for n in range(25)])
    assert message.startswith("25 of the requested hostnames and ids match no device of the NAC: h-00, ")
    assert "h-09 and 15 more (the result's missing lists them)" in message


def _with_client(cls, client):
    class WithClient(cls):
        def __init__(self, *args, **kwargs):
            super(WithClient, self).__init__(*args, **kwargs)
            self.client = client

    return WithClient


def test_progress_lines_go_to_the_file_the_action_plugin_names(tmp_path, monkeypatch):
    path = tmp_path / "progress.txt"
    emit = progress_file_writer(str(path))
    emit("nac_device: 1 of 2 written")
    emit("a line with \x1b[31m an escape\nand a break")
    assert path.read_text().splitlines() == [
        "nac_device: 1 of 2 written",
        "a line with \\x1b[31m an escape\\nand a break",
    ]
    assert progress_file_writer(None) is None and progress_file_writer("") is None
    progress_file_writer(str(tmp_path / "missing" / "file"))("lost, not failing")  # a file that cannot be written
    assert PROGRESS_FILE == "NAC_PROGRESS_FILE"


def test_a_module_writes_its_progress_only_where_told(tmp_path, monkeypatch, capsys):
    path = tmp_path / "progress.txt"
    monkeypatch.setenv(PROGRESS_FILE, str(path))
    client = FakeClient([dict(id=1, hostname="cam-01")])
    client.max_retries = 0
    monkeypatch.setattr(nac_device, "NacModule", _with_client(nac_device.NacModule, client))
    run(nac_device.main, api_key=KEY, devices=[{"hostname": "cam-01"}])
    result, _out = printed(capsys)
    assert result.get("existing") == 1, result
    assert not path.exists()  # work shorter than progress.FIRST seconds says nothing
    json.dumps(result)
