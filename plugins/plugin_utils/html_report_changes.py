# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Record a report and compare the next one with it, so that a report shows what changed since the previous one.

The record (the filter netaccess.nac.html_report_record writes it beside the page) is a list at the top:
[FORMAT, generated_at, [[key, hostname, outcome], ...]]. A record read back is data: every value is checked,
nothing of it is trusted, and a file past the bound of a report of its size is refused unread."""

import base64
import binascii
import json

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report_rows import (
    FAILED,
    IN_PROGRESS_STATUSES,
    MARKS,
    REACHED,
    data,
    now,
    rows_of,
    visible,
)

# Since the previous report: what changed for a device (the outcome of each run compared).
NEW, NEWLY_FAILING, RECOVERED = "new", "newly failing", "recovered"
# The record's format (html_report_record): [FORMAT, generated_at, [[key, hostname, outcome], ...]].
FORMAT = "netaccess.nac.html_report/1"
RECORD_LIMIT = 64 * 1024 * 1024  # a record larger than this (base64 included) is not read
# A record past record_bound(devices of this report) is refused with a message, unread: an entry is [key, hostname,
# outcome], at most about 3 KB with a hostname of 255 characters each written as a \u escape, mostly under 100 bytes.
RECORD_BYTES_PER_DEVICE = 4096
RECORD_SLACK = 1 << 20


def record(results, generated_at=None, in_progress=IN_PROGRESS_STATUSES):
    """The record of a report, as JSON text, that the next report compares with: when, and each device's key,
    hostname and outcome. A list at the top, with no object and every brace escaped: no brace at all."""
    rows = rows_of(results, in_progress=in_progress)
    entries = [[row["key"], row["hostname"], row["outcome"]] for row in rows]
    return data([FORMAT, generated_at or now(), entries]) + "\n"


def record_bound(devices):
    """The most bytes that the record of the previous report may have to be read beside a report of ``devices``
    devices (a tampered or foreign file past it is refused unread, with oversize_record's message)."""
    return min(RECORD_SLACK + RECORD_BYTES_PER_DEVICE * devices, RECORD_LIMIT)


def oversize_record(size, devices):
    """Why a record of ``size`` bytes is not read beside a report of ``devices`` devices, or None."""
    bound = record_bound(devices)
    if size <= bound:
        return None
    return (
        "it is %s bytes, more than the record of a report of %s devices can be (at most %s bytes), so it was not "
        "read; every report rewrites it, so remove the file if it is not the record of a report"
        % (format(size, ","), format(devices, ","), format(bound, ","))
    )


def read_record(content, devices=None):
    """(when, {key: (hostname, outcome)}) of a record as M(ansible.builtin.slurp) returns it (base64), or the
    reason why it cannot be read (a str): past the bound of a report of ``devices`` devices (record_bound), it is
    not decoded. A record is data: every value is checked, nothing of it is trusted."""
    if not isinstance(content, str) or len(content) > RECORD_LIMIT:
        return "it is not a record of this report"
    oversize = None if devices is None else oversize_record(len(content) // 4 * 3, devices)
    if oversize:
        return oversize
    try:
        parsed = json.loads(base64.b64decode(content, validate=True).decode("utf-8"))
    except (binascii.Error, ValueError):
        return "it is not a record of this report (not base64-encoded JSON)"
    if not (isinstance(parsed, list) and len(parsed) == 3 and parsed[0] == FORMAT and isinstance(parsed[2], list)):
        return "it is not a record of this report (%s)" % FORMAT
    devices = {}
    for entry in parsed[2]:
        if not (
            isinstance(entry, list)
            and len(entry) == 3
            and all(isinstance(item, str) for item in entry)
            and entry[2] in MARKS
        ):
            return "it is not a record of this report (a device entry is malformed)"
        devices[entry[0]] = (entry[1], entry[2])
    return visible(parsed[1])[:40], devices


def compare(rows, previous):
    """Marks each row's change since ``previous`` ({key: (hostname, outcome)}) and returns {change: [hostnames]},
    with the devices of the previous report that this one no longer has under "gone"."""
    changes = {NEW: [], NEWLY_FAILING: [], RECOVERED: [], "gone": []}
    present = set()
    for row in rows:
        present.add(row["key"])
        before = previous.get(row["key"])
        if before is None:
            row["change"] = NEW
        elif row["outcome"] == FAILED and before[1] != FAILED:
            row["change"] = NEWLY_FAILING
        elif row["outcome"] == REACHED and before[1] != REACHED:
            row["change"] = RECOVERED
        if row["change"]:
            changes[row["change"]].append(row["hostname"])
    changes["gone"] = [visible(hostname) for key, (hostname, _outcome) in previous.items() if key not in present]
    return changes
