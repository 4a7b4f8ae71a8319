# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pacing against the emulator's limiters and under a quota the service states (pacing.py, issues 26, 33 and
49): RateLimit headers read strictly, refusals that spend no retry, the summary that counts them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    NacError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http import pacing
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import ordered_steps
from ansible_collections.netaccess.nac.plugins.module_utils.http.pacing import Throttle
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    QUOTA_MAX,
    RATE_LIMIT_PATIENCE,
    REFUSAL_FLOOR,
    REFUSAL_PAUSE,
    REFUSAL_STATUS,
    RETRY_AFTER_CAP,
    Quota,
    quota,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.transport import Transport
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_results import summarize
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator, load_config
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import ADMIN_KEY, INTEGRATION_CONFIG
from ansible_collections.netaccess.nac.tests.unit.helpers import guide_section
from ansible_collections.netaccess.nac.tests.unit.pacing_clock import Clock

# -- against the emulator's token bucket ------------------------------------------------------------------------


# -- a quota the service states (RateLimit-* headers) ------------------------------------------------------------

KONG = {
    "RateLimit-Limit": "50",
    "RateLimit-Remaining": "7",
    "RateLimit-Reset": "1",
    "X-RateLimit-Limit-Second": "50",
    "X-RateLimit-Remaining-Second": "7",
}


@pytest.mark.parametrize(
    "headers, expected",
    [
        (KONG, Quota(50, 7, 1, 1)),
        (dict(KONG, **{"X-RateLimit-Limit-Second": "60"}), Quota(50, 7, 1, None)),  # another limit: no window
        ({"RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "42"}, Quota(100, 0, 42, None)),
        ({"RateLimit-Limit": "100;w=60", "RateLimit-Remaining": "3", "RateLimit-Reset": "5"}, Quota(100, 3, 5, 60)),
        (
            {"RateLimit-Limit": "10", "RateLimit-Remaining": "3", "RateLimit-Reset": "1", "RateLimit-Policy": "10;w=2"},
            Quota(10, 3, 1, 2),
        ),
        (
            {"RateLimit-Limit": "10, 10;w=1, 1000;w=3600", "RateLimit-Remaining": "9", "RateLimit-Reset": "1"},
            Quota(10, 9, 1, None),
        ),
        ({"RateLimit": "limit=20, remaining=4, reset=3"}, Quota(20, 4, 3, None)),
        ({"X-RateLimit-Limit-Minute": "600", "X-RateLimit-Remaining-Minute": "599"}, Quota(600, 599, None, 60)),
        ({}, None),
        ({"Retry-After": "1"}, None),
        ({"RateLimit-Limit": "50", "RateLimit-Remaining": "7"}, None),  # no reset, no window: nothing to pace by
        ({"RateLimit-Limit": "50", "RateLimit-Remaining": "-1", "RateLimit-Reset": "1"}, None),
        ({"RateLimit-Limit": "50", "RateLimit-Remaining": "51", "RateLimit-Reset": "1"}, None),  # more than the limit
        ({"RateLimit-Limit": "0", "RateLimit-Remaining": "0", "RateLimit-Reset": "1"}, None),
        ({"RateLimit-Limit": "5e3", "RateLimit-Remaining": "1", "RateLimit-Reset": "1"}, None),
        ({"RateLimit-Limit": "50", "RateLimit-Remaining": "1", "RateLimit-Reset": "1.5"}, None),
        ({"RateLimit-Limit": "50", "RateLimit-Remaining": "1", "RateLimit-Reset": "99999999"}, None),  # past patience
        ({"RateLimit-Limit": "9999999999", "RateLimit-Remaining": "1", "RateLimit-Reset": "1"}, None),
        ({"RateLimit-Limit": "50", "RateLimit-Remaining": "1\r\nX: y", "RateLimit-Reset": "1"}, None),
        ({"RateLimit-Limit": "50;w=0", "RateLimit-Remaining": "1", "RateLimit-Reset": "1"}, None),
        ({"RateLimit": "limit=20, remaining=4"}, None),
        ({"RateLimit": "limit=20, remaining=4, reset=-3"}, None),
        ({"RateLimit": "garbage"}, None),
        ({"X-RateLimit-Limit-Second": "fifty", "X-RateLimit-Remaining-Second": "1"}, None),
        ({"RateLimit-Limit": b"50", "RateLimit-Remaining": None, "RateLimit-Reset": 1}, None),
        ({"RateLimit-Limit": 50, "RateLimit-Remaining": 1, "RateLimit-Reset": 1}, None),  # not text: ignored
    ],
)
def test_a_quota_is_read_strictly_and_anything_unusable_is_ignored(headers, expected):
    assert quota(headers) == expected


def stating(throttle, clock, stated, took=0.02):
    """One request answered in ``took``, its reply stating ``stated``; returns the clock it was sent at."""
    throttle.enter()
    start = clock.now
    clock.now += took
    throttle.leave(took=took, stated=stated)
    return start


def test_a_quota_of_a_short_window_paces_at_once_below_its_limit_and_is_never_probed_past():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    stating(throttle, clock, Quota(50, 49, 1, 1))
    assert throttle.rate == pytest.approx(50 * Throttle.QUOTA_BELOW) and throttle.refusals == 0
    starts = [stating(throttle, clock, Quota(50, 48 - n % 40, 1, 1), took=0.0) for n in range(200)]
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:])]
    assert min(gaps) == pytest.approx(1.0 / (50 * Throttle.QUOTA_BELOW))  # spread, never a burst
    assert throttle.rate == pytest.approx(50 * Throttle.QUOTA_BELOW)  # 4 s at the pace: no probe past it


