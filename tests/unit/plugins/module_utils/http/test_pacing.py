# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request engine (pacing.py, issue 26): work driven by completions with the results in order, one shared pause
on a rate-limit refusal, concurrency that adapts (AIMD), refusals that spend no retry, and the summary that counts
them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import socket
import threading
import time

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    CONNECT,
    EXCHANGE,
    ExchangeError,
    NacError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http import engine, pacing
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import ordered_steps
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import SENDING, Ready, Sleep, run
from ansible_collections.netaccess.nac.plugins.module_utils.http.pacing import Throttle
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    QUOTA_MAX,
    RATE_LIMIT_PATIENCE,
    REFUSAL_FLOOR,
    REFUSAL_PAUSE,
    REFUSAL_STATUS,
    RETRY_AFTER_CAP,
    UNSAID,
    Quota,
    quota,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_results import summarize
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator, RateLimit, load_config
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import ADMIN_KEY, INTEGRATION_CONFIG
from ansible_collections.netaccess.nac.tests.unit.helpers import guide_section

# -- work driven by completions -------------------------------------------------------------------------------


def _at_once(value):
    """Steps that end at once with ``value`` (a generator that never yields)."""
    return value
    yield  # pylint: disable=unreachable  # (it is a generator)


def test_ordered_steps_takes_only_a_bounded_window_of_items_ahead():
    taken = []

    def items():
        for number in range(10000):
            taken.append(number)
            yield number

    results = ordered_steps(lambda n: _at_once(n * 2), items(), 4)
    assert next(results) == 0
    assert len(taken) <= engine.WINDOW_PER_WORKER * 4 + 1
    assert list(results) == [n * 2 for n in range(1, 10000)]


def test_ordered_steps_raises_the_first_error_and_starts_nothing_more():
    calls = []

    def work(number):
        calls.append(number)
        if number == 0:
            raise ValueError("boom")
        return number
        yield  # pylint: disable=unreachable  # (it is a generator)

    with pytest.raises(ValueError, match="boom"):
        list(ordered_steps(work, range(1000), 1))
    assert calls[0] == 0 and len(calls) <= engine.TASKS_PER_WORKER  # those already under way, nothing after


def test_a_straggler_holds_back_neither_the_other_workers_nor_the_order():
    """Item 0 finishes only once 40 later items have finished, on 2 workers: the other items keep being started as
    others finish (the old window started one only when the oldest finished, and stalled here)."""
    started, finished = [], []

    def work(number):
        started.append(number)
        if number == 0:
            for _look in range(10000):
                if len(finished) >= 40:
                    break
                yield Sleep(0.001)
            assert len(finished) >= 40, "the other workers stalled behind the straggler"
        else:
            yield SENDING
            finished.append(number)
        return number

    assert list(ordered_steps(work, range(100), 2)) == list(range(100))
    assert len(started) == 100


def test_ordered_steps_starts_no_thread_for_steps_that_never_block():
    before = threading.active_count()
    seen = []

    def work(number):
        seen.append(threading.active_count())
        yield SENDING
        return number

    assert list(ordered_steps(work, range(50), 64)) == list(range(50))
    assert max(seen) == before


def test_concurrency_limits_the_requests_in_flight_not_the_steps_waiting():
    """Issue 51: 2 slots, 8 items whose first request is refused and waits 50 ms (a Retry-After) before it is sent
    again: while they wait the others' requests go out, and never more than 2 are in flight at once."""
    in_flight, most, order = [0], [0], []
    here, there = socket.socketpair()  # (here can always be written: a reply that comes at once)

    def request(number, attempt):
        yield SENDING
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        order.append((number, attempt))
        yield Ready(here, True, time.monotonic() + 5)  # (its reply: read with the slot held)
        in_flight[0] -= 1
        yield Sleep(0.0)  # the slot is left at the next wait

    def work(number):
        yield from request(number, 1)
        yield Sleep(0.05)  # refused: waits without a slot
        yield from request(number, 2)
        return number

    try:
        assert list(ordered_steps(work, range(8), 2)) == list(range(8))
    finally:
        here.close()
        there.close()
    assert most[0] == 2
    firsts = [index for index, (_number, attempt) in enumerate(order) if attempt == 1]
    assert firsts == list(range(8))  # every first attempt went out before any second one (none held a slot waiting)


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


