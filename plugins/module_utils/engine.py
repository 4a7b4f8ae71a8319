# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request engine (no Ansible imports): many requests at once, driven by completions, and a rate limit ridden
out by all of a client's senders together.

``ordered_map(function, items, workers)`` runs ``function`` on ``workers`` threads: a thread takes the next item as
soon as it finished its last one, whatever the others are doing, and the results are yielded in the items' order
(a slow item holds back only the yielding, never the other threads, up to ``WINDOW_PER_WORKER`` items a thread
ahead of the consumer, which keeps memory flat).

``Throttle`` is one per client (transport.Transport holds it): every request passes its gate. A refusal (``429``,
or ``503`` with ``Retry-After``) pauses every sender of the client until the time it names (one shared pause), and
halves how many requests may be in flight (multiplicative decrease, once per pause); each success lets one more in
again once as many successes as the limit were seen (additive increase), up to the callers' own concurrency, and
where one more is too many, a pace between the two. The retry policy (docs/docsite/rst/api.rst, "Retries and
outcomes") says how long a request may be refused.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import itertools
import threading
import time

from ansible_collections.netaccess.nac.plugins.module_utils.retries import RATE_LIMIT_PATIENCE, refusal

RECENT = 1 << 16  # successes remembered at most (those of the last Throttle.WINDOW seconds are what count)
WINDOW_PER_WORKER = 64  # results a thread may be ahead of the consumer: a straggler holds back only the yielding
UNLIMITED = 1 << 30


class Throttle:
    """The shared pause and the adaptive limit of one client's requests (thread-safe); ``clock`` (monotonic) and
    ``sleep`` are the transport's.

    The first refusal of a pause (``refused`` requests allowed in flight then) drops the limit to what the
    service admitted (Little's law: its successes of the last ``WINDOW`` seconds times a request's time), at most
    half of ``refused``, rounded up (multiplicative decrease), and sets the ceiling one below ``refused``; a
    refused probe of the ceiling goes back to the ceiling below it. The limit grows back by one (additive
    increase) once it had ``limit`` successes and half as long a time without a refusal as the last pause was (a
    service that asks for long pauses is approached slowly), up to the ceiling; the ceiling itself is probed again
    after ``PROBE_PAUSES`` pauses' time without a refusal (a service whose limit was lifted gets the callers'
    concurrency back). A limit too coarse for the rate admitted (two in flight admitted, three refused) is refined
    by a pace (``_pace``): once the limit has held back the requests for a window at its ceiling, they start a
    ``gap`` apart, PACE_STEP faster than the rate just seen."""

    WINDOW = 1.0  # seconds of successes that tell the rate the service admits
    PROBE_PAUSES = 30  # pauses' time without a refusal before the limit may exceed the refused one (at least 10 s)
    PACE_STEP = 1.03  # a paced probe sends this much faster than the rate last admitted
    MIN_RATE = 0.1  # requests a second: the slowest pace

    def __init__(self, clock=time.monotonic, sleep=time.sleep):
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._slot = threading.Condition(self._lock)  # signalled when a request leaves the gate
        self.limit = UNLIMITED  # requests in flight allowed; no limit until the first refusal
        self.ceiling = UNLIMITED  # the additive increase stops here (one below the refused limit)
        self.active = 0
        self.resume_at = 0.0  # no request is sent before this clock time
        self.refusals = 0  # refusals waited out (each request was sent again after the pause)
        self._successes = 0
        self._recent = collections.deque(maxlen=RECENT)  # clock times of the successes (of the last WINDOW seconds)
        self._took = None  # a request's time, smoothed
        self._probe_at = self._grow_at = self._step = 0.0
        self._probed = False  # the ceiling was raised by a probe since the last refusal
        self.gap = 0.0  # seconds between two requests' starts once paced (0: not paced)
        self._next_start = 0.0  # the clock time the next request may start at, when paced
        self._pace_at = 0.0  # not before this clock time: the pace is probed faster
        self._full = 0  # successes in a row answered while every slot of the limit was taken
        # Until the first refusal nothing is held back: a request is only counted in and out (a count's next()
        # needs no lock), so that the first refusal knows how many were in flight; the lock is taken from then on.
        # 32 threads taking it for every request cost 7 us of CPU and half a context switch a request.
        self._entered, self._left = itertools.count(), itertools.count()

    def enter(self):
        """Wait until no pause is on and fewer than ``limit`` requests are in flight, and, once paced, until ``gap``
        seconds after the last request started; then one more is in flight."""
        if self.limit >= UNLIMITED and not self.resume_at:  # never refused: nothing to wait for
            next(self._entered)
            return
        slept_to = None
        while True:
            with self._lock:
                until = self.resume_at
                if until == slept_to or until <= self._clock():  # the pause is over (or this one was slept)
                    if self.active < self.limit:
                        self.active += 1
                        wait = self._paced()
                        break
                    self._slot.wait()
                    continue
                wait = until - self._clock()
            self._sleep(wait)  # a later refusal may make the pause longer meanwhile: looked at again after
            slept_to = until
        if wait > 0:
            self._sleep(wait)

    def _paced(self):
        """Seconds until this request may start (lock held): none while not paced."""
        if not self.gap:
            return 0.0
        now = self._clock()
        start = max(now, self._next_start)
        self._next_start = start + self.gap
        return start - now

    def send(self, send, *args):
        """``send(*args)`` once the gate lets it through: (what it returned, the clock when it was sent). A send
        that raises leaves the gate here; a reply is told to ``answered``."""
        self.enter()
        started = self._clock()
        try:
            return send(*args), started
        except BaseException:
            self.leave()
            raise

    def answered(self, reply, started, write, paused):
        """The reply of a request sent at ``started`` leaves the gate. True when it is a refusal to wait out
        (retries.refusal): the seconds of its pause are appended to ``paused``, which holds the pauses of the
        request's refusals so far, as long as they stay within RATE_LIMIT_PATIENCE; False for any other reply, or
        a refusal past that (retried as the policy says)."""
        pause = refusal(reply.status_code, reply.headers, write)
        if pause is not None and sum(paused) + pause <= RATE_LIMIT_PATIENCE:
            self.leave(refused_for=pause)
            paused.append(pause)
            return True
        self.leave(took=self._clock() - started)
        return False

    def leave(self, refused_for=None, took=None):
        """The request is over: refused, asking ``refused_for`` seconds (every sender pauses), or answered in
        ``took`` seconds (None: it failed without a reply)."""
        if refused_for is None and self.limit >= UNLIMITED and not self.resume_at:  # never refused: no lock
            next(self._left)
            if took is not None:
                self._took = took if self._took is None else 0.8 * self._took + 0.2 * took
                self._recent.append(self._clock())
            return
        with self._lock:
            if self.limit >= UNLIMITED and not self.resume_at:  # the first refusal: counted under the lock from now
                self.active = next(self._entered) - next(self._left)  # those counted in, this one still among them
            in_flight, now = self.active, self._clock()
            self._full = self._full + 1 if in_flight >= self.limit else 0
            self.active = max(0, self.active - 1)
            recent = self._recent
            while recent and now - recent[0] > self.WINDOW:
                recent.popleft()
            if refused_for is not None:
                self.refusals += 1
                if now >= self.resume_at:  # the first refusal of this pause: the limit drops, once
                    self._drop(min(self.limit, in_flight), now, refused_for)
                self.resume_at = max(self.resume_at, now + refused_for)
                self._slot.notify_all()  # every waiter waits for resume_at now, the limit checked again then
                return
            if took is None:
                self._slot.notify()
                return
            self._took = took if self._took is None else 0.8 * self._took + 0.2 * took
            recent.append(now)
            if self.limit < UNLIMITED and now >= self.resume_at:  # answers that come in during a pause: no growth
                self._grow(now)
            self._slot.notify()

    def _drop(self, refused, now, pause):
        if self.gap:  # paced, and refused: back to the pace last admitted (or what was admitted, if less)
            admitted = len(self._recent) / self.WINDOW
            rate = min(1.0 / self.gap / self.PACE_STEP, admitted or self.MIN_RATE)
            self.gap = 1.0 / max(rate, self.MIN_RATE)
            self._pace_at = now + max(10.0, self.PROBE_PAUSES * pause)
            self._successes = 0
            return
        if self._probed and refused >= self.ceiling:  # the probe above the last refused limit was refused
            self.limit = self.ceiling = max(1, self.ceiling - 1)
        else:
            admitted = len(self._recent) / self.WINDOW * (self._took or 0.0)
            self.limit = max(1, min((refused + 1) // 2, int(admitted + 0.5)))
            self.ceiling = max(self.limit, refused - 1)
        self._successes, self._probed = 0, False
        self._step = pause / 2.0
        self._grow_at = now + pause + self._step  # the pause, then half as long without a refusal
        self._probe_at = now + max(10.0, self.PROBE_PAUSES * pause)

    def _grow(self, now):
        self._successes += 1
        if self.gap or (self.limit >= self.ceiling and self._full >= len(self._recent) and now >= self._grow_at):
            self._pace(now)
            return
        if self._successes < self.limit or now < self._grow_at:
            return
        if self.limit >= self.ceiling:
            if now < self._probe_at:
                return
            self.ceiling += 1
            self._probed = True
            self._probe_at = now + max(10.0, self.PROBE_PAUSES * 2.0 * self._step)
        self._successes = 0
        self._grow_at = now + self._step
        self.limit += 1
        self._slot.notify()

    def _pace(self, now):
        """At the ceiling, every slot taken for a whole window without a refusal: the rate the service admits lies
        between what this limit gets and what one more got refused at. From here the requests are paced: a start
        every ``gap`` seconds, PACE_STEP faster than the rate just seen, with one slot more than the rate needs
        (Little's law); the pace is probed faster again after PROBE_PAUSES pauses' time without a refusal."""
        if now < self._pace_at or now - self.resume_at < 2 * self.WINDOW:
            return
        seen = len(self._recent) / self.WINDOW
        rate = max(seen, 1.0 / self.gap if self.gap else 0.0) * self.PACE_STEP
        self.gap = 1.0 / max(rate, self.MIN_RATE)
        self.limit = self.ceiling = max(self.limit, int(rate * (self._took or 0.0)) + 2)
        self._pace_at = now + max(10.0, self.PROBE_PAUSES * 2.0 * self._step)
        self._slot.notify_all()


def ordered_map(function, items, workers):
    """``map(function, items)`` on up to ``workers`` threads, driven by completions, yielding in the items' order.

    Items are taken lazily (never more than ``WINDOW_PER_WORKER * workers`` ahead of the consumer). When a call
    raises, no new item is started and the exception propagates; when the consumer stops early, the threads end
    after their current item."""
    return _OrderedMap(function, iter(items), workers).results()


class _OrderedMap:
    def __init__(self, function, items, workers):
        self.function, self.items, self.workers = function, items, max(1, workers)
        self.ahead = WINDOW_PER_WORKER * self.workers
        self.lock = threading.Lock()
        self.ready = threading.Condition(self.lock)  # the consumer: the next result in order has come
        self.room = threading.Condition(self.lock)  # the threads: the consumer took a result
        self.done = {}
        self.taken = self.yielded = 0
        self.over = False  # items exhausted, or stopped
        self.failure = None
        self.threads = []

    def _spawn(self):
        thread = threading.Thread(target=self._work, name="nac-worker-%d" % len(self.threads), daemon=True)
        self.threads.append(thread)
        thread.start()

    def _take(self):
        """(index, item) of the next item, or None when there is none to take (lock held)."""
        while not self.over and self.taken - self.yielded >= self.ahead:
            self.room.wait()
        if self.over:
            return None
        try:
            item = next(self.items)
        except StopIteration:
            self._end()
            return None
        except BaseException as exc:  # pylint: disable=broad-except  # the consumer raises it
            self._end(exc)
            return None
        self.taken += 1
        if len(self.threads) < self.workers and self.taken >= len(self.threads):
            self._spawn()  # one thread more while every thread has an item: never more threads than items
        return self.taken - 1, item

    def _end(self, failure=None):
        if failure is not None and self.failure is None:
            self.failure = failure
        self.over = True
        self.ready.notify_all()
        self.room.notify_all()

    def _work(self):
        while True:
            with self.lock:
                taken = self._take()
            if taken is None:
                return
            index, item = taken
            try:
                result = self.function(item)
            except BaseException as exc:  # pylint: disable=broad-except  # the consumer raises it
                with self.lock:
                    self._end(exc)
                return
            with self.lock:
                self.done[index] = result
                if index == self.yielded:
                    self.ready.notify()

    def results(self):
        with self.lock:
            self._spawn()
        try:
            while True:
                with self.lock:
                    while self.failure is None and self.yielded not in self.done:
                        if self.over and self.yielded >= self.taken:
                            return
                        self.ready.wait()
                    if self.failure is not None:
                        raise self.failure
                    result = self.done.pop(self.yielded)
                    self.yielded += 1
                    self.room.notify()
                yield result
        finally:
            with self.lock:
                self._end()
            for thread in self.threads:
                if thread is not threading.current_thread():
                    thread.join()
