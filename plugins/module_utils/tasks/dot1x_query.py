# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""802.1x status of devices (API guide 4.4, 4.5: docs/docsite/rst/api.rst): pure logic, no Ansible imports.

``dot1x_status(client, ...)`` is the whole query: check the account's access to the intent, list
the devices once, resolve the targets, fire ``dot1x_status`` for each with bounded concurrency,
optionally poll until every target has a wanted status, and shape results, summary and failure.
The module ``nac_dot1x_status`` and ``benchmarks/bench_dot1x_status.py`` both call it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import itertools
import time

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacAuthError, NacConfigError, NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    WAIT_INTERVAL_MAX,
    WAIT_TIMEOUT_MAX,
    check_concurrency,
    check_number,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import ordered_steps
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import DOT1X_INTENT, DOT1X_INTENT_NAMES
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import check_hostnames
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dest_file import check_dest
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_file import ResultFile
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_results import (
    Tally,
    copy_entry,
    error_entry,
    failure_message,
    reached,
    shape,
    summarize,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_targets import (
    HeldTargets,
    ListedTargets,
    Target,
    fired,
    resolve,
    shared_ids,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.progress import Progress

NOT_QUERIED = "not queried: the batch stopped when the credentials were refused (see the task's message)"


class Report(collections.namedtuple("Report", "results summary warnings failure refusals export")):
    """``results`` and ``summary`` as the module returns them, ``warnings`` to show, ``failure``: the message to
    fail the task with, or None, ``refusals``: the rate-limit refusals the batch waited out, and ``export``: what
    was written to ``dest`` (``export_result``; None without ``dest``, ``results`` then empty)."""

    __slots__ = ()

    def __new__(cls, results, summary, warnings, failure, refusals, export=None):
        return super(Report, cls).__new__(cls, results, summary, warnings, failure, refusals, export)


class BatchStopped(NacAuthError):
    """Credentials refused (HTTP 401/403, or 'Server error' before any success) by a status query
    mid-batch: no further target is queried. ``report`` is the whole Report (``results`` still has one
    entry per target, the answered ones with their answer, the others with ``error``; ``failure`` is this
    error's message), and ``result`` what a task returns with it. Being a NacAuthError, callers that only
    catch that keep working.
    """

    def __init__(self, error, results, warnings=(), tally=None, export=None):
        if tally is None:
            tally = Tally()
            for entry in results:
                tally.add(entry)
        message = (
            "%s The batch stopped there: %d of %d targets were answered before, the others were not queried "
            "(%s has every target, each failed one with its error)."
            % (error.message, tally.total - tally.failed_count, tally.total, tally.where)
        )
        super(BatchStopped, self).__init__(
            message, method=error.method, path=error.path, status=error.status, reason=error.reason, url=error.url
        )
        self.cause = error
        self.report = Report(results, tally.summary(), list(warnings), message, 0, export)
        self.result = dict(results=results, summary=self.report.summary, stopped=True, **(export or {}))


def dot1x_status(
    client,
    device_id=None,
    hostname=None,
    all_devices=False,
    concurrency=8,
    wait_for=None,
    wait_timeout=300,
    wait_interval=5.0,
    check_access=True,
    clock=time.monotonic,
    sleep=time.sleep,
    progress=None,
    dest=None,
    format="jsonl",  # pylint: disable=redefined-builtin
    check_mode=False,
):
    """Query (and optionally wait for) the 802.1x status of the chosen devices. Returns a Report.

    With ``dest``, each entry is written to that file in ``format`` (dot1x_file.ResultFile) as it is answered
    instead of being returned (``stream_poll``); the Report's ``export`` says what was written, its ``results`` is
    empty. ``check_mode``: nothing is written where ``dest`` is (dest_file.py).

    Raises NacConfigError for unusable options and NacAuthError when the account may not fire
    the intent; both before any fire request. Other NacErrors of the intent or device list
    propagate (after the client's retries). Once the device list was read, every target gets an
    entry: one that still fails after its retries has its own ``error``. Only refused credentials
    stop the batch: BatchStopped, whose ``report`` holds what was answered. ``progress`` (a progress.Progress)
    counts the queries and the rounds of a wait.
    """
    hostname = None if hostname is None else check_hostnames(hostname)
    wait_for = check_options(device_id, hostname, all_devices, concurrency, wait_for, wait_timeout, wait_interval)
    if dest is not None:
        check_dest(dest)  # before any request
    if check_access:
        require_access(client)
    refusals = client.refusals
    if dest is not None:
        timing = (wait_for, wait_timeout, wait_interval, clock, sleep)
        if all_devices:
            targets = ListedTargets(client)
        else:
            targets = HeldTargets(*resolve(client.list_devices(compact=True), device_id, hostname))
        return exported(client, targets, concurrency, timing, progress, (dest, format, check_mode), refusals)
    targets, warnings = resolve(client.list_devices(compact=True), device_id, hostname, all_devices)
    results, refused = poll(
        client, targets, concurrency, wait_for, wait_timeout, wait_interval, clock, sleep, progress=progress
    )
    if progress is not None:
        progress.finish()
    if refused is not None:
        raise BatchStopped(refused, results, warnings)
    failure = failure_message(results, wait_for, wait_timeout)
    return Report(results, summarize(results), warnings, failure, client.refusals - refusals)


def exported(client, targets, concurrency, timing, progress, output, refusals):
    """``dot1x_status`` with ``dest``: the Report of the ``targets`` (HeldTargets, ListedTargets) queried into the
    file ``output`` (dest, format, check mode), written whole before the task fails (some targets failed or were
    late) or stops (BatchStopped)."""
    wait_for, wait_timeout = timing[0], timing[1]
    tally = Tally(wait_for, where="dest")
    warnings = list(targets.warnings)
    with targets, ResultFile(*output) as sink:
        refused = stream_poll(client, targets, sink, tally, concurrency, timing, progress=progress)
        if progress is not None:
            progress.finish()
        export = export_result(sink, sink.commit(), tally)
    if refused is not None:
        raise BatchStopped(refused, [], warnings, tally, export)
    return Report([], tally.summary(), warnings, tally.failure(wait_timeout), client.refusals - refusals, export)


def export_result(sink, written, tally):
    """What the module returns of a ResultFile committed with ``written`` entries: its ``dest``, ``written``,
    ``changed``, and the first entries of the targets that failed and of those that were late (Tally)."""
    return dict(
        dest=sink.dest, written=written, changed=sink.changed, failed_devices=tally.failed, late_devices=tally.late
    )


def require_access(client):
    """Raise NacAuthError unless the account may fire ``dot1x_status`` (it is in GET /api/intent)."""
    if not client.has_intent(DOT1X_INTENT):
        raise NacAuthError(
            "The account may not fire the intent %s (%s): GET /api/intent does not list it. The account needs "
            "access to that intent (often the administrator role or a similar one) to query 802.1x status. "
            "No status was queried." % (DOT1X_INTENT, DOT1X_INTENT_NAMES),
            method="GET",
            path="/api/intent",
        )


def check_options(device_id, hostname, all_devices, concurrency, wait_for, wait_timeout, wait_interval):
    """Raise NacConfigError naming the first unusable option; return ``wait_for`` (None when not waiting)."""
    chosen = (("device_id", device_id), ("hostname", hostname), ("all_devices", all_devices or None))
    given = [name for name, value in chosen if value is not None]
    if len(given) != 1:
        raise NacConfigError(
            "give exactly one of device_id, hostname or all_devices: true to choose the devices, got %s"
            % (" and ".join(given) if given else "none (all_devices: false chooses nothing)")
        )
    check_concurrency(concurrency)
    check_number("wait_interval", wait_interval, 0, WAIT_INTERVAL_MAX, low_open=True)
    check_number("wait_timeout", wait_timeout, 0, WAIT_TIMEOUT_MAX)
    if wait_for is not None and not wait_for.strip():
        raise NacConfigError("wait_for must be a status such as AUTHENTICATED, got an empty string")
    return wait_for.strip() if wait_for is not None else None


def poll(
    client,
    targets,
    concurrency,
    wait_for=None,
    wait_timeout=300,
    wait_interval=5.0,
    clock=time.monotonic,
    sleep=time.sleep,
    progress=None,
):
    """``(results, refused)``: one result entry per target, in the targets' order, and the NacAuthError that
    stopped the polling (None when none did); targets that share an id (``shared_ids``) are queried once, and
    each gets that answer.

    Without ``wait_for``, every known target is queried once. With it, each round queries the
    targets that do not have that status yet (an error counts as not yet: it may be transient),
    then sleeps what is left of ``wait_interval`` (never past the deadline); a last round runs at
    the deadline. Each entry is the target's latest answer. Refused credentials end the polling, with the
    entries so far (the targets not queried have ``error``). ``progress`` counts each round's queries.
    """
    progress = progress or Progress()
    refused = []
    copies = shared_ids(targets)
    results = [None if target.error is None else error_entry(target, target.error) for target in targets]
    pending = (i for i, target in enumerate(targets) if target.error is None and i not in copies)  # lazily, no list
    deadline = clock() + wait_timeout
    queried = len(targets) - len(copies) - sum(1 for target in targets if target.error is not None)
    progress.phase("queried", queried)
    rounds = 1
    while True:
        started = clock()
        mine, theirs = itertools.tee(pending)  # tee holds only the indices in flight
        answers = query(client, (targets[i] for i in theirs), concurrency, refused, progress)
        for index, entry in zip(mine, answers):
            results[index] = entry
        for index, first in copies.items():
            results[index] = copy_entry(results[first], targets[index])
        if refused:
            return results, refused[0]
        if wait_for is None:
            break
        pending = [
            index
            for index, target in enumerate(targets)
            if target.error is None and index not in copies and not reached(results[index], wait_for)
        ]
        rounds = next_round(
            rounds, pending, queried, (wait_for, deadline, wait_interval, clock, sleep), started, progress
        )
        if rounds is None:
            break
    return results, None


def next_round(rounds, pending, queried, timing, started, progress):
    """Announce the next round of a wait and sleep until it starts; return its number, or None when the wait is over.

    The wait is over when no target is ``pending`` or the deadline has passed. Otherwise the round starts at
    ``wait_interval`` after the last one ``started``, never past the deadline (timing: wait_for, deadline,
    wait_interval, clock, sleep), so that a last round runs at the deadline."""
    wait_for, deadline, wait_interval, clock, sleep = timing
    now = clock()
    if not pending or now >= deadline:
        return None
    rounds += 1
    progress.phase(
        "queried again (round %d: %s of %s without status %s)"
        % (rounds, format(len(pending), ","), format(queried, ","), shown(wait_for)),
        len(pending),
        deadline=deadline,
    )
    pause = min(started + wait_interval, deadline) - now
    if pause > 0:
        sleep(pause)
    return rounds


def stream_poll(client, targets, sink, tally, concurrency, timing, progress=None):
    """``poll`` into ``sink`` (a dot1x_file.ResultFile), counted in ``tally`` (a dot1x_results.Tally), without
    holding the entries nor the targets: the NacAuthError that stopped the polling, or None.

    ``targets`` (HeldTargets or ListedTargets) are read once, in order, as they are queried; ``timing`` is
    (wait_for, wait_timeout, wait_interval, clock, sleep). The first round writes every target's entry in the
    targets' order as it is answered; a target whose id an earlier one has (``targets.repeated``) gets that answer.
    With ``wait_for``, the entries of the targets without that status yet (an error counts as not yet) are held
    with where their lines are, the later rounds query those alone, as ``poll`` does, and their last entries
    replace their lines once at the end (ResultFile.rewrite). Every target is counted with its last entry."""
    wait_for, wait_timeout, wait_interval, clock, sleep = timing
    progress = progress or Progress()
    refused, held, copies, firsts = [], {}, {}, {}  # copies: {index: index of the target whose answer it shares}
    progress.phase("queried", targets.queried)
    mine, theirs = itertools.tee(targets)  # tee holds only the targets between the query's feed and this loop
    answers = query(client, fired(theirs, targets.repeated), concurrency, refused, progress)
    deadline, started = clock() + wait_timeout, clock()
    for index, target in enumerate(mine):
        if target.error is not None:
            entry = error_entry(target, target.error)
        elif target.id in firsts:
            copies[index] = firsts[target.id][0]
            entry = copy_entry(firsts[target.id][1], target)
        else:
            entry = next(answers)
            if target.id in targets.repeated:
                firsts[target.id] = (index, entry)
        span = sink.write(entry)
        if wait_for and target.error is None and not reached(entry, wait_for) and not refused:
            held[index] = [entry, span]
        else:
            tally.add(entry)
    if not refused and wait_for:
        wait_rounds(
            client,
            held,
            copies,
            concurrency,
            (wait_for, deadline, wait_interval, clock, sleep),
            started,
            refused,
            progress,
        )
    for index in sorted(held):
        tally.add(held[index][0])
    sink.rewrite(dict((span, entry) for entry, span in held.values()))
    return refused[0] if refused else None


def wait_rounds(client, held, copies, concurrency, timing, started, refused, progress):
    """The rounds of ``stream_poll`` after its first: ``held`` ({index: [entry, span]}) updated until every held
    target has ``wait_for`` (timing: wait_for, deadline, wait_interval, clock, sleep) or the deadline passed;
    ``copies`` ({index: index}): the targets that share another's answer."""
    wait_for, clock = timing[0], timing[3]
    rounds, queried = 1, len(held) - sum(1 for index in held if index in copies)
    while True:
        pending = [i for i in sorted(held) if i not in copies and not reached(held[i][0], wait_for)]
        rounds = next_round(rounds, pending, queried, timing, started, progress)
        if rounds is None:
            return
        started = clock()
        chosen = (Target(held[i][0]["id"], held[i][0]["hostname"], None) for i in pending)
        for index, entry in zip(pending, query(client, chosen, concurrency, refused, progress)):
            held[index][0] = entry
        for index, first in copies.items():
            if index in held and first in held:
                held[index][0] = copy_entry(held[first][0], Target(None, held[index][0]["hostname"], None))
        if refused:
            return


def query(client, targets, concurrency, refused=None, progress=None):
    """Fire the intent once per target, ``concurrency`` at a time; yields one entry per target, in order.

    Any error after the client's retries is that target's own ``error``. A NacAuthError
    (credentials refused, no access to the intent) is the same for every target: it is appended to
    ``refused``, and the targets not yet started are not queried (their entries say so). ``progress`` (a
    progress.Progress) is stepped once per target.
    """
    refused = [] if refused is None else refused
    progress = progress or Progress()

    def one(target):  # steps (http/loop.py): the queries run on one event loop (engine.ordered_steps)
        entry = yield from answer(target)
        progress.step(failed="error" in entry)
        return entry

    def answer(target):
        if refused:
            return error_entry(target, NOT_QUERIED)
        try:
            reply = yield from client.fire_intent_steps(target.id, DOT1X_INTENT)
            return shape(target, reply, getattr(client, "secrets", ()))
        except NacAuthError as error:
            refused.append(error)
            return error_entry(target, error.message)
        except NacError as failure:
            return error_entry(target, failure.message)

    return ordered_steps(one, targets, concurrency)


def query_all(client, targets, concurrency, progress=None):
    """Every target's entry (``query``; once per id, ``shared_ids``), as a list. Refused credentials are the same
    for every target: their NacAuthError is raised rather than returned as every device's error. ``progress``
    counts the queries."""
    refused = []
    copies = shared_ids(targets)
    if progress is not None:
        progress.phase("queried", len(targets) - len(copies))
    chosen = (t for i, t in enumerate(targets) if i not in copies)
    answers = iter(list(query(client, chosen, concurrency, refused, progress)))
    if progress is not None:
        progress.finish()
    if refused:
        raise refused[0]
    entries = []
    for index, target in enumerate(targets):
        entries.append(copy_entry(entries[copies[index]], target) if index in copies else next(answers))
    return entries
