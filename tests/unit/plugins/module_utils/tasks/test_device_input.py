# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Devices as an operator has them: survey text, a CSV file with a spreadsheet's quirks, a YAML or JSON file, and
every mistake told in one line naming the variable, or the file, its line and its column."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_input import (
    checked_devices,
    csv_devices,
    file_devices,
    text_devices,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import InvalidRequest

ROLE_KEYS = ("hostname", "group", "profile", "macs", "ips", "expected_status")


# -- survey text -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '[{"hostname": "cam-01", "group": "Cameras", "profile": "Camera", "macs": ["00:11:22:33:44:55"]}]',
        "- hostname: cam-01\n  group: Cameras\n  profile: Camera\n  macs: [00:11:22:33:44:55]\n",
        "\ufeff- {hostname: cam-01, group: Cameras, profile: Camera, macs: 00:11:22:33:44:55}\r\n",
    ],
)
def test_survey_text_is_read_as_the_list_it_spells(text):
    devices = checked_devices(text_devices(text, "nac_devices"), "nac_devices")
    # A MAC of digits only stays text (YAML 1.1 would read 00:11:22:33:44:55 as a base-60 number).
    assert devices == [dict(hostname="cam-01", group="Cameras", profile="Camera", macs=["00:11:22:33:44:55"])]


@pytest.mark.parametrize("value", [None, "", "  \n", "~", []])
def test_nothing_is_an_empty_list(value):
    assert text_devices(value, "nac_devices") == []


@pytest.mark.parametrize(
    "text, told",
    [
        ("cam-01", "nac_devices is the text 'cam-01', not a list of devices: give a list, for example ["),
        ("hostname: cam-01", 'nac_devices is one mapping ({"hostname": "cam-01"}), not a list of devices'),
        ("[{hostname: cam-01", "nac_devices is text that is neither YAML nor JSON ("),
        (17, "nac_devices is a int (17), not a list of devices"),
    ],
)
def test_text_that_spells_no_list_fails_in_one_line_naming_the_variable(text, told):
    with pytest.raises(InvalidRequest) as caught:
        text_devices(text, "nac_devices")
    assert str(caught.value).startswith(told)
    assert "\n" not in str(caught.value)


def test_plain_strings_are_named_with_what_a_device_looks_like():
    with pytest.raises(InvalidRequest) as caught:
        checked_devices(text_devices("- cam-01\n- hostname=cam-02\n", "nac_devices"), "nac_devices")
    message = str(caught.value)
    assert message.startswith(
        "nac_devices[0] is the string 'cam-01', not a device; nac_devices[1] is the string 'hostname=cam-02', "
        "not a device. Each item of nac_devices is one device, a mapping with the keys hostname, group, profile, "
        "macs, ips (hostname required), for example: "
    )


def test_a_misspelled_key_gets_the_guess_of_nac_device():
    with pytest.raises(InvalidRequest) as caught:
        checked_devices([dict(hostname="cam-01", mac="00:11:22:33:44:55")], "device_onboarding_devices", ROLE_KEYS)
    assert "device_onboarding_devices[0] has the key 'mac', which is not an option of an item (did you mean macs?)" in (
        str(caught.value)
    )


def test_values_are_read_as_the_module_reads_them_and_checked():
    devices = checked_devices(
        [
            dict(
                hostname=1234,
                group=7,
                profile="Camera",
                macs="00-11-22-33-44-55; 001a.2b3c.4d5e",
                ips="10.0.0.1 10.0.0.2",
            )
        ],
        "devices",
    )
    assert devices == [
        dict(
            hostname=1234,
            group="7",
            profile="Camera",
            macs=["00-11-22-33-44-55", "001a.2b3c.4d5e"],
            ips=["10.0.0.1", "10.0.0.2"],
        )
    ]
    with pytest.raises(InvalidRequest) as caught:
        checked_devices([dict(hostname="a", macs="zz"), dict(hostname="A")], "devices")
    assert "devices[0] (a): macs: 'zz' is not a MAC address" in str(caught.value)
    assert "devices[1] (A): hostname A is also requested by devices[0] (a)" in str(caught.value)


# -- files -----------------------------------------------------------------------------------------

SPREADSHEET = (
    "\ufeffhostname , Group,profile,macs,ips,expected_status\r\n"
    "\r\n"
    " cam-01 ,Cameras,Camera, 00:11:22:33:44:55 ; 00-11-22-33-44-56 ,,\r\n"
    ",,,,,\r\n"
    "prn-01,Printers,Printer,,10.30.0.5 10.30.0.6,unauthenticated\r\n"
    '"ws-01",Workstations,Workstation,"00:11:22:33:44:57,00:11:22:33:44:58",,\r\n'
)


