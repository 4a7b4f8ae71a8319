# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the emulator's rate limit (README, "Rate limit"): one token bucket for every client, 429 with
Retry-After, the refusals counted; and a listen backlog that takes 256 clients connecting at once."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import threading

import pytest
import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator, RateLimit, complete_config
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import ADMIN_KEY, Api, start_cli


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_bucket_admits_the_burst_then_the_rate_and_counts_refusals():
    clock = Clock()
    bucket = RateLimit({"rate": 8, "burst": 3, "retry_after": 7}, clock=clock)
    assert [bucket.admit() is None for _attempt in range(4)] == [True, True, True, False]
    clock.now += 0.125  # one token flowed in
    assert bucket.admit() is None
    refusal = bucket.admit()
    status, _type, body, headers = refusal
    assert status == 429 and ("Retry-After", "7") in list(headers) and b"retry in 7 s" in body
    clock.now += 10  # never more than the burst
    assert [bucket.admit() is None for _attempt in range(4)] == [True, True, True, False]
    snapshot = bucket.snapshot()
    assert (snapshot["refused"], snapshot["admitted"]) == (3, 7)
    bucket.reset()
    assert (bucket.snapshot()["refused"], bucket.snapshot()["admitted"]) == (0, 0)


def test_bucket_is_off_at_rate_zero():
    bucket = RateLimit(None)
    assert all(bucket.admit() is None for _attempt in range(1000)) and bucket.snapshot()["refused"] == 0


@pytest.mark.parametrize(
    "settings, bad",
    [({"rate": -1}, "rate"), ({"burst": 0}, "burst"), ({"retry_after": 1.5}, "retry_after"), ({"rat": 1}, "rat")],
)
def test_bad_settings_are_refused_by_name(settings, bad):
    with pytest.raises(ValueError, match=bad):
        RateLimit(settings)
    assert bad in RateLimit().configure(settings)


def test_refused_requests_get_429_and_the_admin_route_counts_them(emu, api):
    reply = requests.post(
        emu.url + "/_emulator/rate_limit", json={"rate": 0.001, "burst": 2, "retry_after": 3}, timeout=10
    )
    assert reply.status_code == 200, reply.text
    try:
        statuses = [api.get("/api/device").status_code for _attempt in range(5)]
        assert statuses == [200, 200, 429, 429, 429]
        refused = api.get("/api/intent")
        assert refused.headers["Retry-After"] == "3" and refused.json()["error"] == "Too many requests"
        assert requests.get(emu.url + "/_emulator/health", timeout=10).status_code == 200  # admin: never limited
        counts = requests.get(emu.url + "/_emulator/rate_limit", timeout=10).json()
        settings = {"rate": 0.001, "burst": 2, "retry_after": 3, "shape": "token", "status": 429, "close_after": 0.0}
        settings["quota_headers"] = False
        assert counts == dict(settings, refused=4, admitted=2)
        assert sum(requests.get(emu.url + "/_emulator/requests", timeout=10).json().values()) == 6  # all counted
        bad = requests.post(emu.url + "/_emulator/rate_limit", json={"burst": "many"}, timeout=10)
        assert bad.status_code == 422 or bad.status_code == 400, bad.text
        assert "burst" in bad.text
    finally:
        emu.reset()
    assert emu.rate_limit()["rate"] == 0 and api.get("/api/device").status_code == 200  # reset: the config's


def test_rate_limit_from_the_config_key():
    config = complete_config({"rate_limit": {"rate": 0.001, "burst": 1, "retry_after": 2}})
    with Emulator(config).start() as running:
        client = Api(running.url)
        assert [client.get("/api/device").status_code for _attempt in range(2)] == [200, 429]
        assert running.rate_limit()["refused"] == 1
    with pytest.raises(ValueError, match="rate_limit"):
        Emulator(complete_config({"rate_limit": [1]}))


def test_rate_limit_from_the_command_line(tmp_path):
    process, port = start_cli(tmp_path, "--quiet", "--rate", "0.001", "--burst", "2", "--retry-after", "5")
    try:
        client = Api("http://127.0.0.1:%d" % port)
        statuses = [client.get("/api/device").status_code for _attempt in range(3)]
        assert statuses == [200, 200, 429]
        limit = requests.get("http://127.0.0.1:%d/_emulator/rate_limit" % port, timeout=10).json()
        assert (limit["retry_after"], limit["refused"]) == (5, 1)
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_listen_backlog_takes_256_clients_connecting_at_once():
    """256 connections opened before the server accepts any: none refused or reset (request_queue_size)."""
    with Emulator().start() as running:
        server = running._server  # pylint: disable=protected-access
        assert server.request_queue_size >= 256
        gate, sockets, errors = threading.Barrier(256), [], []

        def connect():
            gate.wait()
            try:
                sock = socket.create_connection((running.host, running.port), timeout=10)
                sock.sendall(
                    b"GET /api/intent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ADMIN_KEY.encode() + b"\r\n\r\n"
                )
                reply = sock.recv(64)
                sockets.append(sock)
                if not reply.startswith(b"HTTP/1.1 200"):
                    errors.append(reply)
            except OSError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=connect) for _attempt in range(256)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        for sock in sockets:
            sock.close()
        assert errors == [] and len(sockets) == 256


