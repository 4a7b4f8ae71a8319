# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status batch on the loop (engine.ordered_steps over loop.Loop): many exchanges at once on one thread, a
slow one holding back none of the others, each deadline kept, a connection broken mid-batch, a pace kept by
timers, a restart waited out, the results in the items' order."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.server
import json
import os
import socket
import ssl
import threading
import time

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.http import outage
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import ordered_steps
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient, NacConnectionError
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeTransport, mounted, refused

KEY = "k3y-of-the-steps-tests"


# -- the status batch on the loop: a server of fires, each answered as its target says ------------------------


class Fires(http.server.BaseHTTPRequestHandler):
    """POST /api/intent/dot1x_status/fire: answered after ``delay`` seconds (by targetId, default none); a target in
    ``silent`` is never answered (the connection held); one in ``cut`` has its connection closed without a reply
    the first ``cuts`` times it is asked (a connection broken mid-batch); with ``together`` (a Barrier), none is
    answered until that many are in; one in ``large`` gets a reply of 300 kB, one in ``forge`` a forged second reply
    after its own, in the same write. ``peers``: the client's address of each
    request, ``sent`` with when it came."""

    protocol_version = "HTTP/1.1"
    delay, silent, cut, asked, peers, together, large, sent, forge = {}, set(), set(), [], [], None, set(), [], set()
    cuts = 1

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        target = body["targetId"]
        Fires.peers.append(self.client_address)
        Fires.sent.append((self.client_address, time.monotonic()))
        if target in Fires.cut and Fires.asked.count(target) < Fires.cuts:
            Fires.asked.append(target)
            self.close_connection = True
            return
        Fires.asked.append(target)
        if target in Fires.silent:
            time.sleep(3)
            self.close_connection = True
            return
        if Fires.together is not None:
            Fires.together.wait()
        time.sleep(Fires.delay.get(target, 0.0))
        message = "x" * 300000 if target in Fires.large else None  # a reply of many reads
        data = json.dumps({"status": "AUTHENTICATED", "username": "u%d" % target, "message": message}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        forged = b""
        if target in Fires.forge:  # a second reply in the same write, for whatever is asked next on the connection
            lie = json.dumps({"status": "FORGED", "username": "forged"}).encode()
            forged = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
                len(lie),
                lie,
            )
        self.wfile.write(data + forged)

    def log_message(self, *args):
        pass

    @classmethod
    def reset(cls):
        cls.delay, cls.silent, cls.cut, cls.asked, cls.peers, cls.cuts = {}, set(), set(), [], [], 1
        cls.together, cls.large, cls.sent, cls.forge = None, set(), [], set()


@pytest.fixture
def fires(local_http):
    Fires.reset()
    return local_http(Fires)


def batch(client, targets, concurrency, finished=None):
    """(target, reply or the error's text) for each target, in order, by ordered_steps over fire_intent_steps;
    ``finished``: when each target's answer came (appended as (target, clock))."""

    def one(target):
        try:
            reply = yield from client.fire_intent_steps(target)
        except NacConnectionError as error:
            reply = error.message
        if finished is not None:
            finished.append((target, time.monotonic()))
        return target, reply

    return list(ordered_steps(one, targets, concurrency))


def test_the_loop_runs_many_exchanges_at_once_on_one_thread(fires):
    """The server answers none of the 32 requests until all 32 are in: they are in flight at once."""
    Fires.together = threading.Barrier(32, timeout=10)
    client = NacClient(fires, api_key=KEY, pool_size=32)
    try:
        results = batch(client, range(1, 33), 32)
    finally:
        client.close()
    assert [target for target, dummy in results] == list(range(1, 33))
    assert all(reply["username"] == "u%d" % target for target, reply in results)
    assert not Fires.together.broken and len(set(Fires.peers)) == 32  # a connection each


def test_a_batch_on_the_loop_starts_no_thread_while_the_service_answers(fires):
    """A batch is one thread: while every request is answered, none is started, its connections made included (to
    an address: a host name is resolved on a helper thread, once a connection)."""
    client = NacClient(fires, api_key=KEY, pool_size=8)
    try:
        before = set(threading.enumerate())
        seen = []

        def one(target):
            reply = yield from client.fire_intent_steps(target)
            seen.append(set(t for t in threading.enumerate() if t.name.startswith("nac-")) - before)  # (the client's)
            return reply

        assert len(list(ordered_steps(one, range(1, 201), 8))) == 200
    finally:
        client.close()
    assert not any(seen)


