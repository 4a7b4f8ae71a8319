# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A hostile or sloppy server against the request path (issue 31), over real loopback sockets: bytes past a
reply never answer the next request, a server's words never decide that a write was not sent, TLS as urllib3
makes it, every wait bounded by the deadline, cookies bounded, compressed bodies bounded and whole."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gzip
import os
import socket
import ssl
import threading
import time
import zlib

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import CONNECT, ExchangeError
from ansible_collections.netaccess.nac.plugins.module_utils.http import connections, response
from ansible_collections.netaccess.nac.plugins.module_utils.http import cookies as cookie_room
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacClient,
    NacConnectionError,
    NacHTTPError,
    NacResponseError,
)

KEY = "k3y-0123456789abcdefghijklmn"  # 28 characters
LIST = b'[{"id": 1, "hostname": "cam-01"}]'
FORGED = b'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"id": 4242}'
CONFLICT = b"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


def reply(body, status=b"200 OK", fields=b""):
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status,
        len(body),
        fields,
        body,
    )


class Scripted:
    """A raw-socket HTTP server on loopback: each request (its head read up to the empty line, its body by its
    Content-Length) is answered with the bytes ``script(method, number)`` gives (number: the requests of that
    method so far), written in one send; ``close_after``: the methods after whose answer the connection is
    closed. ``requests`` notes each (method, path)."""

    def __init__(self, script, wrap=None):
        self.script, self.wrap, self.requests = script, wrap, []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
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
            if self.wrap is not None:
                conn = self.wrap(conn)
            reader = conn.makefile("rb")
            while True:
                line = reader.readline()
                if not line:
                    return
                method, path = line.split()[:2]
                length = 0
                while True:
                    field = reader.readline()
                    if field in (b"\r\n", b""):
                        break
                    if field.lower().startswith(b"content-length:"):
                        length = int(field.split(b":")[1])
                reader.read(length)
                method = method.decode()
                self.requests.append((method, path.decode()))
                answer = self.script(method, sum(1 for seen in self.requests if seen[0] == method))
                if answer is None:
                    return
                conn.sendall(answer)
        except (OSError, ValueError, ssl.SSLError):
            pass
        finally:
            conn.close()

    def count(self, method):
        return sum(1 for seen in self.requests if seen[0] == method)

    def close(self):
        self.listener.close()


@pytest.fixture
def scripted():
    servers = []

    def make(script, **kwargs):
        servers.append(Scripted(script, **kwargs))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def client_of(url, **kwargs):
    return NacClient(url, api_key=KEY, **dict(dict(timeout=3.0, max_retries=1, sleep=lambda s: None), **kwargs))


# -- 1. bytes past a reply never answer the next request -----------------------------------------------------

PAST_THE_REPLY = {
    "a second reply in the same write": reply(LIST) + FORGED,
    "a body after a 204": b"HTTP/1.1 204 No Content\r\n\r\n" + FORGED,
    "a body after a 304": b"HTTP/1.1 304 Not Modified\r\n\r\n" + FORGED,
    "Transfer-Encoding with Content-Length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(LIST), LIST) + FORGED,
    "chunks on HTTP/1.0": b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(LIST), LIST) + FORGED,
    "one stray CRLF": reply(LIST) + b"\r\n",
    "an interim 103 before the reply": b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n" + reply(LIST),
}


@pytest.mark.parametrize("case", sorted(PAST_THE_REPLY))
def test_bytes_past_a_reply_never_answer_the_next_request(scripted, case):
    def script(method, number):
        return PAST_THE_REPLY[case] if method == "GET" else CONFLICT

    server = scripted(script)
    client = client_of(server.url)
    try:
        listed = client.request("GET", "/api/device")
    except NacHTTPError as refused:  # a 304 is a redirect to nowhere for this client
        listed = refused.status
    assert listed in ([{"id": 1, "hostname": "cam-01"}], None, 304)  # a 204 lists nothing
    with pytest.raises(NacHTTPError) as raised:  # the POST's own reply, never the forged 201 {"id": 4242}
        client.request("POST", "/api/device", body={"hostname": "cam-02"})
    assert raised.value.status == 409 and "4242" not in str(raised.value)
    assert server.count("POST") == 1
    client.close()