# -- the shapes of real limiters (issue 33) ----------------------------------------------------------------------


def admitted(limit, clock, times):
    """Whether each request, sent at each of ``times`` (seconds from now), is admitted."""
    start, verdicts = clock.now, []
    for at in times:
        clock.now = start + at
        verdicts.append(limit.admit() is None)
    return verdicts


def test_nginx_limit_req_without_burst_admits_one_request_every_1_over_rate_seconds_and_no_retry_after():
    clock = Clock()
    limit = RateLimit({"shape": "leaky", "rate": 50, "burst": 0, "retry_after": None}, clock=clock)
    assert admitted(limit, clock, [0, 0.001, 0.019, 0.020, 0.030, 0.041]) == [True, False, False, True, False, True]
    status, _type, _body, headers = limit.admit()
    assert status == 429 and list(headers) == []


def test_nginx_limit_req_with_burst_nodelay_admits_the_burst_at_once_then_the_rate_and_answers_503():
    clock = Clock()
    limit = RateLimit({"shape": "leaky", "rate": 50, "burst": 20, "status": 503, "retry_after": None}, clock=clock)
    assert admitted(limit, clock, [0] * 22) == [True] * 21 + [False]  # the first, and a burst of 20 more
    assert admitted(limit, clock, [0.02, 0.021]) == [True, False]  # one drained in 20 ms
    assert limit.admit()[0] == 503


def test_a_penalty_box_refuses_everything_for_its_retry_after_once_over_the_rate():
    clock = Clock()
    limit = RateLimit({"shape": "penalty", "rate": 10, "retry_after": 30}, clock=clock)
    assert admitted(limit, clock, [0.01 * n for n in range(11)]) == [True] * 10 + [False]
    status, _type, _body, headers = limit.admit()
    assert status == 429 and ("Retry-After", "30") in list(headers)
    assert admitted(limit, clock, [5.0, 29.0]) == [False, False]
    assert admitted(limit, clock, [1.2]) == [True]  # 30 s after the penalty began


def test_a_fixed_window_admits_rate_a_clock_second_and_says_what_is_left_of_it():
    clock = Clock()
    clock.now = 100.0
    limit = RateLimit({"shape": "window", "rate": 3}, clock=clock)
    assert admitted(limit, clock, [0, 0.1, 0.2, 0.3]) == [True, True, True, False]
    assert ("Retry-After", "1") in list(limit.admit()[3])
    assert admitted(limit, clock, [0.75]) == [True]  # the next clock second


def test_a_fixed_window_with_quota_headers_states_its_quota_on_every_reply_as_kong_does():
    clock = Clock()
    clock.now = 100.25
    limit = RateLimit({"shape": "window", "rate": 2, "quota_headers": True}, clock=clock)
    refusal, stated = limit.admit_stating()
    assert refusal is None and dict(stated) == {
        "RateLimit-Limit": "2",
        "RateLimit-Remaining": "1",
        "RateLimit-Reset": "1",
        "X-RateLimit-Limit-Second": "2",
        "X-RateLimit-Remaining-Second": "1",
    }
    assert dict(limit.admit_stating()[1])["RateLimit-Remaining"] == "0"
    refusal, stated = limit.admit_stating()
    headers = dict(refusal[3])
    assert refusal[0] == 429 and stated == () and (headers["RateLimit-Remaining"], headers["Retry-After"]) == ("0", "1")
    assert limit.admit_stating()[0][0] == 429  # the count of refusals and admissions is unchanged by the headers
    assert (limit.snapshot()["admitted"], limit.snapshot()["refused"]) == (2, 2)
    assert RateLimit({"shape": "window", "rate": 2}).admit_stating() == (None, ())  # header-less by default


def test_quota_headers_are_for_the_fixed_window_only_and_a_boolean():
    assert "quota_headers" in RateLimit().configure({"rate": 5, "quota_headers": True})  # token bucket
    assert "quota_headers" in RateLimit().configure({"shape": "window", "rate": 5, "quota_headers": 1})
    assert "quota_headers" in RateLimit().configure({"shape": "window", "rate": 5, "quota_headers": "ietf"})


