# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result entries of an 802.1x status query (API guide 2, "802.1x status result": docs/docsite/rst/api.rst) and
what they say together (no Ansible imports): one entry per target from its reply or its error, the summary by
status, and the message that names the devices that failed or did not reach the wanted status. dot1x_query.py queries,
this module reads what the queries answered."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import excerpt, shown
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import DOT1X_INTENT

UNKNOWN = "UNKNOWN"  # the reply has no status (client-side convention, API guide 3)
ERROR = "ERROR"  # the target could not be queried; its entry has ``error``
NAMED_IN_MESSAGE = 100  # devices named one by one in a failure message; all are in ``results``


def copy_entry(entry, target):
    """The answer for another target with the same id: the same entry under the target's own hostname."""
    return dict(entry, hostname=target.hostname)


def shape(target, reply, secrets=()):
    """The result entry of one target from its fire reply (API guide 2, 802.1x status result):
    every field a string or null; a reply with no status but an ``error`` is that target's error (its text
    quoted with the client's ``secrets`` masked before it is cut)."""
    unexpected = "unexpected reply to POST /api/intent/%s/fire for target %s: " % (DOT1X_INTENT, target.id)
    for key in ("status", "authMethod", "username", "message"):
        value = reply.get(key)
        if value is not None and not isinstance(value, str):
            return error_entry(
                target,
                unexpected
                + "%r is %s %s, expected a string"
                % (key, type(value).__name__, excerpt(json.dumps(value), 80, secrets)),
            )
    status = reply.get("status")
    if status is None and reply.get("error"):
        return error_entry(
            target, unexpected + "the reply has no status but an error: %s" % excerpt(str(reply["error"]), 200, secrets)
        )
    return dict(
        id=target.id,
        hostname=target.hostname,
        status=status or UNKNOWN,
        auth_method=reply.get("authMethod"),
        username=reply.get("username"),
        message=reply.get("message"),
    )


def error_entry(target, error):
    return dict(
        id=target.id, hostname=target.hostname, status=ERROR, auth_method=None, username=None, message=None, error=error
    )


def summarize(results):
    """{status: number of results with it}, sorted by status; failed targets count under ERROR. Nothing else: the
    values add up to the number of results (the refusals waited out are counted apart, Report.refusals)."""
    counts = collections.Counter(entry["status"] for entry in results)
    return dict(sorted(counts.items()))


def reached(entry, wait_for):
    return "error" not in entry and entry["status"].casefold() == wait_for.casefold()


def failure_message(results, wait_for=None, wait_timeout=None):
    """Why the task fails, naming the devices (up to NAMED_IN_MESSAGE of each kind), or None."""
    tally = Tally(wait_for)
    for entry in results:
        tally.add(entry)
    return tally.failure(wait_timeout)


class Tally:
    """What the entries of a query say together, without holding them: the count of each status, and the first
    ``limit`` entries of the targets that could not be queried (``failed``) and of those that did not reach
    ``wait_for`` (``late``), with how many there are of each. ``where``: where every entry is, for the messages."""

    def __init__(self, wait_for=None, limit=NAMED_IN_MESSAGE, where="results"):
        self.wait_for, self.limit, self.where = wait_for, limit, where
        self.counts = collections.Counter()
        self.total = self.failed_count = self.late_count = 0
        self.failed, self.late = [], []

    def add(self, entry):
        """Count ``entry``, a target's last answer."""
        self.counts[entry.get("status")] += 1  # (the event source names failures of entries without one)
        self.total += 1
        if "error" in entry:
            self.failed_count += 1
            if len(self.failed) < self.limit:
                self.failed.append(entry)
        elif self.wait_for and not reached(entry, self.wait_for):
            self.late_count += 1
            if len(self.late) < self.limit:
                self.late.append(entry)

    def summary(self):
        """{status: count}, sorted by status (``summarize``)."""
        return dict(sorted(self.counts.items()))

    def failure(self, wait_timeout=None):
        """Why the task fails, naming the devices (up to NAMED_IN_MESSAGE of each kind), or None."""
        parts = []
        if self.late_count:
            parts.append(
                "%d of %d devices did not reach %s within %s s: %s."
                % (
                    self.late_count,
                    self.total,
                    self.wait_for,
                    _seconds(wait_timeout),
                    self._listing(self.late, self.late_count, _late_entry),
                )
            )
        if self.failed_count:
            parts.append(
                "%d of %d targets could not be queried: %s."
                % (
                    self.failed_count,
                    self.total,
                    self._listing(self.failed, self.failed_count, lambda e: "%s: %s" % (_name(e), shown(e["error"]))),
                )
            )
        return " ".join(parts) or None

    def _listing(self, entries, count, describe):
        text = "; ".join(describe(entry) for entry in entries[:NAMED_IN_MESSAGE])
        if count > NAMED_IN_MESSAGE:
            text += "; and %d more (see %s)" % (count - NAMED_IN_MESSAGE, self.where)
        return text


def _late_entry(entry):
    message = " (%s)" % shown(entry["message"]) if entry["message"] else ""
    return "%s: %s%s" % (_name(entry), shown(entry["status"]), message)


def _name(entry):
    if entry["id"] is None:
        return "hostname %s" % shown(entry["hostname"])
    if entry["hostname"] is None:
        return "id %s" % entry["id"]
    return "%s (id %s)" % (shown(entry["hostname"]), entry["id"])


def _seconds(value):
    return ("%g" % value) if isinstance(value, float) else str(value)
