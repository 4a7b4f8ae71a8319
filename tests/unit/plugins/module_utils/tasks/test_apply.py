# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apply engine on its own, with an operation that is not a creation (a deletion, which the API does not
have yet): the write, the list, the predicate "settled in this list" (the id is gone) and the wording are the
operation's, the decisions the engine's. nac_device's use of it (creations) is tested in test_devices.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    NacAuthError,
    NacConnectionError,
    NacHTTPError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import SENDING, Sleep
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import (
    CONFIRMED,
    DONE,
    FAILED,
    MISSING,
    STALE_PAUSE,
    Action,
    Answer,
    Operation,
    Wording,
    apply,
)

DELETE = "delete"

DELETION_WORDING = Wording(
    not_attempted="deletion not attempted: {reason}",
    unproven="{name}{id} was not shown deleted",
    stopped="{error}; unknown whether {reason} stopped it",
    refused_access="a deletion was refused ({error})",
    several_known="{name} ({id}): {count} records ({ids})",
    several_unidentified="{name}: {count} records ({ids})",
    several_after_resends="{name}: {count} records ({ids}) after {attempts} deletions in {window}",
    several="{error}; {name}: {count} records ({ids})",
    not_listed="{name} ({id}) not listed",
    unconfirmed="{name} ({id}) still listed after {window} ({listed} listed)",
    unconfirmed_list_failed="{name} ({id}): the list failed: {list_error}",
    unidentified_not_shown="deleted{said}, but {name} was still listed after {window}",
    unidentified_list_failed="deleted, but the list failed: {list_error}",
    unknown_list_failed="{error}; whether {name} is gone is unknown, the list failed: {list_error}",
    unknown_not_shown="{error}; {name} still listed after {window}, {each_attempt}",
    final_list_failed="{name}: {attempts} deletions, the last list failed: {list_error}",
)


class Deletions:
    """A server whose deletions may fail after committing; its list holds the names still present."""

    def __init__(self, names, failures=None):
        self.present = set(names)
        self.failures = dict(failures or {})
        self.sent = []
        self.now = 0.0

    def delete(self, item):
        self.sent.append(item.name)
        failure = self.failures.pop(item.name, None)
        failure, commit = failure if isinstance(failure, tuple) else (failure, False)
        if failure is None or commit:
            self.present.discard(item.name)
        if failure is not None:
            raise failure
        return Answer(7, None, {"deleted": item.name})

    def listed(self):
        return set(self.present)

    def sleep(self, seconds):
        self.now += seconds

    def run(self, items, confirm=None, **kwargs):
        deletion = Operation(
            write=self.delete,
            index=lambda present: present,
            shows=lambda item, present: [{"id": item.id, "name": item.name}] if item.name in present else [],
            settled=lambda item, shown: not shown,  # the id is gone
            confirm=confirm,
            preview=lambda item: None,
            wording=DELETION_WORDING,
        )
        apply(
            items,
            {DELETE: deletion},
            self.listed,
            clock=lambda: self.now,
            sleep=self.sleep,
            **kwargs,
        )
        return items


def test_a_deletion_answered_is_done_without_a_list():
    server = Deletions(["a", "b"])
    items = server.run([_deleting("a"), _deleting("b")])
    assert [(item.state, item.id, item.changed) for item in items] == [(DONE, 7, True), (DONE, 7, True)]
    assert server.sent == ["a", "b"]


def test_an_uncertain_deletion_that_committed_is_settled_from_the_list_and_not_sent_again():
    lost = NacConnectionError("reply lost", outcome_unknown=True)
    server = Deletions(["a"], failures={"a": (lost, True)})
    item = server.run([_deleting("a")])[0]
    assert (item.state, item.id, item.error, server.sent) == (DONE, 7, None, ["a"])


def test_an_uncertain_deletion_never_shown_is_sent_again_then_fails_in_the_callers_words():
    lost = NacConnectionError("reply lost", outcome_unknown=True)
    server = Deletions(["a"])
    server.failures = {"a": lost}
    server.delete = _always(server, lost)
    item = server.run([_deleting("a")], settle_timeout=2, max_resends=1)[0]
    assert item.state == FAILED and server.sent == ["a", "a"]
    assert item.error == "reply lost; a still listed after 2 s, each of 2 attempts"
    assert "POST /api/device" not in item.error and "device" not in item.error


