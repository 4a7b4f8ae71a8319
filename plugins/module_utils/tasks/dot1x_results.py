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
    failed = [entry for entry in results if "error" in entry]
    late = [entry for entry in results if "error" not in entry and not reached(entry, wait_for)] if wait_for else []
    parts = []
    if late:
        parts.append(
            "%d of %d devices did not reach %s within %s s: %s."
            % (len(late), len(results), wait_for, _seconds(wait_timeout), _listing(late, _late_entry))
        )
    if failed:
        parts.append(
            "%d of %d targets could not be queried: %s."
            % (len(failed), len(results), _listing(failed, lambda e: "%s: %s" % (_name(e), shown(e["error"]))))
        )
    return " ".join(parts) or None


def _late_entry(entry):
    message = " (%s)" % shown(entry["message"]) if entry["message"] else ""
    return "%s: %s%s" % (_name(entry), shown(entry["status"]), message)


def _name(entry):
    if entry["id"] is None:
        return "hostname %s" % shown(entry["hostname"])
    if entry["hostname"] is None:
        return "id %s" % entry["id"]
    return "%s (id %s)" % (shown(entry["hostname"]), entry["id"])


def _listing(entries, describe):
    text = "; ".join(describe(entry) for entry in entries[:NAMED_IN_MESSAGE])
    if len(entries) > NAMED_IN_MESSAGE:
        text += "; and %d more (see results)" % (len(entries) - NAMED_IN_MESSAGE)
    return text


def _seconds(value):
    return ("%g" % value) if isinstance(value, float) else str(value)
