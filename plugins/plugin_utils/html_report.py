# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the HTML status report as text (no Ansible imports), so that the filter netaccess.nac.html_report returns
one self-contained page of the 802.1x status of devices (its DOCUMENTATION says what the page shows).

The page's parts live beside it: html_report_rows.py turns results into rows of visible text,
html_report_changes.py writes and reads the record that the next report in the same directory compares with (the
filter netaccess.nac.html_report_record), and html_report_assets.py holds the page's own style and script.

Every value is the NAC's and may be hostile. In the markup it goes through ``text()`` (made visible, then
HTML-escaped with quotes and braces) and nowhere else; in the page's data (``data()``, a JSON block that is never
run) every non-ASCII character, ``<``, ``>``, ``&`` and the braces are \\u escapes. The page's own style and
script are constants, allowed by their hashes in its Content-Security-Policy, which allows nothing else; the
script writes the rows of the tables with ``textContent``, never markup.

A device's outcome: ``reached`` (its status is its expected status, ignoring case, and its query had no error),
``in progress`` (not yet, but its status is one of ``in_progress``: still under way, not a failure), or
``failed`` (anything else)."""

import re

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report_assets import FOOTER, POLICY, SCRIPT, STYLE
from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report_changes import (  # noqa: F401  # pylint: disable=unused-import
    NEW,
    NEWLY_FAILING,
    RECOVERED,
    compare,
    oversize_record,
    read_record,
    record,  # the filters import it from here
)
from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report_rows import (
    COLUMNS,
    FAILED,
    IN_PROGRESS,
    IN_PROGRESS_STATUSES,
    MARKS,
    OPTIONAL,
    REACHED,
    data,
    now,
    rows_of,
    text,
    visible,
)

PAGE_SIZE = 100  # rows of a table per page; the first page is written in the markup, readable without the script
# The columns whose words never break inside (statuses, names of groups and profiles, MAC and IP addresses).
WORD_COLUMNS = ("expected_status", "status", "auth_method", "group", "profile", "macs", "ips")
# The table of the devices not at their expected status: these of the columns, when shown.
MISSED = ("hostname", "id", "status", "expected_status", "why", "group", "change")
# The colour of a status's bar: a class name of the style below, never a value of the NAC.
TONES = {"AUTHENTICATED": "good", "UNAUTHENTICATED": "bad", "ERROR": "bad", "UNKNOWN": "dim"}
USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")  # a user:password@ in the NAC's address: never shown


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
) -> str:
    """Return the HTML page of ``results`` (dicts as nac_dot1x_status returns them, each with its
    ``expected_status``).

    ``created``: the hostnames created by this run, or None for a run that creates nothing; ``devices``: the
    listed records (group, profile, macs, ips); ``context``: {label: value} of the run; ``csv``: the name of the
    CSV report beside the page; ``previous``: the record of the previous report as slurp returns it (base64),
    False for none; ``previous_size``: the size of its file, which refuses it past record_bound. ValueError for
    input that is not as described."""
    _check(results, created, devices, in_progress, previous_size)
    rows = rows_of(results, devices, in_progress)
    changes, why = _since(rows, previous, previous_size)
    columns = [c for c in COLUMNS if c[1] not in OPTIONAL or any(row[c[1]] for row in rows)]
    missed_columns = [c for key in MISSED for c in columns if c[1] == key]
    missed = [row for row in rows if row["outcome"] != REACHED]
    header = _header(title, nac, generated_at, context, csv)
    return "".join(
        [
            header,
            _summary(rows, missed, created),
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
            _footer(rows),
        ]
    )


def _check(results, created, devices, in_progress, previous_size):
    """Raise ValueError naming the first argument of ``page`` that is not of its kind."""
    if not isinstance(results, (list, tuple)):
        raise ValueError("expects a list of devices, got %s" % _kind(results))
    if created is not None and not isinstance(created, (list, tuple)):
        raise ValueError("created must be a list of hostnames, got %s" % _kind(created))
    if devices is not None and not isinstance(devices, (list, tuple)):
        raise ValueError("devices must be a list of listed devices, got %s" % _kind(devices))
    if not isinstance(in_progress, (list, tuple)):
        raise ValueError("in_progress must be a list of statuses, got %s" % _kind(in_progress))
    if previous_size is not None and not isinstance(previous_size, int):
        raise ValueError("previous_size must be a number of bytes, got %s" % _kind(previous_size))


def _since(rows, previous, previous_size):
    """Return (changes, why): the changes since the previous report's record, or why there are none to show."""
    oversize = None if previous_size is None else oversize_record(previous_size, len(rows))
    if oversize:
        return None, "the record of the previous report could not be read: %s" % oversize
    if not previous:
        return None, None
    read = read_record(previous, len(rows))
    if isinstance(read, tuple):
        return (read[0], compare(rows, read[1])), None
    return None, "the record of the previous report could not be read: %s" % read


def _header(title, nac, generated_at, context, csv):
    """Return the page's head and header: its policy, style, title, the NAC (never its user:password@) and context."""
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
                text(generated_at or now()),
                _context(context, csv),
            ),
        ]
    )


def _summary(rows, missed, created):
    """Return the verdict, the cards of counts and the chart of statuses."""
    failed = sum(1 for row in missed if row["outcome"] == FAILED)
    tone, sentence = verdict(rows)
    cards = [
        ("", len(rows), "devices"),
        ("good", len(rows) - len(missed), "at their expected status"),
        ("bad" if failed else "", failed, "failed"),
        ("wait" if len(missed) - failed else "", len(missed) - failed, "in progress"),
    ]
    if created is not None:
        cards.append(("", len(created), "created by this run"))
    return "".join(
        [
            '<main>\n<p id="verdict" class="%s">%s</p>\n' % (tone, text(sentence)),
            '<section class="cards">%s</section>\n'
            % "".join('<div class="card %s"><b>%d</b><span>%s</span></div>' % (c[0], c[1], text(c[2])) for c in cards),
            '<section><h2>Devices per 802.1x status</h2><div id="chart">%s</div></section>\n' % _chart(rows),
        ]
    )


def _footer(rows):
    """Return the footer, the rows as the page's data block (lists only: no brace in it) and the script."""
    keys = [key for _title, key, _kind in COLUMNS] + ["outcome"]
    table_data = [keys, [[row[key] for key in keys] for row in rows]]
    return (
        '</main>\n<footer>%s</footer>\n<script type="application/json" id="report-data">%s</script>\n'
        % (FOOTER, data(table_data))
        + "<script>%s</script>\n</body></html>\n" % SCRIPT
    )
