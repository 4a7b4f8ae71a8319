# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML status report (no Ansible imports): one self-contained page of the 802.1x status of devices, built
here as text, for the filter netaccess.nac.html_report (its DOCUMENTATION says what the page shows), and the
record of a report that the next report in the same directory compares with (the filter
netaccess.nac.html_report_record).

Every value is the NAC's and may be hostile. In the markup it goes through ``text()`` (made visible, then
HTML-escaped with quotes and braces) and nowhere else; in the page's data (``data()``, a JSON block that is never
run) every non-ASCII character, ``<``, ``>``, ``&`` and the braces are \\u escapes. The page's own style and
script are constants, allowed by their hashes in its Content-Security-Policy, which allows nothing else; the
script writes the rows of the tables with ``textContent``, never markup.

A device's outcome: ``reached`` (its status is its expected status, ignoring case, and its query had no error),
``in progress`` (not yet, but its status is one of ``in_progress``: still under way, not a failure), or
``failed`` (anything else)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import datetime
import hashlib
import html
import json
import re
from collections.abc import Mapping

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown

REACHED, IN_PROGRESS, FAILED = "reached", "in progress", "failed"
# The statuses that say "not yet": the authentication is under way. The API guide does not list the statuses
# (api.rst): these are the transient ones that NACs and the emulator use; the filter's in_progress replaces them.
IN_PROGRESS_STATUSES = ("CONNECTING", "AUTHENTICATING", "PENDING", "IN_PROGRESS")
# Since the previous report: what changed for a device (the outcome of each run compared).
NEW, NEWLY_FAILING, RECOVERED = "new", "newly failing", "recovered"
# The record's format (html_report_record): [FORMAT, generated_at, [[key, hostname, outcome], ...]].
FORMAT = "netaccess.nac.html_report/1"
RECORD_LIMIT = 64 * 1024 * 1024  # a record larger than this (base64 included) is not read
# A record past record_bound(devices of this report) is refused with a message, unread: an entry is [key, hostname,
# outcome], at most about 3 KB with a hostname of 255 characters each written as a \u escape, mostly under 100 bytes.
RECORD_BYTES_PER_DEVICE = 4096
RECORD_SLACK = 1 << 20
PAGE_SIZE = 100  # rows of a table per page; the first page is written in the markup, readable without the script

# The table's columns: title, the key of a row, how its values sort. The last five only when some device has them.
COLUMNS = [
    ("Hostname", "hostname", "text"),
    ("Id", "id", "number"),
    ("Expected", "expected_status", "text"),
    ("Status", "status", "text"),
    ("Auth method", "auth_method", "text"),
    ("Username", "username", "text"),
    ("Message", "why", "text"),
    ("Group", "group", "text"),
    ("Profile", "profile", "text"),
    ("MACs", "macs", "text"),
    ("IPs", "ips", "text"),
    ("Since the last report", "change", "text"),
]
OPTIONAL = ("group", "profile", "macs", "ips", "change")
# The columns whose words never break inside (statuses, names of groups and profiles, MAC and IP addresses).
WORD_COLUMNS = ("expected_status", "status", "auth_method", "group", "profile", "macs", "ips")
# What a device of ``devices`` given as a host's variables from the inventory has, each as nac_<name>.
HOST_VARIABLES = ("id", "hostname", "group", "profile", "macs", "ips")
# The table of the devices not at their expected status: these of the columns, when shown.
MISSED = ("hostname", "id", "status", "expected_status", "why", "group", "change")
MARKS = {
    REACHED: ("yes", "At its expected status", "\u2713"),
    IN_PROGRESS: ("wait", "In progress: not yet at its expected status", "\u2026"),
    FAILED: ("no", "Not at its expected status", "\u2717"),
}
# The colour of a status's bar: a class name of the style below, never a value of the NAC.
TONES = {"AUTHENTICATED": "good", "UNAUTHENTICATED": "bad", "ERROR": "bad", "UNKNOWN": "dim"}
USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")  # a user:password@ in the NAC's address: never shown
SPACES = {9: " ", 10: " ", 13: " "}  # a tab or a line break in a cell is a space
DATA_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", ord("{"): "\\u007b", ord("}"): "\\u007d"}

