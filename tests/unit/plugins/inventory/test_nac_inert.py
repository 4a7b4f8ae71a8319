# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the inventory plugin netaccess.nac.nac: no server string is ever run as a template (not even
one that a compose expression decodes), and no hostname with a control character is a host name."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os

import pytest
from ansible.inventory.data import InventoryData
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import inventory_loader

from ansible_collections.netaccess.nac.plugins.inventory.nac import host_names, inert, inert_name
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.templating import BEFORE_2_19, render, templatable

ADMIN_KEY = "nac-demo-admin-key"


@pytest.mark.parametrize("text", ["{{ lookup('pipe', 'id') }}", "{% if 1 %}x{% endif %}", "a { b", "x}", "#jinja2: x"])
def test_server_strings_that_could_be_templates_are_never_templatable(text):
    value = inert({"nac_record": {text: [text]}, "nac_group": text})
    assert not templatable(value["nac_group"]) and value["nac_group"] == text
    [(key, items)] = value["nac_record"].items()
    assert not templatable(key) and not templatable(items[0]) and items == [text]
    assert not templatable(inert_name(text)) and inert_name(text) == text


def test_other_server_strings_are_unsafe_before_2_19_and_trusted_from_2_19():
    value = inert({"nac_group": "Cameras", "nac_macs": ["02:00:00:20:00:10"], "nac_id": 1, "nac_username": None})
    assert value == {"nac_group": "Cameras", "nac_macs": ["02:00:00:20:00:10"], "nac_id": 1, "nac_username": None}
    # Before 2.19 a plain string is templated when used, so one that a filter decodes into a template would run:
    # every server string is unsafe. From 2.19 a filter's result is never trusted: templating the others changes
    # nothing, and they stay plain strings in `ansible-inventory --list --output` (what AWX stores).
    assert templatable(value["nac_group"]) is not BEFORE_2_19
    assert templatable(value["nac_macs"][0]) is not BEFORE_2_19
    assert templatable(inert_name("cam-01"))  # a host name without a brace stays a plain string in the host lists


@pytest.mark.parametrize(
    "hostname, shown",
    [
        ("cam\x1b[2J-01", "cam\\x1b[2J-01"),
        ("cam-01\nok: [x]", "cam-01\\nok: [x]"),
        ("cam-01\r", "cam-01\\r"),
        ("cam\x9b31m", "cam\\x9b31m"),  # C1 CSI
        ("cam\x85x", "cam\\x85x"),  # NEL
        ("cam\u2028x", "cam\\u2028x"),
        ("cam\x7f", "cam\\x7f"),
        ("\x00", "\\x00"),
    ],
)
def test_a_hostname_with_control_characters_is_no_host_name(hostname, shown):
    names, warnings = host_names([dict(id=1, hostname="cam-02"), dict(id=9, hostname=hostname)])
    assert names == ["cam-02", "nac_device_9"]
    assert warnings == [
        "device id 9: the hostname '%s' holds control characters, so it is no host name: host named nac_device_9 "
        "(the hostname as the NAC shows it is in nac_hostname)" % shown
    ]


def test_devices_sharing_a_hostname_with_control_characters_get_names_from_their_ids():
    records = [dict(id=4, hostname="x\x1by"), dict(id=5, hostname="X\x1bY"), dict(id=6, hostname="nac_device_4")]
    names, warnings = host_names(records)
    assert names == ["nac_device_4_4", "nac_device_5", "nac_device_4"]
    assert warnings == [
        (
            "device ids 4, 5: the hostname 'x\\x1by' holds control characters, so it is no host name: hosts named "
            "nac_device_4_4, nac_device_5 (the hostname as the NAC shows it is in nac_hostname)"
        )
    ]


def write_source(tmp_path, url, **options):
    lines = ["plugin: netaccess.nac.nac", "api_url: %s" % url, "api_key: %s" % ADMIN_KEY, "dot1x_status: true"]
    lines += ["%s: %s" % (key, value) for key, value in options.items()]
    path = tmp_path / "test.nac.yml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_a_server_string_that_compose_decodes_into_a_template_never_runs(tmp_path):
    canary = str(tmp_path / "TEMPLATED")
    evil = "{{ lookup('pipe', 'touch %s') }}" % canary
    urlencoded = "".join("%%%02X" % ord(char) for char in evil)
    encoded = base64.b64encode(evil.encode()).decode()
    config = dict(
        groups=[dict(name=urlencoded, subnet="10.21.0.0/24")],
        profiles=[dict(name="Camera", max_pairs=1, host_start=10, host_end=200)],
        devices=[dict(id=1, hostname="evil-01", group=urlencoded, profile="Camera", macs=["02:00:00:21:00:01"])],
        dot1x=dict(overrides={"evil-01": {"message": encoded}}),
    )
    compose = "{nac_group_decoded: 'nac_group | urldecode', nac_message_decoded: 'nac_dot1x_message | b64decode'}"
    with Emulator(config=config).start() as emulator:
        inventory = InventoryData()
        plugin = inventory_loader.get("netaccess.nac.nac")
        plugin.parse(inventory, DataLoader(), write_source(tmp_path, emulator.url, compose=compose), cache=False)
    hostvars = inventory.get_host("evil-01").vars
    assert hostvars["nac_group_decoded"] == evil and hostvars["nac_message_decoded"] == evil
    # A play's next use of the composed variables, and of a value decoded in the play itself.
    for template in (
        "{{ nac_group_decoded }}",
        "{{ nac_message_decoded }}",
        "{{ nac_group | urldecode }}",
        "{{ [nac_message_decoded] | first }}",
    ):
        assert render(template, dict(hostvars)) == evil, template
    assert not os.path.exists(canary), "a decoded server string ran"