def test_a_switch_of_protocols_closes_the_connection_and_the_reply_after_it_answers_nothing(scripted):
    def script(method, number):
        if method == "POST" and number == 1:
            return b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n" + FORGED
        return reply(LIST) if method == "GET" else CONFLICT

    server = scripted(script)
    client = client_of(server.url)
    with pytest.raises(NacConnectionError) as raised:
        client.request("POST", "/api/device", body={"hostname": "x"})
    assert "switched protocols (101" in str(raised.value) and server.count("POST") == 1
    assert raised.value.outcome_unknown is True  # the request was written: what the server did is read from the list
    client.close()


def test_a_reply_reusable_on_its_own_keeps_its_connection(scripted):
    server = scripted(lambda method, number: reply(LIST))
    client = client_of(server.url)
    for dummy in range(3):
        client.request("GET", "/api/device")
    assert len(client.wire._idle) == 1 and server.count("GET") == 3
    client.close()


# -- 2. a server's words never decide that a write was not sent ----------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 2xx Connection refused\r\n\r\n",
        b"HTTP/1.1 200 NameResolutionError\r\nContent-Length: Connection refused\r\n\r\n",
        b"NewConnectionError: [Errno 111] Connection refused\r\n\r\n",
    ],
)
def test_words_in_a_broken_reply_to_a_write_never_make_it_look_unsent(scripted, answer):
    server = scripted(lambda method, number: answer)
    client = client_of(server.url, max_retries=3, unreachable_timeout=0)
    with pytest.raises(NacConnectionError) as raised:
        client.request("POST", "/api/device", body={"hostname": "cam-02"})
    assert raised.value.outcome_unknown is True and "was not sent" not in str(raised.value)
    assert server.count("POST") == 1
    client.close()


def test_a_read_that_broke_unanswered_on_a_kept_alive_connection_goes_again_on_a_new_one(scripted):
    """A server closing a kept-alive connection as the request comes: the read is sent again on a new connection
    (other idle connections may be closing too), and it is answered there."""
    server = scripted(lambda method, number: None if number == 2 else reply(LIST))
    client = client_of(server.url, unreachable_timeout=0)
    fresh, send = [], client.wire.send_steps  # (what the transport drives: loop.py)
    client.wire.send_steps = lambda *args, **kwargs: fresh.append(kwargs.get("fresh", False)) or send(*args, **kwargs)
    listed = [dict(id=1, hostname="cam-01")]
    assert client.request("GET", "/api/device") == client.request("GET", "/api/device") == listed
    assert fresh == [False, False, True] and server.count("GET") == 3
    client.close()


def test_a_refused_connection_is_known_unsent_from_its_type():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ExchangeError) as raised:
        connections.Wire("http://127.0.0.1:%d" % port, [], {}, 1).send("POST", "/api/device", {}, time.monotonic() + 2)
    assert raised.value.sent is False and raised.value.cause == response.REFUSED and raised.value.stage == CONNECT
    assert isinstance(raised.value.error, ConnectionRefusedError)  # the cause beneath, not a requests exception


# -- 4. TLS as urllib3 makes it ------------------------------------------------------------------------------


CERTIFICATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "certificates")


def certificate(name):
    """A self-signed certificate and its key, in one file (certificates/README.md): (cert path, key path)."""
    path = os.path.join(CERTIFICATES, name + ".pem")
    return path, path


def tls_server(scripted, paths):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*paths)
    server = scripted(lambda method, number: reply(LIST), wrap=lambda conn: context.wrap_socket(conn, server_side=True))
    return server, "https://127.0.0.1:%d" % server.port


