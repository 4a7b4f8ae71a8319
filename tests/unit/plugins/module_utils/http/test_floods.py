# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Floods from raw-socket servers on loopback (issue 48): endless interim heads, the same as a proxy's answer to
CONNECT, endless trailers, 1-byte chunks with 60 KB extensions, endless heads and chunk headers. Each exchange ends
with a clear error naming the limit it passed, after a bounded number of bytes read, each fed to the parser once:
the bytes read, not the time taken, show a parser that reads a reply again from its start (its work grows with the
square of what was sent)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import threading

import h11
import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.http import connection as conn
from ansible_collections.netaccess.nac.plugins.module_utils.http import response
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import run
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacClient,
    NacConnectionError,
    NacResponseError,
)

KEY = "k3y-0123456789abcdefghijklmn"
MIB = 1024 * 1024
SENT_AT_MOST = 256 * MIB  # what a flood server sends at most (a client that never stops reading fails the test)
CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"


class Flood:
    """A raw-socket server on loopback: once a request's head has come, it sends ``first``, then ``each`` again and
    again, one send each, until the client closes the connection (or SENT_AT_MOST). ``sent``: its bytes sent;
    ``requests``: the requests it answered."""

    def __init__(self, first, each):
        self.first, self.each, self.sent, self.requests = first, each, 0, 0
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn = self.listener.accept()[0]
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            head = b""
            while b"\r\n\r\n" not in head:
                got = conn.recv(65536)
                if not got:
                    return
                head += got
            self.requests += 1
            conn.sendall(self.first)
            self.sent += len(self.first)
            while self.sent < SENT_AT_MOST:
                conn.sendall(self.each)
                self.sent += len(self.each)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.listener.close()


@pytest.fixture
def flood():
    servers = []

    def make(first, each):
        servers.append(Flood(first, each))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def counted(monkeypatch):
    """The bytes every connection read from its socket (``read``) and fed to its h11 parser (``fed``)."""
    seen = {"read": 0, "fed": 0, "reads": 0}
    take, feed = conn.Connection._take, h11.Connection.receive_data

    def counting_take(self, count):
        seen["read"] += count
        seen["reads"] += 1
        return take(self, count)

    def counting_feed(self, data):
        seen["fed"] += len(data)
        return feed(self, data)

    monkeypatch.setattr(conn.Connection, "_take", counting_take)
    monkeypatch.setattr(h11.Connection, "receive_data", counting_feed)
    return seen


def client_of(url, **kwargs):
    options = dict(api_key=KEY, timeout=3.0, max_reply_mb=1, max_retries=0, sleep=lambda s: None)
    options.update(kwargs)
    return NacClient(url, **options)


HEAD_FLOODS = {
    "endless 100 Continue heads": (b"", b"HTTP/1.1 100 Continue\r\n\r\n", "more than 8 interim (1xx) replies"),
    "endless 102 heads with fields": (b"", b"HTTP/1.1 102 Processing\r\nX-Wait: " + b"w" * 2000 + b"\r\n\r\n", "8"),
    "an endless head": (b"HTTP/1.1 200 OK\r\n", b"X-Flood: " + b"f" * 50 + b"\r\n", "passed 65536 bytes"),
    "an endless interim head": (b"HTTP/1.1 100 Continue\r\n", b"X-Flood: f\r\n", "passed 65536 bytes"),
    "an endless status line": (b"HTTP/1.1 200 ", b"O" * 1000, "65536 bytes"),
}


@pytest.mark.parametrize("case", sorted(HEAD_FLOODS))
def test_a_flood_of_heads_ends_at_the_heads_bound(flood, counted, case):
    first, each, said = HEAD_FLOODS[case]
    server = flood(first, each)
    client = client_of(server.url)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    text = str(raised.value)
    assert said in text and "GET /api/device" in text and "Traceback" not in text
    # every byte read was parsed once, and no more than the heads' bound and one read past it were read
    assert counted["fed"] == counted["read"] <= response.MAX_HEAD + conn.READ_BUFFER
    client.close()


@pytest.mark.parametrize("case", ["endless 100 Continue heads", "an endless head"])
def test_a_flood_of_heads_is_not_sent_again_whatever_the_retries(flood, case):
    """Sending again will not change a server that floods: the bound it passed ends the request (no backoff)."""
    first, each, said = HEAD_FLOODS[case]
    server = flood(first, each)
    client = client_of(server.url, max_retries=3)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert said in str(raised.value) and server.requests == 1
    client.close()


def test_endless_interim_heads_as_a_proxy_s_answer_to_connect_end_at_their_count(flood, counted, monkeypatch):
    proxy = flood(b"", b"HTTP/1.1 100 Continue\r\n\r\n")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:%d" % proxy.port)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = client_of("https://nac.invalid")
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    text = str(raised.value)
    assert "through the proxy" in text and "more than 8 interim (1xx) replies" in text
    assert counted["fed"] == counted["read"] <= response.MAX_HEAD + conn.READ_BUFFER
    client.close()


def test_an_endless_head_as_a_proxy_s_answer_to_connect_ends_at_the_heads_bound(flood, counted, monkeypatch):
    proxy = flood(b"HTTP/1.1 200 Connection established\r\n", b"X-Flood: " + b"f" * 100 + b"\r\n")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:%d" % proxy.port)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = client_of("https://nac.invalid")
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "through the proxy" in str(raised.value) and "passed 65536 bytes" in str(raised.value)
    assert counted["fed"] == counted["read"] <= response.MAX_HEAD + conn.READ_BUFFER
    client.close()