STYLE = """
:root{--bg:#f4f6f9;--card:#fff;--ink:#1d2733;--dim:#5b6776;--line:#dde3ea;--good:#1f9d55;--bad:#d64545;
--wait:#b87503;--other:#3b6fd6;--unknown:#8a94a3;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--ink)}
main{max-width:1400px;margin:0 auto;padding:24px}
header{background:#1d2733;color:#fff;padding:20px 24px}header h1{margin:0 auto;max-width:1352px;font-size:24px}
header p{margin:6px auto 0;max-width:1352px;color:#c7d0db}header .nac{color:#fff;font-weight:600}
header dl{margin:8px auto 0;max-width:1352px;display:flex;flex-wrap:wrap;gap:4px 20px;color:#c7d0db;font-size:14px}
header dt{display:inline}header dt::after{content:":"}header dd{display:inline;margin:0 0 0 4px;color:#fff}
header a{color:#9cc3ff}
#verdict{font-size:20px;font-weight:700;padding:14px 20px;border-radius:10px;margin:0 0 18px;color:#fff}
#verdict.passed{background:var(--good)}#verdict.failed{background:var(--bad)}#verdict.incomplete{background:var(--wait)}
h2{font-size:17px;margin:0 0 12px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin:0 0 18px}
.cards{display:flex;gap:14px;flex-wrap:wrap;background:none;border:0;padding:0}
.card{flex:1 1 160px;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 18px}
.card b{display:block;font-size:30px;line-height:1.2}.card span{color:var(--dim)}
.card.good b{color:var(--good)}.card.bad b{color:var(--bad)}.card.wait b{color:var(--wait)}
#chart{display:grid;gap:6px}
#chart button{display:grid;grid-template-columns:minmax(120px,240px) 1fr 64px;align-items:center;gap:12px;
width:100%;font:inherit;color:inherit;background:none;border:1px solid transparent;border-radius:6px;
padding:4px 8px;text-align:left;cursor:pointer}
#chart button:hover,#chart button[aria-pressed=true],#changes button[aria-pressed=true]{border-color:var(--line);
background:#eef2f7}
#chart .label{overflow-wrap:anywhere;font-weight:600}#chart svg{width:100%;height:18px;display:block}
#chart .track{fill:#edf0f4}#chart .count{text-align:right;font-variant-numeric:tabular-nums;font-weight:600}
.good .bar{fill:var(--good)}.bad .bar{fill:var(--bad)}.wait .bar{fill:var(--wait)}
.other .bar{fill:var(--other)}.dim .bar{fill:var(--unknown)}
#changes .kinds{display:flex;gap:10px;flex-wrap:wrap;margin:0 0 10px}
#changes button{font:inherit;color:inherit;background:#fff;border:1px solid var(--line);border-radius:6px;
padding:6px 12px;cursor:pointer}#changes button b{font-size:18px;margin-right:6px}
#changes .bad b{color:var(--bad)}#changes .good b{color:var(--good)}
ul.names{margin:0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:6px}
ul.names li{background:#e8f5ee;border:1px solid #bfe3cd;border-radius:4px;padding:2px 8px;overflow-wrap:anywhere}
table{width:100%;border-collapse:separate;border-spacing:0}
th,td{text-align:left;padding:5px 6px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:break-word}
.scroll{overflow:auto;max-height:75vh;border:1px solid var(--line);border-radius:6px}
th{background:#f7f9fb;font-size:13px;color:var(--dim);position:sticky;top:0;z-index:1}
th button{font:inherit;color:inherit;background:none;border:0;padding:0;cursor:pointer;text-align:left}
th[aria-sort=ascending] button::after{content:" \\25B2"}th[aria-sort=descending] button::after{content:" \\25BC"}
td{overflow-wrap:anywhere;font-size:13px}td.w{overflow-wrap:normal}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}
tr.no td{background:#fdf1f1}tr.wait td{background:#fdf6e7}
td.mark+td{min-width:7em}td.mark{width:2em;font-weight:700}
tr.yes td.mark{color:var(--good)}tr.no td.mark{color:var(--bad)}
tr.wait td.mark{color:var(--wait)}
.tools,.pager{display:none;gap:12px;align-items:center;flex-wrap:wrap;margin:0 0 12px}
.js .tools,.js .pager{display:flex}.pager{margin:10px 0 0}
.tools input[type=search]{flex:1 1 260px;font:inherit;padding:7px 10px;border:1px solid var(--line);
border-radius:6px}
.tools button,.tools select,.pager button,.pager select{font:inherit;padding:6px 12px;border:1px solid var(--line);
border-radius:6px;background:#fff;cursor:pointer}
.pager button[disabled]{opacity:.4;cursor:default}
#shown,.where{color:var(--dim)}p.none{color:var(--dim);margin:0}.js .nojs{display:none}
footer{color:var(--dim);font-size:13px;text-align:center;padding:0 0 24px}
@media print{.tools,.pager{display:none}header{background:none;color:#000}header p,header .nac,header dd{color:#000}
.scroll{max-height:none;overflow:visible}}
"""

