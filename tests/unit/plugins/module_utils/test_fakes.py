# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fakes the unit tests use (tests/unit/helpers.py) stay true to what they stand in for: the fake client has
NacClient's methods with NacClient's signatures, so that a change of the real client fails here rather than
leaving tests that pass against a client that no longer exists; the fake transport answers under the real
client, its replies built by requests' own adapter (HTTPAdapter.build_response) from the bytes given."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient, Scripted, mounted

PUBLIC = sorted(name for name in vars(FakeClient) if not name.startswith("_"))


@pytest.mark.parametrize("name", PUBLIC)
def test_each_method_of_the_fake_client_has_the_real_clients_signature(name):
    assert hasattr(NacClient, name), "FakeClient.%s is not a method of NacClient" % name
    assert inspect.signature(getattr(FakeClient, name)) == inspect.signature(getattr(NacClient, name))


def test_the_fake_client_stands_in_for_every_endpoint_of_the_real_one():
    endpoints = ("list_intents", "has_intent", "list_devices", "create_device", "fire_intent", "close")
    assert set(endpoints) <= set(PUBLIC)


def test_the_fake_transport_answers_under_the_real_client_and_keeps_what_was_sent():
    transport = Scripted((200, [{"id": 1, "hostname": "a"}], {"X-Total-Count": "1"}))
    client = mounted(NacClient("https://nac.example.com", api_key="k3y"), transport)
    assert client.list_devices() == [{"id": 1, "hostname": "a"}]
    assert transport.sent[0].url == "https://nac.example.com/api/device"
    assert 29 < transport.sends[0]["timeout"] <= 30.0 and transport.requests == transport.sent
