# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The size limit of one reply (max_reply_mb): a Content-Length above it fails at once without reading the
body, a body of unannounced length fails as soon as what arrived passes it; the message names the limit and
how to raise it; the failure is not retried. Small limits only: the 1 GB case is benchmarks/bench_large_list.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import json

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common import options, server_text
from ansible_collections.netaccess.nac.plugins.module_utils.http.transport import MIB
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacClient,
    NacConfigError,
    NacResponseError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import source_options
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeTransport, mounted, reply

URL = "https://nac.example.com"
KEY = "k3y-that-must-never-show"


class Body:
    """A reply body of ``size`` bytes, made as it is read (never whole in memory); counts what was read."""

    def __init__(self, size, piece=b'{"id": 1, "hostname": "x"}, '):
        self.size, self.piece, self.read_bytes = size, piece, 0

    def read(self, amount=-1):
        left = self.size - self.read_bytes
        amount = left if amount is None or amount < 0 else min(amount, left)
        if amount <= 0:
            return b""
        start = self.read_bytes % len(self.piece)  # the piece repeated, from where the last read ended
        data = (self.piece * ((start + amount) // len(self.piece) + 1))[start : start + amount]
        if self.read_bytes == 0:
            data = b"[" + data[1:]
        self.read_bytes += amount
        return data

    def pieces(self, size=65536):
        """The body's bytes as the service writes them, a piece at a time (each made when it is written)."""
        return iter(lambda: self.read(size), b"")


class Huge(FakeTransport):
    """Every request answered 200 with a Body of ``size`` bytes, with or without its Content-Length (without: the
    body ends when the connection closes)."""

    def __init__(self, size, announce=True, status=200):
        super(Huge, self).__init__()
        self.size, self.announce, self.status = size, announce, status
        self.bodies = []

    def answer(self, request):
        body = Body(self.size)
        self.bodies.append(body)
        return reply(self.status, body.pieces(), self.headers(body))

    def headers(self, body):
        headers = {"Content-Type": "application/json"}
        if self.announce:
            headers["Content-Length"] = str(body.size)
        return headers


def client_for(adapter, **kwargs):
    kwargs.setdefault("max_reply_mb", 1)
    client = NacClient(URL, api_key=KEY, max_retries=3, sleep=lambda seconds: None, **kwargs)
    mounted(client, adapter)
    return client


def test_a_content_length_above_the_limit_fails_at_once_without_reading():
    adapter = Huge(5 * MIB)
    with pytest.raises(NacResponseError) as raised:
        client_for(adapter).list_devices()
    message = str(raised.value)
    assert message.startswith("GET /api/device: the reply is %d bytes long (Content-Length)" % (5 * MIB))
    assert "and max_reply_mb allows 1 MiB for one reply: it was not read." in message
    assert "raise max_reply_mb (or NAC_MAX_REPLY_MB)" in message
    assert adapter.bodies[0].read_bytes == 0  # not a byte of the body was read
    assert len(adapter.sent) == 1  # and it is not retried: the next reply would be as large
    assert raised.value.failure == dict(
        type="NacResponseError", method="GET", path="/api/device", url=URL, outcome_unknown=False
    )


@pytest.mark.parametrize("status", [200, 500])
def test_a_body_of_unannounced_length_stops_as_soon_as_it_passes_the_limit(status):
    adapter = Huge(50 * MIB, announce=False, status=status)
    with pytest.raises(NacResponseError) as raised:
        client_for(adapter, max_reply_mb=2).list_devices()
    message = (
        "the reply grew past the limit as it arrived, and max_reply_mb allows 2 MiB for one reply: reading stopped"
    )
    assert message in str(raised.value)
    read = adapter.bodies[0].read_bytes
    assert 2 * MIB < read <= 2 * MIB + 2 * 65536  # at most a read or two past the limit, never the whole body
    assert len(adapter.sent) == 1


def test_a_lying_content_length_does_not_lift_the_limit():
    class Lying(Huge):  # a chunked body that says Content-Length: 10 too (the chunks frame it)
        def headers(self, body):
            return dict(super(Lying, self).headers(body), **{"Content-Length": "10", "Transfer-Encoding": "chunked"})

    adapter = Lying(8 * MIB, announce=False)
    with pytest.raises(NacResponseError, match="grew past the limit as it arrived"):
        client_for(adapter).list_devices()
    assert adapter.bodies[0].read_bytes < 2 * MIB


@pytest.mark.parametrize("announce", [True, False])
def test_a_reply_of_exactly_the_limit_is_read(announce):
    records = [{"id": n, "hostname": "dev-%06d" % n} for n in range(1, 40000)]
    text = json.dumps(records).encode()
    limit = -(-len(text) // MIB)  # the smallest whole MiB that holds it

    class Exact(Huge):
        def headers(self, body):
            body.size, body.piece = len(text), text
            return super(Exact, self).headers(body)

    assert client_for(Exact(0, announce=announce), max_reply_mb=limit).list_devices() == records


def test_a_creation_whose_reply_is_too_large_may_have_been_processed():
    adapter = Huge(3 * MIB)
    with pytest.raises(NacResponseError) as raised:
        client_for(adapter).create_device({"hostname": "new", "group": "g", "profile": "p"})
    assert raised.value.outcome_unknown is True  # decided from the device list, never re-sent blindly
    assert len(adapter.sent) == 1


def test_a_status_reply_too_large_is_that_request_s_error():
    with pytest.raises(NacResponseError, match=r"POST /api/intent/dot1x_status/fire: the reply is \d+ bytes long"):
        client_for(Huge(3 * MIB)).fire_intent(7)


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "256", None])
def test_max_reply_mb_must_be_a_whole_number_of_mib(value):
    with pytest.raises(NacConfigError, match="max_reply_mb must be a whole number of MiB from 1 to 65536, got "):
        NacClient(URL, api_key=KEY, max_reply_mb=value)


def test_max_reply_mb_is_a_connection_option_with_its_environment_variable():
    declared = options.CONNECTION_OPTIONS["max_reply_mb"]
    assert (declared.env, declared.type, declared.default, declared.secret) == ("NAC_MAX_REPLY_MB", "int", 256, False)
    client, dummy = source_options({}, {"NAC_API_URL": URL, "NAC_API_KEY": KEY, "NAC_MAX_REPLY_MB": "64"})
    assert client["max_reply_mb"] == 64
    assert NacClient(**client).max_reply_mb == 64
    assert NacClient(URL, api_key=KEY).max_reply_mb == 256


class Decoded:
    """A response whose json() notes whether the garbage collector ran meanwhile."""

    def __init__(self, size, fail=False):
        self.content, self.fail, self.collecting = b" " * size, fail, None

    def json(self):
        self.collecting = gc.isenabled()
        if self.fail:
            raise ValueError("not JSON")
        return []


@pytest.mark.parametrize("fail", [False, True])
def test_a_large_body_is_decoded_with_the_garbage_collector_paused_and_it_is_back_after(fail):
    large, small = Decoded(server_text.LARGE_BODY, fail), Decoded(100, fail)
    for response in (large, small):
        if fail:
            with pytest.raises(ValueError):
                server_text.decode_json(response)
        else:
            assert server_text.decode_json(response) == []
        assert gc.isenabled()
    assert large.collecting is False and small.collecting is True


def test_the_garbage_collector_stays_off_when_it_was_off():
    gc.disable()
    try:
        server_text.decode_json(Decoded(server_text.LARGE_BODY))
        assert not gc.isenabled()
    finally:
        gc.enable()
