# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request engine (no Ansible imports): many requests at once, driven by completions, results in the items'
order.

``ordered_map(function, items, workers)`` runs ``function`` on ``workers`` threads: a thread takes the next item as
soon as it finished its last one, whatever the others are doing, and the results are yielded in the items' order
(a slow item holds back only the yielding, never the other threads, up to ``WINDOW_PER_WORKER`` items a thread
ahead of the consumer, which keeps memory flat). ``ordered_steps`` does the same for a function that returns steps
(loop.py: an exchange written as a generator, NacClient.fire_intent_steps), ``workers`` of them in flight on one
thread's event loop (loop.Loop): the whole-network status batch, whose requests would otherwise cost a thread each.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Loop

WINDOW_PER_WORKER = 64  # results a thread may be ahead of the consumer: a straggler holds back only the yielding


def ordered_map(function, items, workers):
    """``map(function, items)`` on up to ``workers`` threads, driven by completions, yielding in the items' order.

    Items are taken lazily (never more than ``WINDOW_PER_WORKER * workers`` ahead of the consumer). When a call
    raises, no new item is started and the exception propagates; when the consumer stops early, the threads end
    after their current item."""
    return _OrderedMap(function, iter(items), workers).results()


def ordered_steps(function, items, workers):
    """``ordered_map`` for a ``function`` that returns steps (steps.py, as NacClient.fire_intent_steps does): up to
    ``workers`` of them at once, all in the caller's thread on one steps.Loop (its sockets watched by one selector;
    a wait that blocks, such as a rate limit's pause, on a helper thread), driven by completions, yielding in the
    items' order with the same window ahead of the consumer. When one raises, no new item is started, the others
    are closed (their connections with them) and the exception propagates; so when the consumer stops early."""
    return _OrderedSteps(function, iter(items), workers).results()


class _OrderedSteps:
    def __init__(self, function, items, workers):
        self.function, self.items, self.workers = function, items, max(1, workers)
        self.ahead = WINDOW_PER_WORKER * self.workers
        self.done = {}
        self.taken = self.yielded = self.running = 0
        self.over = False
        self.failure = None
        self.loop = None

    def _start(self):
        """Start items while fewer than ``workers`` run and the window ahead of the consumer has room."""
        while not self.over and self.running < self.workers and self.taken - self.yielded < self.ahead:
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
            self.loop.start(steps, lambda result, error, index=index: self._finished(index, result, error))

    def _finished(self, index, result, error):
        self.running -= 1
        if error is not None:
            if self.failure is None:
                self.failure = error
            self.over = True
            return
        self.done[index] = result
        self._start()  # at once: the connection just given back carries the next request, in this same turn

    def results(self):
        self.loop = Loop(self.workers)
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
        with self.lock:
            taken = self._take()
        while taken is not None:
            index, item = taken
            try:
                result = self.function(item)
            except BaseException as exc:  # pylint: disable=broad-except  # the consumer raises it
                with self.lock:
                    self._end(exc)
                return
            with self.lock:  # one taking of the lock an item: its result kept, the next item taken
                self.done[index] = result
                if index == self.yielded:
                    self.ready.notify()
                taken = self._take()

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
