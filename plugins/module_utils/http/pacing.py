# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pace of one client's requests (no Ansible imports): a rate limit ridden out by all of a client's requests
together, in three small objects with one job each (as botocore's adaptive retries split their limiter):

- ``meter.Meter``: what the replies say: admitted or refused, a refusal stray or one of a run, the rate admitted;
- ``pace.Pace``: the pace set from the meter after a refusal in a run, and its recovery while nothing is refused;
- ``Gate`` (here): what a request waits before it is sent: the shared pause, then its start at the pace.

``Throttle`` is one per client (transport.Transport holds it) and ties the three together: every request passes
its gate. A refusal (every ``429`` and ``503``: retry_policy.refusal) that comes among many admitted replies is a
stray one (a flaky proxy, a WAF's hiccup): only its own request waits what it asks, the pace untouched. Any other
refusal pauses every request of the client until the time it names (one shared pause), and when the requests in
flight meanwhile were refused too (a limiter refuses in runs), the requests are paced by rate from then on: below
the rate the service admitted just before it, lower again on each further refusal (multiplicative decrease),
faster again slowly while nothing is refused, the more slowly the longer the pauses the service asks for. The
retry policy (docs/docsite/rst/api.rst, "Retries and outcomes") says how long a request may be refused.

All of it runs in one thread: the event loop of the client's batch (loop.Loop), or the caller's (loop.run). No
lock is taken: a Throttle is never shared by threads.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import SENDING, Sleep, run
from ansible_collections.netaccess.nac.plugins.module_utils.http.meter import (  # noqa: F401  # pylint: disable=unused-import  # (pacing.RUN and the rest)
    RUN,
    RUN_SHARE,
    STRAY_SAMPLE,
    STRAY_SHARE,
    WINDOW,
    Meter,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.pace import Pace
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    RATE_LIMIT_PATIENCE,
    REFUSAL_FLOOR,
    REFUSAL_PAUSE,
    UNSAID,
    broke_unanswered,
    never_sent,
    quota,
    refusal,
)


class Gate:
    """Hold each request before it is sent: until the shared pause is over (``resume_at``), then until its start
    at the pace (``pace``: starts ``gap`` seconds apart). Until the first refusal nothing is held back (``calm``).
    ``clock`` (monotonic) and ``sleep`` are the transport's."""

    SLICE = 0.2  # seconds a request waiting for its start sleeps at most before it looks at the pace again

    def __init__(self, pace, meter, clock, sleep):
        self.pace, self.meter = pace, meter
        self._clock, self.sleep = clock, sleep
        self.resume_at = 0.0  # no request is sent before this clock time
        self.calm = True  # never refused (or calm again): nothing to wait for
        self.first_sent = None  # when the task's first request was sent
        self.pauses = 0  # shared pauses begun: a start given before one is taken again, as one given at an old pace
        self.refused_sent = None  # when the first refused request of the pause was sent: the pace is set at its end
        self.paused_at = None  # when the first refusal of the shared pause on was received
        self.run = False  # the first refusal of the pause on was judged one of a run among the replies before it
        self._next_start, self._version = 0.0, 0  # the next start at the pace, and the pace version it is of

    @property
    def epoch(self):
        """Count the paces set and the pauses begun: a start given at an older epoch is taken again."""
        return self.pauses + self.pace.version

    def pause(self, refused_for, started, now, run):
        """Pause every request for ``refused_for`` seconds from ``now`` (longer when one is on); the first refusal of
        a pause (its request sent at ``started``; ``run``: judged one of a run) is the one the pace is set from."""
        self.calm = False
        first = now >= self.resume_at and self.refused_sent is None
        if first:
            self.pauses += 1
            self.refused_sent, self.paused_at, self.run = started, now, run
        self.resume_at = max(self.resume_at, now + refused_for)
        return first

    def hold(self, until):
        """Hold every request until ``until`` (a quota spent), when given; the pace, when set, holds them too."""
        if until is not None:
            self.resume_at = max(self.resume_at, until)
        self.calm = self.calm and until is None and not self.pace.gap

    def enter_steps(self):
        """Steps (loop.py): wait until no pause is on and, once paced, until the request's start; each wait is a
        loop.Sleep (under the loop, a timer: the other requests go on)."""
        if self.calm:
            if self.first_sent is None:
                self.first_sent = self._clock()
            return
        # slot: the epoch this request was given its start at; mark: the time it has slept to (a clock that
        # sleeping does not move, as in the tests, still moves on for it)
        slept_to, slot, start, mark = None, None, 0.0, None
        while True:
            now, until = self._clock(), self.resume_at
            now = now if mark is None else max(now, mark)
            if until == slept_to or until <= now:  # no pause on (or the one slept is over)
                if slot != self.epoch:  # no start yet, or the pace changed since: a start at this pace
                    if self.refused_sent is not None:
                        self._after_pause(max(now, until))
                    start, slot = self._start(max(now, until)), self.epoch
                if start <= now:
                    self.pace.started += 1
                    return
                wait = min(start - now, self.SLICE)  # a new pace meanwhile re-spaces the requests waiting
            else:
                wait = until - now
            yield Sleep(wait, self.sleep)
            slept_to, mark = until, now + wait

    def _after_pause(self, now):
        sent, self.refused_sent = self.refused_sent, None
        if not self.pace.after_pause(now, sent, self.first_sent, self.meter, self.paused_at, self.run):
            self.calm = True  # the requests in flight were admitted: a stray refusal's pause, no pace

    def _start(self, now):
        """The clock time this request may start at: now while not paced; the pace probed faster when due."""
        pace = self.pace
        if not pace.gap:
            return now
        pace.probe_if_due(now)
        if pace.version != self._version:  # the pace changed: the spacing starts afresh from when it did
            self._next_start, self._version = pace.restart, pace.version
        start = max(now, self._next_start)
        self._next_start = start + pace.gap
        return start


class Throttle:
    """Tie one client's meter, pace and gate together: every request of the client passes ``send_steps``, its reply
    is told to ``answered``. ``clock`` (monotonic) and ``sleep`` are the transport's.

    A refusal is judged first (``judge``): while no pace is set, one among the last STRAY_SAMPLE replies of which
    few were refusals is stray: its request alone waits what it asks (``pause`` without Retry-After) and is sent
    again, the others go on, the pace untouched (``strays`` counts them). Any other refusal pauses every request:
    until its Retry-After, else for REFUSAL_FLOOR once the requests are paced or a request sent in the WINDOW
    before the refused one was admitted (the pace it sets spaces the requests), and REFUSAL_PAUSE before that."""

    WINDOW = WINDOW
    BELOW, QUOTA_BELOW, QUOTA_PACED = Pace.BELOW, Pace.QUOTA_BELOW, Pace.QUOTA_PACED
    PROBE_FAST, PROBE_STEP, HALVING_PAUSES, PROBE_PAUSES = (
        Pace.PROBE_FAST,
        Pace.PROBE_STEP,
        Pace.HALVING_PAUSES,
        Pace.PROBE_PAUSES,
    )

    def __init__(self, clock=time.monotonic, sleep=time.sleep):
        self._clock = clock
        self.meter, self.pace = Meter(), Pace()
        self.gate = Gate(self.pace, self.meter, clock, sleep)

    # what the transport, the reports and the benchmarks read
    rate = property(lambda self: self.pace.rate, doc="Requests a second once paced (None: not paced).")
    gap = property(lambda self: self.pace.gap, doc="Seconds between two requests' starts once paced (0: not paced).")
    refused_rate = property(lambda self: self.pace.refused_rate, doc="The pace of the last refusal.")
    good_rate = property(lambda self: self.pace.good_rate, doc="The fastest pace that held a probe period.")
    ceiling = property(lambda self: self.pace.ceiling, doc="The rate admitted when the pace was last set.")
    quota_rate = property(lambda self: self.pace.quota_rate, doc="The pace a quota stated allows (None: none).")
    resume_at = property(lambda self: self.gate.resume_at, doc="No request is sent before this clock time.")
    refusals = property(lambda self: self.meter.refusals, doc="Refusals waited out (each request sent again).")
    strays = property(lambda self: self.meter.strays, doc="Refusals read as stray: their request alone waited.")

    def enter(self) -> None:
        """Wait at the gate in this thread (loop.run): until no pause is on and, once paced, the request's start."""
        run(self.gate.enter_steps())

    def send_steps(self, send, *args):
        """Steps (loop.py): ``send(*args)`` (steps) once the gate lets it through: (what it returned, the clock when
        it was sent). A send that raises leaves here (a request that went out, any of its bytes written, and broke
        before any byte of its reply counts as sent at ``started``: as far as can be told, it passed the limiter); a
        reply is told to ``answered``."""
        yield from self.gate.enter_steps()
        yield SENDING  # (under the loop: once an in-flight slot is free; a request waiting above holds none)
        started = self._clock()
        try:
            return (yield from send(*args)), started
        except BaseException as exc:
            self.leave(started=started if broke_unanswered(exc) and not never_sent(exc) else None)
            raise

    def answered(self, reply, started: float, paused: list):
        """Tell the reply of a request sent at ``started``. For a refusal to wait out (retry_policy.refusal) return
        the seconds its request waits alone before it is sent again: 0.0 when every request pauses (the gate holds
        it), the pause asked when the refusal is stray (``judge``). The seconds of its pause are appended to
        ``paused``, the pauses of the request's refusals so far, as long as they stay within RATE_LIMIT_PATIENCE.
        None for any other reply, or a refusal past that (retried as the policy says)."""
        asked = refusal(reply.status_code, reply.headers)
        if asked is not None:
            verdict = self.judge(reply.headers)
            pause = self.pause(asked, started)
            if sum(paused) + pause <= RATE_LIMIT_PATIENCE:
                if verdict is True:
                    self.meter.refuse(self._clock(), stray=True)
                else:
                    self.leave(refused_for=asked, started=started, run=verdict is False)
                paused.append(pause)
                return pause if verdict is True else 0.0
        self.leave(took=self._clock() - started, stated=quota(reply.headers))
        return None

    def judge(self, headers):
        """Tell what a refusal (its reply's ``headers``) received now is: None when it is not judged (a pace is set,
        a pause is on, its reply states a quota: a limiter's), True when it is stray, False when the replies show a
        run (Meter.stray)."""
        if self.pace.gap or self._clock() < self.gate.resume_at or quota(headers) is not None:
            return None
        return self.meter.stray()

    def pause(self, asked, started=None):
        """Return the seconds a refusal asking ``asked`` (UNSAID: no Retry-After) of a request sent at ``started``
        pauses for: without Retry-After, REFUSAL_FLOOR once paced or when a request sent in the WINDOW before it
        was admitted (the pace it sets spaces the requests), else REFUSAL_PAUSE."""
        if asked != UNSAID:
            return asked
        if self.pace.gap:
            return REFUSAL_FLOOR
        admitted = self.meter.admitted
        recent = bool(admitted) and (started is None or self.meter.admitted_since(started - WINDOW))
        return REFUSAL_FLOOR if recent else REFUSAL_PAUSE

    def leave(self, refused_for=None, took=None, started=None, stated=None, run=False):
        """Tell that the request (sent at ``started``) is over: refused, asking ``refused_for`` seconds (UNSAID: no
        Retry-After; every request pauses), or answered in ``took`` seconds, its reply stating the quota ``stated``
        (retry_policy.Quota, or None), or failed without a reply (``took`` None): sent and broken before any byte of
        its reply when ``started`` is given, else not sent or not known to be. ``run``: the refusal was judged one
        of a run (``judge``), so that a pause during which nothing else is answered is judged by those replies.

        A request broken unanswered after it went out counts as admitted, sent at ``started``: a limiter in front of
        a server that drops some connections (a 503 storm's resets) has let it through and spent a request of its
        rate on it. A reset made in front of the limiter instead overstates that rate by the share of requests
        reset, which the pace's BELOW absorbs up to a tenth; a further refusal lowers the pace again."""
        now = self._clock()
        if refused_for is None:
            self.meter.admit(now, took, started)
            if stated is not None and (stated.remaining == 0 or stated != self.pace.quota):
                self.gate.hold(self.pace.heed(stated, now))
            return
        self.meter.refuse(now)
        started = now if started is None else started
        seconds = self.pause(refused_for, started)
        if self.gate.pause(seconds, started, now, run):  # the first refusal of this pause
            self.pace.refused(seconds, refused_for == UNSAID)
