# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an exchange waits for, and the two drivers that do the waiting (no Ansible imports).

The exchange (transport.py over connections.py and response.py) is written once, as generators, its "steps": each
``yield`` says what it waits for and is sent what came of it, and the generator returns its result (or raises).
A step yields one of:

- ``Ready(sock, writing, deadline)``: until ``sock`` can be read (written: ``writing``); sent True, or False
  once ``deadline`` (time.monotonic) has passed first (then the step raises its timeout);
- ``Sleep(seconds, sleep)``: a pause (before a retry; a rate limit's pause or pace); sent None;
- ``Blocking(function, *args)``: a call that blocks (a service that cannot be reached, waited for with the other
  requests of the client: outage.py; a host name resolved); sent what it returned, or its exception is thrown
  in;
- ``SENDING``: a request is about to go out (the pacing gate yields it once its waits are over); sent None once
  the driver has an in-flight slot for it.

``run(steps)`` drives one exchange in the caller's thread: a Ready is one ``poll`` given what is left of the
deadline, a Sleep sleeps, a Blocking is called. ``Loop`` drives many at once in one thread (the request engine's
batches, engine.ordered_steps): every socket waited for is watched by one ``selectors`` selector, each deadline
and pause by one timer heap, and only a Blocking runs on a helper thread (at most ``helpers`` of them), its end
told to the loop through a socket pair. A batch's requests never leave the loop's thread, paced or paused by a rate
limit included, until the service cannot be reached at all.

The Loop's ``in_flight`` limits the requests in flight: a step holds a slot from its ``SENDING`` (or from its start:
``Loop.start``'s ``slot``) until its next ``Sleep`` or its end, so that when more steps are under way than slots
(engine.ordered_steps' ``per_slot``), a request that waits (a refusal's Retry-After, a backoff, a pace) leaves its
slot to another one, while a reply held until the timeout keeps it (that is real time in flight).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import heapq
import itertools
import math
import select
import selectors
import socket
import time
from concurrent.futures import ThreadPoolExecutor


class Ready:
    """Wait until ``sock`` can be read (``writing``: written), at most until ``deadline`` (time.monotonic)."""

    __slots__ = ("sock", "writing", "deadline")

    def __init__(self, sock, writing, deadline):
        self.sock, self.writing, self.deadline = sock, writing, deadline


class Sleep:
    """Wait ``seconds``, by ``sleep`` (the caller's: time.sleep, or a test's own): under the Loop a timer when it is
    time.sleep (the other steps go on meanwhile), else ``sleep`` on a helper thread."""

    __slots__ = ("seconds", "sleep")

    def __init__(self, seconds, sleep=time.sleep):
        self.seconds, self.sleep = seconds, sleep


class Blocking:
    """A call that blocks: ``function(*args)``, on a helper thread under the Loop, in the caller's under ``run``."""

    __slots__ = ("function", "args")

    def __init__(self, function, *args):
        self.function, self.args = function, args


class _Sending:
    """The marker of a request about to go out: the driver gives the step an in-flight slot first."""

    __slots__ = ()

    def __repr__(self):
        return "SENDING"


SENDING = _Sending()


def run(steps):
    """Drive ``steps`` (a generator of Ready, Sleep, Blocking and SENDING) in this thread; return what it
    returns. One exchange at a time needs no slot: SENDING goes on at once."""
    value = error = None
    while True:
        try:
            wait = steps.send(value) if error is None else steps.throw(error)
        except StopIteration as stop:
            return stop.value
        value = error = None
        try:
            if isinstance(wait, Ready):
                value = _wait(wait.sock, wait.writing, wait.deadline)
            elif isinstance(wait, Sleep):
                wait.sleep(wait.seconds)
            elif wait is SENDING:
                pass
            else:
                value = wait.function(*wait.args)
        except BaseException as exc:  # pylint: disable=broad-except  # thrown into the steps, which clean up
            error = exc


def _wait(sock, writing, deadline):
    """Whether ``sock`` can be read (written: ``writing``) before ``deadline``: one poll, given what is left of it
    (none when it has passed), which waits without holding the interpreter."""
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    poller = select.poll()
    poller.register(sock, select.POLLOUT if writing else select.POLLIN)
    return bool(poller.poll(math.ceil(left * 1000)))


SLEEPING = -1  # what a task parked on a timer alone (a Sleep) waits on


class _Task:
    __slots__ = ("steps", "done", "parked", "token", "holding")

    def __init__(self, steps, done):
        self.steps, self.done = steps, done
        self.parked = None  # the file descriptor it waits on, or None
        self.token = 0  # which of its timers is live
        self.holding = False  # it holds an in-flight slot (from its SENDING to its next Sleep or its end)


class Loop:
    """Many steps driven at once in one thread. ``start(steps, done)`` adds one: ``done(result, error)`` is called
    in the loop's thread once it returned (``error`` None) or raised. ``turn()`` runs what can run, else waits for
    the next event (a socket ready, a deadline passed, a blocking call over). ``close()`` closes every steps still
    under way (each cleans up as a generator does: its connection closed) and waits for the helper threads.
    ``in_flight``: how many steps may hold a slot at once (None: no limit); a SENDING waits for one.

    A socket stays registered with the selector between two waits on it (a kept-alive connection's next request
    costs no registration); one that becomes ready while nothing waits on it (an idle connection the service
    closed) is forgotten, and a new socket on a reused file descriptor is registered afresh."""

    def __init__(self, helpers=1, in_flight=None):
        self._selector = selectors.DefaultSelector()
        self._limit = in_flight
        self.in_flight = 0  # slots held
        self._queued = collections.deque()  # tasks waiting for a slot
        self._halted = False  # no slot is given any more (halt)
        self._helpers = max(1, helpers)
        self._sockets = {}  # fd -> (the socket registered, its events)
        self._waiting = {}  # fd -> the task waiting on it
        self._timers = []  # heap of (deadline, seq, task, token)
        self._seq = itertools.count()
        self._runnable = collections.deque()  # (task, value, error)
        self._over = collections.deque()  # (task, future): blocking calls done (appended by helper threads)
        self._pool = self._wake = self._waker = None
        self.tasks = set()

    def start(self, steps: object, done: object, slot: bool = False) -> None:
        """Add ``steps``; ``done(result, error)`` is called in the loop's thread once it ended. ``slot``: it starts
        holding an in-flight slot (it waits for one first), as if its first step were a SENDING."""
        task = _Task(steps, done)
        self.tasks.add(task)
        if slot and not self._slot_for(task):
            self._queued.append(task)
        else:
            self._runnable.append((task, None, None))

    def turn(self):
        """Run every task that can run; when none can, wait for the next event."""
        if not self._runnable:
            self._poll()
        runnable = self._runnable
        while runnable:
            task, value, error = runnable.popleft()
            self._resume(task, value, error)

    def _resume(self, task, value, error):
        """Run ``task`` on to its next wait (a SENDING given a slot at once goes on in the same turn)."""
        wait = SENDING
        while wait is SENDING:
            try:
                wait = task.steps.send(value) if error is None else task.steps.throw(error)
            except StopIteration as stop:
                self._ended(task, stop.value, None)
                return
            except BaseException as exc:  # pylint: disable=broad-except  # the task's own failure: told to done
                self._ended(task, None, exc)
                return
            value = error = None
            if wait is SENDING and not self._slot_for(task):
                self._queued.append(task)
                return
        if isinstance(wait, Ready):
            self._park(task, wait)
        elif isinstance(wait, Sleep):
            self._release(task)  # a request that waits leaves its slot to another
            if wait.sleep is time.sleep:
                self._timer(task, time.monotonic() + wait.seconds, SLEEPING)
            else:
                self._submit(task, Blocking(wait.sleep, wait.seconds))
        elif isinstance(wait, Blocking):
            self._submit(task, wait)
        else:
            self._runnable.append((task, None, TypeError("a step yielded %r" % (wait,))))

    def _ended(self, task, result, error):
        """``task`` ended: told to its ``done`` first (which may ``halt`` the loop), then its slot is left."""
        self.tasks.discard(task)
        try:
            task.done(result, error)
        finally:
            self._release(task)

    def halt(self) -> None:
        """Give no slot any more: the steps waiting for one stay waiting (a batch that failed sends nothing more)."""
        self._halted = True

    def _slot_for(self, task):
        """Whether ``task`` holds an in-flight slot: the one it holds, or a free one now taken."""
        if task.holding or (not self._halted and (self._limit is None or self.in_flight < self._limit)):
            if not task.holding:
                task.holding, self.in_flight = True, self.in_flight + 1
            return True
        return False

    def _release(self, task):
        """``task`` leaves its slot, if it holds one: to the first task queued for one, else free."""
        if not task.holding:
            return
        task.holding = False
        while self._queued and not self._halted:
            waiting = self._queued.popleft()
            if waiting in self.tasks:  # (not closed meanwhile)
                waiting.holding = True
                self._runnable.append((waiting, None, None))
                return
        self.in_flight -= 1

    def _park(self, task, wait):
        if wait.deadline <= time.monotonic():
            self._runnable.append((task, False, None))
            return
        sock = wait.sock
        fd = self._watch(sock, selectors.EVENT_WRITE if wait.writing else selectors.EVENT_READ)
        self._waiting[fd] = task
        self._timer(task, wait.deadline, fd)

    def _watch(self, sock, events):
        """``sock`` watched for ``events`` by the selector: its file descriptor. A descriptor still registered for a
        socket closed since (its number now another's) is registered afresh."""
        fd = sock.fileno()
        known = self._sockets.get(fd)
        if known is None or known[0] is not sock:
            if known is not None:
                self._forget(fd)
            self._selector.register(fd, events)
            self._sockets[fd] = (sock, events)
        elif known[1] != events:
            self._selector.modify(fd, events)
            self._sockets[fd] = (sock, events)
        return fd

    def _timer(self, task, when, parked):
        """``task`` waits until ``when`` at the latest (``parked``: the file descriptor it waits on, or SLEEPING)."""
        task.parked, task.token = parked, task.token + 1
        timers = self._timers
        if len(timers) > 1024 and len(timers) > 4 * (len(self._waiting) + 1):  # mostly timers of waits over
            timers[:] = [entry for entry in timers if entry[2].token == entry[3] and entry[2].parked is not None]
            heapq.heapify(timers)
        heapq.heappush(timers, (when, next(self._seq), task, task.token))

    def _forget(self, fd):
        self._sockets.pop(fd, None)
        try:
            self._selector.unregister(fd)
        except (KeyError, ValueError, OSError):
            pass

    def _submit(self, task, call):
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._helpers, thread_name_prefix="nac-wait")
            self._wake, self._waker = socket.socketpair()
            self._wake.setblocking(False)
            self._waker.setblocking(False)
            self._watch(self._wake, selectors.EVENT_READ)
        future = self._pool.submit(call.function, *call.args)
        future.add_done_callback(lambda over: self._told(task, over))

    def _told(self, task, future):  # (a helper thread)
        self._over.append((task, future))
        try:
            self._waker.send(b"\0")
        except OSError:  # full (the loop has many to read already), or closed
            pass

    def _poll(self):
        timers, now = self._timers, time.monotonic()
        while timers and (timers[0][2].token != timers[0][3] or timers[0][2].parked is None):
            heapq.heappop(timers)  # waits already over
        timeout = None if not timers else max(0.0, timers[0][0] - now)
        if timeout is None and not self._waiting and not self._over and self._pool is None:
            return  # nothing to wait for
        wake = self._wake.fileno() if self._wake is not None else None
        for key, dummy in self._selector.select(timeout):
            fd = key.fd
            if fd == wake:
                self._drain()
                continue
            task = self._waiting.pop(fd, None)
            if task is None:  # ready while nothing waits on it (an idle connection closed): not watched any more
                self._forget(fd)
                continue
            task.parked = None
            self._runnable.append((task, True, None))
        while self._over:
            task, future = self._over.popleft()
            error = future.exception()
            self._runnable.append((task, None if error is not None else future.result(), error))
        now = time.monotonic()
        while timers and timers[0][0] <= now:
            dummy, dummy, task, token = heapq.heappop(timers)
            if task.token == token and task.parked is not None:  # still waiting: its deadline has passed
                slept = task.parked == SLEEPING
                if not slept:
                    self._waiting.pop(task.parked, None)
                task.parked = None
                self._runnable.append((task, None if slept else False, None))

    def _drain(self):
        try:
            while self._wake.recv(4096):
                pass
        except OSError:
            pass

    def close(self):
        """Close every steps under way (each cleans up: GeneratorExit), then wait for the helper threads."""
        tasks, self.tasks = list(self.tasks), set()
        try:
            for task in tasks:
                task.steps.close()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._wake.close()
                self._waker.close()
            self._selector.close()