def test_a_write_waiting_out_a_refusal_keeps_its_place():
    """Issue 49: at concurrency 1, b's first request is refused and waits 10 ms (its Retry-After) before it is sent
    again: c and d wait for it (a write that handed its place on made a rate limiter's refusals come in runs)."""
    server = Deletions(["a", "b", "c", "d"])
    sent = []

    def delete_steps(item):
        yield SENDING
        sent.append(item.name)
        if item.name == "b" and sent.count("b") == 1:
            yield Sleep(0.01)  # refused: waits in its place
            yield SENDING
            sent.append("b again")
        return server.delete(item)

    deletion = Operation(
        write=server.delete,
        index=lambda present: present,
        shows=lambda item, present: [{"id": item.id, "name": item.name}] if item.name in present else [],
        settled=lambda item, shown: not shown,
        confirm=None,
        preview=lambda item: None,
        wording=DELETION_WORDING,
        write_steps=delete_steps,
    )
    items = [_deleting(name) for name in "abcd"]
    apply(items, {DELETE: deletion}, server.listed, concurrency=1, clock=lambda: server.now, sleep=server.sleep)
    assert [item.state for item in items] == [DONE] * 4
    assert sent == ["a", "b", "b again", "c", "d"]


def test_a_refusal_for_lack_of_access_stops_the_other_writes_in_the_callers_words():
    refused = NacAuthError("Access refused (HTTP 403)", status=403)
    server = Deletions(["a", "b"], failures={"a": refused})
    items = server.run([_deleting("a"), _deleting("b")], concurrency=1)
    assert [item.state for item in items] == [FAILED, FAILED]
    assert items[1].error == "deletion not attempted: a deletion was refused (Access refused (HTTP 403))"
    assert server.sent == ["a"]


def test_a_definite_refusal_fails_the_item_with_the_servers_error_and_no_list():
    server = Deletions(["a"], failures={"a": NacHTTPError("HTTP 409: in use", status=409)})
    listed = []
    server.listed = lambda: listed.append(1) or set()
    item = server.run([_deleting("a")])[0]
    assert (item.state, item.error, listed) == (FAILED, "HTTP 409: in use", [])


def _gone(item, present):
    return MISSING if item.name in present else CONFIRMED


def test_writes_that_the_operation_confirms_are_confirmed_by_one_list_for_all_after_the_first():
    server = Deletions(["a", "b", "c"])
    lists = []
    server.listed = lambda: lists.append(set(server.present)) or set(server.present)
    items = server.run([_deleting("a"), _deleting("b"), _deleting("c")], confirm=_gone)
    # the first alone, confirmed by its list; then the others, answered at once: one list after all of them
    assert lists == [{"b", "c"}, set()]
    assert [(item.state, item.warnings) for item in items] == [(DONE, [])] * 3
    assert server.sent == ["a", "b", "c"]


def test_a_first_write_the_list_does_not_confirm_stops_every_other_write():
    server = Deletions(["a", "b", "c"])
    server.delete = lambda item: server.sent.append(item.name) or Answer(7, None, {})  # answered, never done
    items = server.run([_deleting("a"), _deleting("b"), _deleting("c")], confirm=_gone, settle_timeout=4)
    assert server.sent == ["a"]  # one write per task, not one per action
    assert (items[0].state, items[0].error) == (FAILED, "a (7) still listed after 4 s (3 listed)")
    assert [(item.state, item.error, item.changed) for item in items[1:]] == [
        (FAILED, "deletion not attempted: a (id 7) was not shown deleted", False)
    ] * 2


def test_a_first_write_with_a_warning_stops_every_other_write():
    server = Deletions(["a", "b"])
    server.listed = _failing_list  # answered, but no list confirms it: done with a warning
    items = server.run([_deleting("a"), _deleting("b")], confirm=_gone, settle_timeout=2)
    assert (items[0].state, items[0].warnings) == (DONE, ["a (7): the list failed: listing failed"])
    assert (items[1].state, items[1].error) == (FAILED, "deletion not attempted: a (id 7) was not shown deleted")
    assert server.sent == ["a"]


def test_a_first_write_refused_outright_wrote_nothing_so_the_next_proves_the_ground():
    conflict = NacHTTPError("HTTP 409: in use", status=409)
    server = Deletions(["a", "b", "c", "d"], failures={"a": conflict, "b": conflict})
    lists = []
    server.listed = lambda: lists.append(set(server.present)) or set(server.present)
    items = server.run([_deleting(name) for name in "abcd"], confirm=_gone)
    assert [item.state for item in items] == [FAILED, FAILED, DONE, DONE]
    assert server.sent == ["a", "b", "c", "d"] and lists == [{"a", "b", "d"}, {"a", "b"}]


