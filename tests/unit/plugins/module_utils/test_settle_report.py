# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One report per item, consistent with the last device list (issue 16, "one report"): a table of what was
sent (one POST answered with an id, answered without one, answered 5xx, dropped, sent again) by what the
device list shows afterwards (nothing, the device once, twice, once beside another client's, the list
failing) -> the one report (state, changed, error, warnings), on a fake clock, through nac_device's
creation flow (ensure_devices.ensure_devices: plan, then the apply engine with the creation operation and its wording)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacConnectionError
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    CREATED,
    FAILED,
    device_specs,
    ensure_devices,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import dropped, server_fault

NAME = "new-01"
SIBLING = "sib-01"  # an uncertain creation beside the item answered with an id: it makes the task list the devices
LIST_FAILED = "Could not connect to the NAC API at https://nac: connection refused"


class Server:
    """A NAC on a fake clock. ``sent``: how its POSTs of NAME go (a row of the table); ``shows``: what its list
    shows of NAME afterwards (a column). Ids are given in order from 100: ours first, then a second copy or
    another client's device."""

    def __init__(self, sent, shows):
        self.sent, self.shows = sent, shows
        self.records = [dict(id=1, hostname="cam-01")]
        self.now = 0.0
        self.lists = 0
        self.posts = []
        self.late = None  # the first attempt's record, committed late (row "re-sent", column "twice")
        self.next_id = 100

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds >= 0
        self.now += seconds

    def commit(self, hostname):
        record = dict(id=self.next_id, hostname=hostname, group="Cameras", profile="Camera")
        self.next_id += 1
        self.records.append(record)
        return record

    def list_devices(self):
        self.lists += 1
        if self.lists > 1 and self.shows == "fails" and (self.sent != "re-sent" or len(self.posts) > 1):
            raise NacConnectionError(LIST_FAILED)
        listed = copy.deepcopy(self.records)
        if self.late and any(r["hostname"] == NAME for r in self.records):
            self.records.append(self.late)  # lands once the re-send was listed: the final list sees it
            self.late = None
        return listed

    def create(self, body):
        self.posts.append((body["hostname"], self.now))
        if body["hostname"] == SIBLING:
            self.commit(SIBLING)
            raise server_fault()
        if self.sent == "re-sent":
            return self._resent()
        ours = self._commit_ours()
        if self.sent == "id":
            return {"id": ours}
        if self.sent == "no-id":
            return {}
        raise server_fault() if self.sent == "5xx" else dropped()

    def _commit_ours(self):
        """Commit NAME as the column says: nothing, once, twice (a replayed request), or beside another client's."""
        if self.shows == "nothing":
            self.next_id += 1
            return self.next_id - 1  # a reply may name an id that the list does not show
        ours = self.commit(NAME)["id"]
        if self.shows in ("twice", "ours+other"):
            self.commit(NAME)
        return ours

    def _resent(self):
        if len(self.posts) == 1:
            raise server_fault()  # not committed (yet): the window passes without it, then it is sent again
        ours = self._commit_ours() if self.shows != "twice" else self.commit(NAME)["id"]
        if self.shows == "twice":
            self.late = dict(id=self.next_id, hostname=NAME, group="Cameras", profile="Camera")
            self.next_id += 1
        return {"id": ours}

    def ensure(self):
        names = [NAME, SIBLING] if self.sent == "id" else [NAME]
        specs = device_specs([dict(hostname=name, group="Cameras", profile="Camera") for name in names])
        max_resends = 3 if self.sent == "re-sent" else 0  # the single-POST rows: no re-send
        outcomes = ensure_devices(
            specs,
            self.list_devices,
            self.create,
            settle_timeout=60,
            max_resends=max_resends,
            clock=self.clock,
            sleep=self.sleep,
        )
        return outcomes[0]


SHOWS_TWO = "the device list shows 2 devices named new-01 (ids 100, 101)"
SEVERAL_KNOWN = "created new-01 (id 100), but " + SHOWS_TWO + ": another client created one too"
UNIDENTIFIED_TWO = (
    "POST /api/device was answered as a success without a device id, and " + SHOWS_TWO + ": one of them was created "
    "by this task, which one is unknown"
)
UNCERTAIN_TWO = "; the device list, checked afterwards, shows 2 devices named new-01 (ids 100, 101): check them"
NOT_SHOWN = "the outcome is unknown: the device list did not show new-01 during the settle window of 60 s"
LIST_TOO = "whether the device was created is unknown, and listing the devices to find out failed too (" + LIST_FAILED
AFTER_RESENDS = SHOWS_TWO + ": the creation was sent 2 times because it was missing from the device list for a whole"
FAULT, DROP = server_fault().message, dropped().message
UNCONFIRMED = "created new-01 (id 100 in the reply), but the device list did not list id 100 during the settle window"