SCRIPT = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var keys = data[0], rows = data[1], at = {};
  keys.forEach(function (key, index) { at[key] = index; });
  var bars = Array.prototype.slice.call(document.querySelectorAll("#chart button"));
  var kinds = Array.prototype.slice.call(document.querySelectorAll("#changes button"));
  var search = document.getElementById("search");
  var outcome = document.getElementById("outcome");
  var shown = document.getElementById("shown");
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
  var marks = {"reached": ["yes", "\\u2713", "At its expected status"],
    "in progress": ["wait", "\\u2026", "In progress: not yet at its expected status"],
    "failed": ["no", "\\u2717", "Not at its expected status"]};
  // The columns of words that never break inside a word (html_report.WORD_COLUMNS).
  var WORDS = ["expected_status", "status", "auth_method", "group", "profile", "macs", "ips"];
  var status = null, change = null, matched = [];
  // What filtering reads, once: the words of a row.
  var texts = rows.map(function (row) { return row.join("\\u0001").toLowerCase(); });
  document.documentElement.classList.add("js");

  function Table(element) {
    this.element = element;
    this.body = element.tBodies[0];
    this.heads = Array.prototype.slice.call(element.tHead.rows[0].cells);
    this.columns = this.heads.map(function (head) { return head.getAttribute("data-key"); });
    this.missed = element.getAttribute("data-rows") === "missed";
    this.order = [];
    for (var index = 0; index < rows.length; index++) {
      if (!this.missed || rows[index][at.outcome] !== "reached") { this.order.push(index); }
    }
    this.shown = [];
    this.page = 0;
    var pager = document.getElementById(element.id + "-pager");
    this.where = pager.querySelector(".where");
    this.size = pager.querySelector("select");
    this.buttons = {};
    var table = this;
    Array.prototype.forEach.call(pager.querySelectorAll("button"), function (button) {
      table.buttons[button.getAttribute("data-go")] = button;
      button.addEventListener("click", function () { table.go(button.getAttribute("data-go")); });
    });
    this.size.addEventListener("change", function () { table.page = 0; table.draw(); });
    this.heads.forEach(function (head, column) {
      var button = head.querySelector("button");
      if (button) { button.addEventListener("click", function () { table.sort(column); }); }
    });
  }

  Table.prototype.filter = function () {
    this.shown = this.order.filter(function (index) { return matched[index]; });
    this.page = 0;
    this.draw();
  };

  Table.prototype.sort = function (column) {
    var head = this.heads[column], key = at[this.columns[column]];
    var direction = head.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    var numbers = head.getAttribute("data-type") === "number";
    this.heads.forEach(function (other) {
      if (other.hasAttribute("data-type")) { other.setAttribute("aria-sort", "none"); }
    });
    head.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    this.order = this.order.map(function (index, position) {
      return {index: index, value: rows[index][key], position: position};
    }).sort(function (a, b) {
      var empty = (a.value === "") - (b.value === "");
      var order = numbers ? Number(a.value) - Number(b.value) : collator.compare(a.value, b.value);
      return empty || direction * order || a.position - b.position;
    }).map(function (item) { return item.index; });
    this.filter();
  };

  Table.prototype.go = function (where) {
    var last = Math.max(0, Math.ceil(this.shown.length / Number(this.size.value)) - 1);
    this.page = where === "first" ? 0 : where === "last" ? last :
      Math.min(last, Math.max(0, this.page + (where === "next" ? 1 : -1)));
    this.draw();
  };

  Table.prototype.draw = function () {
    var size = Number(this.size.value), total = this.shown.length;
    var last = Math.max(0, Math.ceil(total / size) - 1);
    var start = Math.min(this.page, last) * size, end = Math.min(total, start + size);
    var fragment = document.createDocumentFragment();
    for (var position = start; position < end; position++) {
      var row = rows[this.shown[position]], line = document.createElement("tr");
      var mark = marks[row[at.outcome]];
      line.className = mark[0];
      for (var column = 0; column < this.columns.length; column++) {
        var cell = document.createElement("td"), key = this.columns[column];
        if (key === "mark") {
          cell.className = "mark";
          cell.title = mark[2];
          cell.textContent = mark[1];
        } else {
          if (this.heads[column].getAttribute("data-type") === "number") { cell.className = "num"; }
          else if (WORDS.indexOf(key) >= 0) { cell.className = "w"; }
          cell.textContent = row[at[key]];
        }
        line.appendChild(cell);
      }
      fragment.appendChild(line);
    }
    this.body.textContent = "";
    this.body.appendChild(fragment);
    this.where.textContent = total ? "rows " + (start + 1) + "\\u2013" + end + " of " + total : "no rows";
    this.buttons.first.disabled = this.buttons.prev.disabled = start === 0;
    this.buttons.next.disabled = this.buttons.last.disabled = end >= total;
  };

  var tables = Array.prototype.map.call(document.querySelectorAll("table.paged"), function (element) {
    return new Table(element);
  });

  function update() {
    var words = search.value.trim().toLowerCase(), wanted = outcome.value, count = 0;
    for (var index = 0; index < rows.length; index++) {
      var row = rows[index];
      var ok = (status === null || row[at.status] === status) && (change === null || row[at.change] === change) &&
        (wanted === "" || (wanted === "missed" ? row[at.outcome] !== "reached" : row[at.outcome] === wanted)) &&
        (words === "" || texts[index].indexOf(words) !== -1);
      matched[index] = ok;
      count += ok ? 1 : 0;
    }
    shown.textContent = count + " of " + rows.length + " devices shown";
    bars.forEach(function (bar) {
      bar.setAttribute("aria-pressed", String(bar.getAttribute("data-status") === status));
    });
    kinds.forEach(function (kind) {
      kind.setAttribute("aria-pressed", String(kind.getAttribute("data-change") === change));
    });
    tables.forEach(function (table) { table.filter(); });
  }

  bars.forEach(function (bar) {
    bar.addEventListener("click", function () {
      var chosen = bar.getAttribute("data-status");
      status = status === chosen ? null : chosen;
      update();
    });
  });
  kinds.forEach(function (kind) {
    kind.addEventListener("click", function () {
      var chosen = kind.getAttribute("data-change");
      change = change === chosen ? null : chosen;
      update();
    });
  });
  search.addEventListener("input", update);
  outcome.addEventListener("change", update);
  document.getElementById("show-all").addEventListener("click", function () {
    search.value = "";
    outcome.value = "";
    status = null;
    change = null;
    update();
  });
  update();
}());
"""


def _hash(source):
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")


# Nothing but this style and this script: no other source, no request of any kind, no form, no base. The page's
# data is a block of type application/json, which a browser never runs.
POLICY = "default-src 'none'; style-src %s; script-src %s; img-src 'none'; base-uri 'none'; form-action 'none'" % (
    _hash(STYLE),
    _hash(SCRIPT),
)

FOOTER = (
    "Written by the collection netaccess.nac. This page loads nothing and sends nothing; "
    "every value in it is the NAC's, shown as text."
)


def visible(value):
    """A value as plain text that shows every character: None is empty; tabs and line breaks become spaces;
    control, bidirectional, zero-width and other invisible characters become \\x1b, \\u202e and so on
    (server_text.shown, the collection's one way to show a server's text)."""
    value = "" if value is None else value if isinstance(value, str) else str(value)
    return shown(value.translate(SPACES))


def text(value):
    """``visible(value)`` as HTML text or attribute value: escaped, quotes and braces too."""
    return html.escape(visible(value), quote=True).replace("{", "&#123;").replace("}", "&#125;")


def data(value):
    """``value`` (lists and strings, no mapping) as JSON inside the page's data block: nothing in it can end the
    block, start markup or a template (every non-ASCII character and < > & { } escaped as \\u)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).translate(DATA_ESCAPES)