def test_an_uncertain_first_write_the_list_settles_proves_the_ground():
    lost = NacConnectionError("reply lost", outcome_unknown=True)
    server = Deletions(["a", "b"], failures={"a": (lost, True)})
    items = server.run([_deleting("a"), _deleting("b")])
    assert [(item.state, item.error) for item in items] == [(DONE, None), (DONE, None)]
    assert server.sent == ["a", "b"]


def test_a_write_not_confirmed_is_waited_for_then_fails_in_the_callers_words_keeping_its_id():
    server = Deletions(["a"])
    lists = []
    server.delete = lambda item: server.sent.append(item.name) or Answer(7, None, {})  # answered, never done
    server.listed = lambda: lists.append(server.now) or set(server.present)
    item = server.run([_deleting("a")], confirm=_gone, settle_timeout=10)[0]
    assert lists == [0, 1, 3, 7, 10]  # the settle window's lists, at once then with the backoff, and at its end
    assert (item.state, item.id, item.changed) == (FAILED, 7, True)
    assert item.error == "a (7) still listed after 10 s (1 listed)" and server.sent == ["a"]


def test_a_write_the_list_contradicts_fails_with_the_operations_message():
    server = Deletions(["a"])
    item = server.run([_deleting("a")], confirm=lambda item, present: "%s is elsewhere" % item.name)[0]
    assert (item.state, item.error, item.id, server.now) == (FAILED, "a is elsewhere", 7, 0)  # decided at once


def test_a_confirming_list_that_fails_leaves_each_action_as_decided_with_a_warning_in_its_words():
    server = Deletions(["a"])
    server.listed = _failing_list
    item = server.run([_deleting("a")], confirm=_gone, settle_timeout=2)[0]
    assert (item.state, item.id) == (DONE, 7)
    assert item.warnings == ["a (7): the list failed: listing failed"]


def _failing_list():
    raise NacConnectionError("listing failed")


def _always(server, failure):
    def delete(item):
        server.sent.append(item.name)
        raise failure

    return delete


def _deleting(name):
    """The action of deleting the device ``name``, whose id (7) the plan knows from the list."""
    return Action(name, DELETE, ident=7)


def refused_by_a_limiter():
    """What client.NacClient raises for a write a rate limit refused with 503 (the shared pause taken)."""
    error = NacHTTPError("The NAC API refused DELETE with HTTP 503.", status=503, outcome_unknown=True)
    error.refused = True
    return error


def test_a_write_refused_with_503_is_looked_up_at_once_and_sent_again_without_waiting_the_window():
    """Refused three times (more than max_resends), then done: each refusal is looked for in one list at once,
    and sent again when that list does not show it settled, never after a settle window; max_resends untouched."""
    server = Deletions(["a", "b"])
    refusals = [refused_by_a_limiter() for _n in range(3)]
    real_delete = server.delete

    def delete(item):
        if item.name == "a" and refusals:
            server.sent.append(item.name)
            raise refusals.pop()
        return real_delete(item)

    server.delete = delete
    lists = []
    listed = server.listed
    server.listed = lambda: lists.append(server.now) or listed()
    items = server.run([_deleting("a"), _deleting("b")], settle_timeout=60, max_resends=1)
    assert [(item.state, item.error) for item in items] == [(DONE, None), (DONE, None)]
    assert server.sent.count("a") == 4 and server.now == 0.0  # no settle window waited
    assert len(lists) == 5  # one after each refusal, one after the write sent again, one to confirm at the end


def test_a_write_refused_with_503_that_the_list_shows_is_not_sent_again():
    server = Deletions(["a"], failures={"a": (refused_by_a_limiter(), True)})  # committed all the same
    item = server.run([_deleting("a")], settle_timeout=60)[0]
    assert (item.state, server.sent, server.now) == (DONE, ["a"], 0.0)


def test_a_write_refused_with_503_past_the_patience_waits_the_settle_window_as_any_uncertain_write(monkeypatch):
    monkeypatch.setattr("ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply.RATE_LIMIT_PATIENCE", -1.0)
    server = Deletions(["a"])
    server.delete = _always(server, refused_by_a_limiter())
    item = server.run([_deleting("a")], settle_timeout=2, max_resends=1)[0]
    assert item.state == FAILED and server.sent == ["a", "a"] and server.now >= 4.0