# (sent, shows) -> (state, id, changed, error: the text it starts with or None, [text each warning starts with])
TABLE = {
    # one POST answered with an id (beside an uncertain sibling, so that the task lists the devices afterwards)
    ("id", "nothing"): (FAILED, 100, True, UNCONFIRMED, []),
    ("id", "once"): (CREATED, 100, True, None, []),
    ("id", "twice"): (CREATED, 100, True, None, [SEVERAL_KNOWN]),
    ("id", "ours+other"): (CREATED, 100, True, None, [SEVERAL_KNOWN]),
    ("id", "fails"): (CREATED, 100, True, None, ["created new-01 (id 100 in the reply), but listing the devices to"]),
    # one POST answered as a success without an id
    ("no-id", "nothing"): (
        FAILED,
        None,
        False,
        "POST /api/device was answered as a success but without a device id",
        [],
    ),
    ("no-id", "once"): (CREATED, 100, True, None, []),
    ("no-id", "twice"): (FAILED, None, True, UNIDENTIFIED_TWO, []),
    ("no-id", "ours+other"): (FAILED, None, True, UNIDENTIFIED_TWO, []),
    ("no-id", "fails"): (
        CREATED,
        None,
        True,
        None,
        ["created, but its id is unknown: the reply carried none and listing"],
    ),
    # one POST answered 500 (a fault of the server: uncertain), no re-send left
    ("5xx", "nothing"): (FAILED, None, False, FAULT + "; " + NOT_SHOWN, []),
    ("5xx", "once"): (CREATED, 100, True, None, []),
    ("5xx", "twice"): (FAILED, None, False, FAULT + UNCERTAIN_TWO, []),
    ("5xx", "ours+other"): (FAILED, None, False, FAULT + UNCERTAIN_TWO, []),
    ("5xx", "fails"): (FAILED, None, False, FAULT + "; " + LIST_TOO, []),
    # one POST whose connection dropped (uncertain), no re-send left
    ("dropped", "nothing"): (FAILED, None, False, DROP + "; " + NOT_SHOWN, []),
    ("dropped", "once"): (CREATED, 100, True, None, []),
    ("dropped", "twice"): (FAILED, None, False, DROP + UNCERTAIN_TWO, []),
    ("dropped", "ours+other"): (FAILED, None, False, DROP + UNCERTAIN_TWO, []),
    ("dropped", "fails"): (FAILED, None, False, DROP + "; " + LIST_TOO, []),
    # a 500 never shown during the whole window, sent again, the re-send answered with an id; "twice": the first
    # attempt lands late, after the list that showed the re-send, before the task's last list
    ("re-sent", "nothing"): (FAILED, 100, True, UNCONFIRMED, []),
    ("re-sent", "once"): (CREATED, 100, True, None, []),
    ("re-sent", "twice"): (FAILED, None, True, AFTER_RESENDS, []),
    ("re-sent", "ours+other"): (FAILED, None, True, AFTER_RESENDS, []),
    ("re-sent", "fails"): (CREATED, 100, True, None, ["new-01 was sent 2 times; listing the devices once more at the"]),
}


@pytest.mark.parametrize("sent, shows", sorted(TABLE), ids=["%s-%s" % key for key in sorted(TABLE)])
def test_one_report_per_item_from_what_was_sent_and_what_the_last_list_shows(sent, shows):
    server = Server(sent, shows)
    outcome = server.ensure()
    state, ident, changed, error, warnings = TABLE[(sent, shows)]
    assert (outcome.state, outcome.id, outcome.changed) == (state, ident, changed)
    if error is None:
        assert outcome.error is None
    else:
        assert outcome.error.startswith(error), outcome.error
    assert len(outcome.warnings) == len(warnings) and all(w.startswith(t) for w, t in zip(outcome.warnings, warnings))
    posts = [at for hostname, at in server.posts if hostname == NAME]
    assert len(posts) == (2 if sent == "re-sent" else 1)
    if sent == "re-sent":
        assert posts[1] - posts[0] >= 60  # sent again only after a whole window without it in the list
    assert_consistent(outcome, server)


def assert_consistent(outcome, server):
    """What any report must be, whatever the cell: never "did not show" while the item's words say the list shows
    it; every id of a name the final list shows twice named; an id reported is a device of that name."""
    words = " | ".join([outcome.error or ""] + outcome.warnings)
    ids = [r["id"] for r in server.records if r["hostname"] == NAME]
    if "did not show" in words:
        assert not re.search(r"shows [0-9]+ devices", words)
        assert not ids or server.shows == "nothing"
    if len(ids) > 1 and server.shows != "fails":
        assert all(re.search(r"\b%d\b" % i, words) for i in ids), words
    if outcome.state == CREATED and outcome.id is not None and server.shows != "nothing":
        assert outcome.id in ids
    if outcome.state == FAILED:  # a failed item names its ids in its error; its id only when its reply named it
        assert outcome.id is None or (outcome.id == outcome.written_id and "(id %d in the reply)" % outcome.id in words)


def test_the_table_covers_every_row_and_column():
    rows = set(sent for sent, _shows in TABLE)
    columns = set(shows for _sent, shows in TABLE)
    assert len(TABLE) == len(rows) * len(columns) == 25


def test_a_task_that_sent_again_lists_once_more_at_its_end():
    server = Server("re-sent", "twice")
    outcome = server.ensure()
    # the plan, the first window (0, 1, 3, 7, 15, 31, 60 s), the list after the re-send (it shows the re-send
    # once), and the last one (the first attempt has landed: two devices)
    assert server.lists == 1 + 7 + 1 + 1
    assert outcome.state == FAILED and "ids 100, 101" in outcome.error


def test_a_task_that_sent_nothing_again_reads_no_extra_list():
    server = Server("5xx", "once")
    server.ensure()
    assert server.lists == 2  # the plan, and the list at once that shows the uncertain creation
