# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request engine (engine.py, issues 26 and 51): steps driven by completions on one event loop with the results
in order, and concurrency that limits the requests in flight, not the steps waiting."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import threading
import time

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.http import engine
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import WINDOW_PER_WORKER, ordered_steps
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import SENDING, Blocking, Ready, Sleep

# -- work driven by completions -------------------------------------------------------------------------------


def _at_once(value):
    """Steps that end at once with ``value`` (a generator that never yields)."""
    return value
    yield  # pylint: disable=unreachable  # (it is a generator)


def test_ordered_steps_keeps_the_order_of_ten_thousand_items_taking_a_bounded_window():
    taken = []

    def items():
        for number in range(10000):
            taken.append(number)
            yield number

    results = ordered_steps(lambda n: _at_once(n * 2), items(), 4)
    assert next(results) == 0
    assert len(taken) <= engine.WINDOW_PER_WORKER * 4 + 1
    assert list(results) == [n * 2 for n in range(1, 10000)]


def test_ordered_steps_starts_nothing_after_an_item_that_raises_at_once():
    calls = []

    def work(number):
        calls.append(number)
        if number == 0:
            raise ValueError("boom")
        return number
        yield  # pylint: disable=unreachable  # (it is a generator)

    with pytest.raises(ValueError, match="boom"):
        list(ordered_steps(work, range(1000), 1))
    assert calls[0] == 0 and len(calls) <= engine.steps_per_slot(1)  # those already under way, nothing after


def test_a_straggler_holds_back_neither_the_other_workers_nor_the_order():
    """Item 0 finishes only once 40 later items have finished, on 2 workers: the other items keep being started as
    others finish (the old window started one only when the oldest finished, and stalled here)."""
    started, finished = [], []

    def work(number):
        started.append(number)
        if number == 0:
            for _look in range(10000):
                if len(finished) >= 40:
                    break
                yield Sleep(0.001)
            assert len(finished) >= 40, "the other workers stalled behind the straggler"
        else:
            yield SENDING
            finished.append(number)
        return number

    assert list(ordered_steps(work, range(100), 2)) == list(range(100))
    assert len(started) == 100


def test_ordered_steps_starts_no_thread_for_steps_that_never_block():
    before = threading.active_count()
    seen = []

    def work(number):
        seen.append(threading.active_count())
        yield SENDING
        return number

    assert list(ordered_steps(work, range(50), 64)) == list(range(50))
    assert max(seen) == before


def steps_under_way(workers, per_slot=None):
    """Run 4 items a slot on ``workers`` slots, each refused once and waiting 1 ms (a Retry-After): the most steps
    under way at once."""
    under_way, most = [0], [0]

    def work(number):
        under_way[0] += 1
        most[0] = max(most[0], under_way[0])
        yield SENDING
        yield Sleep(0.001)  # refused: waits
        yield SENDING
        under_way[0] -= 1
        return number

    items = range(4 * workers)
    assert list(ordered_steps(work, items, workers, per_slot)) == list(items)
    return most[0]


def test_a_waiting_request_keeps_its_place_unless_slots_are_shared():
    """Issue 49: ``per_slot`` 1 keeps a waiting request's place; 4 lets up to 4 steps share each of the 2 slots."""
    assert steps_under_way(2, per_slot=1) == 2
    assert steps_under_way(2, per_slot=4) == 8


@pytest.mark.parametrize("workers, most", [(1, 1), (8, 8), (9, 18), (16, 32)])
def test_a_waiting_request_keeps_its_place_up_to_8_in_flight_and_shares_it_above(workers, most):
    """Issue 49: by default, up to 8 in flight (the default concurrency) a request waiting out a refusal keeps its
    place, which keeps a limiter's refusals from coming in a run; above 8 two steps share each slot, so that a stray
    refusal's wait does not hold a place of the writing back (16 in flight: 32 steps under way, not 16)."""
    assert steps_under_way(workers) == most


def test_shared_slots_limit_the_requests_in_flight_not_the_steps_waiting():
    """Issue 51: 2 slots shared by 4 steps each, 8 items whose first request is refused and waits 50 ms (a
    Retry-After) before it is sent again: while they wait the others' requests go out, and never more than 2 are in
    flight at once."""
    in_flight, most, order = [0], [0], []
    here, there = socket.socketpair()  # (here can always be written: a reply that comes at once)

    def request(number, attempt):
        yield SENDING
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        order.append((number, attempt))
        yield Ready(here, True, time.monotonic() + 5)  # (its reply: read with the slot held)
        in_flight[0] -= 1
        yield Sleep(0.0)  # the slot is left at the next wait

    def work(number):
        yield from request(number, 1)
        yield Sleep(0.05)  # refused: waits without a slot
        yield from request(number, 2)
        return number

    try:
        assert list(ordered_steps(work, range(8), 2, per_slot=4)) == list(range(8))
    finally:
        here.close()
        there.close()
    assert most[0] == 2
    firsts = [index for index, (_number, attempt) in enumerate(order) if attempt == 1]
    assert firsts == list(range(8))  # every first attempt went out before any second one (none held a slot waiting)


def test_ordered_steps_raises_the_first_error_and_closes_the_others():
    closed, started = [], []

    def one(n):
        started.append(n)
        try:
            if n == 3:
                raise ValueError("item 3")
            yield Blocking(time.sleep, 0.05 if n < 3 else 5)
            return n
        finally:
            closed.append(n)

    with pytest.raises(ValueError, match="item 3"):
        list(ordered_steps(one, range(1000), 4))
    assert max(started) < 10 and sorted(closed) == sorted(started)


def test_ordered_steps_takes_only_a_bounded_window_of_items_ahead():
    taken = []

    def items():
        for n in range(10000):
            taken.append(n)
            yield n

    def double(n):
        return n * 2
        yield  # pylint: disable=unreachable

    results = ordered_steps(double, items(), 4)
    assert [next(results) for dummy in range(3)] == [0, 2, 4]
    assert len(taken) <= WINDOW_PER_WORKER * 4 + 4
    results.close()
    assert list(ordered_steps(double, range(100), 2)) == [n * 2 for n in range(100)]
