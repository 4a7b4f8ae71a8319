# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-request path of transport.py (issues 17 and 26), over real loopback sockets where it can be: the
environment's settings merged once per client and still honoured (proxies, NO_PROXY, the CA bundle), each request
as it goes on the wire, cookies sent back, a reply that comes in one read read with one read, a slow reply still
cut off."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import gzip
import http.server
import json
import shutil
import socket
import threading
import time
from urllib.parse import quote

import pytest
import requests

from ansible_collections.netaccess.nac.plugins.module_utils.http import connections, loop
from ansible_collections.netaccess.nac.plugins.module_utils.http.transport import Transport, request_facts
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacClient,
    NacConfigError,
    NacConnectionError,
    NacError,
    ReadOnlyViolation,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import Scripted, mounted

KEY = "s3cr3t-key-value"
TIMEOUT = 7.0  # what the connection is given as a whole; a deadline's rest is below it
PROXY_PASSWORD = "pr0xy-pa55word"
PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture
def merges(monkeypatch):
    """The calls of Session.merge_environment_settings, counted."""
    calls = []
    original = requests.Session.merge_environment_settings

    def counted(self, *args, **kwargs):
        calls.append(args[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(requests.Session, "merge_environment_settings", counted)
    return calls


@pytest.fixture
def environ(monkeypatch):
    """No proxy of the test runner's environment (either case): each test sets its own."""
    for name in PROXY_NAMES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def recorded_client(url, **kwargs):
    client = NacClient(url, api_key=KEY, **kwargs)
    adapter = Scripted((200, [], {"Content-Type": "application/json"}))
    mounted(client, adapter)
    return client, adapter


def dead_port():
    """A loopback port nothing listens on (that of a socket just closed)."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    listening.close()
    return port


class Recorder(http.server.BaseHTTPRequestHandler):
    """Notes every request as it came (``seen``: method, target, header fields in order, body, the client's
    address) and answers ``[]`` to a GET, ``{}`` to anything else; a CONNECT is refused (403)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # a head and a body written apart are not held back for the client's ACK
    seen = None
    extra = ()  # header fields added to every reply

    def note(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append(
            dict(
                method=self.command,
                target=self.path,
                headers=list(self.headers.items()),
                body=body,
                peer=self.client_address,
            )
        )

    def answer(self, body, status=200):
        self.note()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in self.extra:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer(b"[]")

    def do_POST(self):
        self.answer(b"{}")

    def do_DELETE(self):
        self.answer(b"")

    def do_CONNECT(self):
        self.answer(b"", status=403)
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder(local_http):
    """``recorder(extra=())``: the address of a server answering with Recorder, and its list of requests."""

    def serve(extra=()):
        seen = []
        return local_http(type("Recording", (Recorder,), dict(seen=seen, extra=tuple(extra)))), seen

    return serve


def fields(request):
    """The header fields of a recorded request, by lower-case name (each name once)."""
    found = {}
    for name, value in request["headers"]:
        assert name.lower() not in found, "%s sent twice" % name
        found[name.lower()] = value
    return found


# -- the environment's proxies -------------------------------------------------------------------------------


def test_an_http_service_is_reached_through_the_http_proxy_with_its_credentials(environ, merges, recorder):
    proxy, seen = recorder()
    environ.setenv("HTTP_PROXY", proxy.replace("http://", "http://nac-user:%s@" % PROXY_PASSWORD))
    client = NacClient("http://nac.example.com:8080/base", api_key=KEY, max_retries=0)  # resolved by the proxy only
    for dummy in range(3):
        assert client.request("GET", "/api/device?page=2") == []
    assert client.request("POST", "/api/intent/dot1x_status/fire", body={"targetId": 7}) == {}
    assert len(merges) == 1  # at construction, not per request
    assert [request["target"] for request in seen] == ["http://nac.example.com:8080/base/api/device?page=2"] * 3 + [
        "http://nac.example.com:8080/base/api/intent/dot1x_status/fire"
    ]
    token = base64.b64encode(("nac-user:%s" % PROXY_PASSWORD).encode()).decode()
    for request in seen:
        sent = fields(request)
        assert sent["host"] == "nac.example.com:8080"
        assert sent["proxy-authorization"] == "Basic " + token
        assert sent["authorization"] == "Bearer " + KEY
    assert len(set(request["peer"] for request in seen)) == 1  # one kept-alive connection to the proxy
    client.close()


def test_an_https_service_is_tunnelled_through_the_proxy_and_a_refused_tunnel_is_a_connection_error(
    environ, merges, recorder
):
    proxy, seen = recorder()
    environ.setenv("HTTPS_PROXY", proxy.replace("http://", "http://nac-user:%s@" % PROXY_PASSWORD))
    client = NacClient("https://nac.example.com", api_key=KEY, max_retries=0, unreachable_timeout=0)
    with pytest.raises(NacConnectionError) as raised:
        client.request("GET", "/api/device")
    assert [(request["method"], request["target"]) for request in seen] == [("CONNECT", "nac.example.com:443")]
    sent = fields(seen[0])
    assert sent["proxy-authorization"].startswith("Basic ") and "authorization" not in sent  # the key stays inside
    text = str(raised.value)
    assert "the proxy refused the tunnel: 403" in text and "Traceback" not in text
    assert PROXY_PASSWORD not in text and KEY not in text
    assert len(merges) == 1
    client.close()


def test_a_tunnel_the_proxy_refused_sent_nothing_to_the_service(environ, recorder):
    proxy, seen = recorder()
    environ.setenv("HTTPS_PROXY", proxy)
    client = NacClient("https://nac.example.com", api_key=KEY, max_retries=0, unreachable_timeout=0)
    with pytest.raises(NacConnectionError) as raised:
        client.request("POST", "/api/device", body={"hostname": "a"})
    assert str(raised.value).startswith("Could not connect to the NAC API at https://nac.example.com through the proxy")
    assert raised.value.outcome_unknown is False  # a creation is sent again, never looked for as uncertain
    assert [request["method"] for request in seen] == ["CONNECT"]
    client.close()


def test_the_proxys_password_is_in_no_error_message(environ):
    environ.setenv("HTTP_PROXY", "http://nac-user:%s@127.0.0.1:%d" % (PROXY_PASSWORD, dead_port()))
    client = NacClient("http://nac.example.com", api_key=KEY, max_retries=0, unreachable_timeout=0)
    with pytest.raises(NacConnectionError) as raised:
        client.request("POST", "/api/device", body={"hostname": "a"})
    assert "connection refused" in str(raised.value) and raised.value.outcome_unknown is False
    assert PROXY_PASSWORD not in str(raised.value) and PROXY_PASSWORD not in repr(raised.value.__dict__)
    client.close()


class EchoingProxy(Recorder):
    """A proxy that refuses every request with a 407 whose reason phrase and body echo its Proxy-Authorization
    header (as sent, and its token URL-encoded and decoded)."""

    def refuse(self):
        self.note()
        sent = self.headers.get("Proxy-Authorization") or ""
        token = sent.partition(" ")[2]
        echo = "Proxy Authentication Required for %s (%s, %s)" % (
            sent,
            quote(token, safe=""),
            base64.b64decode(token).decode("latin-1") if token else "",
        )
        body = json.dumps({"error": echo}).encode()
        self.send_response(407, echo)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_CONNECT = refuse


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxys_407_that_echoes_its_credentials_shows_none_of_them(environ, local_http, scheme):
    """Before: the reason phrase of a 407 that echoed the proxy's Basic credentials was shown; the proxy's password
    and token were not among the masked forms."""
    seen = []
    proxy = local_http(type("Echoing", (EchoingProxy,), dict(seen=seen)))
    environ.setenv("%s_PROXY" % scheme.upper(), proxy.replace("http://", "http://nac-user:%s@" % PROXY_PASSWORD))
    client = NacClient("%s://nac.example.com" % scheme, api_key=KEY, max_retries=0, unreachable_timeout=0)
    with pytest.raises((NacConnectionError, NacError)) as raised:
        client.request("GET", "/api/device")
    client.close()
    token = base64.b64encode(("nac-user:%s" % PROXY_PASSWORD).encode()).decode()
    text = str(raised.value) + repr(raised.value.__dict__)
    assert seen and "407" in text, text
    for form in (PROXY_PASSWORD, token, quote(token, safe="")):
        assert form not in text, form


def test_a_host_in_no_proxy_is_reached_directly(environ, merges, recorder):
    url, seen = recorder()
    environ.setenv("HTTP_PROXY", "http://127.0.0.1:%d" % dead_port())  # would fail every request
    environ.setenv("NO_PROXY", "127.0.0.1")
    client = NacClient(url, api_key=KEY, max_retries=0, unreachable_timeout=0)
    assert client.request("GET", "/api/device") == []
    assert client.request("GET", "/api/device") == []
    assert [request["target"] for request in seen] == ["/api/device", "/api/device"]  # origin-form: no proxy
    assert len(merges) == 1
    client.close()


def test_a_proxy_that_cannot_be_used_is_a_configuration_error(environ):
    environ.setenv("HTTPS_PROXY", "socks5://nac-user:%s@proxy.example:1080" % PROXY_PASSWORD)
    with pytest.raises(NacConfigError) as raised:
        NacClient("https://nac.example.com", api_key=KEY)
    assert "socks5" in str(raised.value) and PROXY_PASSWORD not in str(raised.value)


# -- the CA bundle ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, verify",
    [
        (dict(), "ENV"),  # verification left at its default: the environment's bundle, as requests does
        (dict(ca_path=requests.utils.DEFAULT_CA_BUNDLE_PATH), requests.utils.DEFAULT_CA_BUNDLE_PATH),
        (dict(validate_certs=False), False),
    ],
)
def test_the_verify_of_every_request_is_the_clients_settings_over_the_environment(environ, tmp_path, kwargs, verify):
    bundle = str(tmp_path / "bundle.pem")
    shutil.copyfile(requests.utils.DEFAULT_CA_BUNDLE_PATH, bundle)
    environ.setenv("REQUESTS_CA_BUNDLE", bundle)
    verify = bundle if verify == "ENV" else verify
    client, adapter = recorded_client("https://nac.example.com", **kwargs)
    assert client.wire.verify == verify
    client.list_intents()
    client.request("POST", "/api/intent/dot1x_status/fire", body={"targetId": 3})
    assert [sent["verify"] for sent in adapter.sends] == [verify, verify]
    client.close()


# -- each request as it goes on the wire -----------------------------------------------------------------------


def as_requests_prepares(url, method, path):
    """The request target requests prepares for ``url + path``."""
    return requests.Request(method, url + path).prepare().path_url


def test_each_request_goes_on_the_wire_with_its_headers_and_body(recorder):
    url, seen = recorder()
    client = NacClient(url, api_key=KEY, tenant="tenant-a", max_retries=0)
    path = "/api/intent/dot1x_status/fire"
    for target in (1, 2):
        client.request("POST", path, body={"targetId": target, "additionalPayload": {"json": True}})
    client.request("GET", "/api/device?hostname=a b&page=2")
    client.request("DELETE", "/api/device/12")
    assert [(request["method"], request["target"]) for request in seen] == [
        ("POST", path),
        ("POST", path),
        ("GET", "/api/device?hostname=a%20b&page=2"),  # quoted as requests quotes it
        ("DELETE", "/api/device/12"),
    ]
    assert seen[2]["target"] == as_requests_prepares(url, "GET", "/api/device?hostname=a b&page=2")
    for request in seen:
        sent = fields(request)
        assert sent["host"] == url.split("://", 1)[1]
        assert sent["user-agent"] == "netaccess.nac-ansible-collection"
        assert sent["accept"] == "application/json" and sent["accept-encoding"] == "gzip, deflate"
        assert sent["authorization"] == "Bearer " + KEY and sent["x-tenant"] == "tenant-a"
        assert "cookie" not in sent and "proxy-authorization" not in sent
    for number, request in enumerate(seen[:2], 1):
        sent = fields(request)
        assert json.loads(request["body"]) == {"targetId": number, "additionalPayload": {"json": True}}
        assert sent["content-type"] == "application/json" and sent["content-length"] == str(len(request["body"]))
    assert "content-type" not in fields(seen[2]) and seen[2]["body"] == b""
    assert fields(seen[3]).get("content-length") == "0" and seen[3]["body"] == b""  # as requests sends a DELETE
    client.close()


def test_a_base_path_prefixes_every_target_and_basic_auth_is_sent(recorder):
    url, seen = recorder()
    client = NacClient(url + "/base/", username="nac-admin", password="pa55 word", max_retries=0)
    client.request("GET", "/api/device")
    client.request("POST", "/api/device", body={"hostname": "a"})
    assert [request["target"] for request in seen] == ["/base/api/device", "/base/api/device"]
    expected = "Basic " + base64.b64encode(b"nac-admin:pa55 word").decode()
    assert [fields(request)["authorization"] for request in seen] == [expected, expected]
    client.close()


def test_a_tenant_not_given_sends_no_x_tenant(recorder):
    url, seen = recorder()
    client = NacClient(url, api_key=KEY, max_retries=0)
    client.request("GET", "/api/device")
    assert "x-tenant" not in fields(seen[0])
    client.close()


def test_cookies_the_service_set_are_sent_back(recorder):
    url, seen = recorder(extra=[("Set-Cookie", "lb=node-2; Path=/")])
    client = NacClient(url, api_key=KEY, max_retries=0)
    client.request("GET", "/api/device")
    client.request("POST", "/api/intent/dot1x_status/fire", body={"targetId": 1})
    client.request("GET", "/api/device/3")
    assert [fields(request).get("cookie") for request in seen] == [None, "lb=node-2", "lb=node-2"]
    client.close()


def test_the_request_targets_kept_are_bounded(recorder):
    url, seen = recorder()
    client = NacClient(url, api_key=KEY, max_retries=0)
    count = connections.TARGETS * 2 + 10
    for number in range(count):
        client.request("GET", "/api/device/%d" % number)
    assert 0 < len(client.wire._targets) <= connections.TARGETS
    assert [request["target"] for request in seen] == ["/api/device/%d" % number for number in range(count)]
    client.close()


# -- reading the reply against the deadline, over a real socket ---------------------------------------


class Replies(http.server.BaseHTTPRequestHandler):
    """GET /small: 100 bytes of JSON, sent with its head in one write; /empty: no body (Content-Length: 0);
    /nothing: 204; /large: 1 MiB of JSON; /gzip: 1 MiB of JSON, gzipped; /drip: 100 bytes, one per 0.01 s."""

    protocol_version = "HTTP/1.1"
    peers = []  # the client's address of each request: one per connection it opened

    def do_GET(self):
        self.peers.append(self.client_address)
        if self.path == "/api/small":
            body = b'[{"tag": "dot1x_status"}' + b" " * 74 + b"]"
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            self.wfile.write(head + body)  # one write: the client can read it all in one read
            return
        if self.path in ("/api/empty", "/api/nothing"):
            self.send_response(200 if self.path == "/api/empty" else 204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        gzipped = self.path == "/api/gzip"
        if self.path == "/api/drip":
            body = b"[" + b" " * 98 + b"]"
        else:
            body = json.dumps(["x%d" % n for n in range(100000)]).encode("ascii")
            body = gzip.compress(body) if gzipped else body
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            if self.path != "/api/drip":
                self.wfile.write(body)
                return
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.01)
        except OSError:
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def server(local_http):
    Replies.peers = []
    return local_http(Replies)


@pytest.fixture
def deadline_waits(monkeypatch):
    """The waits of this thread for a connection's socket (steps._wait, loop.run's): what was left of the deadline
    for each (below TIMEOUT), and whether it waited to write (True) or to read."""
    calls = []
    original = loop._wait
    me = threading.current_thread()

    def recorded(sock, writing, deadline):
        if threading.current_thread() is me:
            calls.append((deadline - time.monotonic(), writing))
        return original(sock, writing, deadline)

    monkeypatch.setattr(loop, "_wait", recorded)
    return calls


@pytest.fixture
def socket_calls(monkeypatch):
    """The socket methods this thread calls that release the interpreter lock (each one a chance for the client's
    other threads to take it), by name: the sends, the reads, the timeouts set."""
    calls = []
    me = threading.current_thread()

    def counting(name, original):
        def counted(sock, *args, **kwargs):
            if threading.current_thread() is me:
                calls.append(name)
            return original(sock, *args, **kwargs)

        return counted

    for name in ("send", "sendall", "recv_into", "settimeout", "setblocking"):
        monkeypatch.setattr(socket.socket, name, counting(name, getattr(socket.socket, name)))
    return calls


@pytest.fixture
def socket_reads(monkeypatch):
    """The reads from a socket this thread makes (what a connection's buffered reader asks the socket for)."""
    calls = []
    original = socket.socket.recv_into
    me = threading.current_thread()

    def counted(sock, *args, **kwargs):
        if threading.current_thread() is me:
            calls.append(1)
        return original(sock, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "recv_into", counted)
    return calls


def test_a_reply_that_comes_in_one_read_costs_one_read_and_its_connection_is_reused(
    server, deadline_waits, socket_reads, socket_calls
):
    client = NacClient(server, api_key=KEY, timeout=TIMEOUT, max_retries=0)
    assert client.request("GET", "/api/small") == [{"tag": "dot1x_status"}]  # the connection opened
    for dummy in range(2):  # over the kept-alive connection
        del deadline_waits[:], socket_reads[:], socket_calls[:]
        assert client.request("GET", "/api/small") == [{"tag": "dot1x_status"}]
        assert len(socket_reads) == 1  # head and body in one read: the end is not waited for (it would block)
        # the request in one send, taken at once (no wait); one wait for the reply, given what is left
        assert len(deadline_waits) == 1 and deadline_waits[0][0] < TIMEOUT and not deadline_waits[0][1]
        assert socket_calls == ["send", "recv_into"]  # no timeout set, no mode switched: each a lock released
    assert len(set(Replies.peers)) == 1  # the connection went back to the pool after the one read, and was reused
    client.close()


@pytest.mark.parametrize("path", ["/api/empty", "/api/nothing"])
def test_a_reply_without_a_body_costs_no_read_after_its_head(server, deadline_waits, socket_reads, path):
    client = NacClient(server, api_key=KEY, timeout=TIMEOUT, max_retries=0)
    assert client.request("GET", path) is None
    del deadline_waits[:], socket_reads[:]
    assert client.request("GET", path) is None
    assert len(socket_reads) == 1 and len(deadline_waits) == 1  # the head's one read, and the wait for it
    assert len(set(Replies.peers)) == 1
    client.close()


def test_a_reply_of_many_reads_is_read_whole_each_read_within_the_deadline(server, deadline_waits, socket_reads):
    client = NacClient(server, api_key=KEY, timeout=TIMEOUT, max_retries=0)
    expected = ["x%d" % n for n in range(100000)]
    assert client.request("GET", "/api/small") == [{"tag": "dot1x_status"}]  # the connection opened
    del deadline_waits[:], socket_reads[:]
    assert client.request("GET", "/api/large") == expected
    assert len(socket_reads) > 2  # the head, then more than one read of the body
    # the head waited for, then a wait wherever nothing had come yet: each given only what is left
    assert deadline_waits and all(left < TIMEOUT and not writing for left, writing in deadline_waits)
    assert deadline_waits == sorted(deadline_waits, reverse=True)
    del deadline_waits[:]
    assert client.request("GET", "/api/gzip") == expected  # decoded whole: the decoder's tail too
    assert deadline_waits and deadline_waits == sorted(deadline_waits, reverse=True)
    assert client.request("GET", "/api/small") == [{"tag": "dot1x_status"}]  # the connection is fit for reuse
    assert len(set(Replies.peers)) == 1
    client.close()


def test_a_dripping_reply_still_ends_at_the_deadline(server):
    client = NacClient(server, api_key=KEY, timeout=0.15, max_retries=0)
    with pytest.raises(NacConnectionError) as raised:  # read whole, the reply would decode to []
        client.request("GET", "/api/drip")
    assert "within 0.15s" in str(raised.value) and raised.value.outcome_unknown is True
    client.close()


# -- the two facts of a request: changes the server, safe to repeat ------------------------------------------


@pytest.mark.parametrize(
    "method, facts",
    [("GET", (False, True)), ("HEAD", (False, True)), ("PUT", (True, True)), ("DELETE", (True, True))]
    + [("POST", (True, False)), ("PATCH", (True, False)), ("post", (True, False))],
)
def test_a_requests_facts_follow_its_method_as_rfc_9110_says(method, facts):
    assert request_facts(method) == facts
    assert request_facts(method, changes=False, repeatable=True) == (False, True)  # given: as given


def test_a_read_only_client_refuses_what_changes_the_server_before_sending_it():
    """A POST changes the server unless the caller says it does not (the status query's POST): check mode refuses
    the creation locally and sends the query (the Scripted transport answers it, and records it)."""
    transport = Scripted((200, {"status": "AUTHENTICATED"}))
    client = mounted(NacClient("https://nac.example.com", api_key=KEY, read_only=True), transport)
    with pytest.raises(ReadOnlyViolation):
        client.create_device({"hostname": "a"})
    with pytest.raises(ReadOnlyViolation):
        client.request("POST", "/api/device", body={"hostname": "a"})
    assert transport.sent == []
    assert client.fire_intent(7) == {"status": "AUTHENTICATED"}
    assert [request.path_url for request in transport.sent] == ["/api/intent/dot1x_status/fire"]


def test_the_client_holds_its_transport_and_shows_only_what_its_callers_read():
    """NacClient is no Transport: the exchange's own methods are not the API layer's; the few settings callers read
    (and the wire a unit test replaces) pass through to the transport it holds."""
    client = NacClient("https://nac.example.com", api_key=KEY, max_retries=1)
    transport, wire = client.transport, client.wire
    assert isinstance(transport, Transport) and not isinstance(client, Transport)
    assert not any(hasattr(client, name) for name in ("exchange", "exchange_steps", "_send_steps", "decoded"))
    assert wire is transport.wire and client.secrets is transport.secrets and client.timeout == transport.timeout
    client.max_retries = 3
    assert transport.max_retries == 3
    with pytest.raises(AttributeError):
        client.timeout = 1  # read, never set, through the client
    replaced = object()  # (a unit test puts its fake wire there: helpers.mounted)
    client.wire = replaced
    assert transport.wire is replaced
    client.wire = wire
    client.close()
    assert wire.closed
