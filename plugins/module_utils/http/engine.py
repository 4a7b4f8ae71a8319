# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request engine (no Ansible imports): many requests at once on one thread's event loop, driven by
completions, their results in the items' order.

``ordered_steps(function, items, workers)`` runs ``function(item)`` (steps, loop.py: an exchange written as a generator,
such as NacClient.fire_intent_steps or the apply engine's writes) for each item on one loop.Loop, with at most
``workers`` requests in flight. Up to KEEP_PLACES in flight, a request that waits (a refusal's Retry-After, a
backoff, a pace) keeps its place: a rate limiter's refused requests then hold their places and keep the client
under its rate with no pace set (a token bucket took 1.03x its ideal time at 8 in flight, against 1.16-1.22x when
they hand their places on: sim_throttle.py, and bench_engine.py in issue 49). With more in flight, a limiter's
refusals come in a run either way and the pace governs (sharing gives the same or better figures from 12 up), while a
stray refusal's request that keeps its place for its Retry-After holds one place of the writing back: SHARED steps
share each in-flight slot there, one waiting while another sends (loop.SENDING). The results are yielded in the
items' order (a slow item holds back only the yielding, up to ``WINDOW_PER_WORKER`` items a worker ahead of the
consumer, which keeps memory flat).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Loop

WINDOW_PER_WORKER = 64  # results a worker may be ahead of the consumer: a straggler holds back only the yielding
KEEP_PLACES = 8  # up to this many in flight, a request that waits keeps its place (see above)
SHARED = 2  # with more, this many steps share each in-flight slot


def steps_per_slot(workers: int) -> int:
    """Return how many steps share each of ``workers`` in-flight slots by default: 1 (a request that waits keeps
    its place) up to KEEP_PLACES, else SHARED."""
    return 1 if workers <= KEEP_PLACES else SHARED


def ordered_steps(function, items, workers: int, per_slot=None):
    """Yield ``function(item)``'s result (steps) for each of ``items`` in order, ``workers`` requests in flight,
    ``per_slot`` steps under way a slot (None: ``steps_per_slot(workers)``).

    All run in the caller's thread on one loop.Loop (its sockets watched by one selector; a wait that blocks, such
    as an outage's, on a helper thread), driven by completions. Items are taken lazily, never more than
    ``WINDOW_PER_WORKER * workers`` ahead of the consumer. When one raises, no new item is started, the others are
    closed (their connections with them) and the exception propagates; so when the consumer stops early."""
    return _OrderedSteps(function, iter(items), workers, per_slot).results()


class _OrderedSteps:
    def __init__(self, function, items, workers, per_slot=None):
        self.function, self.items, self.workers = function, items, max(1, workers)
        self.ahead = WINDOW_PER_WORKER * self.workers
        per_slot = steps_per_slot(self.workers) if per_slot is None else per_slot
        self.tasks = max(1, per_slot) * self.workers
        self.done = {}
        self.taken = self.yielded = self.running = 0
        self.over = False
        self.failure = None
        self.loop = None

    def _start(self):
        """Start items while fewer than ``tasks`` run and the window ahead of the consumer has room."""
        while not self.over and self.running < self.tasks and self.taken - self.yielded < self.ahead:
            try:
                item = next(self.items)
            except StopIteration:
                self.over = True
                return
            index = self.taken
            self.taken += 1
            self.running += 1
            try:
                steps = self.function(item)
            except BaseException as exc:  # pylint: disable=broad-except  # the consumer raises it
                self._finished(index, None, exc)
                return
            self.loop.start(steps, functools.partial(self._finished, index), slot=True)

    def _finished(self, index, result, error):
        self.running -= 1
        if error is not None:
            if self.failure is None:
                self.failure = error
            self.over = True
            self.loop.halt()  # the steps waiting for a slot send nothing more
            return
        self.done[index] = result
        self._start()  # at once: the connection just given back carries the next request, in this same turn

    def results(self):
        self.loop = Loop(self.workers, in_flight=self.workers)
        try:
            self._start()
            while True:
                if self.failure is not None:
                    raise self.failure
                if self.yielded in self.done:
                    result = self.done.pop(self.yielded)
                    self.yielded += 1
                    self._start()
                    yield result
                elif self.running:
                    self.loop.turn()
                else:
                    return
        finally:
            self.over = True
            self.loop.close()