@pytest.fixture
def tls_fires():
    """Fires over TLS (certificates/address.pem, for 127.0.0.1): (url, its CA file)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "certificates", "address.pem")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(path, path)
    Fires.reset()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fires)
    server.daemon_threads, server.block_on_close = True, False
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "https://127.0.0.1:%d" % server.server_address[1], path
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_replies_of_many_reads_come_whole_on_the_loop_and_their_connections_carry_the_next(scheme, request):
    if scheme == "https":
        url, ca_path = request.getfixturevalue("tls_fires")
        client = NacClient(url, api_key=KEY, pool_size=4, ca_path=ca_path)
    else:
        client = NacClient(request.getfixturevalue("fires"), api_key=KEY, pool_size=4)
    Fires.large = set(range(1, 41, 3))
    try:
        results = batch(client, range(1, 41), 4)
    finally:
        client.close()
    assert [target for target, dummy in results] == list(range(1, 41))
    for target, reply in results:
        assert reply["username"] == "u%d" % target
        assert reply["message"] == ("x" * 300000 if target in Fires.large else None)
    assert len(set(Fires.peers)) <= 4 + 1  # kept alive: each connection carried many (one more when a TLS
    # connection's close was seen before it was reused)


def test_a_host_name_is_resolved_on_a_helper_thread(fires, monkeypatch):
    client = NacClient(fires.replace("127.0.0.1", "localhost"), api_key=KEY, pool_size=2)
    resolved = []
    real = socket.getaddrinfo

    def getaddrinfo(host, *args):
        if len(args) == 3:  # a name resolved (not the try of it as an address: AI_NUMERICHOST)
            resolved.append((host, threading.current_thread()))
        return [entry for entry in real(host, *args) if entry[0] == socket.AF_INET]  # (the server's 127.0.0.1)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    try:
        results = batch(client, range(1, 5), 2)
    finally:
        client.close()
    assert [reply["username"] for dummy, reply in results] == ["u1", "u2", "u3", "u4"]
    names = [thread for host, thread in resolved if host == "localhost"]
    assert names and threading.main_thread() not in names and threading.current_thread() not in names


def test_bytes_past_a_reply_never_answer_the_next_request_on_the_loop(fires):
    """A reply followed by a forged one in the same write: the connection is closed, never read again (connections
    .Connection.idle), so that no request of the batch is answered by the forged reply."""
    Fires.forge = set(range(1, 41, 2))
    client = NacClient(fires, api_key=KEY, pool_size=4, max_retries=0)
    try:
        results = batch(client, range(1, 41), 4)
    finally:
        client.close()
    assert [reply["username"] for dummy, reply in results] == ["u%d" % target for target in range(1, 41)]
    assert len(set(Fires.peers)) >= 20  # a new connection after each forged reply


def test_a_slow_exchange_holds_back_none_of_the_others_and_the_results_keep_the_items_order(fires):
    Fires.delay = {1: 1.0}
    client = NacClient(fires, api_key=KEY, pool_size=4)
    finished = []
    started = time.monotonic()
    try:
        results = batch(client, range(1, 41), 4, finished)
    finally:
        client.close()
    assert [target for target, dummy in results] == list(range(1, 41))
    when = dict(finished)
    assert when[1] - started >= 0.9
    assert all(when[target] < when[1] for target in range(2, 41))  # the others went on, on three connections
    assert [target for target, dummy in finished][-1] == 1


def test_each_exchange_on_the_loop_keeps_its_own_deadline(fires):
    Fires.silent = {3}
    client = NacClient(fires, api_key=KEY, timeout=0.4, max_retries=0, pool_size=4)
    started = time.monotonic()
    try:
        results = batch(client, range(1, 9), 4)
    finally:
        client.close()
    took = time.monotonic() - started
    assert [target for target, dummy in results] == list(range(1, 9))
    assert "No reply from the NAC API" in results[2][1] and "within 0.4s" in results[2][1]
    assert all(isinstance(reply, dict) for target, reply in results if target != 3)
    assert 0.35 <= took < 2.5


def test_a_connection_broken_mid_batch_is_that_requests_alone_and_retried_as_a_read(fires):
    Fires.cut = {5, 6}
    client = NacClient(fires, api_key=KEY, max_retries=1, pool_size=4, sleep=lambda seconds: None)
    try:
        results = batch(client, range(1, 13), 4)
    finally:
        client.close()
    assert [target for target, dummy in results] == list(range(1, 13))
    assert all(isinstance(reply, dict) and reply["username"] == "u%d" % target for target, reply in results)
    assert Fires.asked.count(5) == 2 and Fires.asked.count(6) == 2 and Fires.asked.count(7) == 1


def test_a_connection_broken_mid_batch_without_retries_fails_that_request_alone(fires):
    """Without retries: target 5's kept-alive connection broke without a reply, and so did the new one it was sent
    on again at once (a read that broke on a kept-alive connection does not spend a retry on that)."""
    Fires.cut, Fires.cuts = {5}, 2
    client = NacClient(fires, api_key=KEY, max_retries=0, pool_size=4)
    try:
        results = batch(client, range(1, 13), 4)
    finally:
        client.close()
    errors = [target for target, reply in results if not isinstance(reply, dict)]
    assert errors == [5] and "broke off" in results[4][1] and Fires.asked.count(5) == 2


def test_a_paced_batch_waits_at_the_gate_on_timers_not_threads(fires):
    """Once paced (a rate limit's pace: pacing.Throttle), the batch's requests start ``gap`` apart, each wait at
    the gate a timer of the loop: no thread is started, and the other requests' replies are read meanwhile."""
    client = NacClient(fires, api_key=KEY, pool_size=4)
    try:
        batch(client, range(1, 5), 4)  # the connections made
        throttle = client.throttle
        throttle.gate.calm, throttle.pace.refused_rate = False, 25.0  # (refused at 25: not probed faster for 10 s)
        throttle.pace.pace_at(25.0, time.monotonic())  # 25 a second: 0.04 s apart
        before, seen, starts = set(threading.enumerate()), [], []

        def one(target):
            starts.append(time.monotonic())
            reply = yield from client.fire_intent_steps(target)
            seen.append(set(t for t in threading.enumerate() if t.name.startswith("nac-")) - before)
            return reply

        results = list(ordered_steps(one, range(1, 21), 4))
    finally:
        client.close()
    assert [reply["username"] for reply in results] == ["u%d" % target for target in range(1, 21)]
    assert not any(seen)
    sent = sorted(at for peer, at in Fires.sent[4:])
    assert sent[-1] - sent[0] >= 19 * 0.04 * 0.9  # 20 starts, 0.04 s apart


def test_a_consumer_that_stops_early_closes_the_exchanges_in_flight_and_no_late_reply_answers_another(fires):
    Fires.delay = dict((target, 2.0) for target in range(3, 9))
    client = NacClient(fires, api_key=KEY, pool_size=4, max_retries=0)
    try:
        started = time.monotonic()
        results = ordered_steps(client.fire_intent_steps, range(1, 9), 4)
        assert [next(results)["username"], next(results)["username"]] == ["u1", "u2"]
        results.close()  # targets 3 and more are in flight: closed, their connections with them
        assert time.monotonic() - started < 1.5  # the replies in flight come after 2 s: not waited for
        assert len(client.wire._idle) <= 2  # only the connections whose replies were read whole
        time.sleep(0.6)  # the late replies come (to closed connections)
        assert client.fire_intent(9)["username"] == "u9"
    finally:
        client.close()


class Restarting(FakeTransport):
    """The status queries answered until target ``restart_after``'s, then a restart: every request refused, never
    sent (a connection refused), until ``probes`` probes (GET /api/intent) were refused; then the service is back."""

    def __init__(self, restart_after, probes):
        super(Restarting, self).__init__()
        self.restart_after, self.probes, self.down, self.lock = restart_after, probes, False, threading.Lock()
        self.fired, self.probed, self.refused = [], [], 0

    def at_connect(self, request):  # (a restarting service refuses the connection: nothing is sent)
        with self.lock:
            if request.path_url == "/api/intent":
                self.probed.append(threading.current_thread())
                if len(self.probed) <= self.probes:
                    return self.refuse(request, refused())
                self.down = False
            elif self.down:
                self.refused += 1
                return self.refuse(request, refused())
        return None

    def answer(self, request):
        with self.lock:
            if request.path_url == "/api/intent":
                return (200, [])
            target = json.loads(request.body)["targetId"]
            self.fired.append(target)
            return (200, {"status": "AUTHENTICATED", "username": "u%d" % target})

    def written(self, request):  # (the restart: once target restart_after's reply is out, every connection closed)
        with self.lock:
            if request.body and json.loads(request.body)["targetId"] == self.restart_after:
                self.down = True
                self.drop()


def test_a_restart_mid_batch_is_waited_out_on_helper_threads_by_one_prober_and_every_query_answered():
    """The outage wait (outage.py) of the requests on the loop: one of them probes, the others wait, each on a
    helper thread (loop.Blocking); once the service answers, every query is sent again and answered, no retry
    spent (max_retries 0)."""
    transport = Restarting(restart_after=5, probes=2)
    client = mounted(NacClient("https://nac.example.com", api_key=KEY, max_retries=0, pool_size=4), transport)
    try:
        results = batch(client, range(1, 13), 4)
    finally:
        client.close()
    assert [reply["username"] for dummy, reply in results] == ["u%d" % target for target in range(1, 13)]
    assert sorted(transport.fired) == list(range(1, 13)) and transport.refused >= 1
    assert len(transport.probed) == 3 and threading.current_thread() not in transport.probed  # one prober's probes


class LateReply(Restarting):
    """The restart as the old fakes played it: the service goes down once target ``restart_after``'s request is read,
    refuses every later request (as it is written, or at connect), and writes that target's reply late, once
    ``refusals`` requests were refused."""

    def __init__(self, restart_after, probes, refusals):
        super(LateReply, self).__init__(restart_after, probes)
        self.refusals, self.held = refusals, None  # (the connection whose reply is held back)

    def answer(self, request):
        with self.lock:
            if self.down and request.path_url != "/api/intent":
                self.refused += 1
                self._release()
                return refused()
        reply = super(LateReply, self).answer(request)
        with self.lock:
            if request.path_url != "/api/intent" and self.fired[-1] == self.restart_after:
                self.down = True
                self.held = next(each for each in self.connections if each.far.asked is request)
                self.held.far.pump = lambda client: None  # (nothing written until the refusals came)
        return reply

    def at_connect(self, request):
        item = super(LateReply, self).at_connect(request)
        with self.lock:
            self._release()
        return item

    def _release(self):
        if self.held is not None and self.refused >= self.refusals:
            held, self.held = self.held, None
            del held.far.pump
            held.far.pump(held.sock)  # (the late reply: its head now, the rest as the client reads)

    def written(self, request):  # (no restart here: it began when the request was read)
        return None


def test_a_late_reply_to_a_request_sent_before_a_restart_ends_no_outage_and_fails_no_query(monkeypatch):
    """A reply read late, to a request sent before the restart, says nothing of the requests refused after it was sent:
    they wait out the restart (max_retries 0 spends nothing), and one prober probes it."""
    monkeypatch.setattr(outage, "PROBE_BASE", 0.01)  # (the pauses between probes: short here)
    transport = LateReply(restart_after=5, probes=2, refusals=1)
    client = NacClient("https://nac.example.com", api_key=KEY, max_retries=0, pool_size=4, timeout=5)
    mounted(client, transport)
    try:
        results = batch(client, range(1, 13), 4)
    finally:
        client.close()
    failed = [target for target, reply in results if not isinstance(reply, dict)]
    assert (failed, len(transport.probed)) == ([], 3)  # one prober's probes: two refused, one answered
    assert [reply["username"] for dummy, reply in results] == ["u%d" % target for target in range(1, 13)]
    assert transport.refused >= 1 and threading.current_thread() not in transport.probed
