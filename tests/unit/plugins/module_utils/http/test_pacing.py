# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pacing (pacing.py, meter.py, pace.py; issues 26, 49 and 51): one shared pause on a rate-limit refusal, a
stray refusal waited out alone, the pace set from the rate admitted (AIMD), and the meter, pace and gate each on
their own."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.http import pacing
from ansible_collections.netaccess.nac.plugins.module_utils.http.meter import Meter
from ansible_collections.netaccess.nac.plugins.module_utils.http.pace import Pace
from ansible_collections.netaccess.nac.plugins.module_utils.http.pacing import Throttle
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    REFUSAL_FLOOR,
    UNSAID,
    Quota,
)

# -- one shared pause, AIMD ---------------------------------------------------------------------------------
from ansible_collections.netaccess.nac.tests.unit.pacing_clock import (
    Clock,
    answered,
    refused_as_nginx_does,
    replies,
    sending_for_a_window,
    sent_through_the_gate,
)


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


@pytest.mark.parametrize(
    "sending_before, asked, counted_over",
    [
        (0.0, 1.0, Pace.PARTIAL),  # refused 40 ms after the first request: counted over a quarter of a second
        (2.0, 1.0, 1.0),  # refused after two seconds of sending: over the whole second before it
        (0.0, 2.0, 1.0),  # a longer pause asked (a penalty box's may be 30 s): over the whole second
    ],
)
def test_a_first_refusal_soon_after_the_first_request_counts_the_admitted_over_that_time(
    sending_before, asked, counted_over
):
    """A token bucket of 100 a second and a burst of 20 admits 20 in 40 ms, then refuses with Retry-After 1. Counted
    over a whole second that is 20 a second, and the pace then took three doublings to reach the bucket's rate; over
    the time since the first request (at least Pace.PARTIAL of a second) it is 80. The first refusal of a client that
    has sent for a second already, or that asks a longer pause, is counted over the second before it, as before."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    sending_for_a_window(throttle, clock, sending_before)
    for _request in range(20):
        clock.now += 0.002
        throttle.enter()
        throttle.leave(took=0.0)
    throttle.leave(refused_for=asked, started=clock.now + 0.002)
    throttle.enter()  # sleeps out the pause, then the pace is set
    assert throttle.rate == pytest.approx(20 / counted_over * Throttle.BELOW)


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
    sending_for_a_window(throttle, clock)
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


# -- the three parts on their own: meter, pace, gate (issue 51) ---------------------------------------------------


def test_the_meter_reads_a_refusal_among_many_admitted_as_stray_and_one_of_a_run_as_a_limiters():
    meter = Meter()
    for at in range(28):
        meter.admit(at * 0.01, took=0.01)
    assert meter.stray()  # the first refusal among 28 admitted
    for at in range(pacing.RUN - 1):
        meter.refuse(0.3 + at * 0.01)
    assert meter.stray()  # RUN of the last STRAY_SAMPLE replies, but under a quarter of them: still stray
    for at in range(4):
        meter.refuse(0.4 + at * 0.01)
    assert not meter.stray()  # a quarter of the last STRAY_SAMPLE replies (itself counted): a limiter's run
    assert (meter.refusals, meter.strays) == (pacing.RUN - 1 + 4, 0)
    assert meter.admitted_between(0.0, 0.095) == 10  # sent 0.0 to 0.09 (each answered 10 ms after it was sent)


def test_the_meter_says_whether_the_replies_during_a_pause_were_mostly_admitted():
    meter = Meter()
    meter.refuse(1.0)
    assert not meter.mostly_admitted(1.0, run=False)  # nothing received since: no sign either way
    for at in (1.1, 1.2, 1.3):
        meter.admit(at, took=0.05)
    meter.refuse(1.4)
    assert meter.mostly_admitted(1.0, run=False)  # 3 of 4 admitted: no limiter refuses so
    meter.refuse(1.5)
    meter.refuse(1.6)
    assert not meter.mostly_admitted(1.0, run=False)  # 3 of 6: half refused


def test_the_pace_is_set_below_the_rate_admitted_and_doubled_only_once_the_requests_kept_up_with_it():
    meter, pace = Meter(), Pace()
    for n in range(20):
        meter.admit(n * 0.05 + 0.01, took=0.01)  # 20 sent in the second before the refused one: 20 a second
    for n in range(4):
        meter.refuse(1.0 + n * 0.01)  # the requests in flight during the pause refused too
    pace.refused(asked=1.0, unsaid=False)
    assert pace.after_pause(now=2.0, sent=1.0, first_sent=0.0, meter=meter, paused_at=1.0, run=True)
    assert pace.rate == pytest.approx(20 * Pace.BELOW) and pace.gap == pytest.approx(1 / pace.rate)
    pace.probe_if_due(2.0 + 1.0)  # a pause's time later, but no request started at the pace: not probed
    assert pace.rate == pytest.approx(20 * Pace.BELOW)
    pace.started += 18  # the requests kept up with the pace
    pace.probe_if_due(3.0)
    assert pace.rate == pytest.approx(20 * Pace.BELOW * Pace.PROBE_FAST) and pace.good_rate == pytest.approx(18.0)


def test_a_pause_whose_replies_were_mostly_admitted_sets_no_pace():
    meter, pace = Meter(), Pace()
    meter.admit(0.9, took=0.01)
    meter.refuse(1.0)
    for at in (1.1, 1.2, 1.3):
        meter.admit(at, took=0.01)
    pace.refused(asked=1.0, unsaid=False)
    assert not pace.after_pause(now=2.0, sent=0.99, first_sent=0.0, meter=meter, paused_at=1.0, run=False)
    assert (pace.rate, pace.gap) == (None, 0.0)


def gate_steps(gate):
    """What the gate's steps wait for a request (the seconds of each Sleep), the clock moved on by each."""
    waits = []
    steps = gate.enter_steps()
    try:
        while True:
            sleep = next(steps)
            waits.append(sleep.seconds)
            gate._clock.now += sleep.seconds
    except StopIteration:
        return waits


