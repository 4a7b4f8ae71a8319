# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Riding out a service that cannot be reached at all (no Ansible imports; I/O only through the callables
given): one ``Outage`` per client, shared by its threads (and by its event loop's requests: each wait is a
loop.Blocking, on a helper thread of its own).

A restart of the service refuses every connection for a while; a hung one answers nothing. Each request
alone would spend its own retries on that and fail. Instead, the first request that finds the service
unreachable starts an outage and probes it (``probe(timeout)``: None once the service answered anything,
else why not) with backoff; every other request waits on that outage instead of sending, and all resume
when a probe is answered. When the service has not answered for ``bound`` seconds, the outage is given
up: the waiting requests fail with ``Unreachable``, and so does every later one until the service
answers again (re-checked with one probe at most every ``RECHECK`` seconds).

Only once the service has answered a request of this client: a service never reached (a wrong address
or port) is left to the ordinary retries, so it fails fast. A request whose failure came after another
request was answered is no sign of an outage either (the service answers: an ordinary retry), when that other
request was sent after it: a reply read late, to a request sent before a restart, tells nothing of the
requests refused since, and ends no outage that began after it was sent. What a
request does after an outage (send again, or leave a write of unknown outcome to the caller) is the
transport's: the policy is the table "Retries and outcomes" of the API guide (docs/docsite/rst/api.rst).

``limit_waiting(seconds, why)`` bounds the waiting further, for a caller with a rhythm of its own (the
event source's rounds): once nothing has answered for ``seconds`` (counted from entering it at the
earliest), waiting requests fail with ``Unreachable`` instead of waiting on.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import random
import threading
import time

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Blocking

DOWN, GAVE_UP = "down", "gave up"
UP, RECOVERED = "up", "recovered"  # what a wait ended with: answered at the first probe, or after an outage
PROBE_BASE = 0.5  # the pauses between two probes: jittered, from 0.5 s doubling up to PROBE_CAP
PROBE_CAP = 5.0
RECHECK = 5.0  # after giving up: at most one probe this often
MIN_PROBE_TIMEOUT = 1.0
FOLLOWER_POLL = 1.0  # a waiting request looks again this often (real seconds), should its leader be gone


class Unreachable(Exception):
    """The service could not be reached for ``seconds`` (``reason``: the last failure) and the waiting
    ended: ``limit`` says which bound ended it."""

    def __init__(self, seconds, reason, limit):
        super(Unreachable, self).__init__("unreachable for %g s (%s); %s" % (seconds, reason, limit))
        self.seconds, self.reason, self.limit = seconds, reason, limit


class _Episode:
    """One outage: since when, why, and who probes it."""

    def __init__(self, started, reason, since, probes=0):
        self.started = started
        self.since = since  # when the failed attempt that began it was sent: only a request sent later ends it
        self.reason = reason
        self.probes = probes  # probes sent so far (kept when a flapping service continues an outage)
        self.state = DOWN
        self.leader = None  # the thread that probes, or None
        self.checked = None  # when given up: the clock of the last probe
        self.ended = None