def test_a_certificate_with_a_common_name_alone_is_refused(scripted):
    paths = certificate("cn_only")  # CN=127.0.0.1, no subjectAltName
    server, url = tls_server(scripted, paths)
    client = client_of(url, ca_path=paths[0])
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "has no subjectAltName" in str(raised.value) and "common name alone" in str(raised.value)
    assert server.count("GET") == 0  # nothing was sent to a service whose name did not match
    client.close()


def test_a_certificate_for_another_name_is_named_from_the_same_connection(scripted):
    paths = certificate("other_names")
    server, url = tls_server(scripted, paths)
    client = client_of(url, ca_path=paths[0])
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "its certificate is for another name (nac.test, nac-2.test), not 127.0.0.1" in str(raised.value)
    client.close()


def test_a_certificate_for_the_address_is_accepted(scripted):
    paths = certificate("address")
    server, url = tls_server(scripted, paths)
    client = client_of(url, ca_path=paths[0])
    assert client.request("GET", "/api/device") == [{"id": 1, "hostname": "cam-01"}]
    assert client.wire.context.minimum_version >= ssl.TLSVersion.TLSv1_2
    client.close()


def test_plain_http_to_a_tls_port_says_the_service_speaks_tls(scripted):
    paths = certificate("address")
    server, url = tls_server(scripted, paths)
    client = client_of(url.replace("https://", "http://"), max_retries=3)
    started = time.monotonic()
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "speaks TLS on that port (try https://)" in str(raised.value)
    assert time.monotonic() - started < 2  # not retried: sending again will not change it
    client.close()


def test_a_tls_alert_where_a_status_line_was_due_says_the_service_speaks_tls(scripted):
    server = scripted(lambda method, number: b"\x15\x03\x01\x00\x02\x02\x46")  # a TLS alert record
    client = client_of(server.url, max_retries=3)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "speaks TLS on that port (try https://)" in str(raised.value) and server.count("GET") == 1
    client.close()


# -- 5. every wait bounded by the deadline ---------------------------------------------------------------------


