# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apply engine (no Ansible imports; I/O only through the callables given): carry out the actions of a
plan (``Action``: what to do to one object, decided by a pure ``plan`` such as ensure_devices.plan), each by the
``Operation`` of its verb, ``concurrency`` at a time, and decide every uncertain write from the server's state,
never from an error. Four steps, each one function:

- **write** (``_attempt_steps``): one attempt of the action's operation (``Operation.write``), its reply or error
  read as the table "Retries and outcomes" of the API guide says (docs/docsite/rst/api.rst);
- **settle** (``_settle``): an uncertain write, and a write answered with an id that its operation confirms
  by reading, is looked for in the list (``list_records``, read once for every waiting action at a time)
  during the settle window, asking ``Operation.settled`` "is this action settled in this list?" (a creation:
  the list shows the object; a deletion: its id is gone) and ``Operation.confirm`` "does this list confirm
  the write answered with that id?" (a creation: the id is listed under the requested name). A write is
  sent again (at most ``max_resends`` times) only when its outcome is uncertain and the list kept not
  showing it settled for that whole window; a write the list does not confirm is never reported clean. A write
  a rate limit refused with 503 (``NacError.refused``: the shared pause taken) is looked for at once, and sent
  again (after the pause) as soon as a list does not show it, for RATE_LIMIT_PATIENCE seconds from its first
  refusal, without spending ``max_resends``. A write that broke before any byte of its reply on a kept-alive
  connection (``NacError.stale``: the server was closing it) is looked for at once too, and sent again (on a new
  connection) once STALE_PAUSE has passed since it broke and a list read since does not show it;
- **confirm** (``_confirm``): one fresh list once every write has ended, for the actions sent more than once
  (an earlier attempt committed late shows there as a duplicate);
- **report** (``apply_report.report``): one report per action, consistent with the last list read after its
  last write (what was sent and what that list shows decide its state, error and warnings together), in the words of
  its operation (``Operation.wording``); a record listed twice is reported as such, with every id.

**The first write proves the ground** (``_proof``): when there are several actions, the first is carried out
alone (written, settled, confirmed, reported) before any other is sent; the others follow, ``concurrency`` at a
time, only when its report is clean (done, no warning). Otherwise none is sent (each fails ``not_attempted``,
the reason ``unproven``): a list that hides, renames or doubles what a write made costs one write per task,
never one per action. A first write refused outright wrote nothing: the next action proves the ground instead.