def broke_on_a_closing_connection():
    """What client.NacClient raises for a write that broke before any byte of its reply on a kept-alive connection
    (transport.Transport: the server was closing it)."""
    error = NacConnectionError("The connection broke off during DELETE", outcome_unknown=True)
    error.stale = True
    return error


def test_a_write_broken_on_a_closing_connection_is_looked_up_at_once_and_sent_again_after_a_short_pause():
    """Not the whole settle window: one list at once, one begun STALE_PAUSE after it broke, then sent again (a
    new connection: the transport's); the end's list confirms one deletion."""
    server = Deletions(["a", "b"], failures={"b": broke_on_a_closing_connection()})
    lists = []
    listed = server.listed
    server.listed = lambda: lists.append(server.now) or listed()
    items = server.run([_deleting("a"), _deleting("b")], settle_timeout=60, max_resends=1)
    assert [(item.state, item.error) for item in items] == [(DONE, None), (DONE, None)]
    assert server.sent == ["a", "b", "b"] and items[1].attempts == 2
    # at once, at the pause, after the write sent again, to confirm at the end
    assert server.now == STALE_PAUSE and lists == [0.0, STALE_PAUSE, STALE_PAUSE, STALE_PAUSE]


def test_a_write_broken_on_a_closing_connection_that_the_list_shows_is_not_sent_again():
    server = Deletions(["a"], failures={"a": (broke_on_a_closing_connection(), True)})  # committed all the same
    item = server.run([_deleting("a")], settle_timeout=60)[0]
    assert (item.state, item.attempts, server.sent, server.now) == (DONE, 1, ["a"], 0.0)


def test_a_write_broken_on_a_closing_connection_spends_max_resends_then_fails_as_uncertain():
    server = Deletions(["a"])
    server.delete = _always(server, broke_on_a_closing_connection())
    item = server.run([_deleting("a")], settle_timeout=60, max_resends=2)[0]
    assert item.state == FAILED and server.sent == ["a"] * 3 and server.now < 1.0
    assert item.error.endswith("a still listed after 60 s, each of 3 attempts")


def test_a_write_broken_on_a_new_connection_still_waits_the_settle_window():
    """The safe rule: a connection made for the write that broke before any byte of its reply may have carried it
    to a service still processing it (a proxy that dropped the client, say): only the whole window tells."""
    lost = NacConnectionError("The connection broke off during DELETE", outcome_unknown=True)
    server = Deletions(["a"])
    server.failures = {"a": lost}
    item = server.run([_deleting("a")], settle_timeout=8, max_resends=1)[0]
    assert (item.state, server.sent) == (DONE, ["a", "a"]) and server.now >= 8.0


def test_a_stale_write_beside_one_waiting_the_window_is_sent_again_without_waiting_for_it():
    """Windows of different lengths: the settle step ends at the first one over, the other keeps its own."""
    lost = NacConnectionError("reply lost", outcome_unknown=True)
    server = Deletions(["a", "b", "c"], failures={"b": lost, "c": broke_on_a_closing_connection()})
    sent_at = []
    delete = server.delete
    server.delete = lambda item: sent_at.append((item.name, server.now)) or delete(item)
    items = server.run([_deleting("a"), _deleting("b"), _deleting("c")], settle_timeout=8, max_resends=1)
    assert [item.state for item in items] == [DONE, DONE, DONE]
    assert sent_at == [("a", 0.0), ("b", 0.0), ("c", 0.0), ("c", STALE_PAUSE), ("b", 8.0)]


def test_a_settle_window_starts_when_its_own_write_ended_overlapping_the_writing_after_it():
    """Issue 49: ``b``'s reply is lost at 0 s, then ``c`` takes 5 s to write; ``b`` is sent again once its own
    window (8 s from its write) is over, at 8 s, not 8 s after the last write of its round (13 s): the window
    overlapped the writing, and a list begun after it still kept not showing ``b`` settled."""
    lost = NacConnectionError("reply lost", outcome_unknown=True)
    server = Deletions(["a", "b", "c"], failures={"b": lost})
    sent_at = []
    delete = server.delete

    def slow_delete(item):
        sent_at.append((item.name, server.now))
        server.now += 5.0 if item.name == "c" else 0.0
        return delete(item)

    server.delete = slow_delete
    items = server.run([_deleting("a"), _deleting("b"), _deleting("c")], settle_timeout=8, max_resends=1, concurrency=1)
    assert [item.state for item in items] == [DONE, DONE, DONE]
    assert sent_at == [("a", 0.0), ("b", 0.0), ("c", 0.0), ("b", 8.0)]
