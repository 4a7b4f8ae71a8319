# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress of long work (no Ansible imports): what is done, what failed, the refusals waited out and an estimate
of what is left, counted where the work is done (dot1x_query.py's queries, apply.py's writes) and told as one line to
``emit`` (a callable given by the glue: the module's progress file, the inventory plugin's display) at most every
``every`` seconds, and only once the work has run ``first`` seconds. A short task says nothing.

The line, for example::

    nac_dot1x_status: 1,204 of 2,005 queried, 3 failed, 0 refusals waited out, about 40 s left

Without ``emit`` it only counts. Thread-safe: the engine's workers step it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

FIRST = 5.0  # seconds of work before the first line
EVERY = 10.0  # seconds between two lines at least


def duration(seconds):
    """``12 s``, ``3 min``, ``1 h 05 min``: a rough time, for a line read by people."""
    seconds = max(0, int(seconds + 0.5))
    if seconds < 120:
        return "%d s" % seconds
    if seconds < 3600:
        return "%d min" % ((seconds + 30) // 60)
    return "%d h %02d min" % (seconds // 3600, (seconds % 3600 + 30) // 60)


class Progress:
    """The counts of one task's long work, in phases (``phase``: what is counted, how many there are to do, and
    the deadline of the phase when it has one), and the line telling them (``line``), emitted when due."""

    def __init__(self, label="", emit=None, refusals=None, clock=time.monotonic, first=FIRST, every=EVERY):
        self.label, self._emit, self._clock, self._every = label, emit, clock, every
        self._refusals = refusals or (lambda: 0)
        self._lock = threading.Lock()
        self.started = clock()
        self._due = self.started + first
        self.emitted = 0  # lines emitted so far
        self.what, self.total, self.done, self.failed, self.deadline = "", 0, 0, 0, None
        self._phase_started = self.started
        self._base = self._refusals()  # refusals counted before this work started are not its own

    def phase(self, what, total, deadline=None, done=0, failed=0):
        """From now on ``total`` items are counted as ``what`` (``queried``, ``written``), ``done`` of them done
        already (``failed`` of those failed); the phase ends by ``deadline`` (a clock time) at the latest when it
        has one (a wait)."""
        with self._lock:
            if not done or (what, total) != (self.what, self.total):  # (a phase carried on keeps its start)
                self._phase_started = self._clock()
            self.what, self.total, self.done, self.failed, self.deadline = what, total, done, failed, deadline
        self.tick()

    def step(self, failed=False):
        """One item of the phase is done (``failed``: it failed)."""
        with self._lock:
            self.done += 1
            self.failed += 1 if failed else 0
        self.tick()

    def update(self, done):
        """``done`` items of the phase are done by now (counted by the caller: the actions settled)."""
        with self._lock:
            self.done = done
        self.tick()

    def tick(self):
        """Emit the line if one is due (looked at without the lock, which only a line due takes: the engine's
        workers step this once a request)."""
        if self._emit is None or self._clock() < self._due:
            return
        with self._lock:
            now = self._clock()
            if now < self._due:
                return
            self._due = now + self._every
            line = self.line(now)
        self.emitted += 1
        self._emit(line)

    def finish(self):
        """Once the work is over: a last line saying how long it took, only if a line was emitted before."""
        if self._emit is not None and self.emitted:
            self._emit("%s: done in %s" % (self.label, duration(self._clock() - self.started)))

    def line(self, now=None):
        """``label: done of total what, failed, refusals waited out, what is left``."""
        now = self._clock() if now is None else now
        parts = ["%s of %s %s" % (_count(self.done), _count(self.total), self.what)]
        parts.append("%s failed" % _count(self.failed))
        refusals = self._refusals() - self._base
        parts.append("%s refusal%s waited out" % (_count(refusals), "" if refusals == 1 else "s"))
        parts.append(self._left(now))
        return "%s: %s" % (self.label, ", ".join(parts))

    def _left(self, now):
        """A phase with a deadline (a wait) may last until it: what is left of it; else an estimate from the rate."""
        if self.deadline is not None:
            return "at most %s left" % duration(max(0.0, self.deadline - now))
        left = self.total - self.done
        if not self.done:
            return "%s left, no estimate yet" % _count(left)
        return "about %s left" % duration((now - self._phase_started) / self.done * left)


def _count(number):
    return "{:,}".format(number)
