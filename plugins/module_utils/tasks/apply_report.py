# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report step of the apply engine (apply.py; no Ansible imports): one report per written action, consistent
with the last list read after its last write, in the words of its operation (``Operation.wording``).
"""

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import body_reason
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.actions import CONFIRMED


def report(action, window, listed):
    """Write the one report of a written action (not failed at once), in its operation's words (``window``: the
    settle window as text; ``listed``: how many records the last list showed). What was sent and what the last list
    read after its last write shows of it decide its state, error and warnings together. A write answered with an
    id that the lists did not confirm (``Operation.confirm``) is never clean: contradicted or never listed, it fails
    (keeping the id its reply named); not read, it gets a warning."""
    wording = action.operation.wording
    ids = _ids(action)
    fields = dict(name=action.name, window=window, count=len(ids), ids=", ".join(str(i) for i in ids))
    if action.confirmed is not None and action.confirmed is not CONFIRMED:  # never listed, or contradicted
        message = action.confirmed or wording.unconfirmed.format(id=action.written_id, listed=listed, **fields)
        action.fail(message)
        action.id = action.written_id  # it was created: its entry keeps the id
    elif not action.settled and action.list_error is not None:  # no list after its last write was read, or settled it
        if action.answered:
            action.done(action.written_id, action.record)
            if action.written_id is None:
                action.warnings.append(wording.unidentified_list_failed.format(list_error=action.list_error.message))
            elif action.operation.confirm is not None and action.attempts == 1:  # sent again: final_list_failed
                action.warnings.append(
                    wording.unconfirmed_list_failed.format(
                        id=action.written_id, list_error=action.list_error.message, **fields
                    )
                )
        elif action.stopped:
            action.fail(wording.stopped.format(error=action.error, reason=action.stopped), action.failure)
        else:
            message = wording.unknown_list_failed.format(
                error=action.error, list_error=action.list_error.message, **fields
            )
            action.fail(message, action.failure)
    elif not action.settled:
        _not_settled(action, fields, wording)
    elif not ids:  # settled by what the list no longer shows (a deletion): the id known before
        action.done(action.written_id if action.written_id is not None else action.id, action.record)
    elif len(ids) == 1:
        action.done(ids[0], action.record if action.written_id == ids[0] else action.found[0])
    elif action.answered and action.written_id is not None and action.attempts == 1:
        action.done(action.written_id, action.record)
        action.warnings.append(wording.several_known.format(id=action.written_id, **fields))
    elif action.attempts > 1:
        action.fail(wording.several_after_resends.format(attempts=action.attempts, **fields), action.failure)
    elif action.answered:
        action.fail(wording.several_unidentified.format(**fields))
    else:
        action.fail(wording.several.format(error=action.error, **fields), action.failure)


def _ids(action):
    """The distinct ids of what the last list shows of the action, and the id its write's reply named when that
    list shows the object under other ids only; none when the list shows nothing (or no list was read)."""
    ids = []
    for record in action.found or ():
        if record["id"] not in ids:
            ids.append(record["id"])
    if ids and action.written_id is not None and action.written_id not in ids:
        ids.insert(0, action.written_id)
    return ids


def _not_settled(action, fields, wording):
    """The report of a written action that no list read after its last write showed settled."""
    if action.answered and action.written_id is None:
        said = " (the server said: %s)" % body_reason(action.reply) if action.reply else ""
        action.fail(wording.unidentified_not_shown.format(said=said, **fields))
    elif action.answered:
        action.done(action.written_id, action.record)
        if action.found is not None:
            action.warnings.append(wording.not_listed.format(id=action.written_id, **fields))
    elif action.stopped:
        action.fail(wording.stopped.format(error=action.error, reason=action.stopped), action.failure)
    else:
        each_attempt = "the only attempt" if action.attempts == 1 else "each of %d attempts" % action.attempts
        message = wording.unknown_not_shown.format(error=action.error, each_attempt=each_attempt, **fields)
        action.fail(message, action.failure)