A new operation (a deletion, say) is an ``Operation`` and a verb that the plan gives: the engine does not
change (docs/docsite/rst/developing.rst, "Adding a verb or a resource").
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacAuthError, NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import SETTLE_TIMEOUT
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import ordered_steps
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import SENDING, Blocking
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import RATE_LIMIT_PATIENCE
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.actions import (  # noqa: F401  # pylint: disable=unused-import  # (apply's names)
    CONFIRMED,
    DONE,
    FAILED,
    MISSING,
    PENDING,
    REFUSED,
    UNKNOWN,
    Action,
    Answer,
    Operation,
    Wording,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply_report import report
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.progress import Progress

# The first pause between two lists of the settle window (doubled after each list). The window itself is
# options.SETTLE_TIMEOUT unless the caller says.
SETTLE_FIRST_PAUSE = 1.0
# How long a write that broke on a kept-alive connection the server was closing (NacError.stale) is looked for before
# it is sent again: a service that read it would have committed it by then (it answers in less); the server closing
# the connection never read it. Any earlier attempt of a write sent again is looked for at the end (_confirm).
STALE_PAUSE = 0.25


# What the first write of a task proves (_proof), when it is not the reason to stop.
PROVEN, NOTHING_WRITTEN = "proven", "nothing written"


def apply(
    actions,
    operations,
    list_records,
    concurrency=8,
    check_mode=False,
    settle_timeout=SETTLE_TIMEOUT,
    max_resends=3,
    should_stop=None,
    clock=time.monotonic,
    sleep=time.sleep,
    progress=None,
):
    """Carry out every pending action whose verb has an operation in ``operations`` ({verb: Operation}); the
    actions are updated (see the module's docstring). Other actions (a plan's "leave", or failed) are untouched.

    ``list_records()`` reads the list that shows the writes' effects. In ``check_mode`` nothing is written: each
    action is reported done with its operation's ``preview``. ``should_stop()`` is asked before each write: when
    it returns a reason (the controller that started the task is gone), nothing more is sent and what was sent is
    still settled. ``clock`` and ``sleep`` are injectable for tests. ``progress`` (a progress.Progress) counts the
    writes, and the settle window's wait.
    """
    todo = [action for action in actions if action.state == PENDING and action.verb in operations]
    for action in todo:
        action.operation = operations[action.verb]
    if check_mode:
        for action in todo:
            action.done(action.id, action.operation.preview(action))
        return actions
    progress = progress or Progress()
    stop = _Stop(should_stop)
    window = _Window(settle_timeout, clock, sleep)
    lists = _Lists(list_records)
    rest = todo
    while len(rest) > 1 and stop.known() is None:  # the first write proves the ground before the rest follow
        first, rest = rest[0], rest[1:]
        _carry_out([first], stop, window, lists, concurrency, max_resends, progress, clock, todo)
        proof = _proof(first)
        if proof is PROVEN:
            break
        if proof is not NOTHING_WRITTEN:
            stop.refuse(proof)
    _carry_out(rest, stop, window, lists, concurrency, max_resends, progress, clock, todo)
    progress.finish()
    return actions


def _carry_out(batch, stop, window, lists, concurrency, max_resends, progress, clock, todo):
    """Write, settle, confirm and report the actions of ``batch``, ``concurrency`` at a time. ``progress`` counts
    the writes of all of ``todo`` (the batches of a task are one phase: "written"), then those sent again."""
    before = [action for action in todo if action.attempts]
    progress.phase("written", len(todo), done=len(before), failed=sum(1 for action in before if action.state == FAILED))
    to_send, what, waiting = batch, None, []

    def attempt(action):  # steps: the writes run on one event loop, concurrency requests in flight
        yield from _attempt_steps(action, stop, window.clock)
        progress.step(failed=action.state == FAILED)

    while to_send or waiting:
        if what is not None and to_send:
            progress.phase(what, len(to_send))
        for _done in ordered_steps(attempt, to_send, concurrency):
            pass
        written = [action for action in batch if action.attempts]
        # A write sent again is looked for even when answered with an id: the list shows a duplicate, if any.
        unsettled = [action for action in to_send if _unsettled(action)]
        for action in unsettled:  # from when its write ended, overlapping the others' writing (a stale write: short)
            action.settle_by = action.broke_at + STALE_PAUSE if action.stale else action.ended + window.seconds
        waiting += unsettled
        if waiting:
            progress.phase("settled from the device list", len(waiting), deadline=clock() + window.seconds)
        _settle(waiting, written, lists, window, progress)
        now = window.clock()
        to_send = [
            action
            for action in waiting
            if action.state == UNKNOWN
            and not action.settled
            and action.list_error is None
            and (action.rate_refused or (now >= action.settle_by and action.attempts - action.refusals <= max_resends))
        ]  # _attempt_steps checks the stop before sending any of them again
        # The others the window still waits for (a write refused by a rate limit cut their wait short).
        sending = set(id(action) for action in to_send)
        waiting = [a for a in waiting if id(a) not in sending and _waiting(a) and now < a.settle_by]
        what = "sent again"
    _confirm([action for action in batch if action.attempts], lists)
    for action in batch:
        if action.attempts and action.state != FAILED:
            report(action, window.text(), lists.count)


def _proof(first):
    """What the first write of a task proves, once reported: PROVEN (done, and its report is clean: the list
    shows it as written, once), NOTHING_WRITTEN (refused at once: the next write proves the ground instead), or
    the reason why no other write may be sent, in its operation's words (``unproven``): the list did not show
    it as written (not at all, under another name, several times), or could not be read, or its outcome is
    unknown. A server that hides or changes what it holds then costs one write per task, never one per action."""
    if first.state == DONE and not first.warnings:
        return PROVEN
    if first.state == FAILED and first.refused:
        return NOTHING_WRITTEN
    ident = first.id if first.id is not None else first.written_id
    return first.operation.wording.unproven.format(name=first.name, id="" if ident is None else " (id %s)" % ident)


def _confirm(written, lists):
    """The confirm step: one fresh list after every write has ended, when any written action was sent more than
    once (an earlier attempt committed late shows there); it tells every written action what it shows (as each
    list of the settle window does), and an action sent again that it could not be read for gets the warning
    ``final_list_failed``."""
    to_confirm = [action for action in written if action.attempts > 1]
    if to_confirm and not lists.read(written):
        for action in to_confirm:
            action.warnings.append(
                action.operation.wording.final_list_failed.format(
                    name=action.name, attempts=action.attempts, list_error=lists.error.message
                )
            )


def _unsettled(action):
    """Whether the list must be read to decide the action just written: its outcome is uncertain, its reply named
    no id, its operation confirms an id by reading, or it was sent again (the list shows a duplicate, if any).
    Not an action that was not sent again because the task must stop: the list read before decides it."""
    if action.stopped is not None:
        return False
    return action.state in (UNKNOWN, REFUSED) or (
        action.state == DONE
        and (action.written_id is None or action.attempts > 1 or action.operation.confirm is not None)
    )


def _waiting(action):
    """Whether the settle window still waits for the action: the list has not listed the id its write was
    answered with (MISSING), or, with nothing to confirm, has not shown it settled."""
    return action.confirmed is MISSING or (action.confirmed is None and not action.settled)


class _Stop:
    """Why no further write may be sent, or None: the controller is gone, or the credentials were refused. Only the
    batch's loop asks and tells it (a write on a helper thread of the loop never does), so it takes no lock."""

    def __init__(self, should_stop):
        self._should_stop = should_stop
        self._reason = None

    def refuse(self, reason):
        """Keep ``reason`` as the reason to stop, unless one is known already."""
        self._reason = self._reason or reason

    def known(self):
        """Return the reason found so far, without asking ``should_stop``."""
        return self._reason

    def reason(self):
        """Return the reason to stop, asking ``should_stop`` while none is known."""
        if self._reason is None and self._should_stop is not None:
            gone = self._should_stop()
            if gone:
                self._reason = gone if isinstance(gone, str) else "the task was told to stop"
        return self._reason


class _Window:
    """The settle window: how long, and the clock and sleep to wait it out with."""

    def __init__(self, seconds, clock, sleep):
        self.seconds, self.clock, self.sleep = seconds, clock, sleep

    def text(self):
        """Return the window as the reports word it, in seconds."""
        return "%g s" % self.seconds


class _Lists:
    """The lists read for the engine: each one tells every written action what it shows of it."""

    def __init__(self, list_records):
        self._list_records = list_records
        self.error = None
        self.count = None  # how many records the last list read showed

    def read(self, written):
        """List once; on success each of ``written`` gets what the list shows of it (``found``) and whether that
        settles it (``settled``), else the error (``list_error``). A list that no longer shows an action settled
        does not unsettle it: a record once seen was committed. Returns whether the list could be read."""
        try:
            records = self._list_records()
        except NacError as error:
            self.error = error
            for action in written:
                action.list_error = error
            return False
        self.error, self.count = None, len(records)
        indexes = {}  # one index of this list per operation
        for action in written:
            operation = action.operation
            key = id(operation)
            if key not in indexes:
                indexes[key] = operation.index(records)
            shown = operation.shows(action, indexes[key])
            settled = bool(operation.settled(action, shown))
            if settled or not action.settled:
                action.found, action.settled = shown, settled
            if action.written_id is not None and operation.confirm is not None and action.confirmed is not CONFIRMED:
                action.confirmed = operation.confirm(action, indexes[key])  # a list lagging again cannot undo it
            action.list_error = None
        return True


def _write_steps(operation, action):
    """Steps: one attempt of ``operation``'s write; a write without a steps form goes out on a helper thread of the
    loop, holding an in-flight slot while it runs."""
    if operation.write_steps is not None:
        return (yield from operation.write_steps(action))
    yield SENDING
    return (yield Blocking(operation.write, action))


def _attempt_steps(action, stop, clock):
    """The write step, as steps: one attempt of the action's operation, unless the task must stop; its result
    decided from the reply or error (a refusal by a rate limit timed by ``clock``)."""
    reason = stop.reason()
    if reason:
        if action.attempts:
            action.stopped = reason  # uncertain, not sent again: decided from the list by report
        else:
            action.fail(action.operation.wording.not_attempted.format(reason=reason))
        return
    action.attempts += 1
    action.found = action.settled = action.list_error = action.confirmed = None  # only lists read after this write
    action.rate_refused = action.stale = False
    try:
        written = yield from _write_steps(action.operation, action)
    except NacError as error:
        action.ended = clock()
        action.error, action.failure = error.message, error.failure
        if error.refused:
            now = clock()
            action.refused_since = now if action.refused_since is None else action.refused_since
            action.rate_refused = now - action.refused_since <= RATE_LIMIT_PATIENCE
            action.refusals += action.rate_refused
        if error.stale:
            action.stale, action.broke_at = True, clock()
        if error.outcome_unknown:
            action.state = UNKNOWN  # the server may have committed it: the list decides
        elif action.attempts > 1:
            action.state = REFUSED  # refused now, but an earlier attempt may yet land: the list decides
        else:
            action.state, action.refused = FAILED, True
        if isinstance(error, NacAuthError) and not error.outcome_unknown:
            stop.refuse(action.operation.wording.refused_access.format(error=error.message))
        return
    action.ended = clock()
    action.answered, action.written_id, action.reply = True, written.id, written.reply
    action.done(written.id, written.record)


def _settle(unsettled, written, lists, window, progress):
    """The settle step: look for the unsettled actions in the list, one list for all of them at a time, until
    the first of them is settled or its window has passed: lists at once, then after 1, 2, 4, ... s, and a last one
    at the end of the window (an action not settled is only ever sent again when a list begun after its window
    kept not showing it settled: the settle window, a stale write's STALE_PAUSE; or when a rate limit refused it).
    Every list tells every written action what it shows of it (``_Lists``)."""
    waiting = list(unsettled)
    pause = SETTLE_FIRST_PAUSE
    while waiting:
        begun = window.clock()
        read = lists.read(written)
        if read:
            waiting = [action for action in waiting if _waiting(action)]
            progress.update(len(unsettled) - len(waiting))  # settled so far
        else:
            progress.tick()
        now, deadline = window.clock(), min([action.settle_by for action in waiting] or [0.0])
        if not waiting or begun >= deadline or (read and any(action.rate_refused for action in waiting)):
            return  # the first window over, or a refused write not shown: sent again at once (after the shared pause)
        window.sleep(max(0.0, min(pause, deadline - now)))
        pause *= 2
