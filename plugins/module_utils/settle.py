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
not showing it for that whole window.
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
SETTLE_TIMEOUT = 30.0
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
        "several_unidentified",  # {count} {name} {ids}: a warning; done without an id, the list shows several
        "several_after_resends",  # {count} {name} {ids} {attempts} {window}: sent again, the list shows several
        "several",  # {error} {count} {name} {ids}: failed or uncertain, the list shows several
        "unidentified_not_shown",  # {said} {name} {window}: done without an id, never shown during the window
        "unidentified_list_failed",  # {list_error}: a warning; done without an id, listing failed
        "unknown_list_failed",  # {error} {list_error} {name}: uncertain, listing failed
        "unknown_not_shown",  # {error} {name} {window} {each_attempt}: uncertain, never shown, no re-send left
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

    @property
    def changed(self):
        return self.state == DONE

    def fail(self, message, failure=None):
        self.state, self.error, self.failure = FAILED, message, failure


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
    to_send = list(items)
    while to_send:
        with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(to_send)))) as pool:
            list(pool.map(lambda item: _attempt(item, write, stop, wording), to_send))
        # A write sent again is looked for even when answered with an id: the list shows a duplicate, if any.
        unsettled = [
            item
            for item in to_send
            if item.state in (UNKNOWN, REFUSED) or (item.state == DONE and (item.id is None or item.attempts > 1))
        ]
        listed = _look(unsettled, list_records, shows, window, wording)
        to_send = _after_window(unsettled, listed, window, max_resends, wording)


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


def _attempt(item, write, stop, wording):
    """One write for ``item``, unless the task must stop; its result decided from the reply or error."""
    reason = stop.reason()
    if reason:
        if item.attempts:
            item.fail(wording.stopped.format(error=item.error, reason=reason), item.failure)
        else:
            item.fail(wording.not_attempted.format(reason=reason))
        return
    item.attempts += 1
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
    item.state, item.reply, item.error, item.failure = DONE, written.reply, None, None
    item.id, item.record = written.id, written.record


def _look(unsettled, list_records, shows, window, wording):
    """Look for the unsettled items in the list, one list for all of them at a time, until each is
    shown or ``window`` has passed: lists at once, then after 1, 2, 4, ... s, and a last one at the
    end of the window. Resolves what a list shows; returns True when the last list worked, else its
    NacError (an item not shown is only ever sent again when the list kept not showing it for the
    whole window).
    """
    waiting = list(unsettled)
    deadline = window.clock() + window.seconds
    pause = SETTLE_FIRST_PAUSE
    while waiting:
        try:
            listed_records = list_records()
        except NacError as error:
            listed = error
        else:
            listed = True
            for item in list(waiting):
                found = shows(item, listed_records)
                if found:
                    _resolve(item, found, window, wording)
                    waiting.remove(item)
        now = window.clock()
        if not waiting or now >= deadline:
            return listed
        window.sleep(min(pause, deadline - now))
        pause *= 2
    return True


def _resolve(item, found, window, wording):
    """A waiting item that the list shows: done, with its id (or ambiguous)."""
    fields = dict(count=len(found), name=item.name, ids=", ".join(str(r["id"]) for r in found))
    if len(found) == 1:
        item.state, item.id, item.record = DONE, found[0]["id"], found[0]
        item.error = item.failure = None
    elif item.state == DONE and item.attempts == 1:
        item.warnings.append(wording.several_unidentified.format(**fields))
    elif item.attempts > 1:
        item.fail(
            wording.several_after_resends.format(attempts=item.attempts, window=window.text(), **fields), item.failure
        )
    else:
        item.fail(wording.several.format(error=item.error, **fields), item.failure)


def _after_window(unsettled, listed, window, max_resends, wording):
    """Decide what the list did not show: send again, or fail saying what is known. Returns the items to send."""
    resend = []
    for item in unsettled:
        if item.state == UNKNOWN and listed is True and item.attempts <= max_resends:
            resend.append(item)  # _attempt checks the stop before sending it again
        elif item.state == DONE and item.id is None:
            if listed is True:
                said = " (the server said: %s)" % body_reason(item.reply) if item.reply else ""
                item.fail(wording.unidentified_not_shown.format(said=said, name=item.name, window=window.text()))
            else:
                item.warnings.append(wording.unidentified_list_failed.format(list_error=listed.message))
        elif item.state in (UNKNOWN, REFUSED) and listed is not True:
            item.fail(
                wording.unknown_list_failed.format(error=item.error, list_error=listed.message, name=item.name),
                item.failure,
            )
        elif item.state in (UNKNOWN, REFUSED):
            each_attempt = "the only attempt" if item.attempts == 1 else "each of %d attempts" % item.attempts
            item.fail(
                wording.unknown_not_shown.format(
                    error=item.error, name=item.name, window=window.text(), each_attempt=each_attempt
                ),
                item.failure,
            )
    return resend
