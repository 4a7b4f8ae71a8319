# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The settle engine (no Ansible imports; I/O only through the callables given): perform one kind of
write for many items, ``concurrency`` at a time, and decide every uncertain one from the server's
state, never from an error.

``settle(items, write, list_records, shows, wording)``: ``write(item)`` performs one attempt and
returns a ``Written``; ``list_records()`` reads the list that shows the writes' effects (once for
every waiting item at a time); ``shows(item, listed)`` returns the records of that list that show
the item's write (none, one, or several: then it is ambiguous). ``wording`` (a ``Wording``) holds
every sentence the engine may say, in the caller's words. What each failure means, and so which
items are uncertain: the table "Retries and outcomes" of the API guide (docs/docsite/rst/api.rst).

An item ends DONE (with its id, from the reply or the list), or FAILED with its error; a write whose
outcome is uncertain (``outcome_unknown``, or refused on a re-send) is looked for in the list
during the settle window, and written again (at most ``max_resends`` times) only when the list kept
not showing it for that whole window. A task that wrote anything again lists once more at its end.

One report per item, consistent with the last list read after its last write (``_report``): what was
sent (answered with an id, answered without one, uncertain, sent again) and what that list shows
(nothing, the item once, several records) decide its state, its error and its warnings together,
once, at the end; what the list shows twice is always reported as such, with every id, never as
"not shown".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.netaccess.nac.plugins.module_utils.errors import NacAuthError, NacError
from ansible_collections.netaccess.nac.plugins.module_utils.replies import body_reason

PENDING, UNKNOWN, REFUSED = "pending", "unknown", "refused"  # REFUSED: a re-send refused (an earlier one may land)
DONE, FAILED = "done", "failed"
# How long (seconds) an uncertain write is looked for in the list before it may be sent again, when the
# caller does not say, and the first pause between two lists of that window (doubled after each list).
SETTLE_TIMEOUT = 60.0
SETTLE_FIRST_PAUSE = 1.0

Written = collections.namedtuple("Written", "id record reply")
Written.__doc__ = """What a successful write returned: the id it names (None when the reply names none), the
record as far as known, and the reply itself (for messages)."""

Wording = collections.namedtuple(
    "Wording",
    (
        "not_attempted",  # {reason}: no attempt was made, the task must stop
        "stopped",  # {error} {reason}: uncertain, and not sent again because the task must stop
        "refused_access",  # {error}: the reason to stop after a write refused for lack of access
        "several_known",  # {count} {name} {ids} {id}: a warning; done with an id, the list shows several
        "several_unidentified",  # {count} {name} {ids}: done without an id, the list shows several
        "several_after_resends",  # {count} {name} {ids} {attempts} {window}: sent again, the list shows several
        "several",  # {error} {count} {name} {ids}: uncertain, the list shows several
        "not_listed",  # {name} {id}: a warning; done with an id, the list read afterwards shows nothing
        "unidentified_not_shown",  # {said} {name} {window}: done without an id, never shown during the window
        "unidentified_list_failed",  # {list_error}: a warning; done without an id, listing failed
        "unknown_list_failed",  # {error} {list_error} {name}: uncertain, listing failed
        "unknown_not_shown",  # {error} {name} {window} {each_attempt}: uncertain, never shown, no re-send left
        "final_list_failed",  # {name} {attempts} {list_error}: a warning; sent again, the last list failed
    ),
)
Wording.__doc__ = """Every sentence of the engine, as ``str.format`` templates with the fields named beside each
field: the caller's own words for its kind of write."""


class Item:
    """One write to perform and what became of it."""

    def __init__(self, name):
        self.name = name
        self.state = PENDING
        self.attempts = 0  # writes sent for it
        self.id = None
        self.record = None
        self.reply = None  # the write's reply, when it was a JSON object
        self.error = None
        self.failure = None
        self.warnings = []
        self.answered = False  # a write was answered as a success: it wrote something
        self.written_id = None  # the id that the successful write's reply names
        self.found = None  # what the last list read after its last write shows of it (None: no such list)
        self.list_error = None  # the error of the last list after its last write, when that list failed
        self.stopped = None  # why it was not sent again

    @property
    def changed(self):
        """Whether it wrote something: done, or failed after a write answered as a success that the list shows
        (one of several devices of that name)."""
        return self.state == DONE or (self.state == FAILED and self.answered and bool(self.found))

    def fail(self, message, failure=None):
        self.state, self.error, self.failure, self.id = FAILED, message, failure, None

    def done(self, ident, record):
        self.state, self.id, self.record, self.error, self.failure = DONE, ident, record, None, None


