# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin's booleans are Ansible's words or fail (Ansible's configuration would read any other word
as false, and turn TLS verification off), it warns once when TLS is not verified, and its warnings show a
server's text safely. Against the in-process NAC emulator, whose request counters prove what was sent."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleParserError
from ansible.utils.display import Display

from ansible_collections.netaccess.nac.plugins.module_utils.common.options import INSECURE_TLS
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import inventory_source as source
from ansible_collections.netaccess.nac.tests.unit.helpers import parse_inventory as parse

ADMIN_KEY = "nac-demo-admin-key"


@pytest.fixture
def emulator(monkeypatch):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD", "NAC_VALIDATE_CERTS", "ANSIBLE_INVENTORY_CACHE"):
        monkeypatch.delenv(name, raising=False)
    devices = [
        dict(id=1, hostname="cam-01", group="Cameras", profile="Camera"),
        dict(id=2, hostname="twin\x1b[2J\nok: [x]", group="Cameras", profile="Camera"),
        dict(id=3, hostname="TWIN\x1b[2J\nok: [x]", group="Cameras", profile="Camera"),
    ]
    with Emulator(config=dict(devices=devices)).start() as running:
        yield running


@pytest.fixture
def warnings(monkeypatch):
    shown = []
    monkeypatch.setattr(Display, "warning", lambda self, msg, *args, **kwargs: shown.append(msg))
    return shown


@pytest.mark.parametrize("value", ["ture", "", "2", "enabled"])
def test_an_unknown_word_in_nac_validate_certs_fails_before_any_request(emulator, tmp_path, monkeypatch, value):
    monkeypatch.setenv("NAC_VALIDATE_CERTS", value)
    with pytest.raises(AnsibleParserError) as caught:
        parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY))
    assert "validate_certs (from NAC_VALIDATE_CERTS) must be a boolean" in str(caught.value)
    assert repr(value) in str(caught.value)
    assert emulator.request_counts() == {}


@pytest.mark.parametrize("name, value", [("validate_certs", "ture"), ("dot1x_status", "maybe"), ("cache", "'2'")])
def test_an_unknown_word_in_the_source_fails_naming_the_option(emulator, tmp_path, name, value):
    with pytest.raises(AnsibleParserError, match="%s must be a boolean" % name):
        parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY, **{name: value}))
    assert emulator.request_counts() == {}


@pytest.mark.parametrize("value", ["no", "False", "0", "off", "N"])
def test_verification_turned_off_on_purpose_warns_once(emulator, tmp_path, monkeypatch, warnings, value):
    monkeypatch.setenv("NAC_VALIDATE_CERTS", value)
    parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY))
    assert [warning for warning in warnings if "validate_certs" in warning] == [
        "netaccess.nac.nac inventory: " + INSECURE_TLS
    ]


def test_verification_on_says_nothing_of_it(emulator, tmp_path, monkeypatch, warnings):
    monkeypatch.setenv("NAC_VALIDATE_CERTS", "yes")
    parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY))
    assert not [warning for warning in warnings if "validate_certs" in warning]


def test_the_warnings_show_a_servers_text_safely(emulator, tmp_path, warnings):
    parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY))
    assert warnings and all(not CONTROL.search(warning) for warning in warnings)