def test_refusals_within_one_pause_lengthen_it_but_set_the_pace_once():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _attempt in range(16):
        throttle.enter()
    throttle.leave(refused_for=1.0)
    clock.now = 0.5
    throttle.leave(refused_for=1.0)  # refused in the same pause: the pause ends later
    assert (throttle.resume_at, throttle.refusals) == (1.5, 2)


def answered(throttle, clock, took=0.02):
    throttle.enter()
    start = clock.now
    clock.now += took
    throttle.leave(took=took)
    return start


def test_a_penalty_box_is_paced_at_the_count_it_admitted_in_a_window():
    """Ten admitted in 30 ms, then refused with Retry-After 30: the pace is below ten a second, never 300."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _request in range(10):
        clock.now += 0.003
        throttle.enter()
        throttle.leave(took=0.0)
    throttle.leave(refused_for=30.0, started=clock.now + 0.003)
    throttle.enter()  # sleeps out the pause, then the pace is set
    assert clock.now >= 30.0
    assert throttle.rate == pytest.approx(10 * Throttle.BELOW)
    starts = [clock.now]
    for _request in range(5):
        throttle.enter()
        starts.append(clock.now)
    assert all(b - a == pytest.approx(1.0 / throttle.rate) for a, b in zip(starts, starts[1:]))


Reply = collections.namedtuple("Reply", "status_code headers")


def sent_through_the_gate(throttle, clock, outcome):
    """One request through ``send_steps`` as the transport sends it, 3 ms after the last: answered (200),
    ``reset`` (written, broken before any byte of its reply, as connections.Wire marks it) or ``unsent``
    (the connection never made)."""

    def send():
        yield Sleep(0.003, clock.sleep)
        if outcome == "answered":
            return Reply(200, {})
        sent = outcome != "unsent"
        raise ExchangeError("connection reset by peer", EXCHANGE if sent else CONNECT, sent=sent, replied=False)

    try:
        answer = run(throttle.send_steps(send))
    except ExchangeError:
        return None
    assert throttle.answered(answer[0], answer[1], []) is None
    return answer[1]


def replies(throttle, clock, statuses, took=0.01):
    """Each status in turn, as the reply of a request sent through the gate ``took`` seconds earlier: what
    ``answered`` returned for each (429s ask Retry-After 1)."""
    returned = []
    for status in statuses:
        throttle.enter()
        started = clock.now
        clock.now += took
        headers = {"Retry-After": "1"} if status == 429 else {}
        returned.append(throttle.answered(Reply(status, headers), started, []))
    return returned


def test_a_stray_refusal_among_many_admitted_waits_alone_and_leaves_the_pace_alone():
    """Issue 49: a 429 now and then among hundreds admitted (a flaky proxy) pauses only its own request, for its
    Retry-After; nobody else waits, no pace is set, and the gate stays open."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    returned = replies(throttle, clock, ([200] * 19 + [429]) * 10 + [503] + [200] * 20)
    assert [value for value in returned if value is not None] == [1.0] * 10 + [REFUSAL_FLOOR]
    assert (throttle.refusals, throttle.strays, throttle.rate, throttle.gap) == (11, 11, None, 0.0)
    assert throttle.resume_at == 0.0 and clock.sleeps == []  # no shared pause, nothing paced


def test_refusals_in_a_run_pause_every_sender_and_pace_from_the_rate_admitted():
    """A limiter refuses in runs: the first refusals wait alone until STRAY_SHARE of the last replies (and RUN of
    them) are refusals; that one pauses every sender, and the requests in flight refused meanwhile set a pace."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    returned = replies(throttle, clock, [200] * 6 + [429] * pacing.RUN)
    assert returned[6:] == [1.0] * (pacing.RUN - 1) + [0.0]  # alone, alone, then every sender
    assert throttle.resume_at == pytest.approx(clock.now + 1.0) and throttle.strays == pacing.RUN - 1
    paused_at = clock.now
    clock.now += 0.01
    throttle.leave(refused_for=1.0, started=paused_at - 0.005)  # a request in flight, refused too
    throttle.enter()  # waits out the pause, then the pace is set
    assert clock.now >= paused_at + 1.0 and throttle.rate is not None and throttle.gap > 0


def test_a_shared_pause_whose_requests_in_flight_were_admitted_sets_no_pace():
    """Refusals that looked like a run early on (four of six replies), while the requests in flight meanwhile
    were admitted: one shared pause, then the client goes on unpaced and ungated (no limiter refuses so)."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    assert replies(throttle, clock, [200, 429, 429, 200, 429, 429])[-1] == 0.0
    paused_at = clock.now
    for _reply in range(8):  # the requests in flight, answered during the pause
        clock.now += 0.01
        throttle.leave(took=0.02)
    throttle.enter()
    assert clock.now >= paused_at + 1.0 and (throttle.rate, throttle.gap) == (None, 0.0)
    before = list(clock.sleeps)
    replies(throttle, clock, [200] * 50)
    assert clock.sleeps == before  # nothing held back after it