def settle(
    items,
    write,
    list_records,
    shows,
    wording,
    concurrency=8,
    settle_timeout=SETTLE_TIMEOUT,
    max_resends=3,
    should_stop=None,
    clock=time.monotonic,
    sleep=time.sleep,
):
    """Write every item and decide each from the list (see the module's docstring); the items are updated.

    ``should_stop()`` is asked before each write: when it returns a reason (the controller that started
    the task is gone), nothing more is sent and what was sent is still settled. ``clock`` and ``sleep``
    are injectable for tests.
    """
    stop = _Stop(should_stop, wording)
    window = _Window(settle_timeout, clock, sleep)
    lists = _Lists(list_records, shows)
    to_send = list(items)
    while to_send:
        with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(to_send)))) as pool:
            list(pool.map(lambda item: _attempt(item, write, stop, wording), to_send))
        written = [item for item in items if item.attempts]
        # A write sent again is looked for even when answered with an id: the list shows a duplicate, if any.
        unsettled = [item for item in to_send if _unsettled(item)]
        _look(unsettled, written, lists, window)
        to_send = [
            item
            for item in unsettled
            if item.state == UNKNOWN and not item.found and item.list_error is None and item.attempts <= max_resends
        ]  # _attempt checks the stop before sending any of them again
    resent = [item for item in items if item.attempts > 1]
    if resent and not lists.read([item for item in items if item.attempts]):
        for item in resent:
            item.warnings.append(
                wording.final_list_failed.format(name=item.name, attempts=item.attempts, list_error=lists.error.message)
            )
    for item in items:
        if item.attempts and item.state != FAILED:
            _report(item, window, wording)


def _unsettled(item):
    """Whether the list must be read to decide the item just written: its outcome is uncertain, its reply named
    no id, or it was sent again (the list shows a duplicate, if any). Not an item that was not sent again
    because the task must stop: the list read before decides it."""
    if item.stopped is not None:
        return False
    return item.state in (UNKNOWN, REFUSED) or (item.state == DONE and (item.written_id is None or item.attempts > 1))


class _Stop:
    """Why no further write may be sent, or None: the controller is gone, or the credentials were refused."""

    def __init__(self, should_stop, wording):
        self._should_stop = should_stop
        self._wording = wording
        self._reason = None
        self._lock = threading.Lock()

    def refuse(self, error):
        with self._lock:
            self._reason = self._reason or self._wording.refused_access.format(error=error.message)

    def reason(self):
        with self._lock:
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
        return "%g s" % self.seconds


class _Lists:
    """The lists read for the settle engine: each one tells every written item what it shows of it."""

    def __init__(self, list_records, shows):
        self._list_records, self._shows = list_records, shows
        self.error = None

    def read(self, written):
        """List once; on success each of ``written`` gets what the list shows of it (``found``; a list that
        no longer shows an item shown before does not erase it), else the error (``list_error``).
        Returns whether the list could be read."""
        try:
            listed = self._list_records()
        except NacError as error:
            self.error = error
            for item in written:
                item.list_error = error
            return False
        self.error = None
        for item in written:
            found = self._shows(item, listed)
            if found or not item.found:
                item.found = found
            item.list_error = None
        return True