def test_the_gate_lets_a_calm_client_through_at_once_then_holds_every_request_for_a_pause():
    clock = Clock()
    meter, pace = Meter(), Pace()
    gate = pacing.Gate(pace, meter, clock, clock.sleep)
    assert gate_steps(gate) == [] and gate.first_sent == 0.0
    meter.admit(0.0, took=0.0)
    assert gate.pause(2.0, started=0.0, now=0.0, run=True)  # the first refusal of the pause
    assert not gate.pause(1.0, started=0.0, now=0.5, run=True)  # another within it: not the first, no shorter
    assert gate.resume_at == 2.0 and sum(gate_steps(gate)) == pytest.approx(2.0)


def test_the_gate_starts_the_requests_a_gap_apart_once_paced_and_afresh_when_the_pace_changes():
    clock = Clock()
    pace = Pace()
    gate = pacing.Gate(pace, Meter(), clock, clock.sleep)
    gate.calm = False
    pace.pace_at(10.0, 0.0)
    pace.probe_at = 1e9
    starts = []
    for _request in range(3):
        gate_steps(gate)
        starts.append(clock.now)
    assert starts == pytest.approx([0.0, 0.1, 0.2])
    pace.pace_at(2.0, clock.now)  # slower from now on: the next start is now, then half a second apart
    for _request in range(2):
        gate_steps(gate)
        starts.append(clock.now)
    assert starts[3:] == pytest.approx([0.2, 0.7])


def test_a_spent_quota_holds_every_request_at_the_gate_until_its_window_starts_afresh():
    clock = Clock()
    pace = Pace()
    gate = pacing.Gate(pace, Meter(), clock, clock.sleep)
    gate.hold(pace.heed(Quota(100, 0, 30, 60), 0.0))  # a minute's window, spent: reset in 30 s
    assert not gate.calm and gate.resume_at == 30.0
    assert sum(gate_steps(gate)) == pytest.approx(30.0)