def test_a_run_with_nothing_else_in_flight_is_judged_by_the_replies_before_it():
    """One request at a time: ten admitted, then four refused in a row (the fourth a run: a quarter of the last
    replies); nothing answers during the pause, and the replies before it were mostly admitted: no pace. Eight of
    twelve refused would have set one."""
    for statuses, paced in (([200] * 10 + [429] * pacing.RUN, False), ([200] * 4 + [429] * 8, True)):
        clock = Clock()
        throttle = Throttle(clock, clock.sleep)
        assert replies(throttle, clock, statuses)[-1] == 0.0
        throttle.enter()
        assert (throttle.rate is not None) is paced


def test_a_request_reset_after_it_was_written_counts_as_admitted_one_never_sent_does_not():
    """A 503 storm: a limiter in front of a server that drops some connections let the reset requests through and
    spent its rate on them. Eight answered, two reset after they were written and one never sent, then a refusal
    asking 2 s: the pace is BELOW ten a second (the answered and the reset), not BELOW eight."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for outcome in ["answered"] * 4 + ["reset", "unsent"] + ["answered"] * 4 + ["reset"]:
        sent_through_the_gate(throttle, clock, outcome)
    throttle.leave(refused_for=2.0, started=clock.now + 0.003)
    throttle.enter()
    assert throttle.rate == pytest.approx(10 * Throttle.BELOW)


def refused_as_nginx_does():
    """nginx without burst at 50 r/s, no Retry-After: three sent one at a time admitted (20 ms each), then one of
    eight sent at once admitted, the seven others refused. (clock, throttle) at the end."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _request in range(3):  # one at a time, 20 ms each: admitted
        answered(throttle, clock)
    start = clock.now
    for _request in range(8):
        throttle.enter()
    clock.now += 0.02
    throttle.leave(took=0.02)
    for _request in range(7):
        throttle.leave(refused_for=UNSAID, started=start)
    return clock, throttle


def test_a_refusal_without_retry_after_is_read_as_the_rate_admitted_before_it():
    """nginx without burst at 50 r/s: one of eight sent at once admitted a round trip (20 ms): paced at once below
    50/s (a concurrency limit of one would still send 50 a second at 20 ms), after a short pause only (the pace,
    not the pause, spaces the requests)."""
    clock, throttle = refused_as_nginx_does()
    assert throttle.resume_at == pytest.approx(clock.now + REFUSAL_FLOOR)
    throttle.enter()
    assert throttle.rate == pytest.approx(50.0 * Throttle.BELOW, rel=0.05)
    # paced: a further refusal without Retry-After pauses REFUSAL_FLOOR only, and slows the pace down
    paced = throttle.rate
    started = answered(throttle, clock)
    throttle.leave(refused_for=UNSAID, started=started)
    assert throttle.resume_at == pytest.approx(clock.now + REFUSAL_FLOOR)
    throttle.enter()
    assert throttle.rate < paced and throttle.refused_rate == paced


def test_the_pace_is_doubled_until_refused_then_falls_back_to_the_pace_that_held_and_goes_halfway_up():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    answered(throttle, clock)
    throttle.leave(refused_for=1.0, started=clock.now)
    throttle.enter()
    first = throttle.rate
    assert first == pytest.approx(1 * Throttle.BELOW)  # one admitted in the window before
    throttle.leave(took=0.0)
    changes = [(clock.now, first)]
    while len(changes) < 3:
        answered(throttle, clock, took=0.001)
        if throttle.rate != changes[-1][1]:
            changes.append((clock.now, throttle.rate))
    assert [rate for _at, rate in changes] == [first, first * 2, first * 4]
    assert all(later[0] - earlier[0] >= 0.5 for earlier, later in zip(changes, changes[1:]))  # half a pause apart
    refused = throttle.rate
    throttle.leave(refused_for=1.0, started=clock.now)
    throttle.enter()
    assert throttle.refused_rate == refused and throttle.rate == throttle.good_rate == first * 2  # the pace that held
    held, admitted = throttle.rate, throttle.ceiling
    assert held < admitted <= refused
    until = clock.now + 2.5
    while clock.now < until:
        answered(throttle, clock, took=0.001)
    assert throttle.rate == pytest.approx((held + admitted) / 2)  # halfway, after HALVING_PAUSES pauses (2 s)