def test_a_long_window_is_not_paced_but_waited_out_once_spent_never_past_the_cap():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    stating(throttle, clock, Quota(1000, 999, 3600, 3600))
    assert throttle.rate is None and throttle.resume_at == 0.0
    stating(throttle, clock, Quota(1000, 0, 3600, 3600))
    assert throttle.rate is None and throttle.resume_at == pytest.approx(clock.now + RETRY_AFTER_CAP)
    throttle = Throttle(clock, clock.sleep)
    stating(throttle, clock, Quota(10, 0, 7, None))  # no window said: waited out until its reset
    assert throttle.resume_at == pytest.approx(clock.now + 7)


def test_a_spent_window_holds_new_requests_until_the_next_window_learned_from_its_first_reply():
    """A second's window says reset 1 all through it: once spent, the next request waits only until the next
    window starts, reckoned from the reply that said its request was the first of its window."""
    clock = Clock()
    clock.now = 10.0
    throttle = Throttle(clock, clock.sleep)
    stating(throttle, clock, Quota(50, 49, 1, 1))  # the first of its window: received at 10.02
    clock.now = 10.6
    stating(throttle, clock, Quota(50, 0, 1, 1))  # spent at 10.62
    assert throttle.resume_at == pytest.approx(11.02)
    throttle.enter()
    assert clock.now >= 11.02
    assert throttle.refusals == 0


def test_a_refusal_under_a_stated_quota_never_paces_past_it():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    stating(throttle, clock, Quota(20, 19, 1, 1))
    for _n in range(30):
        stating(throttle, clock, Quota(20, 5, 1, 1), took=0.0)
    throttle.enter()
    throttle.leave(refused_for=1.0, started=clock.now)
    throttle.enter()
    assert throttle.rate <= 20 * Throttle.QUOTA_BELOW + 1e-9


