# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What connections.py promises, over real loopback sockets (issue 26): bodies read whole whatever their framing and
encoding, a compressed body never decoded past the limit, kept-alive connections reused only while they can be,
redirects not followed, failures stated as the ExchangeError that retry_policy.py reads, and the idle pool
bounded."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gzip
import http.server
import json
import socket
import threading
import time
import tracemalloc
import zlib

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacClient,
    NacConnectionError,
    NacHTTPError,
    NacResponseError,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import guide_section

KEY = "s3cr3t-key-value"
ITEMS = [{"id": number, "hostname": "host-%d" % number} for number in range(2000)]
DOCUMENT = json.dumps(ITEMS).encode("ascii")
MIB = 1024 * 1024


class Handler(http.server.BaseHTTPRequestHandler):
    """A kept-alive HTTP/1.1 handler that notes the client's address of every request (one per connection the
    client opened) in ``peers``; a subclass answers with ``answer(self)``."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # a head and a body written apart are not held back for the client's ACK
    peers = None

    def do_GET(self):
        self.peers.append(self.client_address)
        self.answer()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.peers.append(self.client_address)
        self.answer()

    def reply(self, body, status=200, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        if not any(name.lower() in ("content-length", "transfer-encoding") for name, dummy in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serving(local_http, answer):
    """The address of a server whose handler answers with ``answer(handler)``, and its list of peers."""
    peers = []
    handler = type("Answering", (Handler,), dict(answer=answer, peers=peers))
    return local_http(handler), peers


def client_of(url, **kwargs):
    return NacClient(url, api_key=KEY, max_retries=0, **dict(dict(timeout=5.0), **kwargs))


# -- bodies read whole ---------------------------------------------------------------------------------------


def test_a_chunked_reply_is_read_whole(local_http):
    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for start in range(0, len(DOCUMENT), 7000):  # pieces of every size, the last one short
            piece = DOCUMENT[start : start + 7000]
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        handler.wfile.write(b"0\r\n\r\n")

    url, peers = serving(local_http, answer)
    client = client_of(url)
    assert client.request("GET", "/api/device") == ITEMS
    assert client.request("GET", "/api/device") == ITEMS  # the end of the chunks read: the connection is reused
    assert len(set(peers)) == 1
    client.close()


@pytest.mark.parametrize(
    "compress",
    [
        zlib.compress,  # zlib-wrapped, as RFC 9110 says deflate is
        lambda data: zlib.compress(data)[2:-4],  # raw, as some servers send it
    ],
    ids=["zlib-wrapped", "raw"],
)
def test_a_deflated_reply_is_decoded_whether_zlib_wrapped_or_raw(local_http, compress):
    body = compress(DOCUMENT)
    url = serving(local_http, lambda handler: handler.reply(body, headers=[("Content-Encoding", "deflate")]))[0]
    client = client_of(url)
    assert client.request("GET", "/api/device") == ITEMS
    client.close()


def test_a_raw_deflated_reply_whose_first_read_is_one_byte_is_decoded(local_http):
    body = zlib.compress(DOCUMENT)[2:-4]

    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Encoding", "deflate")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for piece in (body[:1], body[1:]):  # read one chunk at a time: the first read is one byte
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        handler.wfile.write(b"0\r\n\r\n")

    url = serving(local_http, answer)[0]
    client = client_of(url)
    assert client.request("GET", "/api/device") == ITEMS
    client.close()


def bomb(size):
    """``size`` zero bytes, gzipped (compressed a MiB at a time: never held whole)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MIB)
    return b"".join([packer.compress(zeros) for dummy in range(size // MIB)] + [packer.flush()])


def test_a_gzip_bomb_fails_at_the_limit_without_being_decoded_whole(local_http):
    body = bomb(50 * MIB)  # about 50 KiB on the wire
    assert len(body) < MIB
    url = serving(local_http, lambda handler: handler.reply(body, headers=[("Content-Encoding", "gzip")]))[0]
    client = client_of(url, max_reply_mb=1)
    tracemalloc.start()
    try:
        with pytest.raises(NacResponseError) as raised:
            client.request("GET", "/api/device")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "grew past the limit" in str(raised.value) and "max_reply_mb allows 1 MiB" in str(raised.value)
    assert raised.value.outcome_unknown is False
    assert peak < 10 * MIB  # decoded, the body is 50 MiB: it was cut at the limit
    client.close()


# -- kept-alive connections ------------------------------------------------------------------------------------


def test_a_reply_with_connection_close_is_not_reused(local_http):
    def answer(handler):
        handler.reply(b"[]", headers=[("Connection", "close")])
        handler.close_connection = True

    url, peers = serving(local_http, answer)
    client = client_of(url)
    assert client.request("GET", "/api/device") == []
    assert client.request("GET", "/api/device") == []
    assert len(peers) == 2 and peers[0] != peers[1]  # the second on a new connection
    assert len(client.wire._idle) == 0
    client.close()


def test_an_idle_connection_the_server_closed_meanwhile_is_replaced_and_a_write_succeeds(local_http):
    closed = threading.Event()

    def answer(handler):
        # No Connection: close: the client keeps the connection, which the server then closes (an idle timeout).
        handler.reply(b'{"id": 7}')
        handler.wfile.flush()
        time.sleep(0.3)
        handler.connection.shutdown(socket.SHUT_RDWR)
        handler.close_connection = True
        closed.set()

    url, peers = serving(local_http, answer)
    client = client_of(url)
    assert client.request("GET", "/api/device/7") == {"id": 7}
    assert len(client.wire._idle) == 1  # kept: nothing said it would close
    assert closed.wait(2)
    assert client.request("POST", "/api/device", body={"hostname": "a"}) == {"id": 7}
    assert len(peers) == 2 and peers[0] != peers[1]
    client.close()


def test_a_redirect_is_not_followed(local_http):
    def answer(handler):
        handler.reply(b"", status=302, headers=[("Location", "https://elsewhere.example/api/device")])

    url, peers = serving(local_http, answer)
    client = client_of(url)
    with pytest.raises(NacHTTPError) as raised:
        client.request("POST", "/api/device", body={"hostname": "a"})
    assert raised.value.status == 302 and "https://elsewhere.example/api/device" in str(raised.value)
    assert raised.value.outcome_unknown is True  # the write may have been processed
    assert len(peers) == 1  # sent once, never to the Location
    client.close()


def test_a_refused_connection_says_so_and_nothing_was_sent():
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    listening.close()  # nothing listens there now
    url = "http://127.0.0.1:%d" % port
    client = client_of(url, unreachable_timeout=0)
    with pytest.raises(NacConnectionError) as raised:
        client.request("POST", "/api/device", body={"hostname": "a"})
    text = str(raised.value)
    assert text.startswith("Could not connect to the NAC API at %s: connection refused" % url)
    assert raised.value.outcome_unknown is False
    assert "Traceback" not in text and "Errno" not in text
    client.close()


@pytest.mark.parametrize(
    "framing, sent",
    [
        (("Content-Length", "1000"), b'{"id": 7, "hostname": "a"}' + b" " * 74),  # 100 of the 1000 bytes
        (("Transfer-Encoding", "chunked"), b"3e8\r\n" + b'{"id": 7}'),  # 9 of a chunk of 1000 bytes
    ],
)
def test_a_connection_closed_mid_body_fails_a_write_with_its_outcome_unknown(local_http, framing, sent):
    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header(*framing)
        handler.end_headers()
        handler.wfile.write(sent)  # then closed
        handler.wfile.flush()
        handler.close_connection = True

    url = serving(local_http, answer)[0]
    client = client_of(url)
    with pytest.raises(NacConnectionError) as raised:
        client.request("POST", "/api/device", body={"hostname": "a"})
    assert raised.value.outcome_unknown is True and "broke off during POST /api/device" in str(raised.value)
    assert "without sending complete message body" in str(raised.value) and "Traceback" not in str(raised.value)
    assert len(client.wire._idle) == 0  # the broken connection is not kept
    client.close()


def test_the_idle_pool_keeps_at_most_pool_size_connections(local_http):
    entered, release = threading.Semaphore(0), threading.Event()

    def answer(handler):
        entered.release()
        release.wait(5)  # every request in flight at once: one connection each
        handler.reply(b"[]")

    url, peers = serving(local_http, answer)
    client = client_of(url, pool_size=3)
    results, threads = [], []
    for dummy in range(8):
        thread = threading.Thread(target=lambda: results.append(client.request("GET", "/api/device")))
        thread.start()
        threads.append(thread)
    for dummy in range(8):
        assert entered.acquire(timeout=5)
    release.set()
    for thread in threads:
        thread.join(5)
    assert results == [[]] * 8 and len(set(peers)) == 8
    assert len(client.wire._idle) == 3  # the other five closed once read
    assert client.request("GET", "/api/device") == []
    assert len(set(peers)) == 8  # one of the idle ones reused
    client.close()
    assert len(client.wire._idle) == 0


def test_a_header_field_that_repeats_is_joined_as_urllib3_joins_it(local_http):
    links = [("Link", '<http://127.0.0.1/api/device?page=2>; rel="next"'), ("Link", '</api/device>; rel="first"')]
    url = serving(local_http, lambda handler: handler.reply(b"[]", headers=links))[0]
    client = client_of(url)
    page = client.request("GET", "/api/device")
    assert page.headers["Link"] == '<http://127.0.0.1/api/device?page=2>; rel="next", </api/device>; rel="first"'
    assert page.headers["link"] == page.headers["Link"]  # case-insensitive
    client.close()


def test_a_gzipped_reply_is_decoded(local_http):
    body = gzip.compress(DOCUMENT)
    url, peers = serving(local_http, lambda handler: handler.reply(body, headers=[("Content-Encoding", "gzip")]))
    client = client_of(url)
    assert client.request("GET", "/api/device") == ITEMS
    assert client.request("GET", "/api/device") == ITEMS  # the decoder's tail read: the connection reused
    assert len(set(peers)) == 1
    client.close()


def test_the_api_guide_names_every_header_field_sent_with_every_request():
    """The API guide's "Connections" says what goes with every request: it is what the wire sends."""
    section = guide_section("8.3. Connections ^^^", "9. The emulator ---")
    client = NacClient("https://nac.example.com", api_key=KEY, tenant="t-1")
    fields = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in client.wire._head]
    assert [name for name, dummy in fields] == [
        "Host",
        "User-Agent",
        "Accept-Encoding",
        "Accept",
        "Connection",
        "Authorization",
        "X-Tenant",
    ]
    for name, value in fields:
        if name in ("User-Agent", "Accept", "Accept-Encoding"):
            assert "``%s: %s``" % (name, value) in section
        elif name in ("Authorization", "X-Tenant"):
            assert "``%s``" % name in section
    client.close()


# -- a reply framed to harm: a clear failure, never a traceback ----------------------------------------------


@pytest.mark.parametrize(
    "raw, said",
    [
        (b"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\n[]", "illegal status line"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "illegal status line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: \xb2\r\n\r\n[]", "bad Content-Length"),  # "²"
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\n[]", "conflicting Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n[]", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n[]", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n[]\r\n0\r\n\r\n", "illegal chunk header"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\n[]\r\n0\r\n\r\n", "illegal chunk header"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 40 + b"\r\n[]", "illegal chunk header"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n", "Transfer-Encoding"),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", "switched protocols"),
        (b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 9400 + b"Content-Length: 2\r\n\r\n[]", "heads (its interim"),
        (b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\nContent-Length: 2\r\n\r\n[]", "passed 65536 bytes"),
    ],
)
def test_a_reply_framed_to_harm_is_a_clear_connection_failure(local_http, raw, said):
    def answer(handler):
        handler.wfile.write(raw)
        handler.wfile.flush()
        handler.close_connection = True

    url = serving(local_http, answer)[0]
    client = client_of(url)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    text = str(raised.value)
    assert said in text and "Traceback" not in text and len(text) < 1000
    assert text.startswith("The connection to the NAC API at %s broke off during GET /api/device" % url)
    client.close()


def test_a_count_header_of_thousands_of_digits_is_no_sign_of_a_partial_list(local_http):
    def answer(handler):
        handler.reply(b"[]", headers=[("X-Total-Count", "9" * 5000)])

    url = serving(local_http, answer)[0]
    client = client_of(url)
    assert client.list_devices() == []  # int() refuses 5,000 digits: not read as a count, never a traceback
    client.close()


def test_a_content_range_of_thousands_of_digits_is_a_sign_the_collection_does_not_read(local_http):
    def answer(handler):
        handler.reply(b"[]", headers=[("Content-Range", "items 0-0/" + "9" * 5000)])

    url = serving(local_http, answer)[0]
    client = client_of(url)
    with pytest.raises(NacResponseError) as raised:  # a clear refusal of the list, never int()'s ValueError
        client.list_devices()
    assert "in a form the collection does not read (Content-Range: items 0-0/999" in str(raised.value)
    client.close()


def test_a_reply_whose_head_drips_in_ends_at_the_deadline(local_http):
    def answer(handler):
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        try:
            for dummy in range(200):  # a header field a byte at a time: each read comes well within the timeout
                handler.wfile.write(b"X")
                handler.wfile.flush()
                time.sleep(0.02)
        except OSError:
            pass
        handler.close_connection = True

    url = serving(local_http, answer)[0]
    client = client_of(url, timeout=0.3)
    started = time.monotonic()
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    # Not a timeout per read: 4 s of dripping would have been read (the bound leaves room for a loaded machine).
    assert time.monotonic() - started < 3.0
    assert "within 0.3s" in str(raised.value)
    client.close()


def test_a_request_body_the_service_does_not_take_ends_at_the_deadline():
    """The socket never blocks: a send that the socket cannot take whole waits for room, given only what is left of
    the deadline, and the request fails then (a byte may have reached the service: its outcome is unknown)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    accepted, stop = [], threading.Event()

    def hold():  # accept the connection, read nothing
        connection = listener.accept()[0]
        accepted.append(connection)
        stop.wait(10)
        connection.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    client = client_of("http://127.0.0.1:%d" % listener.getsockname()[1], timeout=0.3)
    started = time.monotonic()
    try:
        with pytest.raises(NacConnectionError) as raised:
            client.request("POST", "/api/device", body={"hostname": "x" * (64 * MIB)})  # more than the buffers hold
        assert time.monotonic() - started < 5.0  # the peer holds the connection 10 s: ended by the deadline
        assert "within 0.3s" in str(raised.value) and raised.value.outcome_unknown is True
    finally:
        stop.set()
        thread.join(5)
        listener.close()
        client.close()