def refused_after_doubling(admitted, asked, at_doubled):
    """``admitted`` requests admitted 1 ms apart, then one refused with Retry-After ``asked``; paced, the pace held
    its probe period and was doubled; ``at_doubled`` requests admitted at the double, then one refused. (clock,
    throttle, the pace that held, the pace refused), the pace set from the second refusal."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _request in range(admitted):
        answered(throttle, clock, took=0.001)
    throttle.enter()
    throttle.leave(refused_for=asked, started=clock.now)
    throttle.enter()
    throttle.leave(took=0.0)
    held = throttle.rate
    assert held == pytest.approx(admitted * Throttle.BELOW)
    while throttle.rate == held:
        answered(throttle, clock, took=0.0)
    refused = throttle.rate
    for _request in range(at_doubled):
        answered(throttle, clock, took=0.0)
    throttle.enter()
    throttle.leave(refused_for=asked, started=clock.now)
    throttle.enter()
    return clock, throttle, held, refused


def fixed_window_overshoot():
    """A fixed window of 50 a second, Retry-After: 1: the second before the second refusal counts 40 at the doubled
    pace and the pace that held before them, more than the 50 of the window."""
    return refused_after_doubling(50, 1.0, 40)


def test_a_refused_probe_falls_back_to_the_pace_that_held_not_to_the_straddling_count():
    """The count of the second before the refusal (the doubled pace's requests and those of the pace that held
    before them) is more than the window admits: the pace goes back to the one that held, the count is only the
    pace probed towards (the old code paced 10 % below that count: faster than the window admits)."""
    _clock, throttle, held, refused = fixed_window_overshoot()
    assert throttle.ceiling * Throttle.BELOW > held  # the count overstates the window's 50
    assert throttle.refused_rate == refused and throttle.rate == pytest.approx(held) and throttle.rate < 50


def test_a_refused_probe_goes_back_to_the_pace_that_held_even_above_the_count_when_no_quota_is_stated():
    """The doubled pace refused at once: the second before it counts only the held pace's half second, fewer than
    the pace that held; the pace goes back to that pace all the same (only a quota stated caps it)."""
    _clock, throttle, held, _refused = refused_after_doubling(50, 1.0, 0)
    assert throttle.ceiling < held and throttle.rate == pytest.approx(held) and throttle.quota_rate is None


def test_a_pace_that_held_and_was_refused_itself_is_given_up_for_one_below_the_rate_admitted():
    clock, throttle, held, _refused = fixed_window_overshoot()
    throttle.leave(took=0.0)
    started = answered(throttle, clock, took=0.0)
    throttle.leave(refused_for=1.0, started=started)  # the pace that held refused: the service admits less now
    throttle.enter()
    assert throttle.good_rate is None and throttle.rate < held
    assert throttle.rate == pytest.approx(min(throttle.ceiling, held) * Throttle.BELOW)


def test_after_long_pauses_the_pace_goes_halfway_up_only_after_two_pauses_time():
    """A penalty box's 30 s: a refused doubling goes back to the pace that held, and halfway up only after
    HALVING_PAUSES pauses (60 s)."""
    clock, throttle, held, _refused = refused_after_doubling(10, 30.0, 1)
    throttle.leave(took=0.0)
    assert throttle.rate == pytest.approx(held) and throttle.ceiling > held
    set_at = clock.now
    while throttle.rate == held:
        answered(throttle, clock, took=0.0)
    assert clock.now - set_at >= Throttle.HALVING_PAUSES * 30.0


def test_a_pace_a_refilled_burst_let_hold_its_probe_period_is_given_up_for_the_rate_admitted_since_the_pause():
    """The 503 storm's bucket (50 a second, a burst of 50, Retry-After 2), one request at a time, 1 ms each, for
    120 s. After each 2 s pause the bucket is full again, so a pace a seventh too fast holds a probe period (4 s)
    before the bucket is spent. A probe halfway up refused goes back to the pace that held, but never above the rate
    admitted from the end of the last pause to the refusal: 5 refusals instead of 10, and 96 % of what the bucket
    can admit instead of 91 % (the old code went back to 58 a second, which had held 4 s, three times in a row)."""
    clock = Clock()
    bucket = RateLimit(dict(shape="token", rate=50, burst=50, status=503, retry_after=2), clock=clock)
    throttle = Throttle(clock, clock.sleep)
    admitted = 0
    while clock.now < 120.0:
        throttle.enter()
        started = clock.now
        clock.now += 0.001
        if bucket.admit() is None:
            throttle.leave(took=0.001)
            admitted += 1
        else:
            throttle.leave(refused_for=2.0, started=started)
    assert throttle.refusals <= 6 and admitted >= 0.95 * 50 * 120, (throttle.refusals, admitted)


def test_after_a_first_refusal_without_retry_after_the_rate_admitted_is_probed_towards_never_doubled_past():
    """The task's first refusal names no Retry-After (nginx): the rate admitted while sending faster is the
    limiter's; the pace starts below it and goes halfway to it, never twice as fast."""
    clock, throttle = refused_as_nginx_does()
    throttle.enter()
    admitted = throttle.refused_rate
    assert admitted == pytest.approx(throttle.rate / Throttle.BELOW) and throttle.ceiling == admitted
    throttle.leave(took=0.0)
    rates = []
    until = clock.now + 10.0
    while clock.now < until:
        answered(throttle, clock, took=0.001)
        rates.append(throttle.rate)
    assert max(rates) < admitted * Throttle.PROBE_STEP


