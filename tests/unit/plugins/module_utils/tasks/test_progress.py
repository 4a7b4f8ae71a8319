# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress of long work (module_utils/tasks/progress.py): counted where the work is done (the status queries and their
waits, the apply engine's writes and settling), one line at most every EVERY seconds once the work has run FIRST
seconds, nothing for short work, and the line's counts and estimate."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacHTTPError, NacServerError
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import Action, Answer, Operation, Wording, apply
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status, query_all, resolve
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.progress import EVERY, FIRST, Progress, duration
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient


class Clock:
    """A clock that the work advances: each status query (or write) takes ``step`` seconds, a sleep its time."""

    def __init__(self, step=0.0):
        self.now, self.step = 100.0, step

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds

    def tick(self, *_args):
        self.now += self.step


def records(count):
    return [dict(id=n, hostname="dev-%04d" % n) for n in range(1, count + 1)]


def test_nothing_is_said_before_first_seconds_then_at_most_every_every_seconds():
    clock, lines = Clock(), []
    progress = Progress("task", lines.append, clock=clock)
    progress.phase("queried", 100)
    for _n in range(100):
        clock.now += 0.5  # 100 items in 50 s
        progress.step()
    progress.finish()
    assert len(lines) == 1 + int((50 - FIRST) // EVERY) + 1  # at FIRST s, then every EVERY s; and the last line
    assert lines[0] == "task: 10 of 100 queried, 0 failed, 0 refusals waited out, about 45 s left"
    assert lines[-1] == "task: done in 50 s"


class CountedLock:
    """A lock that counts how often it was taken."""

    def __init__(self):
        self.taken = 0

    def __enter__(self):
        self.taken += 1

    def __exit__(self, *exc_info):
        return False


def test_a_step_takes_the_lock_once_and_a_second_time_only_when_a_line_is_due():
    clock, lines = Clock(), []
    progress = Progress("task", lines.append, clock=clock)
    progress.phase("queried", 100)
    progress._lock = CountedLock()  # each request of the status batch steps it: each taking is contended
    for _n in range(10):
        clock.now += 0.1
        progress.step()
    assert progress._lock.taken == 10 and lines == []  # the count; the line, not due, looked at without the lock
    clock.now += FIRST
    progress.step()
    assert progress._lock.taken == 12 and lines == [
        "task: 11 of 100 queried, 0 failed, 0 refusals waited out, about 49 s left"
    ]


def test_short_work_says_nothing_not_even_its_end():
    clock, lines = Clock(), []
    progress = Progress("task", lines.append, clock=clock)
    progress.phase("queried", 10)
    for _n in range(10):
        clock.now += 0.4
        progress.step(failed=True)
    progress.finish()
    assert lines == []
    assert (progress.done, progress.failed) == (10, 10)


def test_the_line_counts_failures_and_the_refusals_of_this_work_only():
    clock, refusals = Clock(), [7]
    progress = Progress("task", [].append, refusals=lambda: refusals[0], clock=clock)
    progress.phase("queried", 2005)
    for n in range(1204):
        progress.step(failed=n < 3)
    refusals[0] = 9
    clock.now += 30
    assert progress.line() == "task: 1,204 of 2,005 queried, 3 failed, 2 refusals waited out, about 20 s left"


def test_a_wait_is_bounded_by_its_deadline_and_an_unstarted_phase_has_no_estimate():
    clock = Clock()
    progress = Progress("task", clock=clock)
    progress.phase("queried again", 55, deadline=clock() + 240)
    assert progress.line().endswith("0 of 55 queried again, 0 failed, 0 refusals waited out, at most 4 min left")
    progress = Progress("task", clock=clock)
    progress.phase("queried", 55)
    assert progress.line().endswith("55 left, no estimate yet")


def test_durations_read_as_people_say_them():
    assert [duration(s) for s in (0.4, 12, 119, 150, 3599, 3700, 7260)] == [
        "0 s",
        "12 s",
        "119 s",
        "3 min",
        "60 min",
        "1 h 02 min",
        "2 h 01 min",
    ]


def test_the_status_query_counts_each_device_and_tells_what_failed():
    clock, lines = Clock(step=0.125), []  # exact in binary: no rounding moves a line
    client = FakeClient(
        records(200),
        replies={5: NacServerError("down", status=500)},
        default_reply=lambda ident: "AUTHENTICATED",
        on_fire=clock.tick,
    )
    progress = Progress("nac_dot1x_status", lines.append, clock=clock)
    report = dot1x_status(client, all_devices=True, concurrency=1, clock=clock, sleep=clock.sleep, progress=progress)
    assert report.summary == dict(AUTHENTICATED=199, ERROR=1)
    assert lines[0] == "nac_dot1x_status: 40 of 200 queried, 1 failed, 0 refusals waited out, about 20 s left"
    assert [line.split(" of ")[0] for line in lines[1:-1]] == ["nac_dot1x_status: 120", "nac_dot1x_status: 200"]
    assert lines[-1] == "nac_dot1x_status: done in 25 s"


def test_a_wait_tells_its_rounds_and_what_is_left_of_its_timeout():
    clock, lines = Clock(step=0.5), []
    client = FakeClient(records(4), default_reply=lambda ident: "UNAUTHENTICATED", on_fire=clock.tick)
    progress = Progress("nac_dot1x_status", lines.append, clock=clock)
    report = dot1x_status(
        client,
        all_devices=True,
        concurrency=1,
        wait_for="AUTHENTICATED",
        wait_timeout=60,
        wait_interval=5,
        clock=clock,
        sleep=clock.sleep,
        progress=progress,
    )
    assert report.failure
    rounds = [line for line in lines if "queried again" in line]
    assert rounds, lines
    assert re.match(
        r"nac_dot1x_status: \d of 4 queried again \(round \d+: 4 of 4 without status AUTHENTICATED\), 0 failed, "
        r"0 refusals waited out, at most \d+ s left$",
        rounds[0],
    )
    assert len(lines) <= 60 // EVERY + 2


def test_the_inventory_query_counts_too():
    clock, lines = Clock(step=0.125), []
    client = FakeClient(records(100), default_reply=lambda ident: "AUTHENTICATED", on_fire=clock.tick)
    targets, _warnings = resolve(client.list_devices(), all_devices=True)
    entries = query_all(client, targets, 1, Progress("inventory", lines.append, clock=clock))
    assert len(entries) == 100
    assert lines == [
        "inventory: 40 of 100 queried, 0 failed, 0 refusals waited out, about 8 s left",
        "inventory: done in 13 s",
    ]


WORDS = Wording(**dict((field, field) for field in Wording._fields))


def test_the_apply_engine_counts_its_writes_and_failures():
    clock, lines = Clock(), []

    def write(action):
        clock.now += 0.125
        if action.name.endswith("7"):
            raise NacHTTPError("refused", status=400)
        return Answer(int(action.name[4:]), dict(id=int(action.name[4:]), name=action.name), None)

    operation = Operation(
        write=write,
        index=lambda listed: listed,
        shows=lambda action, listed: [r for r in listed if r["name"] == action.name],
        settled=lambda action, shown: bool(shown),
        confirm=None,
        preview=lambda action: {},
        wording=WORDS,
    )
    actions = [Action("dev-%03d" % n, "create") for n in range(100)]
    progress = Progress("nac_device", lines.append, clock=clock)
    apply(actions, {"create": operation}, list, 1, clock=clock, sleep=clock.sleep, progress=progress)
    assert sum(1 for action in actions if action.state == "failed") == 10
    assert lines[0] == "nac_device: 40 of 100 written, 4 failed, 0 refusals waited out, about 8 s left"
    assert lines[-1] == "nac_device: done in 13 s"  # 12.5 s
