# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pace of one client's requests (no Ansible imports): a rate limit ridden out by all of a client's senders
together.

``Throttle`` is one per client (transport.Transport holds it): every request passes its gate. A refusal (every
``429`` and ``503``: retry_policy.refusal) that comes among many admitted replies is a stray one (a flaky proxy, a
WAF's hiccup): only its own request waits what it asks, the pace untouched. Any other refusal pauses every sender of
the client until the time it names (one shared pause), and when the requests in flight meanwhile were refused too (a
limiter refuses in runs), the requests are paced by rate from then on: below the rate the service admitted just
before it, lower again on each further refusal (multiplicative decrease), faster again slowly while nothing is
refused, the more slowly the longer the pauses the service asks for. The retry policy (docs/docsite/rst/api.rst,
"Retries and outcomes") says how long a request may be refused.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import itertools
import threading
import time

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import SENDING, Sleep, run
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    RATE_LIMIT_PATIENCE,
    REFUSAL_FLOOR,
    REFUSAL_PAUSE,
    RETRY_AFTER_CAP,
    UNSAID,
    broke_unanswered,
    never_sent,
    quota,
    refusal,
)

RECENT = 1 << 16  # admitted requests remembered at most (those sent in the last Throttle.WINDOW seconds count)
REPLIES = 256  # replies remembered (when received, whether refused): they tell a stray refusal from a limiter's
STRAY_SAMPLE = 32  # a refusal is judged among the last replies, at most this many (itself counted) ...
STRAY_SHARE = 0.25  # ... and is a limiter's when at least this share of them were refusals, else stray ...
RUN = 4  # ... and at least this many (a quarter of 16: early on, a few replies tell little)
RUN_SHARE = 0.5  # a shared pause paces when at least this share of the replies received during it were refusals


