# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-request path of transport.py (issue 17): the environment's settings merged once per client and
still honoured, a reply that comes in one read read with one deadline check, a slow reply still cut off."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gzip
import http.server
import json
import socket
import threading
import time

import pytest
import requests
import urllib3

from ansible_collections.netaccess.nac.plugins.module_utils import reply, transport
from ansible_collections.netaccess.nac.plugins.module_utils.api import NacClient, NacConnectionError
from ansible_collections.netaccess.nac.tests.unit.helpers import Scripted, mounted

KEY = "s3cr3t-key-value"
TIMEOUT = 7.0  # what urllib3 sets on the socket (connecting, the headers); a deadline's rest is below it
PROXY = "http://proxy.example:3128"


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


def recorded_client(url, **kwargs):
    client = NacClient(url, api_key=KEY, **kwargs)
    adapter = Scripted((200, [], {"Content-Type": "application/json"}))
    mounted(client, adapter)
    return client, adapter


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_the_environments_proxies_are_merged_once_per_client_and_used_by_every_request(monkeypatch, merges, scheme):
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("%s_PROXY" % scheme.upper(), PROXY)
    client, adapter = recorded_client("%s://nac.example.com" % scheme)
    for dummy in range(3):
        client.list_intents()
    client.request("POST", "/api/intent/dot1x_status/fire", body={"targetId": 7})
    assert len(merges) == 1  # at construction, not per request
    assert len(adapter.sends) == 4
    for kwargs in adapter.sends:
        assert kwargs["proxies"].get(scheme) == PROXY
        assert kwargs["stream"] is True and kwargs["timeout"] == 30.0 and kwargs["cert"] is None
    client.close()


def test_a_host_in_no_proxy_is_reached_directly(monkeypatch, merges):
    monkeypatch.setenv("HTTPS_PROXY", PROXY)
    monkeypatch.setenv("NO_PROXY", "nac.example.com")
    client, adapter = recorded_client("https://nac.example.com")
    client.list_intents()
    client.list_intents()
    assert [kwargs["proxies"] for kwargs in adapter.sends] == [{}, {}]
    assert len(merges) == 1
    client.close()


@pytest.mark.parametrize(
    "kwargs, verify",
    [
        (dict(), "/env/bundle.pem"),  # verification left at its default: the environment's bundle, as requests does
        (dict(ca_path=requests.utils.DEFAULT_CA_BUNDLE_PATH), requests.utils.DEFAULT_CA_BUNDLE_PATH),
        (dict(validate_certs=False), False),
    ],
)
def test_the_verify_of_every_request_is_the_clients_settings_over_the_environment(monkeypatch, kwargs, verify):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/env/bundle.pem")
    client, adapter = recorded_client("https://nac.example.com", **kwargs)
    client.list_intents()
    client.request("POST", "/api/intent/dot1x_status/fire", body={"targetId": 3})
    assert [sent["verify"] for sent in adapter.sends] == [verify, verify]
    client.close()


def as_requests_prepares(client, method, path, body=None):
    """What Session.request would send: the request prepared afresh by requests itself."""
    prepared = client.session.prepare_request(requests.Request(method, client.base_url + path, json=body))
    return prepared.method, prepared.url, dict(prepared.headers), prepared.body


def sent(request):
    return request.method, request.url, dict(request.headers), request.body


def test_each_request_is_prepared_as_requests_prepares_it():
    client, adapter = recorded_client("https://nac.example.com/base", tenant="tenant-a")
    path = "/api/intent/dot1x_status/fire"
    for target in (1, 2):
        client.request("POST", path, body={"targetId": target, "additionalPayload": {"json": True}})
    client.request("GET", "/api/device?hostname=a b&page=2")
    client.request("DELETE", "/api/device/12")
    expected = [
        as_requests_prepares(client, "POST", path, {"targetId": 1, "additionalPayload": {"json": True}}),
        as_requests_prepares(client, "POST", path, {"targetId": 2, "additionalPayload": {"json": True}}),
        as_requests_prepares(client, "GET", "/api/device?hostname=a b&page=2"),
        as_requests_prepares(client, "DELETE", "/api/device/12"),
    ]
    assert [sent(request) for request in adapter.requests] == expected
    first, second = adapter.requests[:2]
    assert first.headers is not second.headers  # each request its own copy of the headers
    assert second.headers["Authorization"] == "Bearer " + KEY and second.headers["X-Tenant"] == "tenant-a"
    assert b'"targetId": 2' in second.body and second.headers["Content-Length"] == str(len(second.body))
    assert adapter.requests[2].url.endswith("/api/device?hostname=a%20b&page=2")
    client.close()


def test_cookies_the_service_set_are_sent_back():
    client, adapter = recorded_client("https://nac.example.com")
    client.list_intents()
    client.request("POST", "/api/intent/dot1x_status/fire", body={"targetId": 1})
    client.session.cookies.set("lb", "node-2", domain="nac.example.com", path="/")  # as Session.send keeps them
    client.list_intents()
    client.request("POST", "/api/intent/dot1x_status/fire", body={"targetId": 1})
    assert [request.headers.get("Cookie") for request in adapter.requests] == [None, None, "lb=node-2", "lb=node-2"]
    client.session.cookies.clear()
    client.list_intents()
    assert "Cookie" not in adapter.requests[-1].headers
    client.close()