def test_a_proxy_that_drips_its_connect_reply_ends_at_the_deadline(monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def drip():
        conn = listener.accept()[0]
        conn.recv(65536)
        for byte in iter(lambda: b"H", None):
            if stop.wait(0.5):
                break
            try:
                conn.sendall(byte)
            except OSError:
                break
        conn.close()

    threading.Thread(target=drip, daemon=True).start()
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:%d" % listener.getsockname()[1])
    client = client_of("https://nac.example.com", timeout=1.5, max_retries=0, unreachable_timeout=0)
    started = time.monotonic()
    with pytest.raises(NacConnectionError):
        client.request("GET", "/api/device")
    assert time.monotonic() - started < 3
    stop.set()
    listener.close()
    client.close()


def test_a_proxy_that_refuses_the_credentials_fails_at_once(monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    seen = []

    def refuse():
        while True:
            try:
                conn = listener.accept()[0]
            except OSError:
                return
            seen.append(conn.recv(65536))
            conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            conn.close()

    threading.Thread(target=refuse, daemon=True).start()
    monkeypatch.setenv("HTTPS_PROXY", "http://user:pr0xy-secret@127.0.0.1:%d" % listener.getsockname()[1])
    client = client_of("https://nac.example.com", max_retries=3)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "the proxy refused the credentials (407" in str(raised.value) and "pr0xy-secret" not in str(raised.value)
    assert len(seen) == 1 and raised.value.outcome_unknown is False
    listener.close()
    client.close()


# -- 6. cookies bounded ----------------------------------------------------------------------------------------


def test_the_cookies_a_server_sets_are_bounded_and_never_sent_back_with_control_characters(scripted):
    heads = []
    # within the head's bound (response.MAX_HEAD): 8 values past MAX_COOKIE_BYTES, 60 more than MAX_COOKIES allows
    cookies = b"".join(b"Set-Cookie: c%d=%s; Path=/\r\n" % (n, b"v" * (5000 if n % 9 == 1 else 300)) for n in range(68))
    assert len(cookies) < response.MAX_HEAD - 1000

    def script(method, number):
        return reply(LIST, fields=b"Set-Cookie: ok=1; Path=/\r\n" + cookies)

    server = scripted(script)
    original = server._serve

    def serve(conn):  # note the Cookie line of every request
        class Noting:
            def __init__(self, sock):
                self.sock = sock

            def makefile(self, mode):
                reader = self.sock.makefile(mode)
                read = reader.readline

                def readline(*args):
                    line = read(*args)
                    if line.lower().startswith(b"cookie:"):
                        heads.append(line)
                    return line

                reader.readline = readline
                return reader

            def __getattr__(self, name):
                return getattr(self.sock, name)

        original(Noting(conn))

    server._serve = serve
    client = client_of(server.url)
    for dummy in range(5):
        client.request("GET", "/api/device")
    assert len(client.wire.cookies) <= cookie_room.MAX_COOKIES
    assert all(len(line) <= cookie_room.MAX_COOKIE_LINE + 10 for line in heads)
    assert not any(b"\r" in line[:-2] or b"\x00" in line for line in heads)
    assert any(b"ok=1" in line for line in heads)
    client.close()


@pytest.mark.parametrize("field", [b"Set-Cookie: nul=a\x00b; Path=/", b"Set-Cookie: cr=a\rb; Path=/"])
def test_a_cookie_with_a_control_character_fails_the_reply_it_came_in(scripted, field):
    server = scripted(lambda method, number: reply(LIST, fields=field + b"\r\n"))
    client = client_of(server.url)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "illegal header line" in str(raised.value) and not client.wire.cookies
    client.close()


# -- 7. no server byte in a message before masking ---------------------------------------------------------------


@pytest.mark.parametrize("offset", [0, 20, 33, 60, 75, 190])
def test_a_key_echoed_in_a_broken_status_line_is_masked_before_any_cut(scripted, offset):
    line = b"HTTP/1.1 2000 " + b"x" * offset + KEY.encode() + b" " + b"y" * 300 + b"\r\n\r\n"
    server = scripted(lambda method, number: line)
    client = client_of(server.url, max_retries=0)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    text = str(raised.value)
    assert not any(KEY[start : start + 6] in text for start in range(len(KEY) - 5)), text
    client.close()


# -- 8. compressed bodies: bounded, and whole ----------------------------------------------------------------------


def compressed(body, fields=b"Content-Encoding: gzip\r\n"):
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s" % (
        fields,
        len(body),
        body,
    )


def test_an_endless_empty_gzip_stream_fails_at_the_size_limit(scripted):
    member = gzip.compress(b"")

    def script(method, number):
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        return head + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(member) * 4096, member * 4096) * 40

    server = scripted(script)
    client = client_of(server.url, max_reply_mb=1, max_retries=0)
    with pytest.raises(NacResponseError) as raised:
        client.request("GET", "/api/device")
    assert "grew past the limit" in str(raised.value)
    client.close()


def test_a_gzip_body_cut_before_its_trailer_is_a_failure(scripted):
    body = gzip.compress(LIST)[:-8]  # its CRC and length cut off
    server = scripted(lambda method, number: compressed(body))
    client = client_of(server.url, max_retries=0)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert "could not be decoded" in str(raised.value)
    client.close()


def test_a_raw_deflate_body_is_known_from_its_first_two_bytes(scripted):
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    body = packer.compress(LIST) + packer.flush()
    server = scripted(lambda method, number: compressed(body, b"Content-Encoding: deflate\r\n"))
    client = client_of(server.url)
    assert client.request("GET", "/api/device") == [{"id": 1, "hostname": "cam-01"}]
    decoder = response._decoder("deflate")
    assert decoder.decompress(body[:1], 100) == b"" and decoder._head == body[:1]
    decoder.decompress(body[1:2], 100)
    assert decoder._head == b"" and decoder._inner is not None  # nothing held once the format is known
    client.close()