@pytest.mark.parametrize("stated", [True, "draft", False])
def test_kongs_headers_let_a_status_batch_through_a_fixed_window_without_a_refusal(stated):
    """60 devices behind the emulator's fixed window of 40 a second, at 16 in flight: stating its quota as Kong
    does, or as the IETF draft does (RateLimit-Policy), the batch is paced from the first reply and never refused;
    without the headers no quota is read, and what is refused (on a busy machine perhaps nothing) is waited out."""
    config = load_config(INTEGRATION_CONFIG)
    config["devices"] = [
        dict(hostname="win-%02d" % n, group="Cameras", profile="Camera", ips=["10.20.1.%d" % n]) for n in range(1, 61)
    ]
    with Emulator(config).start() as emulator:
        emulator.rate_limit(rate=40, shape="window", retry_after=1, quota_headers=stated)
        client = NacClient(emulator.url, api_key=ADMIN_KEY, max_retries=0)
        try:
            report = dot1x_status(client, all_devices=True, concurrency=16)
        finally:
            client.close()
        refused = emulator.rate_limit()["refused"]
    assert len(report.results) == 60 and not [entry for entry in report.results if entry.get("error")]
    if stated:
        assert (refused, client.throttle.quota_rate) == (0, 38.0)
    else:
        assert client.throttle.quota_rate is None and client.throttle.refusals == refused


@pytest.fixture
def limited():
    with Emulator(load_config(INTEGRATION_CONFIG)).start() as running:
        yield running


def test_waiting_out_a_refusal_spends_no_retry(limited):
    """max_retries 0: the refused request is sent again after the pause, and answered (before: it failed)."""
    limited.rate_limit(rate=1.0, burst=1, retry_after=1)
    client = NacClient(limited.url, api_key=ADMIN_KEY, max_retries=0)
    try:
        assert client.list_intents() and client.list_intents()
    finally:
        client.close()
    assert limited.rate_limit()["refused"] == 1 and client.refusals == 1


def test_every_worker_observes_the_pause_refusals_in_a_run_name(limited, monkeypatch):
    """4 workers firing against a bucket of 4: once 429s (Retry-After 1) come in a run (pacing.RUN of them), no
    worker sends anything for 1 s (before issue 26: each refused worker slept on its own while the others kept
    sending and being refused); the refusals before the run waited alone."""
    sends, lock = [], threading.Lock()
    real_send = Transport._send_steps

    def send(self, *args, **kwargs):
        started = time.monotonic()
        reply = yield from real_send(self, *args, **kwargs)
        with lock:
            sends.append((started, time.monotonic(), reply.status_code))
        return reply

    monkeypatch.setattr(Transport, "_send_steps", send)
    limited.rate_limit(rate=2.0, burst=4, retry_after=1)
    client = NacClient(limited.url, api_key=ADMIN_KEY, pool_size=4)
    try:
        answers = list(ordered_steps(lambda _n: client.fire_intent_steps(1), range(12), 4))
    finally:
        client.close()
    assert len(answers) == 12
    refusals = sorted(answered for _started, answered, status in sends if status == 429)
    assert len(refusals) >= pacing.RUN and client.throttle.strays == pacing.RUN - 1
    for refused_at in refusals[pacing.RUN - 1 :]:
        too_soon = [started for started, _answered, _status in sends if refused_at < started < refused_at + 0.9]
        assert not too_soon, "sent %.2f s after a refusal that asked for 1 s" % (too_soon[0] - refused_at)


def test_the_report_says_how_many_refusals_were_waited_out_and_the_summary_counts_statuses_only(limited):
    limited.rate_limit(rate=1.0, burst=2, retry_after=1)
    client = NacClient(limited.url, api_key=ADMIN_KEY, max_retries=0)
    try:
        report = dot1x_status(client, device_id=[1], concurrency=1)
    finally:
        client.close()
    refused = limited.rate_limit()["refused"]
    assert refused >= 1 and report.refusals == refused and report.failure is None
    assert report.summary == {"AUTHENTICATED": 1}  # a count per status: its values add up to the results


def test_stray_refusals_of_a_flaky_proxy_are_waited_out_each_alone_and_the_client_is_never_paced():
    """Issue 49: a proxy that answers 5 % of the requests 429 (Retry-After 0): 300 reads by 8 workers all answered,
    each refusal waited out by its own request (REFUSAL_FLOOR, a sleep of its own), none by the whole client."""
    faults = dict(rate=0.05, modes=["429"], retry_after=0, seed=49)
    slept = []
    with Emulator(load_config(INTEGRATION_CONFIG), faults=faults).start() as emulator:
        client = NacClient(emulator.url, api_key=ADMIN_KEY, max_retries=0, sleep=slept.append)
        try:
            answers = list(ordered_steps(lambda _n: client.request_steps("GET", "/api/intent"), range(300), 8))
        finally:
            client.close()
        injected = emulator.faults()["injected"]["429"]
    assert len(answers) == 300 and injected >= pacing.RUN
    throttle = client.throttle
    assert (throttle.refusals, throttle.strays, throttle.rate, throttle.resume_at) == (injected, injected, None, 0.0)
    assert slept == [REFUSAL_FLOOR] * injected


