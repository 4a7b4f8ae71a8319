# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two drivers of the exchange written as steps (http/loop.py): ``run`` (one exchange in the caller's thread)
and ``Loop`` (many in one thread): each waiter woken on its own socket or deadline, blocking calls on helpers,
sleeps as timers, and the steps under way closed with the loop."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import threading
import time

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Blocking, Loop, Ready, Sleep, run

KEY = "k3y-of-the-steps-tests"


# -- the drivers alone ---------------------------------------------------------------------------------------


def waiting(sock, deadline):
    """Steps: whether ``sock`` became readable before ``deadline``, and when the wait ended."""
    ready = yield Ready(sock, False, deadline)
    return ready, time.monotonic()


def test_run_polls_a_ready_socket_and_says_when_its_deadline_passed_first():
    here, there = socket.socketpair()
    try:
        there.send(b"x")
        assert run(waiting(here, time.monotonic() + 5))[0] is True
        here.recv(1)
        started = time.monotonic()
        outcome = run(waiting(here, started + 0.2))  # (ready, when the wait ended)
        assert outcome[0] is False and 0.15 <= outcome[1] - started < 2
        assert run(waiting(here, started - 1))[0] is False  # passed already: no wait at all
    finally:
        here.close()
        there.close()


def test_run_calls_a_blocking_call_and_throws_its_exception_into_the_steps():
    def steps():
        assert (yield Blocking(lambda a, b: a + b, 2, 3)) == 5
        try:
            yield Blocking(int, "not a number")
        except ValueError as exc:
            return "caught: %s" % exc
        return "not caught"

    assert run(steps()).startswith("caught: invalid literal")


def test_the_loop_wakes_each_waiter_on_its_own_socket_or_deadline_and_runs_blocking_calls_on_helpers():
    pairs = [socket.socketpair() for dummy in range(3)]
    loop, done = Loop(helpers=2), {}
    start = time.monotonic()
    try:
        for index, (here, dummy) in enumerate(pairs):
            loop.start(waiting(here, start + (5 if index < 2 else 0.2)), lambda r, e, i=index: done.update({i: (r, e)}))
        main = threading.current_thread()
        loop.start(_helper_thread(main), lambda r, e: done.update(helper=(r, e)))
        pairs[1][1].send(b"x")
        while len(done) < 3:
            loop.turn()
        assert done[1][0][0] is True and done["helper"] == (True, None)
        pairs[0][1].send(b"x")
        while len(done) < 4:
            loop.turn()
        assert done[0][0][0] is True and done[0][0][1] - start < 2  # its socket, long before its deadline
        assert done[2][0][0] is False and done[2][0][1] - start >= 0.15  # nothing came: its deadline
        assert not loop.tasks
    finally:
        loop.close()
        for here, there in pairs:
            here.close()
            there.close()


def _helper_thread(main):
    other = yield Blocking(threading.current_thread)
    return other is not main


def test_closing_the_loop_closes_every_steps_under_way():
    here, there = socket.socketpair()
    closed = []

    def steps():
        try:
            yield Ready(here, False, time.monotonic() + 30)
        finally:
            closed.append(True)

    loop = Loop()
    loop.start(steps(), lambda r, e: None)
    loop.turn()
    loop.close()
    here.close()
    there.close()
    assert closed == [True]


def test_a_sleep_on_the_loop_is_a_timer_and_the_others_go_on():
    here, there = socket.socketpair()
    loop, done = Loop(), {}

    def sleeper(seconds):
        yield Sleep(seconds)
        return time.monotonic()

    start = time.monotonic()
    try:
        loop.start(sleeper(0.3), lambda r, e: done.update(long=r))
        loop.start(sleeper(0.1), lambda r, e: done.update(short=r))
        loop.start(waiting(here, start + 5), lambda r, e: done.update(ready=r))
        there.send(b"x")
        while len(done) < 3:
            loop.turn()
        assert loop._pool is None  # no helper thread: the sleeps were timers
    finally:
        loop.close()
        here.close()
        there.close()
    assert done["ready"][0] is True and done["ready"][1] < done["short"] < done["long"]
    assert 0.08 <= done["short"] - start < 0.3 <= done["long"] - start < 2


def test_a_file_descriptor_of_a_closed_socket_is_watched_afresh_for_the_next_one():
    """A socket the loop watched and that was closed since leaves its number to the next socket (a new connection,
    the loop's own wake-up pair): that one is watched, never refused as already registered, never left unwatched."""
    loop, done = Loop(), {}
    try:
        here, there = socket.socketpair()
        loop.start(waiting(here, time.monotonic() + 0.05), lambda r, e: done.update(first=(r, e)))
        while not done:
            loop.turn()
        numbers = sorted((here.fileno(), there.fileno()))
        here.close()
        there.close()
        again, other = socket.socketpair()
        assert sorted((again.fileno(), other.fileno())) == numbers  # (the lowest numbers free: the same ones)
        other.send(b"x")
        loop.start(waiting(again, time.monotonic() + 5), lambda r, e: done.update(second=(r, e)))
        while len(done) < 2:
            loop.turn()
        again.close()
        other.close()
        loop.start(_helper_thread(threading.current_thread()), lambda r, e: done.update(helper=(r, e)))  # (its pair)
        while len(done) < 3:
            loop.turn()
    finally:
        loop.close()
    assert done["first"][0][0] is False and done["second"][0][0] is True and done["helper"] == (True, None)