def _name(value):
    """A group or profile as the list shows it: a string, or the name of an object."""
    if isinstance(value, dict):
        value = value.get("name")
    return visible(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""


def _listed(value):
    """MAC or IP addresses as the list shows them: a list, joined."""
    if isinstance(value, (list, tuple)):
        return ", ".join(visible(item) for item in value)
    return visible(value) if isinstance(value, str) else ""


def key_of(identity, hostname):
    """What identifies a device from one report to the next: its id, else its hostname (ignoring case)."""
    if identity not in (None, ""):
        return "id:%s" % identity
    return "hostname:%s" % (hostname or "").lower()


def outcome_of(result, in_progress):
    status = "" if result.get("status") is None else str(result.get("status"))
    expected = "" if result.get("expected_status") is None else str(result.get("expected_status"))
    if result.get("error"):
        return FAILED
    if status.lower() == expected.lower():
        return REACHED
    return IN_PROGRESS if status.upper() in in_progress else FAILED


def _as_listed(record):
    """The listed record ``record`` is, or the one that a host's variables from the inventory give (``nac_id``...)."""
    if "id" in record or "nac_id" not in record:
        return record
    return dict((name, record["nac_" + name]) for name in HOST_VARIABLES if "nac_" + name in record)


def _devices_by_key(devices):
    """The listed records of ``devices`` by id and by lower-case hostname."""
    found = {}
    for number, record in enumerate(devices or [], 1):
        if not isinstance(record, Mapping):
            raise ValueError("devices: item %d is not a mapping: %s" % (number, visible(repr(record))[:80]))
        record = _as_listed(record)
        if record.get("id") not in (None, ""):
            found.setdefault(key_of(record.get("id"), None), record)
        if isinstance(record.get("hostname"), str):
            found.setdefault(key_of(None, record["hostname"]), record)
    return found


def rows_of(results, devices=None, in_progress=IN_PROGRESS_STATUSES):
    """The rows of the page: each result's columns as visible text, its key and its outcome (with the group,
    profile, MACs and IPs of its record in ``devices``, listed records, matched by id, else by hostname)."""
    listed = _devices_by_key(devices)
    waiting = set(str(status).upper() for status in in_progress or ())
    rows = []
    for number, result in enumerate(results, 1):
        if not isinstance(result, dict):
            raise ValueError("device %d is not a mapping: %s" % (number, visible(repr(result))[:80]))
        row = dict((key, visible(result.get(key))) for _title, key, _kind in COLUMNS[:6])
        row["why"] = visible(result.get("error") or result.get("message"))
        row["key"] = key_of(result.get("id"), result.get("hostname"))
        record = listed.get(row["key"]) or listed.get(key_of(None, result.get("hostname"))) or {}
        row.update(group=_name(record.get("group")), profile=_name(record.get("profile")))
        row.update(macs=_listed(record.get("macs")), ips=_listed(record.get("ips")), change="")
        row["outcome"] = outcome_of(result, waiting)
        rows.append(row)
    return rows


def record(results, generated_at=None, in_progress=IN_PROGRESS_STATUSES):
    """The record of a report, as JSON text, that the next report compares with: when, and each device's key,
    hostname and outcome. A list at the top, with no object and every brace escaped: no brace at all."""
    rows = rows_of(results, in_progress=in_progress)
    entries = [[row["key"], row["hostname"], row["outcome"]] for row in rows]
    return data([FORMAT, generated_at or _now(), entries]) + "\n"


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


def verdict(rows):
    """(class, sentence): PASSED, FAILED (some failed) or INCOMPLETE (none failed, some still in progress)."""
    total = len(rows)
    failed = sum(1 for row in rows if row["outcome"] == FAILED)
    waiting = sum(1 for row in rows if row["outcome"] == IN_PROGRESS)
    if failed:
        detail = " (%d failed, %d still in progress)" % (failed, waiting) if waiting else ""
        return "failed", "FAILED: %d of %d not at their expected status%s" % (failed + waiting, total, detail)
    if waiting:
        return "incomplete", "INCOMPLETE: %d of %d still in progress, none failed" % (waiting, total)
    if not total:
        return "passed", "PASSED: no devices to check"
    return "passed", "PASSED: all %d at their expected status" % total


def counts_of(rows):
    """{status: number of rows}, most first (then by status)."""
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _chart(rows):
    counts = counts_of(rows)
    most = counts[0][1] if counts else 1
    waiting = dict((row["status"], True) for row in rows if row["outcome"] == IN_PROGRESS)
    bars = []
    for status, count in counts:
        tone = "wait" if status in waiting else TONES.get(status.upper(), "other")
        bars.append(
            '<button type="button" class="%s" data-status="%s" aria-pressed="false" title="Show only these devices">'
            '<span class="label">%s</span><svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
            '<rect class="track" width="100" height="10" rx="1.5"/>'
            '<rect class="bar" width="%.2f" height="10" rx="1.5"/></svg><span class="count">%d</span></button>'
            % (tone, text(status), text(status or "(none)"), max(100.0 * count / most, 0.5), count)
        )
    return "".join(bars) or '<p class="none">No devices.</p>'


def _names(names, limit=50):
    shown_names = "".join("<li>%s</li>" % text(name) for name in names[:limit])
    more = '<p class="none">and %d more.</p>' % (len(names) - limit) if len(names) > limit else ""
    return '<ul class="names">%s</ul>%s' % (shown_names, more)


def _created(created, existing):
    if created is None:
        return ""
    already = "" if existing is None else "%d already existed." % int(existing)
    listed = _names(created) if created else '<p class="none">None.</p>'
    return '<section id="created"><h2>Created by this run (%d)</h2>%s%s</section>\n' % (
        len(created),
        listed,
        '<p class="none">%s</p>' % already if already else "",
    )


def _changes(changes, previous):
    """The section "Since the previous report": what changed, each kind a filter of both tables."""
    if changes is None:
        why = previous or "no report of this name was written in this directory before"
        return (
            '<section id="changes"><h2>Since the previous report</h2><p class="none">Nothing to compare with: %s. '
            "The next report written here compares with this one.</p></section>\n" % text(why)
        )
    when, changes = changes
    kinds = [(NEWLY_FAILING, "bad", "newly failing"), (RECOVERED, "good", "recovered"), (NEW, "", "new devices")]
    buttons = "".join(
        '<button type="button" class="%s" data-change="%s" aria-pressed="false" title="Show only these devices">'
        "<b>%d</b>%s</button>" % (tone, change, len(changes[change]), title)
        for change, tone, title in kinds
    )
    gone = changes["gone"]
    listed = "<p>No longer in the report (%d):</p>%s" % (len(gone), _names(gone)) if gone else ""
    return (
        '<section id="changes"><h2>Since the previous report (<time>%s</time>)</h2><div class="kinds">%s</div>%s'
        "</section>\n" % (text(when), buttons, listed)
    )


def _cell_class(key, kind):
    """A number's cell is ``num``; a cell of words that must not break inside a word (a status, a MAC or IP
    address) ``w``; any other (a hostname, a message) may break anywhere, so that every column fits at 1280 px."""
    if kind == "number":
        return ' class="num"'
    return ' class="w"' if key in WORD_COLUMNS else ""


def _heads(columns):
    return '<th aria-sort="none" data-key="mark">At</th>' + "".join(
        '<th data-key="%s" data-type="%s" aria-sort="none"><button type="button">%s</button></th>' % (key, kind, title)
        for title, key, kind in columns
    )


def _row(row, columns):
    cells = "".join("<td%s>%s</td>" % (_cell_class(key, kind), text(row[key])) for _title, key, kind in columns)
    mark = MARKS[row["outcome"]]
    return '<tr class="%s"><td class="mark" title="%s">%s</td>%s</tr>' % (mark[0], mark[1], mark[2], cells)


def _table(name, heading, rows, columns, empty):
    """One table: its first page in the markup (the page without its script), the rest drawn by the script."""
    first = "".join(_row(row, columns) + "\n" for row in rows[:PAGE_SIZE])
    more = (
        '<p class="none nojs">The first %d of %d rows; the others are shown by the page\'s script.</p>'
        % (PAGE_SIZE, len(rows))
        if len(rows) > PAGE_SIZE
        else ""
    )
    body = (
        '<div class="scroll"><table id="%s" class="paged" data-rows="%s"><thead><tr>%s</tr></thead><tbody>\n%s'
        '</tbody></table></div>%s<div class="pager" id="%s-pager"><button type="button" data-go="first">'
        '\u00ab First</button><button type="button" data-go="prev">\u2039 Previous</button><span class="where">'
        '</span><button type="button" data-go="next">Next \u203a</button><button type="button" data-go="last">'
        "Last \u00bb</button><label>Rows per page <select><option>50</option><option selected>100</option>"
        "<option>500</option><option>1000</option></select></label></div>"
        % (name, name, _heads(columns), first, more, name)
    )
    if not rows:
        body = '<p class="none">%s</p><div hidden>%s</div>' % (empty, body)
    return '<section id="%s-section"><h2>%s (%d)</h2>%s</section>\n' % (name, heading, len(rows), body)


def _tools():
    return (
        '<section class="tools" aria-label="Filter both tables"><input id="search" type="search" '
        'placeholder="Filter both tables: any words of a row" aria-label="Filter the devices">'
        '<label>Outcome <select id="outcome"><option value="">all</option><option value="missed">not at their '
        'expected status</option><option value="failed">failed</option><option value="in progress">in progress'
        '</option><option value="reached">at their expected status</option></select></label>'
        '<button type="button" id="show-all">Show all</button><span id="shown"></span></section>\n'
    )


def _context(context, csv):
    """The run's context: label: value pairs in the caller's order, and the link to the CSV beside the page."""
    if context is not None and not isinstance(context, dict):
        raise ValueError("context must be a mapping of labels to values, got %s" % _kind(context))
    pairs = [(label, value) for label, value in (context or {}).items() if value not in (None, "")]
    items = "".join("<div><dt>%s</dt><dd>%s</dd></div>" % (text(label), text(value)) for label, value in pairs)
    if csv:
        name = visible(csv).rsplit("/", 1)[-1]
        items += '<div><dt>CSV</dt><dd><a href="./%s" download>%s</a></dd></div>' % (
            text(_quote(name)),
            text(name),
        )
    return "<dl>%s</dl>" % items if items else ""


def _quote(name):
    """A file name as a relative URL path: every character but letters, digits and -._~ percent-encoded."""
    return "".join(
        char if re.match(r"[A-Za-z0-9._~-]$", char) else "".join("%%%02X" % byte for byte in char.encode("utf-8"))
        for char in name
    )


def _kind(value):
    return "a string" if isinstance(value, str) else "a mapping" if isinstance(value, dict) else type(value).__name__


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def page(
    results,
    title="802.1x status",
    nac="",
    created=None,
    existing=None,
    generated_at=None,
    devices=None,
    context=None,
    csv=None,
    previous=None,
    in_progress=IN_PROGRESS_STATUSES,
    previous_size=None,
):
    """The HTML page of ``results`` (dicts as nac_dot1x_status returns them, each with its ``expected_status``);
    ``created``: the hostnames created by this run, or None for a run that creates nothing; ``devices``: the
    listed records (group, profile, macs, ips); ``context``: {label: value} of the run; ``csv``: the name of the
    CSV report beside the page; ``previous``: the record of the previous report as slurp returns it (base64),
    False for none; ``previous_size``: the size of its file, which refuses it past record_bound. ValueError for
    input that is not as described."""
    if not isinstance(results, (list, tuple)):
        raise ValueError("expects a list of devices, got %s" % _kind(results))
    if created is not None and not isinstance(created, (list, tuple)):
        raise ValueError("created must be a list of hostnames, got %s" % _kind(created))
    if devices is not None and not isinstance(devices, (list, tuple)):
        raise ValueError("devices must be a list of listed devices, got %s" % _kind(devices))
    if not isinstance(in_progress, (list, tuple)):
        raise ValueError("in_progress must be a list of statuses, got %s" % _kind(in_progress))
    rows = rows_of(results, devices, in_progress)
    changes = None
    why = None
    if previous_size is not None and not isinstance(previous_size, int):
        raise ValueError("previous_size must be a number of bytes, got %s" % _kind(previous_size))
    oversize = None if previous_size is None else oversize_record(previous_size, len(rows))
    if oversize:
        why = "the record of the previous report could not be read: %s" % oversize
    elif previous:
        read = read_record(previous, len(rows))
        if isinstance(read, tuple):
            changes = (read[0], compare(rows, read[1]))
        else:
            why = "the record of the previous report could not be read: %s" % read
    columns = [c for c in COLUMNS if c[1] not in OPTIONAL or any(row[c[1]] for row in rows)]
    missed_columns = [c for key in MISSED for c in columns if c[1] == key]
    missed = [row for row in rows if row["outcome"] != REACHED]
    reached = len(rows) - len(missed)
    failed = sum(1 for row in missed if row["outcome"] == FAILED)
    tone, sentence = verdict(rows)
    cards = [
        ("", len(rows), "devices"),
        ("good", reached, "at their expected status"),
        ("bad" if failed else "", failed, "failed"),
        ("wait" if len(missed) - failed else "", len(missed) - failed, "in progress"),
    ]
    if created is not None:
        cards.append(("", len(created), "created by this run"))
    keys = [key for _title, key, _kind in COLUMNS] + ["outcome"]
    table_data = [keys, [[row[key] for key in keys] for row in rows]]  # lists only: no brace in the data block
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n',
            '<meta http-equiv="Content-Security-Policy" content="%s">\n' % POLICY,
            '<meta name="referrer" content="no-referrer">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            "<title>%s</title>\n<style>%s</style></head>\n<body>\n" % (text(title), STYLE),
            '<header><h1>%s</h1><p>NAC <span class="nac">%s</span> \u00b7 read <time>%s</time></p>%s</header>\n'
            % (
                text(title),
                text(USERINFO.sub(r"\1", nac or "") or "(not given)"),
                text(generated_at or _now()),
                _context(context, csv),
            ),
            '<main>\n<p id="verdict" class="%s">%s</p>\n' % (tone, text(sentence)),
            '<section class="cards">%s</section>\n'
            % "".join('<div class="card %s"><b>%d</b><span>%s</span></div>' % (c[0], c[1], text(c[2])) for c in cards),
            '<section><h2>Devices per 802.1x status</h2><div id="chart">%s</div></section>\n' % _chart(rows),
            _changes(changes, why),
            _created(created, existing),
            _tools(),
            _table(
                "missed",
                "Not at their expected status",
                missed,
                missed_columns,
                "Every device has its expected 802.1x status.",
            ),
            _table("devices", "All devices", rows, columns, "No devices."),
            '</main>\n<footer>%s</footer>\n<script type="application/json" id="report-data">%s</script>\n'
            % (FOOTER, data(table_data)),
            "<script>%s</script>\n</body></html>\n" % SCRIPT,
        ]
    )
