# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request engine (engine.py, issue 26): work driven by completions with the results in order, one shared pause
on a rate-limit refusal, concurrency that adapts (AIMD), refusals that spend no retry, and the summary that counts
them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils import engine
from ansible_collections.netaccess.nac.plugins.module_utils.api import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.dot1x import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.dot1x_results import summarize
from ansible_collections.netaccess.nac.plugins.module_utils.engine import Throttle, ordered_map
from ansible_collections.netaccess.nac.plugins.module_utils.errors import NacError
from ansible_collections.netaccess.nac.plugins.module_utils.retries import (
    RATE_LIMIT_PATIENCE,
    REFUSAL_PAUSE,
    RETRY_AFTER_CAP,
)
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator, load_config
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import ADMIN_KEY, INTEGRATION_CONFIG
from ansible_collections.netaccess.nac.tests.unit.helpers import guide_section

# -- work driven by completions -------------------------------------------------------------------------------


def test_ordered_map_takes_only_a_bounded_window_of_items_ahead():
    taken = []

    def items():
        for number in range(10000):
            taken.append(number)
            yield number

    results = ordered_map(lambda n: n * 2, items(), 4)
    assert next(results) == 0
    assert len(taken) <= engine.WINDOW_PER_WORKER * 4 + 1
    assert list(results) == [n * 2 for n in range(1, 10000)]


def test_ordered_map_raises_the_first_error_and_starts_nothing_more():
    calls = []

    def work(number):
        calls.append(number)
        if number == 0:
            raise ValueError("boom")
        return number

    with pytest.raises(ValueError, match="boom"):
        list(ordered_map(work, range(1000), 1))
    assert calls == [0]


def test_a_straggler_holds_back_neither_the_other_workers_nor_the_order():
    """Item 0 finishes only once 40 later items have run, on 2 workers: the other worker keeps starting new items
    as it finishes them (the old window started one only when the oldest finished, and stalled here)."""
    later = threading.Semaphore(0)
    started = []

    def work(number):
        started.append(number)
        if number == 0:
            for _attempt in range(40):
                assert later.acquire(timeout=10), "the other worker stalled behind the straggler"
        else:
            later.release()
        return number

    assert list(ordered_map(work, range(100), 2)) == list(range(100))
    assert len(started) == 100


def test_ordered_map_starts_no_more_threads_than_items():
    before = threading.active_count()
    seen = []

    def work(number):
        seen.append(threading.active_count())
        return number

    assert list(ordered_map(work, [1], 64)) == [1]
    assert max(seen) - before <= 2


# -- one shared pause, AIMD ---------------------------------------------------------------------------------


class Clock:
    """A fake clock that a fake sleep advances; every sleep is recorded with its thread's name."""

    def __init__(self):
        self.now, self.sleeps = 0.0, []
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        with self.lock:
            self.sleeps.append((threading.current_thread().name, seconds))
            self.now += seconds