class Throttle:
    """The shared pause and the pace of one client's requests (thread-safe); ``clock`` (monotonic) and ``sleep``
    are the transport's.

    Until the first refusal nothing is held back. A refusal is judged first (``answered``): while no pace is set, one
    among the last STRAY_SAMPLE replies (itself counted) of which fewer than STRAY_SHARE, or fewer than RUN, were
    refusals is stray: its request alone waits what it asks (what ``pause`` gives without Retry-After) and is sent
    again, the others go on, the pace untouched (``strays`` counts them). A service refusing now and then, a proxy
    failing one request in twenty, then costs the requests it concerns a pause each, never the whole client its
    speed. Any other refusal pauses every sender: until its Retry-After, else for
    REFUSAL_FLOOR once the requests are paced or a request sent in the ``WINDOW`` before the refused one was
    admitted (the pace it sets spaces the requests: a pace a little too fast needs no long pause to be corrected),
    and REFUSAL_PAUSE before that. The first refusal of a pause sets the pace once the pause is over, from the
    requests admitted that were sent in the ``WINDOW`` seconds before the refused one: their count over the
    ``WINDOW`` (a limiter that admitted ten and then refused everything admits ten a window), at most the pace
    refused, times BELOW; each further refusal again (multiplicative decrease). Only when refusals came together,
    though: the first pause of an unpaced client sets no pace when fewer than RUN_SHARE of the replies received
    during it were refusals (the requests in flight were admitted: no limiter refuses so, a burst of stray refusals
    does), or, none received, when fewer than RUN_SHARE of the last STRAY_SAMPLE replies before it were; the client
    is then as before the pause. A refused probe falls back to the
    pace that held its probe period (``good_rate``) instead, the rate admitted being only the pace probed towards: a
    count that straddles the start of a fixed window, or takes in a refilled burst, overstates what the service
    admits, a pace that held does not. A refilled burst may let a pace a little too fast hold its probe period,
    though: a probe halfway up refused (``_halving``) goes back no faster than the rate admitted since the last
    pause ended (``_sustained``), which is then the rate probed towards. The task's first refusal, when it names no
    Retry-After, is read as the rate they were admitted at instead: their count over the time they were sent in, at
    least a request's time (a limiter that admits one of eight requests sent at once admits one a round trip).
    Nothing admitted: the pace refused, times BELOW (not paced until something is).

    While nothing is refused the pace is probed faster: doubled (PROBE_FAST) after the pause last asked (half a
    ``WINDOW`` after a pause of a ``WINDOW`` or less) as long as no pace was refused, then halfway to the rate
    admitted before the last refusal (``ceiling``, or the pace refused when lower) after HALVING_PAUSES of those
    pauses (at least two ``WINDOW``: a pace held that long has had a whole fixed window to itself), then by
    PROBE_STEP after PROBE_PAUSES of them (at least 10 s): the longer the pauses asked, the more slowly. A first
    refusal without Retry-After tells the rate admitted while sending faster: probed towards, never doubled past.
    A quota the service states on a reply (retry_policy.quota: the RateLimit headers, Kong's X-RateLimit-<unit>) of
    a window of QUOTA_PACED seconds or less paces the requests at once, QUOTA_BELOW its limit a window, and no pace
    goes past it (``quota_rate``); a reply saying none is left holds every request until the window starts afresh.
    The pace starts the requests ``gap`` seconds apart; as many may be in flight as the callers' concurrency
    allows."""

    WINDOW = 1.0  # seconds of admitted requests that tell the rate the service admits
    BELOW = 0.9  # a refusal sets the pace this much below the rate admitted (each further one: again)
    PROBE_FAST = 2.0  # until a pace is refused, it is probed this much faster after a pause's time
    HALVING_PAUSES = 2  # then halfway to the pace refused (or rate admitted) after this many pauses' time (>= 2 s)
    PROBE_STEP = 1.03  # and once there, this much faster ...
    PROBE_PAUSES = 30  # ... after this many pauses' time without a refusal (at least 10 s)
    MIN_RATE = 0.1  # requests a second: the slowest pace
    SLICE = 0.2  # seconds a request waiting for its start sleeps at most before it looks at the pace again
    USED = 0.8  # a pace is probed faster only once this share of its starts were taken since it last changed
    QUOTA_BELOW = 0.95  # a quota the service states (retry_policy.quota) is paced this much below its limit a window
    QUOTA_PACED = 10.0  # ... when its window is this many seconds or shorter (a longer one is spent, then waited out)

    def __init__(self, clock=time.monotonic, sleep=time.sleep):
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self.resume_at = 0.0  # no request is sent before this clock time
        self.refusals = 0  # refusals waited out (each request was sent again after the pause)
        self.rate = None  # requests a second once paced (None: not paced)
        self.gap = 0.0  # seconds between two requests' starts once paced (0: not paced)
        self.refused_rate = None  # the pace of the last refusal (None: refused before any pace)
        self.good_rate = None  # the fastest pace that held a whole probe period without a refusal since
        self.ceiling = None  # the rate admitted when the pace was last set from a refusal: probed towards, then past
        self._next_start = 0.0  # the clock time the next request may start at, when paced
        self._probe_at = 0.0  # the pace is probed faster at this clock time
        self._asked = REFUSAL_PAUSE  # seconds the last refusal paused for
        self._unsaid = False  # the last refusal named no Retry-After
        self._refused_sent = None  # when the first refused request of the pause was sent: the pace is set at its end
        self._first_sent = None  # when the task's first request was sent
        self._changed = None  # when the pace last changed (or the last pause ended)
        self._resumed = None  # when the last pause ended (the pace was set from a refusal)
        self._halving = False  # the last refusal came while probing halfway up to a pace refused before
        self._epoch = 0  # counts the paces set (and the pauses begun): a start given at an older one is taken again
        self._started = self._started_then = 0  # requests started at the pace in all, and when it last changed
        self._admitted = collections.deque(maxlen=RECENT)  # send times of requests answered (in answer order)
        self._took = None  # a request's time, smoothed
        # Until the first refusal nothing is held back and no lock is taken: a request is only counted in and out
        # (a count's next() needs no lock). 32 threads taking a lock for every request cost 7 us of CPU a request.
        self._entered = itertools.count()
        self._calm = True  # never refused: nothing to wait for
        self.quota_rate = None  # the pace a quota stated by the service allows (None: none stated)
        self._quota = None  # the last quota stated (retry_policy.Quota): a change is heeded, the same one is not
        self._window_start = None  # when a reply said its request was the first its window admitted (received)
        self.strays = 0  # refusals read as stray: their request alone waited (counted in ``refusals`` too)
        self._replies = collections.deque(maxlen=REPLIES)  # (received, refused) of the last replies
        self._paused_at = None  # when the first refusal of the shared pause on was received
        self._run = False  # the first refusal of the pause on was judged a run among the replies before it (judge)

    def enter(self):
        """Wait until no pause is on and, once paced, until ``gap`` seconds after the last request started."""
        run(self.enter_steps())

    def enter_steps(self):
        """``enter`` as steps (loop.py): each wait a loop.Sleep (under the loop, a timer), never holding the lock."""
        if self._calm:
            if self._first_sent is None:
                self._first_sent = self._clock()
            next(self._entered)
            return
        # slot: the pace (epoch) this request was given its start at; mark: the time it has slept to (a clock that
        # sleeping does not move, as in the tests, still moves on for it)
        slept_to, slot, start, mark = None, None, 0.0, None
        while True:
            with self._lock:
                now, until = self._clock(), self.resume_at
                now = now if mark is None else max(now, mark)
                if until == slept_to or until <= now:  # no pause on (or the one slept is over)
                    if slot != self._epoch:  # no start yet, or the pace changed since: a start at this pace
                        if self._refused_sent is not None:
                            self._set_pace(max(now, until))
                        start, slot = self._paced(max(now, until)), self._epoch
                    if start <= now:
                        self._started += 1
                        return
                    wait = min(start - now, self.SLICE)  # a new pace meanwhile re-spaces the requests waiting
                else:
                    wait = until - now
            yield Sleep(wait, self._sleep)
            slept_to, mark = until, now + wait

    def _paced(self, now):
        """The clock time this request may start at (lock held): now while not paced; probed faster when due."""
        if not self.gap:
            return now
        if (
            now >= self._probe_at
            and (self.quota_rate is None or self.rate < self.quota_rate)  # never probed past a quota stated
            and self._started - self._started_then >= self.USED * (now - self._changed) * self.rate
        ):
            self._probe(now)  # (only a pace the requests kept up with: not one that requests waiting hid)
        start = max(now, self._next_start)
        self._next_start = start + self.gap
        return start

    def send_steps(self, send, *args):
        """Steps (loop.py): ``send(*args)`` (steps) once the gate lets it through: (what it returned, the clock when
        it was sent). Until the first refusal the gate holds nothing back and is passed at once; after it, each wait
        at the gate is a loop.Sleep (under the loop, a timer: the other requests go on). A send that raises leaves
        the gate here (a request that went out, any of its bytes written, and broke before any byte of its reply as
        sent at ``started``: as far as can be told, it passed the limiter); a reply is told to ``answered``."""
        yield from self.enter_steps()
        yield SENDING  # (under the loop: once an in-flight slot is free; a request waiting above holds none)
        started = self._clock()
        try:
            return (yield from send(*args)), started
        except BaseException as exc:
            self.leave(started=started if broke_unanswered(exc) and not never_sent(exc) else None)
            raise

    def answered(self, reply, started, paused):
        """The reply of a request sent at ``started`` leaves the gate. For a refusal to wait out (retry_policy.refusal)
        the seconds its request waits alone before it is sent again: 0.0 when every sender pauses (the gate holds
        it), the pause asked when the refusal is stray (``judge``). The seconds of its pause are appended to
        ``paused``, which holds the pauses of the request's refusals so far, as long as they stay within
        RATE_LIMIT_PATIENCE. None for any other reply, or a refusal past that (retried as the policy says)."""
        asked = refusal(reply.status_code, reply.headers)
        if asked is not None:
            verdict = self.judge(reply.headers)
            stray = verdict is True
            pause = self.pause(asked, started)
            if sum(paused) + pause <= RATE_LIMIT_PATIENCE:
                if stray:
                    self._stray()
                else:
                    self.leave(refused_for=asked, started=started, run=verdict is False)
                paused.append(pause)
                return pause if stray else 0.0
        self.leave(took=self._clock() - started, stated=quota(reply.headers))
        return None

    def judge(self, headers):
        """What a refusal (its reply's ``headers``) received now is: None when it is not judged (a pace is set, a
        pause is on, its reply states a quota: a limiter's), True when it is stray (of the last STRAY_SAMPLE replies,
        itself counted, fewer than STRAY_SHARE, or fewer than RUN, were refusals), False when the replies show a run
        (a limiter's, though the pause it begins may end without a pace: ``_apart``)."""
        if self.gap or self._clock() < self.resume_at or quota(headers) is not None:
            return None
        recent = [refused for _at, refused in list(self._replies)[1 - STRAY_SAMPLE :]] + [True]
        refused = sum(recent)
        return refused < RUN or refused < STRAY_SHARE * len(recent)

    def _stray(self):
        """A stray refusal: counted, remembered among the replies, nothing else changes."""
        with self._lock:
            self.refusals += 1
            self.strays += 1
        self._replies.append((self._clock(), True))

    def pause(self, asked, started=None):
        """The seconds a refusal asking ``asked`` (UNSAID: no Retry-After) of a request sent at ``started`` pauses
        for: without Retry-After, REFUSAL_FLOOR once paced or when a request sent in the ``WINDOW`` before it was
        admitted (the pace it sets spaces the requests), else REFUSAL_PAUSE."""
        if asked != UNSAID:
            return asked
        if self.gap:
            return REFUSAL_FLOOR
        admitted = self._admitted[-1] if self._admitted else None
        recent = admitted is not None and (started is None or admitted >= started - self.WINDOW)
        return REFUSAL_FLOOR if recent else REFUSAL_PAUSE

    def leave(self, refused_for=None, took=None, started=None, stated=None, run=False):
        """The request (sent at ``started``) is over: refused, asking ``refused_for`` seconds (UNSAID: no
        Retry-After; every sender pauses), or answered in ``took`` seconds, its reply stating the quota ``stated``
        (retry_policy.Quota, or None), or failed without a reply (``took`` None): sent (any of its bytes written)
        and broken before any byte of its reply when ``started`` is given, else not sent or not known to be. ``run``:
        the refusal was judged one of a run among the replies before it (``judge``), so that a pause it begins and
        during which nothing else is answered is judged by those replies.

        A request broken unanswered after it went out counts as admitted, sent at ``started``: a limiter in
        front of a server that drops some connections (a 503 storm's resets) has let it through and spent a
        request of its rate on it, so the rate admitted is counted with it. A reset made in front of the limiter
        instead overstates that rate by the share of requests reset, which the pace's BELOW absorbs up to a
        tenth; a further refusal lowers the pace again."""
        now = self._clock()
        self._replies.append((now, refused_for is not None))
        if refused_for is None:
            if took is not None:
                self._took = took if self._took is None else 0.8 * self._took + 0.2 * took
                self._admitted.append(now - took)
            elif started is not None:
                self._admitted.append(started)
            if stated is not None and (stated.remaining == 0 or stated != self._quota):
                with self._lock:
                    self._heed(stated, now)
            return
        with self._lock:
            self._calm = False
            self.refusals += 1
            started = now if started is None else started
            if now >= self.resume_at and self._refused_sent is None:  # the first refusal of this pause
                self._epoch += 1
                self._refused_sent, self._paused_at, self._run = started, now, run
                self._halving = self.refused_rate is not None  # a pace was refused before: probed halfway up
                self.refused_rate = self.rate
                if self.rate is not None and self.good_rate is not None and self.rate <= self.good_rate:
                    self.good_rate = None  # a pace that held was refused: the service admits less now
                self._unsaid = refused_for == UNSAID
                self._asked = self.pause(refused_for, started)
            self.resume_at = max(self.resume_at, now + self.pause(refused_for, started))

    def _heed(self, stated, now):
        """A reply received at ``now`` stated the quota ``stated`` (lock held). A window of QUOTA_PACED seconds or
        less paces the requests at QUOTA_BELOW its limit a window, at once (its budget spread, never spent in a
        burst and refused), and is never probed past; once none is left, no request starts before the window
        starts afresh: its reset, or sooner the next start of a window from when a reply said its request was the
        first of its window (a clock second's window told ``reset: 1`` all through it), never past RETRY_AFTER_CAP."""
        self._quota, window = stated, stated.window
        if window is not None and stated.remaining == stated.limit - 1:
            self._window_start = now  # the window started before this reply was received: never too early
        if window is not None and window <= self.QUOTA_PACED:
            rate = max(stated.limit * self.QUOTA_BELOW / window, self.MIN_RATE)
            if rate != self.quota_rate:
                self.quota_rate = rate
                if self.rate is None or self.rate > rate:
                    self._calm = False
                    self._pace_at(rate, now)
        if stated.remaining:
            return
        until = now + (stated.reset if stated.reset is not None else window)
        if window is not None and self._window_start is not None:
            until = min(until, now + window - (now - self._window_start) % window)
        self._calm = False
        self.resume_at = max(self.resume_at, min(until, now + RETRY_AFTER_CAP))

    def _pace_at(self, rate, now):
        """The requests start ``1 / rate`` apart from ``now`` on (lock held); probed faster a period later."""
        self.rate, self.gap = rate, 1.0 / rate
        self._next_start, self._changed = now, now
        self._probe_at = now + self._probe_period()
        self._started_then, self._epoch = self._started, self._epoch + 1

    def _set_pace(self, now):
        """The pause is over: the pace from the requests admitted before the refused one (lock held)."""
        sent, changed, resumed = self._refused_sent, self._changed or self._first_sent, self._resumed
        self._refused_sent, self._changed, self._resumed = None, now, now
        if self.rate is None and self.quota_rate is None and self._apart():
            self._calm = True  # the requests in flight were admitted: a stray refusal's pause, no pace
            return
        if self._unsaid:  # no Retry-After: the rate admitted since the pace last changed (at least a request's time)
            since = max(sent - self.WINDOW, changed if changed is not None else sent)
            span = max(sent - since, self._took or 0.0, 1e-3)
        else:  # a pause asked: what the whole window admitted (a penalty box's count is its limit)
            since, span = sent - self.WINDOW, self.WINDOW
        admitted = sum(1 for at in list(self._admitted) if since <= at < sent)
        if admitted:
            rate = admitted / span
            if self.refused_rate is not None:
                rate = min(rate, self.refused_rate)
        elif self.refused_rate is not None:
            rate = self.refused_rate
        else:
            return  # nothing admitted yet: not paced until a refusal tells a rate
        sustained = self._sustained(resumed, sent)
        self.ceiling = rate = rate if sustained is None else min(rate, sustained)
        if self._unsaid and self.refused_rate is None:  # a rate admitted while sending faster: probed towards, not
            self.refused_rate = rate  # doubled past (a window's count, when a pause was asked, may be a part of it)
        # a probe refused: back to the pace that held (the rate admitted, which may count a burst or two fixed
        # windows, is only probed towards); else below the rate admitted
        pace = self.good_rate or rate * self.BELOW
        rate = max(pace if sustained is None else min(pace, rate), self.MIN_RATE)
        self._pace_at(rate if self.quota_rate is None else min(rate, self.quota_rate), now)

    def _apart(self):
        """Whether the replies received during the shared pause now ending (after its first refusal) were mostly
        admitted: fewer than RUN_SHARE of them refusals; none received (nothing else was in flight), the last
        STRAY_SAMPLE replies before it, when ``judge`` found its first refusal in a run (lock held)."""
        replies = list(self._replies)
        during = [refused for at, refused in replies if at > self._paused_at]
        if not during and self._run:
            during = [refused for at, refused in replies if at <= self._paused_at][-STRAY_SAMPLE:]
        return bool(during) and sum(during) < RUN_SHARE * len(during)

    def _sustained(self, resumed, sent):
        """The rate admitted from the end of the last pause to the refused request's send (lock held), when the
        refusal came while probing halfway up and that was over a WINDOW ago, else None. A burst refilled during
        the pause inflates a second's count, and may let a pace a little too fast hold a probe period: over the
        longer time it weighs less."""
        if not self._halving or resumed is None or sent - resumed <= self.WINDOW:
            return None
        if len(self._admitted) >= RECENT and self._admitted[0] >= resumed:  # not all remembered: no estimate
            return None
        return sum(1 for at in list(self._admitted) if resumed <= at < sent) / (sent - resumed)

    def _target(self):
        """The pace probed towards: the pace refused, or the rate admitted when the pace was set, when lower."""
        return min(self.refused_rate, self.ceiling or self.refused_rate)

    def _probe_period(self):
        if self.refused_rate is None:  # doubling: after a pause's time, half a WINDOW after a pause of a WINDOW or less
            return self._asked if self._asked > self.WINDOW else self.WINDOW / 2.0
        if self.rate * self.PROBE_STEP < self._target():  # halfway to the pace refused (or the rate admitted)
            return max(2 * self.WINDOW, self.HALVING_PAUSES * self._asked)
        return max(10.0, self.PROBE_PAUSES * self._asked)

    def _probe(self, now):
        """Nothing refused for a probe period at this pace: it held (``good_rate``); a faster one (lock held):
        doubled until a pace is refused, then halfway to the pace refused, then PROBE_STEP beyond it."""
        self.good_rate = self.rate
        if self.refused_rate is None:
            self.rate *= self.PROBE_FAST
        else:
            self.rate = max(self.rate * self.PROBE_STEP, (self.rate + self._target()) / 2.0)
        self.rate = min(self.rate, self.quota_rate or self.rate)
        self.gap = 1.0 / self.rate
        self._probe_at = now + self._probe_period()
        self._changed, self._started_then = now, self._started
        self._next_start, self._epoch = now, self._epoch + 1
