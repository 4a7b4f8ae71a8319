# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML status report (no Ansible imports): one self-contained page of the 802.1x status of devices, built
here as text, for the filter netaccess.nac.html_report (its DOCUMENTATION says what the page shows).

Every value is the NAC's and may be hostile: it goes through ``text()`` (made visible, then HTML-escaped with
quotes and braces) and nowhere else. The page's own style and script are constants, allowed by their hashes in
its Content-Security-Policy, which allows nothing else; the script moves and hides rows and writes no markup."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import datetime
import hashlib
import html
import re

from ansible_collections.netaccess.nac.plugins.module_utils.replies import shown

# The table's columns: title, the key of a row, and how its values sort.
COLUMNS = [
    ("Hostname", "hostname", "text"),
    ("Id", "id", "number"),
    ("Expected", "expected_status", "text"),
    ("Status", "status", "text"),
    ("Auth method", "auth_method", "text"),
    ("Username", "username", "text"),
    ("Message", "why", "text"),
]
# The colour of a status's bar: a class name of the style below, never a value of the NAC.
TONES = {"AUTHENTICATED": "good", "UNAUTHENTICATED": "bad", "ERROR": "bad", "UNKNOWN": "dim", "CONNECTING": "wait"}
USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")  # a user:password@ in the NAC's address: never shown
SPACES = {9: " ", 10: " ", 13: " "}  # a tab or a line break in a cell is a space

STYLE = """
:root{--bg:#f4f6f9;--card:#fff;--ink:#1d2733;--dim:#5b6776;--line:#dde3ea;--good:#1f9d55;--bad:#d64545;
--wait:#d98e04;--other:#3b6fd6;--unknown:#8a94a3;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--ink)}
main{max-width:1200px;margin:0 auto;padding:24px}
header{background:#1d2733;color:#fff;padding:20px 24px}header h1{margin:0 auto;max-width:1152px;font-size:24px}
header p{margin:6px auto 0;max-width:1152px;color:#c7d0db}header .nac{color:#fff;font-weight:600}
h2{font-size:17px;margin:0 0 12px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin:0 0 18px}
.cards{display:flex;gap:14px;flex-wrap:wrap;background:none;border:0;padding:0}
.card{flex:1 1 180px;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 18px}
.card b{display:block;font-size:30px;line-height:1.2}.card span{color:var(--dim)}
.card.good b{color:var(--good)}.card.bad b{color:var(--bad)}
#chart{display:grid;gap:6px}
#chart button{display:grid;grid-template-columns:minmax(120px,240px) 1fr 64px;align-items:center;gap:12px;
width:100%;font:inherit;color:inherit;background:none;border:1px solid transparent;border-radius:6px;
padding:4px 8px;text-align:left;cursor:pointer}
#chart button:hover,#chart button[aria-pressed=true]{border-color:var(--line);background:#eef2f7}
#chart .label{overflow-wrap:anywhere;font-weight:600}#chart svg{width:100%;height:18px;display:block}
#chart .track{fill:#edf0f4}#chart .count{text-align:right;font-variant-numeric:tabular-nums;font-weight:600}
.good .bar{fill:var(--good)}.bad .bar{fill:var(--bad)}.wait .bar{fill:var(--wait)}
.other .bar{fill:var(--other)}.dim .bar{fill:var(--unknown)}
ul.names{margin:0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:6px}
ul.names li{background:#e8f5ee;border:1px solid #bfe3cd;border-radius:4px;padding:2px 8px;overflow-wrap:anywhere}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:break-word}
.scroll{overflow-x:auto}
th{background:#f7f9fb;font-size:13px;color:var(--dim);white-space:nowrap}
th button{font:inherit;color:inherit;background:none;border:0;padding:0;cursor:pointer}
th[aria-sort=ascending] button::after{content:" \\25B2"}th[aria-sort=descending] button::after{content:" \\25BC"}
#devices td:nth-child(2),#devices td:nth-child(7),#devices td:nth-child(8),#missed td{overflow-wrap:anywhere}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}
tr.no td{background:#fdf1f1}tr[hidden]{display:none}
td.mark{width:2em;font-weight:700}tr.yes td.mark{color:var(--good)}tr.no td.mark{color:var(--bad)}
.tools{display:none;gap:12px;align-items:center;flex-wrap:wrap;margin:0 0 12px}.js .tools{display:flex}
.tools input[type=search]{flex:1 1 260px;font:inherit;padding:7px 10px;border:1px solid var(--line);
border-radius:6px}
.tools button{font:inherit;padding:6px 12px;border:1px solid var(--line);border-radius:6px;background:#fff;
cursor:pointer}
#shown{color:var(--dim)}p.none{color:var(--dim);margin:0}
footer{color:var(--dim);font-size:13px;text-align:center;padding:0 0 24px}
@media print{.tools{display:none}header{background:none;color:#000}header p,header .nac{color:#000}}
"""

SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("devices");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var bars = Array.prototype.slice.call(document.querySelectorAll("#chart button"));
  var search = document.getElementById("search");
  var missed = document.getElementById("missed-only");
  var shown = document.getElementById("shown");
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
  var status = null;
  // What filtering reads, read once: a row's words, its status and whether it reached it.
  var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
  var statuses = rows.map(function (row) { return row.getAttribute("data-status"); });
  var reached = rows.map(function (row) { return row.classList.contains("yes"); });
  document.documentElement.classList.add("js");

  function update() {
    var words = search.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row, index) {
      var visible = (status === null || statuses[index] === status) && (!missed.checked || !reached[index]) &&
        (words === "" || texts[index].indexOf(words) !== -1);
      if (row.hidden === visible) { row.hidden = !visible; }
      count += visible ? 1 : 0;
    });
    shown.textContent = count + " of " + rows.length + " devices shown";
    bars.forEach(function (bar) {
      bar.setAttribute("aria-pressed", String(bar.getAttribute("data-status") === status));
    });
  }

  function sort(index) {
    var head = heads[index];
    var direction = head.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    var numbers = head.getAttribute("data-type") === "number";
    heads.forEach(function (other) { other.setAttribute("aria-sort", "none"); });
    head.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    rows.map(function (row, position) {
      return {row: row, key: row.cells[index].textContent, position: position};
    }).sort(function (a, b) {
      var empty = (a.key === "") - (b.key === "");
      var order = numbers ? Number(a.key) - Number(b.key) : collator.compare(a.key, b.key);
      return empty || direction * order || a.position - b.position;
    }).forEach(function (item) { body.appendChild(item.row); });
  }

  heads.forEach(function (head, index) {
    var button = head.querySelector("button");
    if (button) { button.addEventListener("click", function () { sort(index); }); }
  });
  bars.forEach(function (bar) {
    bar.addEventListener("click", function () {
      var chosen = bar.getAttribute("data-status");
      status = status === chosen ? null : chosen;
      update();
    });
  });
  search.addEventListener("input", update);
  missed.addEventListener("change", update);
  document.getElementById("show-all").addEventListener("click", function () {
    search.value = "";
    missed.checked = false;
    status = null;
    update();
  });
  update();
}());
"""


def _hash(source):
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")


# Nothing but this style and this script: no other source, no request of any kind, no form, no base.
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
    (replies.shown, the collection's one way to show a server's text)."""
    value = "" if value is None else value if isinstance(value, str) else str(value)
    return shown(value.translate(SPACES))


def text(value):
    """``visible(value)`` as HTML text or attribute value: escaped, quotes and braces too."""
    return html.escape(visible(value), quote=True).replace("{", "&#123;").replace("}", "&#125;")


def rows_of(results):
    """The rows of the page: each result's columns as visible text, and whether it reached its expected status."""
    rows = []
    for number, result in enumerate(results, 1):
        if not isinstance(result, dict):
            raise ValueError("device %d is not a mapping: %s" % (number, visible(repr(result))[:80]))
        row = dict((key, visible(result.get(key))) for _title, key, _kind in COLUMNS if key != "why")
        row["why"] = visible(result.get("error") or result.get("message"))
        row["reached"] = not result.get("error") and row["status"].lower() == row["expected_status"].lower()
        rows.append(row)
    return rows


def counts_of(rows):
    """{status: number of rows}, most first (then by status)."""
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _chart(rows):
    counts = counts_of(rows)
    most = counts[0][1] if counts else 1
    bars = []
    for status, count in counts:
        tone = TONES.get(status.upper(), "other")
        bars.append(
            '<button type="button" class="%s" data-status="%s" aria-pressed="false" title="Show only these devices">'
            '<span class="label">%s</span><svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
            '<rect class="track" width="100" height="10" rx="1.5"/>'
            '<rect class="bar" width="%.2f" height="10" rx="1.5"/></svg><span class="count">%d</span></button>'
            % (tone, text(status), text(status or "(none)"), max(100.0 * count / most, 0.5), count)
        )
    return "".join(bars) or '<p class="none">No devices.</p>'