def test_a_refusal_pauses_every_sender_until_the_time_it_names():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _attempt in range(3):
        throttle.enter()
    throttle.leave(refused_for=2.0)  # one worker refused: Retry-After 2
    throttle.leave(took=0.02)  # the others answered, then each wants to send again
    throttle.leave(took=0.02)
    entered = []

    def sender(name):
        throttle.enter()
        entered.append((name, clock()))
        throttle.leave(took=0.02)

    threads = [threading.Thread(target=sender, args=("w%d" % n,), name="w%d" % n) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(entered) == 3 and all(at >= 2.0 for _name, at in entered), entered
    assert throttle.refusals == 1 and sum(seconds for _name, seconds in clock.sleeps) >= 2.0


def test_refusals_within_one_pause_lengthen_it_but_cut_the_limit_once():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _attempt in range(16):
        throttle.enter()
    throttle.leave(refused_for=1.0)
    limit = throttle.limit
    assert limit <= 8  # multiplicative decrease: at most half of what was in flight
    clock.now = 0.5
    throttle.leave(refused_for=1.0)  # refused in the same pause: the pause ends later, the limit stays
    assert (throttle.limit, throttle.resume_at, throttle.refusals) == (limit, 1.5, 2)


def test_the_limit_grows_back_one_step_a_pause_up_to_below_the_refused_one_then_probes():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _attempt in range(8):
        throttle.enter()
    throttle.leave(refused_for=1.0)  # refused with 8 in flight: Retry-After 1
    for _attempt in range(7):
        throttle.leave(took=0.02)  # answers that come in during the pause: no growth
    assert (throttle.limit, throttle.ceiling) == (1, 7)  # nothing admitted in the last second: one at a time
    clock.now = 1.0
    grown = []
    while clock.now < 29.9:
        throttle.enter()
        clock.now += 0.01
        throttle.leave(took=0.01)
        if not grown or throttle.limit != grown[-1][1]:
            grown.append((clock.now, throttle.limit))
    steps = [at for at, _limit in grown[1:]]
    assert [limit for _at, limit in grown] == [1, 2, 3, 4, 5, 6, 7]  # additive increase, one at a time
    assert steps[0] >= 1.5 and all(b - a >= 0.5 - 1e-9 for a, b in zip(steps, steps[1:]))  # a step a half pause
    clock.now = 30.0  # PROBE_PAUSES pauses without a refusal: the refused limit is tried again
    for _attempt in range(10):
        throttle.enter()
        throttle.leave(took=0.01)
    assert (throttle.limit, throttle.ceiling) == (8, 8)
    for _attempt in range(8):
        throttle.enter()
    throttle.leave(refused_for=1.0)  # the probe was refused: back to the ceiling below it, not halved
    assert (throttle.limit, throttle.ceiling) == (7, 7)


def steady(throttle, clock, until, in_flight, took=0.021):
    """Requests answered one after another until the clock reads ``until``, ``in_flight`` of them at once (the
    throttle's own pacing sleeps advance the clock too): how many were answered."""
    answered = 0
    for dummy in range(in_flight):
        throttle.enter()
    while clock.now < until:
        clock.now += took / in_flight
        throttle.leave(took=took)
        answered += 1
        throttle.enter()
    for dummy in range(in_flight):
        throttle.leave(took=took)
    return answered


def refused_at(throttle, clock, in_flight, pause=1.0):
    """A refusal of one of ``in_flight`` requests sent at once; the others answered during the pause."""
    for dummy in range(in_flight):
        throttle.enter()
    throttle.leave(refused_for=pause)
    for dummy in range(in_flight - 1):
        throttle.leave(took=0.021)
    clock.now = throttle.resume_at


def test_at_the_ceiling_with_every_slot_taken_the_requests_are_paced_a_little_faster_than_admitted():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    refused_at(throttle, clock, 3)  # three in flight refused: the limit drops below three
    throttle.limit = throttle.ceiling = 2  # (what the growth after the pause reaches: see the test above)
    assert throttle.gap == 0.0
    steady(throttle, clock, clock.now + 1.0, 2)  # a window at the ceiling: not paced yet (two after the pause)
    assert throttle.gap == 0.0
    steady(throttle, clock, clock.now + 1.5, 2)
    seen = 2 / 0.021  # what two in flight get at 21 ms a request
    assert throttle.gap == pytest.approx(1.0 / (seen * Throttle.PACE_STEP), rel=0.03)
    assert throttle.limit >= 3  # a slot more than the pace needs: the pace, not the limit, sets the rate
    start, slots = clock.now, throttle.limit
    for dummy in range(slots):  # as many at once as the limit lets in: they start a gap apart
        throttle.enter()
    assert clock.now - start == pytest.approx((slots - 1) * throttle.gap, abs=throttle.gap)
    for dummy in range(slots):
        throttle.leave(took=0.021)


def test_a_refusal_while_paced_steps_back_to_the_pace_last_admitted_and_waits_before_probing_again():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    refused_at(throttle, clock, 3)
    throttle.limit = throttle.ceiling = 2
    steady(throttle, clock, clock.now + 2.5, 2)
    paced = throttle.gap
    assert paced > 0
    steady(throttle, clock, clock.now + 1.0, 2)  # at the pace: everything admitted
    refused_at(throttle, clock, 1)
    assert throttle.gap == pytest.approx(paced * Throttle.PACE_STEP, rel=0.01)  # the pace before the probe
    stepped = throttle.gap
    steady(throttle, clock, clock.now + 9.0, 3)
    assert throttle.gap == stepped  # no faster pace within PROBE_PAUSES pauses (at least 10 s)
    steady(throttle, clock, clock.now + 25.0, 3)
    assert throttle.gap < stepped  # then probed again, a step faster


def test_a_limit_that_holds_nothing_back_is_never_paced():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    refused_at(throttle, clock, 3)
    throttle.limit = throttle.ceiling = 2
    steady(throttle, clock, clock.now + 5.0, 1)  # one request at a time: the limit of two never binds
    assert throttle.gap == 0.0 and clock.sleeps == []


def test_a_waiter_blocked_by_the_limit_wakes_when_a_request_leaves():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    throttle.limit = throttle.ceiling = 1
    throttle.enter()
    done = threading.Event()

    def second():
        throttle.enter()
        done.set()
        throttle.leave(took=0.01)

    thread = threading.Thread(target=second)
    thread.start()
    assert not done.wait(0.2)
    throttle.leave(took=0.01)
    assert done.wait(10)
    thread.join(10)


# -- against the emulator's token bucket ------------------------------------------------------------------------


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


def test_every_worker_observes_the_pause_a_refusal_names(limited, monkeypatch):
    """4 workers firing against a bucket of 4: after a 429 (Retry-After 1) no worker sends anything for 1 s (before:
    each refused worker slept on its own while the others kept sending and being refused)."""
    sends, lock = [], threading.Lock()
    real_send = NacClient._send

    def send(self, *args, **kwargs):
        started = time.monotonic()
        reply = real_send(self, *args, **kwargs)
        with lock:
            sends.append((started, time.monotonic(), reply.status_code))
        return reply

    monkeypatch.setattr(NacClient, "_send", send)
    limited.rate_limit(rate=2.0, burst=4, retry_after=1)
    client = NacClient(limited.url, api_key=ADMIN_KEY, pool_size=4)
    try:
        answers = list(ordered_map(lambda _n: client.fire_intent(1), range(12), 4))
    finally:
        client.close()
    assert len(answers) == 12
    refusals = [answered for _started, answered, status in sends if status == 429]
    assert refusals
    for refused_at in refusals:
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


def test_a_refusal_past_the_patience_is_the_policys_again(limited, monkeypatch):
    monkeypatch.setattr("ansible_collections.netaccess.nac.plugins.module_utils.engine.RATE_LIMIT_PATIENCE", 0.0)
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
    assert "only after thirty pauses' time (at least 10 s)" in section and Throttle.PROBE_PAUSES == 30
    assert "3 % faster than the rate the service was just seen to admit" in section
    assert "a pace 3 % faster is tried again only after thirty pauses' time (at least 10 s)" in section
    assert round((Throttle.PACE_STEP - 1) * 100) == 3 and Throttle.WINDOW == 1.0  # "for a second"
    assert "returns how many refusals its batch waited out as ``refusals_waited_out``" in section