def test_a_refusal_past_the_patience_is_the_policys_again(limited, monkeypatch):
    monkeypatch.setattr("ansible_collections.netaccess.nac.plugins.module_utils.http.pacing.RATE_LIMIT_PATIENCE", 0.0)
    limited.rate_limit(rate=0.001, burst=1, retry_after=1)
    client = NacClient(limited.url, api_key=ADMIN_KEY, max_retries=0)
    try:
        client.list_intents()
        with pytest.raises(NacError) as failure:
            client.list_intents()
    finally:
        client.close()
    assert "429" in str(failure.value.message) and client.refusals == 0


def test_a_status_named_like_the_refusals_return_value_is_just_a_status():
    results = [dict(status="refusals_waited_out"), dict(status="AUTHENTICATED")]
    assert summarize(results) == {"AUTHENTICATED": 1, "refusals_waited_out": 1}


def test_the_retry_policy_text_states_the_rate_limit_bounds_of_the_code():
    """The API guide's "A rate limit" is the one home of the policy: its figures are the code's."""
    section = guide_section("A rate limit ~~~", "A service that cannot be reached ~~~")
    assert "may pause it for %.0f s in all" % RATE_LIMIT_PATIENCE in section
    assert "%.0f s when it has none, at most %.0f s" % (REFUSAL_PAUSE, RETRY_AFTER_CAP) in section
    assert (
        "once the task is paced, or a request sent in the second before the refused one was admitted, %.1f s"
        " when it has none" % REFUSAL_FLOOR
    ) in section
    assert "Every 429 and every 503 so read, of a read or a write" in section and REFUSAL_STATUS == {429, 503}
    stray = "among the last %d replies of which fewer than a quarter, or fewer than %d," % (
        pacing.STRAY_SAMPLE,
        pacing.RUN,
    )
    assert stray in section and pacing.STRAY_SHARE == 0.25
    assert "in flight meanwhile were mostly admitted" in section and pacing.RUN_SHARE == 0.5
    assert "in the second before the refused one" in section and Throttle.WINDOW == 1.0
    assert "the requests start evenly, %d %% below that rate" % round((1 - Throttle.BELOW) * 100) in section
    assert "whose connection broke before any byte of its reply counts as admitted" in section
    assert "which the %d %% below absorbs up to a tenth" % round((1 - Throttle.BELOW) * 100) in section
    assert "doubled after each pause's time (half a second after pauses of a second or less)" in section
    assert Throttle.PROBE_FAST == 2.0 and Throttle.WINDOW / 2.0 == 0.5
    assert "after two pauses' time (at least 2 s)" in section and Throttle.HALVING_PAUSES == 2
    assert "no faster than the rate admitted from the end of the last pause to" in section
    assert "the refused request, when that was over a second" in section and Throttle.WINDOW == 1.0
    assert "within 3 % of it, 3 % faster after thirty pauses' time (at least 10 s)" in section
    assert round((Throttle.PROBE_STEP - 1) * 100) == 3 and Throttle.PROBE_PAUSES == 30
    assert "returns how many refusals its batch waited out as ``refusals_waited_out``" in section
    assert (
        "A window of %.0f s or less paces the task from that reply on, %d %% below its limit a window"
        % (Throttle.QUOTA_PACED, round((1 - Throttle.QUOTA_BELOW) * 100))
    ) in section
    assert "at most %.0f s away" % RETRY_AFTER_CAP in section
    assert "above a million, or a reset past the %.0f s of rate-limit patience" % RATE_LIMIT_PATIENCE in section
    assert QUOTA_MAX == 1000000