def test_a_spreadsheet_csv_with_its_quirks_is_read(tmp_path):
    path = tmp_path / "devices.csv"
    path.write_bytes(SPREADSHEET.encode("utf-8"))
    assert file_devices(str(path), ROLE_KEYS) == [
        dict(hostname="cam-01", group="Cameras", profile="Camera", macs=["00:11:22:33:44:55", "00-11-22-33-44-56"]),
        dict(
            hostname="prn-01",
            group="Printers",
            profile="Printer",
            ips=["10.30.0.5", "10.30.0.6"],
            expected_status="unauthenticated",
        ),
        dict(
            hostname="ws-01",
            group="Workstations",
            profile="Workstation",
            macs=["00:11:22:33:44:57", "00:11:22:33:44:58"],
        ),
    ]


@pytest.mark.parametrize(
    "text, told",
    [
        (
            "hostname,group,profile,macs\ncam-01,Cameras,Camera,00:11\n",
            "devices.csv line 2, column 4 (macs): '00:11' is not a MAC address",
        ),
        (
            "hostname,group,profile,macs,ips\n\ncam-01,Cameras,Camera,,10.0.0.300\n",
            "devices.csv line 3, column 5 (ips): '10.0.0.300' is not an IPv4 address",
        ),
        (
            "hostname,group,profile,mac\n",
            "devices.csv line 1, column 4: 'mac' is not a column of a devices file (did you mean macs?)",
        ),
        ("group,profile\nCameras,Camera\n", "devices.csv line 1: the header row has no hostname column"),
        (
            "hostname,group\ncam 01,Cameras\n",
            "devices.csv line 2, column 1 (hostname): hostname 'cam 01' contains whitespace",
        ),
        (
            "hostname,group\ncam-01,Cameras,Camera\n",
            "devices.csv line 2, column 3: the row has 3 cells but the header names 2 columns",
        ),
        ("\r\n\r\n", "the devices file devices.csv is empty: it needs a header row"),
        (
            "hostname\ncam-01\nCAM-01\n",
            "devices.csv line 3 (CAM-01): hostname CAM-01 is also requested by devices.csv line 2 (cam-01)",
        ),
    ],
)
def test_a_bad_csv_row_is_named_by_file_line_and_column(tmp_path, monkeypatch, text, told):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "devices.csv").write_text(text, encoding="utf-8")
    with pytest.raises(InvalidRequest) as caught:
        file_devices("devices.csv")
    assert told in str(caught.value)


def test_csv_labels_are_the_lines_of_the_rows():
    devices, labels = csv_devices("hostname\n\na\nb\n", "f.csv")
    assert [device["hostname"] for device in devices] == ["a", "b"] and labels == ["f.csv line 3", "f.csv line 4"]


def test_a_yaml_or_json_file_is_a_list_or_a_variables_file(tmp_path):
    (tmp_path / "a.yml").write_text("nac_devices:\n  - {hostname: cam-01, macs: [00:11:22:33:44:55]}\n")
    (tmp_path / "b.json").write_text('[{"hostname": "cam-02"}]')
    assert file_devices(str(tmp_path / "a.yml")) == [dict(hostname="cam-01", macs=["00:11:22:33:44:55"])]
    assert file_devices(str(tmp_path / "b.json")) == [dict(hostname="cam-02")]
    (tmp_path / "c.yml").write_text("- cam-01\n")
    with pytest.raises(InvalidRequest) as caught:
        file_devices(str(tmp_path / "c.yml"))
    assert str(caught.value).startswith("%s[0] is the string 'cam-01', not a device" % (tmp_path / "c.yml"))


def test_a_missing_or_binary_file_is_told(tmp_path):
    with pytest.raises(InvalidRequest) as caught:
        file_devices(str(tmp_path / "none.csv"))
    assert str(caught.value) == "cannot read the devices file %s: No such file or directory" % (tmp_path / "none.csv")
    (tmp_path / "latin.csv").write_bytes(b"hostname\ncaf\xe9\n")
    with pytest.raises(InvalidRequest) as caught:
        file_devices(str(tmp_path / "latin.csv"))
    assert "is not UTF-8 text (at byte offset 12)" in str(caught.value)
