# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hold the HTML report's own style and script, the only ones its page runs, so that the page's code reads apart.

The page allows them by their hashes in its Content-Security-Policy (``POLICY``), which allows nothing else: no
other source, no request of any kind, no form, no base. The script writes the rows of the tables with
``textContent``, never markup."""

import base64
import hashlib

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
