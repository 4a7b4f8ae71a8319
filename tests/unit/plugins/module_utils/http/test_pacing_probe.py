# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pacing probed faster while nothing is refused (pace.py, issues 26 and 33): doubled until refused, back to
the pace that held, halfway up, and a request given a start before a refusal."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.http.pacing import Throttle
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    REFUSAL_FLOOR,
    REFUSAL_PAUSE,
    UNSAID,
)
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import RateLimit
from ansible_collections.netaccess.nac.tests.unit.pacing_clock import (
    Clock,
    answered,
    refused_as_nginx_does,
    sending_for_a_window,
)


def refused_after_doubling(admitted, asked, at_doubled):
    """``admitted`` requests admitted 1 ms apart, then one refused with Retry-After ``asked``; paced, the pace held
    its probe period and was doubled; ``at_doubled`` requests admitted at the double, then one refused. (clock,
    throttle, the pace that held, the pace refused), the pace set from the second refusal."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    sending_for_a_window(throttle, clock)
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