def test_quota_headers_draft_states_the_quota_as_the_ietf_draft_does():
    clock = Clock()
    clock.now = 100.25
    limit = RateLimit({"shape": "window", "rate": 2, "quota_headers": "draft"}, clock=clock)
    assert dict(limit.admit_stating()[1]) == {
        "RateLimit-Limit": "2",
        "RateLimit-Remaining": "1",
        "RateLimit-Reset": "1",
        "RateLimit-Policy": "2;w=1",
    }


def test_the_server_adds_the_quota_headers_to_the_reply_it_admitted():
    with Emulator(complete_config(None)).start() as emulator:
        emulator.rate_limit(rate=5, shape="window", quota_headers=True)
        reply = requests.get(emulator.url + "/api/intent", headers={"Authorization": "Bearer " + ADMIN_KEY}, timeout=10)
        missing = requests.get(
            emulator.url + "/api/nothing", headers={"Authorization": "Bearer " + ADMIN_KEY}, timeout=10
        )
    assert reply.status_code == 200 and reply.headers["RateLimit-Limit"] == "5"
    assert int(reply.headers["X-RateLimit-Remaining-Second"]) in (3, 4)
    assert missing.status_code == 404 and "RateLimit-Remaining" in missing.headers


def test_a_drf_throttle_keeps_a_sliding_log_and_says_when_one_is_free():
    clock = Clock()
    limit = RateLimit({"shape": "drf", "rate": 2}, clock=clock)
    assert admitted(limit, clock, [0, 0.5, 0.6]) == [True, True, False]
    assert ("Retry-After", "1") in list(limit.admit()[3])
    assert admitted(limit, clock, [0.5, 0.6]) == [True, False]  # the oldest left the log after a second


def test_a_server_closing_kept_alive_connections_just_after_each_reply():
    """close_after: the connection is closed that long after a reply, without Connection: close; a request sent
    on it later fails (what a client reusing it sees), a new connection is answered."""
    with Emulator(complete_config(None)).start() as emulator:
        emulator.rate_limit(rate=0, close_after=0.05)
        session = requests.Session()
        headers = {"Authorization": "Bearer " + ADMIN_KEY}
        first = session.get(emulator.url + "/api/intent", headers=headers, timeout=10)
        assert first.status_code == 200 and first.headers.get("Connection") != "close"
        with socket.create_connection(("127.0.0.1", emulator.port), timeout=10) as sock:
            sock.sendall(
                b"GET /api/intent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % ADMIN_KEY.encode()
            )
            reply = b""
            while b"\r\n\r\n" not in reply:
                reply += sock.recv(4096)
            threading.Event().wait(0.3)  # the server closed it meanwhile
            sock.sendall(b"GET /api/intent HTTP/1.1\r\nHost: x\r\n\r\n")
            late = b""
            try:
                while True:
                    piece = sock.recv(65536)
                    if not piece:
                        break
                    late += piece
            except OSError:
                pass
        assert reply.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 " not in late  # the second got no reply


@pytest.mark.parametrize(
    "in_front, expected", [(False, ["reset", "reset", 429, 429]), (True, ["reset", "reset", 200, 200])]
)
def test_faults_behind_the_limiter_spend_its_rate_faults_in_front_of_it_never_reach_it(in_front, expected):
    """A bucket of 2 that refills once in 1,000 s, and the next 2 requests reset. Behind it (the default), the
    resets were admitted and spent the bucket: the next two are refused. In front of it (a load balancer), the
    resets never reached it: the next two are admitted."""
    with Emulator(complete_config(None)).start() as emulator:
        emulator.rate_limit(rate=0.001, burst=2, retry_after=1)
        emulator.faults(rate=1, modes=["reset"], limit=2, in_front=in_front)
        headers = {"Authorization": "Bearer " + ADMIN_KEY}
        seen = []
        for _attempt in range(4):
            try:
                seen.append(requests.get(emulator.url + "/api/intent", headers=headers, timeout=10).status_code)
            except requests.exceptions.ConnectionError:
                seen.append("reset")
        counts = emulator.rate_limit()
    assert seen == expected
    assert (counts["admitted"], counts["refused"]) == ((2, 2) if not in_front else (2, 0))


@pytest.mark.parametrize(
    "settings, bad",
    [({"shape": "bucket"}, "shape"), ({"status": 500}, "status"), ({"close_after": -1}, "close_after")],
)
def test_bad_shape_settings_are_refused_by_name(settings, bad):
    with pytest.raises(ValueError, match=bad):
        RateLimit(settings)
