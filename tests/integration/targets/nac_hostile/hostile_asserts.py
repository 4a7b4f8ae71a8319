# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What nac_hostile asserts of every output: no canary, no raw control character, no fragment of a secret, and
reports that read back to the server's values. Each check records a line "ok - ..." or "FAIL - ...", so that one
run says which assertions hold and which do not."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import csv
import html.parser
import os
import re

# Never raw in an output: C0 but the line feed, DEL, C1, the bidi controls, the line and paragraph separators.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
RAW_C0 = re.compile("[\x00-\x09\x0b-\x1f]")
# What a report shows of a server value: each of these as Python writes it (line breaks aside in CSV).
SHOWN = re.compile("\r\n|\n|[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
FRAGMENT = 8  # characters of a secret's random part that make a leak
FIRE = "/api/intent/dot1x_status/fire"
CSV_HEADER = ["hostname", "id", "expected_status", "status", "auth_method", "username", "message"]


class Findings:
    """The outcome of every assertion, in order."""

    def __init__(self):
        self.lines = []
        self.failed = 0

    def check(self, condition, what, detail=""):
        self.lines.append(("ok - " if condition else "FAIL - ") + what + ("" if condition else ": " + detail[:3000]))
        print(self.lines[-1], flush=True)
        if not condition:
            self.failed += 1
        return condition


def secret_fragments(secrets, basic):
    """Every FRAGMENT-character window of the random part of each secret (each is letters and digits, so it
    stays the same escaped, JSON-encoded or URL-encoded, and whitespace never splits it), and of the base64 form
    in which HTTP Basic sends the password (``basic``: (username, password) pairs)."""
    windows = set()
    for secret in secrets:
        for part in re.findall("[0-9a-f]{16,}", secret):
            windows.update(part[i : i + FRAGMENT] for i in range(len(part) - FRAGMENT + 1))
    for username, password in basic:
        encoded = base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
        tail = encoded[len(encoded) // 2 :]  # the password's part, past the username's
        windows.update(tail[i : i + 12] for i in range(len(tail) - 12 + 1))
    return windows


def leaks(text, fragments):
    """The fragments of a secret found in ``text`` (also with its whitespace removed: Ansible wraps lines)."""
    flat = re.sub(r"\s+", "", text)
    return sorted(f for f in fragments if f in text or f in flat)


def raw_controls(text, allowed="", c0_only=False):
    """The raw control characters of ``text`` (with their line numbers), but those of ``allowed``. A CR LF ends a
    line (ansible-runner writes the playbook's output so)."""
    found = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        for char in (RAW_C0 if c0_only else RAW).findall(line):
            if char not in allowed:
                found.append("line %d: %r" % (number, char))
    return found


def shown(value, csv_breaks=False):
    """A server value as a report shows it: control characters as Python writes them; line breaks kept in CSV."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return str(value)

    def one(match):
        text = match.group()
        if csv_breaks and text in ("\r\n", "\n"):
            return text
        if text in ("\r\n",):
            return "\\r\\n"
        return ascii(text)[1:-1] if ord(text) < 0x100 else "\\u%04x" % ord(text)

    return SHOWN.sub(one, value)


def read_csv(path):
    """The rows of a CSV report (RFC 4180), each field with the one ' before a formula dropped."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return [[cell[1:] if cell.startswith("'") else cell for cell in row] for row in rows]


def formula_cells(path):
    """The fields of a CSV report that a spreadsheet would run as a formula."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [
            cell
            for row in csv.reader(handle)
            for cell in row
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r") or cell.lstrip()[:1] in ("=", "+", "-", "@")
        ]


def gfm_cells(row):
    """The cells of one row of a GFM table: split on each | that no backslash escapes."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def markdown_tables(path):
    """The tables of a Markdown report: lists of rows (header and delimiter rows left out), each a list of
    cells; a table is a run of lines that start with |."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    tables, current = [], None
    for line in text.split("\n"):
        if line.startswith("|"):
            if current is None:
                current = []
                tables.append(current)
            current.append(gfm_cells(line))
        else:
            current = None
    return text, [table[2:] for table in tables]


def check_report_text(findings, name, path, fragments, allowed):
    with open(path, encoding="utf-8", newline="") as handle:
        text = handle.read()
    findings.check(
        not raw_controls(text.replace("\r\n", "\n"), allowed),
        "%s: no raw control character" % name,
        ", ".join(raw_controls(text, allowed)[:10]),
    )
    findings.check(not leaks(text, fragments), "%s: no fragment of a secret" % name, str(leaks(text, fragments)[:5]))
    return text


def check_csv_report(findings, name, path, truth, expected_status, fragments):
    """Every row of a CSV report reads back to the server's values (``truth``: {id: {hostname, status,
    auth_method, username, message}}); a device whose query failed has the status ERROR."""
    if not findings.check(os.path.exists(path), "%s: written" % name, path):
        return
    check_report_text(findings, name, path, fragments, allowed="\n")
    findings.check(
        not formula_cells(path), "%s: no field a spreadsheet runs as a formula" % name, str(formula_cells(path)[:5])
    )
    rows = read_csv(path)
    findings.check(rows[:1] == [CSV_HEADER], "%s: the header" % name, str(rows[:1]))
    wrong = []
    for row in rows[1:]:
        if len(row) != len(CSV_HEADER):
            wrong.append("columns: %r" % (row,))
            continue
        values = dict(zip(CSV_HEADER, row))
        device = truth.get(int(values["id"])) if values["id"].isdigit() else None
        if device is None:
            wrong.append("no such device: %r" % (row,))
            continue
        want = dict(hostname=shown(device["hostname"], True), expected_status=expected_status)
        if device.get("error"):
            want["status"] = "ERROR"
        else:
            want.update((key, shown(device[key], True)) for key in ("status", "auth_method", "username", "message"))
        for key, value in want.items():
            if values[key] != value:
                wrong.append("%s of id %s: %r, not %r" % (key, values["id"], values[key][:120], value[:120]))
    findings.check(
        not wrong and len(rows) > 1,
        "%s: %d rows read back to the server's values" % (name, len(rows) - 1),
        "\n".join(wrong[:10]),
    )
    return rows


def check_markdown_report(findings, name, path, results, summary, fragments):
    """The Markdown report: one row per device in its table (8 columns), one per status in the counts (2)."""
    if not findings.check(os.path.exists(path), "%s: written" % name, path):
        return
    check_report_text(findings, name, path, fragments, allowed="\n")
    text, tables = markdown_tables(path)
    findings.check(len(tables) == 2, "%s: two tables" % name, str(len(tables)))
    if len(tables) != 2:
        return
    counts, devices = tables
    findings.check(
        len(counts) == len(summary) and all(len(row) == 2 for row in counts),
        "%s: %d rows of 2 cells in the counts" % (name, len(summary)),
        str(counts)[:2000],
    )
    findings.check(
        len(devices) == len(results) and all(len(row) == 8 for row in devices),
        "%s: %d rows of 8 cells in the device table" % (name, len(results)),
        "%d rows; cells per row %s" % (len(devices), [len(row) for row in devices]),
    )
    html = re.sub("<br>", "", text)
    findings.check(
        "<" not in html and "`" not in text.replace("\\`", ""),
        "%s: no HTML nor code of a value" % name,
        re.findall("<[^ ]{0,20}", html)[:5],
    )
    autolinks = re.findall(r"(?i)\S{0,20}(?:(?<!\\)://|www\.)\S{0,20}", text)
    findings.check(not autolinks, "%s: no address that a renderer would turn into a link" % name, str(autolinks[:5]))


def check_html_report(findings, name, path, truth, fragments):
    """The HTML page of a report (the filter html_report): no raw control character, no fragment of a secret, no
    element of a server's value (its HTML payload stays text), and every hostname of ``truth`` that has no control
    character in its text exactly (one with control characters is shown escaped there: RAW checks it)."""
    if not findings.check(os.path.exists(path), "%s: written" % name, path):
        return
    text = check_report_text(findings, name, path, fragments, allowed="\n")
    injected = [tag for tag in ("<script>alert", "<img src=x", "onerror=alert(1)>") if tag in text]
    findings.check(not injected, "%s: no element of a server's value" % name, str(injected))
    parser = _Text()
    parser.feed(text)
    page = "".join(parser.parts)
    missing = [
        d["hostname"][:60] for d in truth.values() if not SHOWN.search(d["hostname"]) and d["hostname"] not in page
    ]
    findings.check(not missing, "%s: every hostname as text" % name, str(missing[:5]))


class _Text(html.parser.HTMLParser):
    """The text of an HTML page (character references decoded)."""

    def __init__(self):
        html.parser.HTMLParser.__init__(self, convert_charrefs=True)
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)