def test_a_first_refusal_without_retry_after_and_nothing_admitted_just_before_pauses_a_second():
    """No Retry-After and no request sent in the WINDOW before the refused one admitted: no pace can be set, so
    the whole REFUSAL_PAUSE; one admitted in that WINDOW: REFUSAL_FLOOR."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    answered(throttle, clock)  # admitted, sent at 0
    clock.now = 5.0
    throttle.enter()
    throttle.leave(refused_for=UNSAID, started=5.0)
    assert throttle.resume_at == pytest.approx(5.0 + REFUSAL_PAUSE)
    throttle.enter()
    assert throttle.rate is None  # nothing admitted in the WINDOW: not paced
    answered(throttle, clock)
    started = clock.now
    throttle.enter()
    throttle.leave(refused_for=UNSAID, started=started)
    assert throttle.resume_at == pytest.approx(clock.now + REFUSAL_FLOOR)


def test_nothing_admitted_before_the_refusal_is_not_paced_yet():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    throttle.enter()
    throttle.leave(refused_for=1.0, started=0.0)
    throttle.enter()
    assert throttle.rate is None and throttle.gap == 0.0 and clock.now == 1.0


def test_a_request_given_a_start_before_a_refusal_waits_for_the_new_pace():
    """A request waiting for its start when a refusal comes does not go out on the old pace: it waits the pause
    and takes a start of the new pace."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    throttle.gate.calm = False
    throttle.pace.pace_at(10.0, clock.now)
    throttle.pace.probe_at = 1e9
    refused = []

    def sleep(seconds):  # the refusal comes while the second request waits for its start
        if not refused:
            refused.append(clock.now)
            throttle.leave(refused_for=2.0, started=clock.now)
        clock.now += seconds

    throttle.gate.sleep = sleep
    throttle.enter()  # at once
    throttle.enter()  # its start (0.1 s) is after the refusal: it waits the pause (2 s) instead
    assert clock.now >= 2.0


def test_a_waiter_blocked_by_the_pause_wakes_when_it_is_over():
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    throttle.leave(refused_for=0.5, started=0.0)
    done = threading.Event()

    def second():
        throttle.enter()
        done.set()
        throttle.leave(took=0.01)

    thread = threading.Thread(target=second)
    thread.start()
    assert done.wait(10)
    thread.join(10)
    assert clock.now >= 0.5


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
    real_send = NacClient._send_steps

    def send(self, *args, **kwargs):
        started = time.monotonic()
        reply = yield from real_send(self, *args, **kwargs)
        with lock:
            sends.append((started, time.monotonic(), reply.status_code))
        return reply

    monkeypatch.setattr(NacClient, "_send_steps", send)
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
