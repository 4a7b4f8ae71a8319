# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fakes the unit tests use (tests/unit/helpers.py) stay true to what they stand in for: the fake client has
NacClient's methods with NacClient's signatures, so that a change of the real client fails here rather than
leaving tests that pass against a client that no longer exists; the fake service answers under the real client at
the wire: its replies are HTTP/1.1 bytes on a socket pair, read by the client's own connections (h11) and replies,
so that a reply the real parser would refuse is refused in every test too."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gzip
import inspect

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.http import connections, response
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import ordered_steps
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient, NacConnectionError
from ansible_collections.netaccess.nac.tests.unit.helpers import (
    CUT,
    SILENT,
    FakeClient,
    Scripted,
    connect_timeout,
    mounted,
    refused,
    reply,
)

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


def scripted(*script, **kwargs):
    """Return a NacClient over a ``Scripted`` service of ``script`` (no retries unless given) and the service."""
    kwargs.setdefault("max_retries", 0)
    transport = Scripted(*script)
    client = NacClient("https://nac.example.com", api_key="k3y", sleep=lambda s: None, **kwargs)
    return mounted(client, transport), transport


def test_the_fake_service_reads_the_request_the_wire_wrote():
    client, transport = scripted((201, {"id": 3}))
    assert client.create_device({"hostname": "a"}) == {"id": 3}
    sent = transport.sent[0]
    assert (sent.method, sent.path_url, sent.body) == ("POST", "/api/device", b'{"hostname": "a"}')
    assert sent.headers["Host"] == "nac.example.com" and sent.headers["Content-Length"] == "17"
    assert sent.headers["Authorization"] == "Bearer k3y"


def test_each_exchange_is_read_by_the_real_connection_and_reply():
    client, transport = scripted((200, [], {"X-Total-Count": "0"}))
    assert client.list_devices() == [] and client.list_devices() == []
    made = transport.connections
    assert len(made) == 1 and isinstance(made[0], connections.Connection)  # kept alive, as a service keeps it
    assert made[0].uses == 2 and made[0].received > 0  # (the bytes the real connection read and gave h11)
    client, transport = scripted((200, [], {"Connection": "close"}))
    assert client.list_devices() == [] and client.list_devices() == []
    assert len(transport.connections) == 2  # closed by the service after each reply: a new one each time


def test_a_reply_the_real_parser_refuses_fails_as_it_would_on_a_real_socket():
    client, transport = scripted(reply(200, b"[]", [("Content-Length", "2"), ("Bad Name", "x")]))
    with pytest.raises(NacConnectionError, match="could not be read safely"):
        client.list_devices()


def test_a_compressed_body_is_decoded_by_the_clients_own_decoder():
    body = gzip.compress(b'[{"id": 1, "hostname": "a"}]')
    client, transport = scripted((200, body, {"Content-Type": "application/json", "Content-Encoding": "gzip"}))
    assert client.list_devices() == [{"id": 1, "hostname": "a"}]
    client, transport = scripted((200, body[:-4], {"Content-Encoding": "gzip"}))  # cut before its trailer
    with pytest.raises(NacConnectionError, match="the reply's body could not be decoded"):
        client.list_devices()


@pytest.mark.parametrize(
    "item, stage, sent, cause",
    [
        (refused(), "connect", False, response.REFUSED),
        (connect_timeout(), "connect", False, response.TIMED_OUT),
        (CUT, "exchange", True, None),
        (SILENT, "exchange", True, response.TIMED_OUT),
    ],
)
def test_failures_scripted_at_the_wire_are_typed_by_the_wire(item, stage, sent, cause):
    client, transport = scripted(item)
    with pytest.raises(NacConnectionError):
        client.create_device({"hostname": "a"})
    error = transport.failures[0]  # (as the wire raised it)
    assert (error.stage, error.sent, error.cause) == (stage, sent, cause)
    assert len(transport.sent) == 1  # kept, whether or not a byte was written


def test_the_fakes_serve_many_exchanges_on_the_loop_as_one_in_the_callers_thread():
    answers = [(200, {"status": "AUTHENTICATED", "username": "u%d" % n}) for n in range(1, 9)]
    client, transport = scripted(*answers, pool_size=4)

    def one(target):
        return (yield from client.fire_intent_steps(target))["username"]

    assert sorted(ordered_steps(one, range(1, 9), 4)) == sorted("u%d" % n for n in range(1, 9))
    assert len(transport.sent) == 8 and client.fire_intent(9)["username"] == "u8"  # (the last answer repeats)