def _created(created, existing):
    if created is None:
        return ""
    already = "" if existing is None else "%d already existed." % int(existing)
    names = "".join("<li>%s</li>" % text(name) for name in created)
    listed = '<ul class="names">%s</ul>' % names if created else '<p class="none">None.</p>'
    return '<section id="created"><h2>Created by this run (%d)</h2>%s%s</section>\n' % (
        len(created),
        listed,
        '<p class="none">%s</p>' % already if already else "",
    )


def _missed(rows):
    missed = [row for row in rows if not row["reached"]]
    lines = "".join(
        "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
        % tuple(text(row[key]) for key in ("hostname", "status", "expected_status", "why"))
        for row in missed
    )
    body = (
        '<div class="scroll"><table><thead><tr><th>Hostname</th><th>Status</th><th>Expected</th>'
        "<th>Why (the NAC's message)</th></tr></thead><tbody>%s</tbody></table></div>" % lines
        if missed
        else '<p class="none">Every device has its expected 802.1x status.</p>'
    )
    return '<section id="missed"><h2>Not at their expected status (%d)</h2>%s</section>\n' % (len(missed), body)


def _row(row):
    cells = "".join(
        "<td%s>%s</td>" % (' class="num"' if kind == "number" else "", text(row[key])) for _title, key, kind in COLUMNS
    )
    mark = (
        ("yes", "At its expected status", "\u2713")
        if row["reached"]
        else ("no", "Not at its expected status", "\u2717")
    )
    return '<tr class="%s" data-status="%s"><td class="mark" title="%s">%s</td>%s</tr>' % (
        mark[0],
        text(row["status"]),
        mark[1],
        mark[2],
        cells,
    )


def _table(rows):
    heads = "".join(
        '<th data-type="%s" aria-sort="none"><button type="button">%s</button></th>' % (kind, title)
        for title, _key, kind in COLUMNS
    )
    return (
        '<section><h2>All devices</h2><div class="tools"><input id="search" type="search" '
        'placeholder="Filter: any words of a row" aria-label="Filter the devices"><label>'
        '<input id="missed-only" type="checkbox"> only those not at their expected status</label>'
        '<button type="button" id="show-all">Show all</button><span id="shown"></span></div>\n'
        '<div class="scroll"><table id="devices"><thead><tr><th aria-sort="none">At</th>%s</tr></thead><tbody>\n'
        "%s</tbody></table></div></section>\n" % (heads, "".join(_row(row) + "\n" for row in rows))
    )


def _kind(value):
    return "a string" if isinstance(value, str) else "a mapping" if isinstance(value, dict) else type(value).__name__


def page(results, title="802.1x status", nac="", created=None, existing=None, generated_at=None):
    """The HTML page of ``results`` (dicts as nac_dot1x_status returns them, each with its ``expected_status``);
    ``created``: the hostnames created by this run, or None for a run that creates nothing. ValueError for
    input that is not as described."""
    if not isinstance(results, (list, tuple)):
        raise ValueError("expects a list of devices, got %s" % _kind(results))
    if created is not None and not isinstance(created, (list, tuple)):
        raise ValueError("created must be a list of hostnames, got %s" % _kind(created))
    rows = rows_of(results)
    reached = sum(1 for row in rows if row["reached"])
    if generated_at is None:
        generated_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    cards = [
        ("", len(rows), "devices"),
        ("good", reached, "at their expected status"),
        ("bad" if reached < len(rows) else "", len(rows) - reached, "not at their expected status"),
    ]
    if created is not None:
        cards.append(("", len(created), "created by this run"))
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n',
            '<meta http-equiv="Content-Security-Policy" content="%s">\n' % POLICY,
            '<meta name="referrer" content="no-referrer">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            "<title>%s</title>\n<style>%s</style></head>\n<body>\n" % (text(title), STYLE),
            '<header><h1>%s</h1><p>NAC <span class="nac">%s</span> \u00b7 read <time>%s</time></p></header>\n'
            % (text(title), text(USERINFO.sub(r"\1", nac or "") or "(not given)"), text(generated_at)),
            '<main>\n<section class="cards">%s</section>\n'
            % "".join('<div class="card %s"><b>%d</b><span>%s</span></div>' % card for card in cards),
            '<section><h2>Devices per 802.1x status</h2><div id="chart">%s</div></section>\n' % _chart(rows),
            _created(created, existing),
            _missed(rows),
            _table(rows),
            "</main>\n<footer>%s</footer>\n<script>%s</script>\n</body></html>\n" % (FOOTER, SCRIPT),
        ]
    )