def _attempt(item, write, stop, wording):
    """One write for ``item``, unless the task must stop; its result decided from the reply or error."""
    reason = stop.reason()
    if reason:
        if item.attempts:
            item.stopped = reason  # uncertain, not sent again: decided from the list by _report
        else:
            item.fail(wording.not_attempted.format(reason=reason))
        return
    item.attempts += 1
    item.found = item.list_error = None  # only lists read after this write tell anything of it
    try:
        written = write(item)
    except NacError as error:
        item.error, item.failure = error.message, error.failure
        if error.outcome_unknown:
            item.state = UNKNOWN  # the server may have committed it: the list decides
        elif item.attempts > 1:
            item.state = REFUSED  # refused now, but an earlier attempt may yet land: the list decides
        else:
            item.state = FAILED
        if isinstance(error, NacAuthError) and not error.outcome_unknown:
            stop.refuse(error)
        return
    item.answered, item.written_id, item.reply = True, written.id, written.reply
    item.done(written.id, written.record)


def _look(unsettled, written, lists, window):
    """Look for the unsettled items in the list, one list for all of them at a time, until each is
    shown or ``window`` has passed: lists at once, then after 1, 2, 4, ... s, and a last one at the
    end of the window (an item not shown is only ever sent again when the list kept not showing it
    for the whole window). Every list tells every written item what it shows of it (``_Lists``)."""
    waiting = list(unsettled)
    deadline = window.clock() + window.seconds
    pause = SETTLE_FIRST_PAUSE
    while waiting:
        if lists.read(written):
            waiting = [item for item in waiting if not item.found]
        now = window.clock()
        if not waiting or now >= deadline:
            return
        window.sleep(min(pause, deadline - now))
        pause *= 2


def _report(item, window, wording):
    """The one report of a written item (not failed at once): what was sent and what the last list read after
    its last write shows of it decide its state, error and warnings together."""
    ids = _ids(item)
    fields = dict(name=item.name, window=window.text(), count=len(ids), ids=", ".join(str(i) for i in ids))
    if not ids and item.list_error is not None:  # no list after its last write could be read, or showed it
        if item.answered:
            item.done(item.written_id, item.record)
            if item.written_id is None:
                item.warnings.append(wording.unidentified_list_failed.format(list_error=item.list_error.message))
        elif item.stopped:
            item.fail(wording.stopped.format(error=item.error, reason=item.stopped), item.failure)
        else:
            message = wording.unknown_list_failed.format(error=item.error, list_error=item.list_error.message, **fields)
            item.fail(message, item.failure)
    elif not ids:
        _not_shown(item, fields, wording)
    elif len(ids) == 1:
        item.done(ids[0], item.record if item.written_id == ids[0] else item.found[0])
    elif item.answered and item.written_id is not None and item.attempts == 1:
        item.done(item.written_id, item.record)
        item.warnings.append(wording.several_known.format(id=item.written_id, **fields))
    elif item.attempts > 1:
        item.fail(wording.several_after_resends.format(attempts=item.attempts, **fields), item.failure)
    elif item.answered:
        item.fail(wording.several_unidentified.format(**fields))
    else:
        item.fail(wording.several.format(error=item.error, **fields), item.failure)


def _ids(item):
    """The distinct ids of what the last list shows of the item, and the id its write's reply named when that
    list shows the name under other ids only; none when the list shows nothing (or no list was read)."""
    ids = []
    for record in item.found or ():
        if record["id"] not in ids:
            ids.append(record["id"])
    if ids and item.written_id is not None and item.written_id not in ids:
        ids.insert(0, item.written_id)
    return ids


def _not_shown(item, fields, wording):
    """The report of a written item that no list read after its last write showed."""
    if item.answered and item.written_id is None:
        said = " (the server said: %s)" % body_reason(item.reply) if item.reply else ""
        item.fail(wording.unidentified_not_shown.format(said=said, **fields))
    elif item.answered:
        item.done(item.written_id, item.record)
        if item.found is not None:
            item.warnings.append(wording.not_listed.format(id=item.written_id, **fields))
    elif item.stopped:
        item.fail(wording.stopped.format(error=item.error, reason=item.stopped), item.failure)
    else:
        each_attempt = "the only attempt" if item.attempts == 1 else "each of %d attempts" % item.attempts
        item.fail(wording.unknown_not_shown.format(error=item.error, each_attempt=each_attempt, **fields), item.failure)