class Outage:
    """The outage state of one client (see the module's docstring). ``bound``: seconds (0: never wait)."""

    def __init__(self, bound, probe, probe_timeout, clock=time.monotonic, sleep=time.sleep, jitter=random.uniform):
        self.bound = bound
        self._probe = probe
        self._probe_timeout = probe_timeout
        self._clock, self._sleep, self._jitter = clock, sleep, jitter
        self._cond = threading.Condition()
        self._answered_at = None  # the clock of the latest reply to a request (never a probe's)
        self._reached_at = None  # the latest clock at which a request that was answered was sent
        self._episode = None  # the outage under way (DOWN or GAVE_UP), or None
        self._last = None  # the latest outage, when nothing but its probe has answered since it ended
        self._limit = None  # (seconds, since, why) of limit_waiting

    def answered(self, sent_at):
        """A request sent at ``sent_at`` (before_send's clock) was answered (any HTTP status): the service was up when
        it was sent. That ends an outage only when the request was sent no earlier than the attempt that began it: a
        reply read late, to a request sent before a restart, says nothing of the restart. With no outage to end (the
        usual case) only the clocks are noted, without the lock that every request of the client would contend for
        (two replies at once may keep the earlier send time: a failure then starts an outage that its first probe
        ends); an outage that began meanwhile is ended by the next reply (which takes the lock)."""
        if self._episode is None and self._last is None:
            self._note(sent_at)
            return
        with self._cond:
            self._note(sent_at)
            episode = self._episode or self._last
            if sent_at < episode.since:  # sent before the attempt that began it: a late reply
                return
            if self._episode is not None:
                self._end(self._episode)
            self._last = None

    def _note(self, sent_at):
        """Note the clock of a reply, and the latest send time of a request that was answered."""
        self._answered_at = self._clock()
        if self._reached_at is None or sent_at > self._reached_at:
            self._reached_at = sent_at

    def before_send(self):
        """Called before each attempt: waits while an outage is under way, raises Unreachable once it was
        given up (unless a probe, at most one per RECHECK seconds, is answered). Returns the clock of now. With no
        outage under way nothing is waited for: the lock is not taken (as the Throttle's calm path)."""
        if self._episode is None:
            return self._clock()
        with self._cond:
            while True:
                episode = self._episode
                if episode is None:
                    return self._clock()
                if episode.state == GAVE_UP:
                    if episode.leader is not None or self._clock() - episode.checked < RECHECK:
                        raise self._unreachable(episode)
                    episode.leader = threading.current_thread()
                    break
                if episode.leader is None:
                    self._check_limit(episode)
                    episode.leader = threading.current_thread()
                    break
                self._cond.wait(FOLLOWER_POLL)
        if episode.state == GAVE_UP:
            self._recheck(episode)
        else:
            self._lead(episode)
        return self._clock()

    def before_send_steps(self):
        """``before_send`` as steps (loop.py): with no outage under way, the clock at once; else the wait is a
        loop.Blocking (under the loop, a helper thread of its own, a waiter as a thread is today)."""
        if self._episode is None:
            return self._clock()
        return (yield Blocking(self.before_send))

    def after_failure_steps(self, reason, sent_at):
        """``after_failure`` as steps (loop.py): a loop.Blocking."""
        return (yield Blocking(self.after_failure, reason, sent_at))

    def after_failure(self, reason, sent_at):
        """An attempt sent at ``sent_at`` found the service unreachable (``reason``). Returns None when this is
        no outage to wait out (the service never answered, or answered since, or ``bound`` is 0); else waits
        until the service answers: UP (at the first probe) or RECOVERED (after an outage). Raises
        Unreachable when the waiting ends first. "Answered since": a request sent after ``sent_at`` was answered
        (when its reply came does not matter: a late reply to an earlier request is no sign of the service)."""
        with self._cond:
            episode = self._episode
            if episode is None:
                if self.bound <= 0 or self._reached_at is None or self._reached_at > sent_at:
                    return None
                episode = self._episode = self._begin(reason, sent_at)
                if self._clock() >= episode.started + self.bound:  # a flapping service, past its bound
                    episode.state, episode.checked = GAVE_UP, self._clock()
                    raise self._unreachable(episode)
            elif episode.state == GAVE_UP:
                episode.reason = reason
                raise self._unreachable(episode)
            if episode.leader is None:
                episode.leader = threading.current_thread()
            if episode.leader is not threading.current_thread():
                return self._follow(episode)
        return self._lead(episode)

    @contextlib.contextmanager
    def limit_waiting(self, seconds, why):
        """Within it, waiting ends once nothing has answered for ``seconds`` (``why`` names that limit)."""
        with self._cond:
            self._limit = (seconds, self._clock(), why)
        try:
            yield self
        finally:
            with self._cond:
                self._limit = None
                self._cond.notify_all()

    # -- the state machine -------------------------------------------------------------

    def _begin(self, reason, sent_at):
        """A new outage (begun by an attempt sent at ``sent_at``), continuing the last one when nothing but its probe
        answered since (a flapping service gets one bound in all, not one per flap)."""
        last = self._last
        if last is not None:
            return _Episode(last.started, reason, sent_at, last.probes)
        return _Episode(self._clock(), reason, sent_at)

    def _end(self, episode):
        episode.ended, episode.leader = self._clock(), None
        if self._episode is episode:
            self._episode, self._last = None, episode
        self._cond.notify_all()

    def _follow(self, episode):
        """Wait (holding the lock's condition) until the outage ends; take over the probing if its leader left."""
        while self._episode is episode and episode.state == DOWN:
            if episode.leader is None:
                self._check_limit(episode)
                episode.leader = threading.current_thread()
                self._cond.release()
                try:
                    return self._lead(episode)
                finally:
                    self._cond.acquire()
            self._cond.wait(FOLLOWER_POLL)
        if self._episode is episode:  # given up
            raise self._unreachable(episode)
        return RECOVERED

    def _lead(self, episode):
        """Probe with backoff until the service answers (UP at the first probe, else RECOVERED), the bound
        passes (the outage is given up) or the limit of limit_waiting does; raise Unreachable for those."""
        first = episode.probes
        try:
            while True:
                end = self._end_of_waiting(episode)
                if episode.probes:
                    self._sleep(max(0.0, min(self._pause(episode.probes), end - self._clock())))
                timeout = min(self._probe_timeout, max(end - self._clock(), MIN_PROBE_TIMEOUT))
                failure = self._probe(timeout)
                episode.probes += 1
                with self._cond:
                    if failure is None or self._episode is not episode:
                        if self._episode is episode:
                            self._end(episode)
                        return UP if episode.probes - first == 1 and not first else RECOVERED
                    episode.reason = failure
                    now = self._clock()
                    if now >= episode.started + self.bound:
                        episode.state, episode.checked, episode.leader = GAVE_UP, now, None
                        self._cond.notify_all()
                        raise self._unreachable(episode)
                    if now >= end:
                        episode.leader = None
                        self._cond.notify_all()
                        raise self._unreachable(episode)
        except BaseException:
            with self._cond:
                if episode.leader is threading.current_thread():
                    episode.leader = None
                    self._cond.notify_all()
            raise

    def _recheck(self, episode):
        """Given up: one probe; the outage ends when it is answered, else Unreachable."""
        timeout = self._probe_timeout
        if self._limit is not None:
            seconds, since, _why = self._limit
            left = max(since, self._answered_at or since) + seconds - self._clock()
            timeout = min(timeout, max(left, MIN_PROBE_TIMEOUT))
        try:
            failure = self._probe(timeout)
        finally:
            with self._cond:
                episode.leader, episode.checked = None, self._clock()
                self._cond.notify_all()
        with self._cond:
            if failure is None:
                if self._episode is episode:
                    self._end(episode)
                return
            episode.reason = failure
            raise self._unreachable(episode)

    def _pause(self, probes):
        ceiling = min(PROBE_CAP, PROBE_BASE * (2 ** (probes - 1)))
        return self._jitter(ceiling / 2, ceiling)

    def _end_of_waiting(self, episode):
        """When the waiting for this outage ends: its bound, or sooner the limit of limit_waiting."""
        end = episode.started + self.bound
        if self._limit is not None:
            seconds, since, _why = self._limit
            end = min(end, max(since, self._answered_at or since) + seconds)
        return end

    def _check_limit(self, episode):
        if self._limit is not None and self._clock() >= self._end_of_waiting(episode):
            raise self._unreachable(episode)

    def _unreachable(self, episode):
        now = self._clock()
        if episode.state == GAVE_UP or self._limit is None or now >= episode.started + self.bound:
            limit = "the limit of unreachable_timeout (%g s)" % self.bound
        else:
            seconds, _since, why = self._limit
            limit = "nothing has answered for %g s (%s)" % (seconds, why)
        return Unreachable(now - episode.started, episode.reason, limit)