def test_endless_trailer_fields_end_at_the_block_bound_and_the_body_is_not_accepted(flood, counted):
    server = flood(CHUNKED + b"2\r\n[]\r\n0\r\n", b"X-Trailer: " + b"t" * 20 + b"\r\n")
    client = client_of(server.url)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "65536 bytes came without a whole head, chunk header or trailer block" in str(raised.value)
    assert counted["fed"] == counted["read"] <= 2 * response.MAX_BLOCK + 2 * conn.READ_BUFFER
    client.close()


def test_an_endless_chunk_extension_ends_at_the_block_bound(flood, counted):
    server = flood(CHUNKED + b"1;ext=", b"e" * 1000)
    client = client_of(server.url)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "65536 bytes came without a whole head" in str(raised.value)
    assert counted["fed"] == counted["read"] <= 2 * response.MAX_BLOCK + 2 * conn.READ_BUFFER
    client.close()


def test_one_byte_chunks_with_60_kb_extensions_count_every_byte_against_max_reply_mb(flood, counted):
    server = flood(CHUNKED, b"1;" + b"x" * 60000 + b"\r\na\r\n")
    client = client_of(server.url)
    with pytest.raises(NacResponseError) as raised:
        client.request("GET", "/api/device")
    assert "max_reply_mb allows 1 MiB" in str(raised.value)
    # the chunks' data is 1 byte each: only the wire's bytes, extensions included, stop the reading
    assert counted["fed"] == counted["read"] <= response.body_cap(response.MAX_HEAD, MIB)
    client.close()


def test_a_flood_of_body_bytes_ends_at_the_reply_s_wire_bound(flood, counted):
    server = flood(CHUNKED, b"ffff\r\n" + b"[" * 0xFFFF + b"\r\n")
    client = client_of(server.url)
    with pytest.raises(NacResponseError) as raised:
        client.request("GET", "/api/device")
    assert "grew past the limit" in str(raised.value) and "max_reply_mb" in str(raised.value)
    assert counted["fed"] == counted["read"] <= response.body_cap(response.MAX_HEAD, MIB)
    client.close()


def test_the_deadline_is_checked_before_every_read_while_bytes_keep_coming(monkeypatch, counted):
    """Bytes that never stop coming never make a read wait: the deadline is looked at before each read all the
    same. (The clock is the test's: the deadline passes on the fourth look at it.)"""
    near, far = socket.socketpair()
    chunk = b"2000\r\n" + b"[" * 0x2000 + b"\r\n"

    def endless():
        try:
            far.sendall(CHUNKED)
            while True:
                far.sendall(chunk)
        except OSError:
            pass

    threading.Thread(target=endless, daemon=True).start()
    looks = []
    left = conn.time_left

    def clock(deadline):
        looks.append(deadline)
        if len(looks) > 3:
            raise socket.timeout("timed out")
        return left(deadline)

    monkeypatch.setattr(conn, "time_left", clock)
    connection = conn.Connection(near)
    try:
        connection.request(b"GET", b"/", [(b"Host", b"h")], None)
        deadline = conn.time.monotonic() + 60
        run(conn.final_reply(connection, deadline))
        connection.bound(10**9, response.TooLarge)
        with pytest.raises(socket.timeout):
            while True:
                run(connection.event_steps(deadline))
        assert counted["reads"] == 3  # one read per look at the deadline, none after it passed
    finally:
        connection.close()
        far.close()


@pytest.mark.parametrize("heads", [1, 8])
def test_a_reply_read_one_byte_at_a_time_is_parsed_once(monkeypatch, counted, heads):
    """A reply read one byte at a time (every read a short one) costs the parser one step per byte and event: its
    work grows with the bytes sent, never with their square (a reading started again from the reply's start)."""
    raw = b"HTTP/1.1 100 Continue\r\nX-Wait: 1\r\n\r\n" * heads + CHUNKED + b"2;x=y\r\n[]\r\n0\r\nX-T: 1\r\n\r\n"
    monkeypatch.setattr(conn, "READ_BUFFER", 1)
    steps = []
    next_event = h11.Connection.next_event
    monkeypatch.setattr(h11.Connection, "next_event", lambda self: steps.append(1) or next_event(self))
    near, far = socket.socketpair()
    connection = conn.Connection(near)
    try:
        connection.request(b"GET", b"/", [(b"Host", b"h")], None)
        far.sendall(raw)
        deadline = conn.time.monotonic() + 30
        reply = run(conn.final_reply(connection, deadline))
        connection.bound(None, response.TooLarge)
        events = [run(connection.event_steps(deadline))]
        while not isinstance(events[-1], h11.EndOfMessage):
            events.append(run(connection.event_steps(deadline)))
        assert reply.status_code == 200 and b"".join(event.data for event in events[:-1]) == b"[]"
        assert counted["fed"] == counted["read"] == counted["reads"] == len(raw) == connection.received
        assert len(steps) <= len(raw) + heads + len(events) + 1  # one step per byte fed, and one per event
    finally:
        connection.close()
        far.close()