def test_the_prepared_requests_kept_are_bounded():
    client, adapter = recorded_client("https://nac.example.com")
    for number in range(transport.TEMPLATES * 3):
        client.request("GET", "/api/device/%d" % number)
    assert 0 < len(client._templates) <= transport.TEMPLATES
    assert adapter.requests[-1].url == "https://nac.example.com/api/device/%d" % (transport.TEMPLATES * 3 - 1)
    client.close()


# -- reading the reply against the deadline, over a real socket ---------------------------------------


class Replies(http.server.BaseHTTPRequestHandler):
    """GET /small: 100 bytes of JSON at once; /large: 1 MiB of JSON; /gzip: 1 MiB of JSON, gzipped;
    /drip: 100 bytes, one per 0.01 s."""

    protocol_version = "HTTP/1.1"
    peers = []  # the client's address of each request: one per connection it opened

    def do_GET(self):
        self.peers.append(self.client_address)
        gzipped = self.path == "/api/gzip"
        if self.path == "/api/drip":
            body = b"[" + b" " * 98 + b"]"
        elif self.path in ("/api/large", "/api/gzip"):
            body = json.dumps(["x%d" % n for n in range(100000)]).encode("ascii")
            body = gzip.compress(body) if gzipped else body
        else:
            body = b'[{"tag": "dot1x_status"}' + b" " * 74 + b"]"
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
def deadline_timeouts(monkeypatch):
    """The socket timeouts this thread sets below TIMEOUT: those of a deadline's rest (_bounded)."""
    calls = []
    original = socket.socket.settimeout
    me = threading.current_thread()

    def recorded(sock, value):
        if threading.current_thread() is me and value is not None and value < TIMEOUT:
            calls.append(value)
        return original(sock, value)

    monkeypatch.setattr(socket.socket, "settimeout", recorded)
    return calls


def test_a_reply_that_comes_in_one_read_costs_one_deadline_check_and_one_read(server, deadline_timeouts, monkeypatch):
    reads = []  # the reads from the reply of urllib3 2 (read1); urllib3 1 streams the body instead
    read1 = getattr(urllib3.HTTPResponse, "read1", None)
    if read1 is not None:
        monkeypatch.setattr(
            urllib3.HTTPResponse, "read1", lambda raw, *args, **kwargs: reads.append(1) or read1(raw, *args, **kwargs)
        )
    client = NacClient(server, api_key=KEY, timeout=TIMEOUT, max_retries=0)
    for dummy in range(2):  # the second over the kept-alive connection
        del deadline_timeouts[:], reads[:]
        assert client.request("GET", "/api/small") == [{"tag": "dot1x_status"}]
        assert len(deadline_timeouts) == 1 and len(reads) == (0 if read1 is None else 1)
    assert len(set(Replies.peers)) == 1  # the connection went back to the pool after the one read, and was reused
    client.close()


def test_a_reply_of_many_reads_is_read_whole_each_read_within_the_deadline(server, deadline_timeouts):
    client = NacClient(server, api_key=KEY, timeout=TIMEOUT, max_retries=0)
    expected = ["x%d" % n for n in range(100000)]
    assert client.request("GET", "/api/large") == expected
    assert len(deadline_timeouts) >= 2  # more than one read, each given only what is left
    assert deadline_timeouts == sorted(deadline_timeouts, reverse=True)
    assert client.request("GET", "/api/gzip") == expected  # decoded whole: the decoder's tail too
    assert client.request("GET", "/api/small") == [{"tag": "dot1x_status"}]  # the connection is fit for reuse
    assert len(set(Replies.peers)) == 1
    client.close()


def test_a_dripping_reply_still_ends_at_the_deadline(server):
    client = NacClient(server, api_key=KEY, timeout=0.15, max_retries=0)
    with pytest.raises(NacConnectionError) as raised:  # read whole, the reply would decode to []
        client.request("GET", "/api/drip")
    assert "within 0.15s" in str(raised.value) and raised.value.outcome_unknown is True
    client.close()


class Closing:
    """A streamed reply's ``raw`` stand-in: all of its Content-Length read once ``reads`` reads were made."""

    def __init__(self, reads):
        self.reads = reads

    @property
    def length_remaining(self):
        return max(self.reads, 0)


class Sock:
    def __init__(self):
        self.timeouts = []

    def settimeout(self, value):
        self.timeouts.append(value)


def chunks(raw, pieces):
    for piece in pieces:
        raw.reads -= 1
        yield piece


@pytest.mark.parametrize(
    "pieces, reads, expected_timeouts",
    [
        ([b"whole", b""], 1, 1),  # all of it in one read: the empty end is not waited for
        ([b"a", b"b", b"c", b""], 3, 3),  # one deadline check per read from the socket
        ([b""], 0, 0),  # a reply without a body (Content-Length: 0)
        ([b"a", b"b"], 99, 3),  # the body ends early: every read is bounded
    ],
)
def test_bounded_sets_the_deadline_only_before_reads_that_can_wait(pieces, reads, expected_timeouts):
    raw, sock = Closing(reads), Sock()
    got = list(reply._bounded(chunks(raw, pieces), sock, time.monotonic() + 60, raw))
    assert got == pieces
    assert len(sock.timeouts) == expected_timeouts
    assert all(0 < value <= 60 for value in sock.timeouts)


def test_bounded_raises_once_the_deadline_has_passed_while_the_reply_is_open():
    raw, sock = Closing(99), Sock()
    with pytest.raises(requests.exceptions.ReadTimeout):
        list(reply._bounded(chunks(raw, [b"a"]), sock, time.monotonic() - 1, raw))
    assert sock.timeouts == []
