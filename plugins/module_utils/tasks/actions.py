# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the apply engine (apply.py) works on (no Ansible imports): an ``Action`` (what to do to one object, and what
became of it), the ``Operation`` that carries out and judges one verb, the ``Wording`` it reports in, the
``Answer`` of a write, and the states an action goes through. apply.py names them all too.
"""

import collections

PENDING, UNKNOWN, REFUSED = "pending", "unknown", "refused"  # REFUSED: a re-send refused (an earlier one may land)
DONE, FAILED = "done", "failed"

Answer = collections.namedtuple("Answer", "id record reply")
Answer.__doc__ = """What a write answered as a success: the id it names (None when the reply names none), the
record as far as known, and the reply itself (for messages)."""

# What one list says of a write answered with an id (``Operation.confirm``): CONFIRMED, MISSING (not listed
# yet: waited for during the settle window), or a message (the list contradicts the write: the action fails).
CONFIRMED, MISSING = True, False

Operation = collections.namedtuple(
    "Operation", "write index shows settled confirm preview wording write_steps", defaults=(None,)
)
Operation.__doc__ = """How one verb of a plan is carried out and judged, each a callable: ``write(action)`` one attempt,
an ``Answer`` (or NacError); ``write_steps(action)``, when given, the same attempt as steps (http/loop.py), run on the
engine's event loop (without it, ``write`` runs on one of the loop's helper threads); ``index(records)`` one list read
turned into what ``shows`` looks in; ``shows(action, index)`` the listed records that are the action's object (several:
ambiguous); ``settled(action, shown)`` whether the action is settled in that list (a creation: something is shown; a
deletion: nothing is); ``confirm(action, index)`` what that list says of a write answered with an id: CONFIRMED, MISSING
or the message of a contradiction (None: such writes need no reading); ``preview(action)`` the record a check-mode run
reports; ``wording`` its ``Wording``."""

Wording = collections.namedtuple(
    "Wording",
    (
        "not_attempted",  # {reason}: no attempt was made, the task must stop
        "unproven",  # {name} {id}: the reason to stop: the first write ({id}: " (id N)" or empty) was not proven
        "stopped",  # {error} {reason}: uncertain, and not sent again because the task must stop
        "refused_access",  # {error}: the reason to stop after a write refused for lack of access
        "several_known",  # {count} {name} {ids} {id}: a warning; done with an id, the list shows several
        "several_unidentified",  # {count} {name} {ids}: done without an id, the list shows several
        "several_after_resends",  # {count} {name} {ids} {attempts} {window}: sent again, the list shows several
        "several",  # {error} {count} {name} {ids}: uncertain, the list shows several
        "not_listed",  # {name} {id}: a warning; done with an id (not confirmed by reading), the list does not settle it
        "unconfirmed",  # {name} {id} {window} {listed}: done with an id, the list never listed that id in the window
        "unconfirmed_list_failed",  # {name} {id} {list_error}: a warning; done with an id, no list could confirm it
        "unidentified_not_shown",  # {said} {name} {window}: done without an id, never settled during the window
        "unidentified_list_failed",  # {list_error}: a warning; done without an id, listing failed
        "unknown_list_failed",  # {error} {list_error} {name}: uncertain, listing failed
        "unknown_not_shown",  # {error} {name} {window} {each_attempt}: uncertain, never settled, no re-send left
        "final_list_failed",  # {name} {attempts} {list_error}: a warning; confirmed, but the last list failed
    ),
)
Wording.__doc__ = """Every sentence the engine may say of an action, as ``str.format`` templates with the fields
named beside each field: the operation's own words for its kind of write."""


class Action:
    """What to do to one object (``verb``; its ``Operation`` is looked up by the engine), and what became of it.
    ``id`` is the object's id when the plan knows it (a deletion's target)."""

    def __init__(self, name, verb=None, ident=None):
        self.name = name
        self.verb = verb
        self.operation = None  # set by ``apply`` from its operations, by verb
        self.state = PENDING
        self.attempts = 0  # writes sent for it
        self.id = ident
        self.record = None
        self.reply = None  # the write's reply, when it was a JSON object
        self.error = None
        self.failure = None
        self.warnings = []
        self.answered = False  # a write was answered as a success: it wrote something
        self.written_id = None  # the id that the successful write's reply names
        self.found = None  # what the last list read after its last write shows of it (None: no such list)
        self.settled = None  # whether that list shows it settled (None: no such list)
        self.list_error = None  # the error of the last list after its last write, when that list failed
        self.stopped = None  # why it was not sent again
        self.confirmed = None  # what the lists after its last write say of an id answered (Operation.confirm)
        self.refused = False  # its only write was refused outright: nothing was written
        self.rate_refused = False  # its last write was refused by a rate limit (503), within the patience
        self.refused_since = None  # the clock of its first write refused so
        self.refusals = 0  # its writes refused so (not counted against max_resends)
        self.stale = False  # its last write broke unanswered on a kept-alive connection the server was closing
        self.broke_at = None  # the clock when it broke so
        self.settle_by = None  # the end of the settle window of its last write
        self.ended = None  # the clock when its last write ended: its settle window starts there

    @property
    def changed(self):
        """Whether it wrote something: done, or failed after a write answered as a success with an id, or that the
        list shows settled (one of several devices of that name)."""
        return self.state == DONE or (
            self.state == FAILED and self.answered and (self.written_id is not None or bool(self.settled))
        )

    def fail(self, message, failure=None):
        """Mark it failed with ``message`` (and the error's ``failure`` kind); it names no id then."""
        self.state, self.error, self.failure, self.id = FAILED, message, failure, None

    def done(self, ident, record):
        """Mark it done with the id and record it ends with, clearing any earlier error."""
        self.state, self.id, self.record, self.error, self.failure = DONE, ident, record, None, None
