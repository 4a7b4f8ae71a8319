# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML reports of the role device_onboarding and of playbooks/dot1x_report.yml, written from an emulator of
this target's own whose values are hostile in every field the page shows, then opened in headless Chromium
(cdp.py): the page renders without an error, sends no request and runs nothing of the NAC's; the counts of the
chart are the table's; each value is shown as text, exactly; the verdict is the table's; sorting by a column orders
the rows, a filter hides the others in both tables. dot1x_report runs a second time after statuses changed: its
page says what changed since the first (newly failing, recovered, new, gone) and filters by it; its record is
private (0600) and a symbolic link in its place is replaced, never followed. Then pages of 28 and 20,000 devices
(made by the filter's code): the load time is printed, pages and the sticky header are checked.
Two broken pages first prove that the checks see a request, a script and a policy violation.
Usage: html_report_check.py PYTHON [ansible-test args, ignored]. With NAC_HTML_REPORT_SHOTS=DIR, the pages and
screenshots are kept in DIR."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import collections
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request

import cdp

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import page as report_page  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import record as report_record  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator  # noqa: E402  pylint: disable=wrong-import-position

KEY = "nac-demo-admin-key"
SCRIPT_HOST = '<script>alert("hostname")</script>'
SVG_HOST = '"><svg/onload=alert(2)>'
BRACES_HOST = "{{7*7}}"
CONTROL_HOST = "ctl\x1b[2J\u202egnp.exe\u2028-\x00"  # only the NAC can have it (never a requested hostname)
IMG = "\"><img src=x onerror=alert('status')>"
SVG_MESSAGE = "</script><script>alert(3)</script>\x00\x07"
BIDI = "\u202eevil\u202c <b>bold</b> & \"quotes\" {{ lookup('pipe', 'id') }}\u2028end"


def device(number, hostname, mac=True):
    record = dict(id=number, hostname=hostname, group="Cameras", profile="Camera", ips=["10.20.0.%d" % (100 + number)])
    if mac:
        record["macs"] = ["02:00:00:27:00:%02x" % number]
    return record


CONFIG = dict(
    devices=[
        device(11, "ok-01"),
        device(12, "ok-02"),
        device(13, SCRIPT_HOST),
        device(14, SVG_HOST),
        device(15, BRACES_HOST),
        device(16, CONTROL_HOST),
        device(17, "nomac-01", mac=False),
    ],
    dot1x=dict(
        auth_delay=0.3,
        overrides={
            SCRIPT_HOST: dict(status=IMG, authMethod="{{ lookup('pipe', 'id') }}", username="\x1b[31mred\x1b[0m"),
            SVG_HOST: dict(status="UNAUTHENTICATED", message=SVG_MESSAGE),
            BRACES_HOST: dict(status="<i>held</i>", authMethod="MAB", message=BIDI),
            CONTROL_HOST: dict(status="\u202eDETACILAHTUA", username="\u202e\u2066x\u2069", message="a\tb\nc"),
        },
    ),
)
# What the page must show of the hostile values: each character visible, every value as text.
SHOWN = {
    CONTROL_HOST: "ctl\\x1b[2J\\u202egnp.exe\\u2028-\\x00",
    "\x1b[31mred\x1b[0m": "\\x1b[31mred\\x1b[0m",
    SVG_MESSAGE: "</script><script>alert(3)</script>\\x00\\x07",
    BIDI: "\\u202eevil\\u202c <b>bold</b> & \"quotes\" {{ lookup('pipe', 'id') }}\\u2028end",
    "\u202eDETACILAHTUA": "\\u202eDETACILAHTUA",
    "\u202e\u2066x\u2069": "\\u202e\\u2066x\\u2069",
    "a\tb\nc": "a b c",
}


class Failed(Exception):
    pass


def expect(condition, what, detail=""):
    if not condition:
        raise Failed("%s%s" % (what, "\n---- detail ----\n%s" % str(detail)[-4000:] if detail != "" else ""))
    print("ok - %s" % what)


def shown(value):
    return "" if value is None else SHOWN.get(value, str(value))


def row(hostname, number, expected, status, auth_method=None, username=None, why=None):
    """A row of the table as the page must show it: its columns after the mark."""
    return [shown(value) for value in (hostname, number, expected, status, auth_method, username, why)]


ONBOARDED = {  # the role's page: hostname -> row (the devices the role asked for)
    "ok-01": row("ok-01", 11, "AUTHENTICATED", "AUTHENTICATED", "EAP-TLS", "ok-01"),
    SCRIPT_HOST: row(SCRIPT_HOST, 13, "AUTHENTICATED", IMG, "{{ lookup('pipe', 'id') }}", "\x1b[31mred\x1b[0m"),
    # auth_method and username of a device with a MAC, unless overridden: EAP-TLS, as its lower-cased hostname;
    # none when the override makes it UNAUTHENTICATED (the emulator, as the guides' events show)
    SVG_HOST: row(SVG_HOST, 14, "AUTHENTICATED", "UNAUTHENTICATED", None, None, SVG_MESSAGE),
    BRACES_HOST: row(BRACES_HOST, 15, "<I>HELD</I>", "<i>held</i>", "MAB", BRACES_HOST, BIDI),
    "new-01": row("new-01", None, "AUTHENTICATED", "AUTHENTICATED", "EAP-TLS", "new-01"),
    "new-02": row("new-02", None, "AUTHENTICATED", "AUTHENTICATED", "EAP-TLS", "new-02"),
}
RECHECKED = {  # dot1x_report's page: by id
    11: row("ok-01", 11, "AUTHENTICATED", "AUTHENTICATED", "EAP-TLS", "ok-01"),
    16: row(CONTROL_HOST, 16, "AUTHENTICATED", "\u202eDETACILAHTUA", "EAP-TLS", "\u202e\u2066x\u2069", "a\tb\nc"),
    17: row(
        "nomac-01", 17, "AUTHENTICATED", "UNAUTHENTICATED", None, None, "No MAC address registered for this device"
    ),
    13: row(SCRIPT_HOST, 13, "AUTHENTICATED", IMG, "{{ lookup('pipe', 'id') }}", "\x1b[31mred\x1b[0m"),
}


def ansible(workdir, emulator, python, *args):
    env = dict(
        os.environ,
        NAC_API_URL=emulator.url,
        NAC_API_KEY=KEY,
        ANSIBLE_PYTHON_INTERPRETER=python,
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_NOCOLOR="true",
    )
    for name in ("NAC_USERNAME", "NAC_PASSWORD", "NAC_TENANT"):
        env.pop(name, None)
    done = subprocess.run(
        ["ansible-playbook"] + list(args),
        env=env,
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        check=False,
    )
    return done.returncode, done.stdout


def unsafe(value):
    return "[%s]" % ", ".join(unsafe(v) for v in value) if isinstance(value, list) else "!unsafe " + json.dumps(value)


def admin(emulator, hostname, **override):
    """Sets the 802.1x override of a device on the emulator (POST /_emulator/dot1x)."""
    body = json.dumps(dict(override, hostname=hostname)).encode("utf-8")
    request = urllib.request.Request(emulator.url + "/_emulator/dot1x", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=10) as reply:
        reply.read()


def recheck(workdir, emulator, python, report, hosts):
    """dot1x_report on an inventory of ``hosts`` ({id: host vars}) in nac_dot1x_unauthenticated."""
    inventory = os.path.join(workdir, "recheck.yml")
    with open(inventory, "w") as handle:
        hosts = dict(("device-%d" % number, dict(variables, nac_id=number)) for number, variables in hosts.items())
        json.dump(dict(all=dict(children=dict(nac_dot1x_unauthenticated=dict(hosts=hosts)))), handle)
    return ansible(
        workdir,
        emulator,
        python,
        "-i",
        inventory,
        "netaccess.nac.dot1x_report",
        "-e",
        "nac_wait_timeout=1",
        "-e",
        "nac_wait_interval=0.2",
        "-e",
        "nac_report_path=" + report,
    )


CAMERA = {"Group": "Cameras", "Profile": "Camera"}  # every device of the role's page, as listed
# The variables that the inventory gives two of dot1x_report's hosts (besides nac_id): their group, profile, MACs, IPs.
LISTED = {
    11: dict(nac_hostname="ok-01", nac_group="Cameras", nac_profile="Camera", nac_macs=["02:00:00:27:00:0b"]),
    17: dict(
        nac_hostname="nomac-01", nac_group="Printers", nac_profile="Printer", nac_ips=["10.20.0.117", "10.20.0.118"]
    ),
}


def write_reports(workdir, emulator, python):
    here = os.path.dirname(os.path.abspath(__file__))
    report = os.path.join(workdir, "report")
    devices = [dict(hostname=name, group="Cameras", profile="Camera") for name in ("ok-01", SCRIPT_HOST, SVG_HOST)]
    devices += [dict(hostname=BRACES_HOST, group="Cameras", profile="Camera", expected_status="<i>held</i>")]
    devices += [
        dict(hostname="new-%02d" % n, group="Cameras", profile="Camera", macs=["02:00:00:27:01:%02x" % n])
        for n in (1, 2)
    ]
    # Extra variables are templates: each string !unsafe (a JSON string is a YAML one), so that {{7*7}} is a name.
    variables = os.path.join(workdir, "onboard.yml")
    with open(variables, "w") as handle:
        handle.write("onboard_report: %s\nonboard_devices:\n" % json.dumps(report))
        for item in devices:
            handle.write("  - {%s}\n" % ", ".join("%s: %s" % (k, unsafe(v)) for k, v in item.items()))
    rc, output = ansible(
        workdir, emulator, python, "-i", "localhost,", os.path.join(here, "onboard.yml"), "-e", "@" + variables
    )
    expect(rc == 0, "the role ran against the hostile NAC and wrote its reports", output)
    for record in emulator.records():  # the ids of the devices it created
        if record["hostname"] in ONBOARDED and not ONBOARDED[record["hostname"]][1]:
            ONBOARDED[record["hostname"]][1] = str(record["id"])

    hosts = dict((number, LISTED.get(number, {})) for number in RECHECKED)
    rc, output = recheck(workdir, emulator, python, report, hosts)
    expect(rc == 2 and "did not reach AUTHENTICATED" in output, "dot1x_report ran, failing as it must", output)
    first = os.path.join(workdir, "dot1x_report-first.html")
    shutil.copy(os.path.join(report, "dot1x_report.html"), first)
    last = os.path.join(report, "dot1x_report.last.json")
    expect(stat.S_IMODE(os.lstat(last).st_mode) == 0o600, "dot1x_report's record is private: 0600")

    # Since the first run: ok-01 fails, the control-character device recovers, ok-02 is new, nomac-01 gone.
    admin(emulator, "ok-01", status="UNAUTHENTICATED", message="Certificate revoked")
    admin(emulator, CONTROL_HOST, status="AUTHENTICATED")
    hosts = dict((number, {}) for number in (11, 12, 13, 16))
    rc, output = recheck(workdir, emulator, python, report, hosts)
    expect(rc == 2, "dot1x_report ran a second time, on the changed statuses", output)
    second = os.path.join(workdir, "dot1x_report-second.html")
    shutil.copy(os.path.join(report, "dot1x_report.html"), second)

    # A symbolic link in the record's place is neither read nor written through: it is replaced by the record.
    target = os.path.join(workdir, "not-a-record.json")
    with open(target, "w") as handle:
        handle.write("untouched")
    os.remove(last)
    os.symlink(target, last)
    rc, output = recheck(workdir, emulator, python, report, hosts)
    with open(target) as handle:
        untouched = handle.read() == "untouched"
    with open(os.path.join(report, "dot1x_report.html")) as handle:
        compared = "Nothing to compare with" in handle.read()
    expect(
        rc == 2 and untouched and compared and not os.path.islink(last),
        "a symbolic link in the record's place is not followed: the page compares with nothing, the link's target"
        " is untouched, the record replaces the link",
        output,
    )
    return os.path.join(report, "device_onboarding.html"), first, second


def click(page, selector):
    """A real click (mouse events at the element's centre), as a person's."""
    box = page.js(
        "(function (e) { e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })(document.querySelector(%s))" % json.dumps(selector)
    )
    for kind in ("mousePressed", "mouseReleased"):
        page.call("Input.dispatchMouseEvent", dict(type=kind, x=box[0], y=box[1], button="left", clickCount=1))


def table(page, name="devices"):
    """The rows of a table as drawn (its current page), each a list of its cells' text."""
    return page.js(
        "Array.prototype.map.call(document.querySelectorAll('#%s tbody tr'), function (r) {"
        " return Array.prototype.map.call(r.cells, function (c) { return c.textContent; }); })" % name
    )


def columns(page, name="devices"):
    return page.js(
        "Array.prototype.map.call(document.querySelectorAll('#%s thead th'), function (h) { return h.textContent; })"
        % name
    )


def text_of(page, selector):
    return page.js("document.querySelector(%s).textContent" % json.dumps(selector))


def verdict_of(rows):
    """The verdict that rows (mark first) must give."""
    failed = sum(1 for r in rows if r[0] == "\u2717")
    waiting = sum(1 for r in rows if r[0] == "\u2026")
    if failed:
        detail = " (%d failed, %d still in progress)" % (failed, waiting) if waiting else ""
        return "FAILED: %d of %d not at their expected status%s" % (failed + waiting, len(rows), detail)
    if waiting:
        return "INCOMPLETE: %d of %d still in progress, none failed" % (waiting, len(rows))
    return "PASSED: all %d at their expected status" % len(rows)


def check_page(browser, path, title, expected, created, shots, listed=None):
    name = os.path.basename(path)
    page = browser.open(path)
    try:
        expect(page.problems() == [], "%s: loads with no request, error, warning or dialog" % name, page.problems())
        expect(page.js("document.title") == title, "%s: its title" % name)
        elements = page.js(
            "[Array.prototype.map.call(document.scripts, function (s) { return s.type; }),"
            " document.querySelectorAll('img,iframe,object,embed,link,base,form').length,"
            " Array.prototype.filter.call(document.querySelectorAll('*'), function (e) {"
            "  return Array.prototype.some.call(e.attributes, function (a) { return /^on/i.test(a.name); }); }).length,"
            " document.querySelectorAll('svg').length === document.querySelectorAll('#chart svg').length]"
        )
        expect(
            elements == [["application/json", ""], 0, 0, True],
            "%s: only its own script and its data, no element or handler of the NAC's" % name,
            elements,
        )
        heads = columns(page)
        drawn = table(page)
        rows = [cells[1:8] for cells in drawn]
        wanted = sorted(expected.values())
        expect(
            sorted(rows) == wanted,
            "%s: the table shows every device, each value exactly as text (%d rows)" % (name, len(rows)),
            "shown but not expected: %s\nexpected but not shown: %s"
            % (json.dumps([r for r in rows if r not in wanted]), json.dumps([w for w in wanted if w not in rows])),
        )
        if listed is not None:  # {column: {hostname: value}}: each row's value in each of these columns
            shown_fields = dict(
                (column, dict((cells[1], cells[heads.index(column)]) for cells in drawn if column in heads))
                for column in listed
            )
            wanted_fields = dict(
                (column, dict((cells[1], values.get(cells[1], "")) for cells in drawn))
                for column, values in listed.items()
            )
            expect(
                shown_fields == wanted_fields,
                "%s: the %s of each device, as the list gives them" % (name, ", ".join(listed)),
                shown_fields,
            )
        expect(
            text_of(page, "#verdict") == verdict_of(drawn),
            "%s: the verdict: %s" % (name, text_of(page, "#verdict")),
            verdict_of(drawn),
        )
        chart = page.js(
            "Array.prototype.map.call(document.querySelectorAll('#chart button'), function (b) {"
            " return [b.getAttribute('data-status'), b.querySelector('.label').textContent,"
            " Number(b.querySelector('.count').textContent)]; })"
        )
        by_status = collections.Counter(r[3] for r in rows)
        expect(
            dict((status, count) for status, _label, count in chart) == by_status
            and all(label == status for status, label, _count in chart),
            "%s: the chart's counts are the table's: %s" % (name, dict(by_status)),
            chart,
        )
        missed = [cells[1] for cells in table(page, "missed")]
        not_reached = [r[1] for r in drawn if r[0] != "\u2713"]
        expect(sorted(missed) == sorted(not_reached), "%s: lists what did not authenticate: %d" % (name, len(missed)))
        if created is not None:
            listed_names = page.js(
                "Array.prototype.map.call(document.querySelectorAll('#created li'),"
                " function (e) { return e.textContent; })"
            )
            expect(sorted(listed_names) == sorted(created), "%s: lists what this run created: %s" % (name, created))
        expect("127.0.0.1" in text_of(page, "header .nac"), "%s: names the NAC" % name)
        csv = page.js("document.querySelector('header a').getAttribute('href')")
        expect(
            csv == "./" + name.replace(".html", ".csv").replace("-first", "").replace("-second", ""),
            "%s: links to its CSV report: %s" % (name, csv),
        )
        check_sorting(page, name, rows)
        check_filters(page, name, rows, chart)
        if shots:
            shutil.copy(path, shots)
            page.screenshot(os.path.join(shots, name + ".png"))
        expect(
            page.problems() == [], "%s: after every click, still no request, error or dialog" % name, page.problems()
        )
    finally:
        page.close()


def check_sorting(page, name, rows):
    click(page, "#devices th:nth-child(3) button")  # Id
    ids = [r[2] for r in table(page)]
    numbers = sorted(int(i) for i in ids if i)
    expect(
        [int(i) for i in ids if i] == numbers and (ids[len(numbers) :] == [""] * (len(ids) - len(numbers))),
        "%s: a click on Id sorts by id, ascending (numerically)" % name,
        ids,
    )
    click(page, "#devices th:nth-child(3) button")
    expect([int(i) for i in [r[2] for r in table(page)] if i] == numbers[::-1], "%s: a second click, descending" % name)
    click(page, "#devices th:nth-child(2) button")  # Hostname
    hostnames = [r[1] for r in table(page)]
    collated = page.js(
        "%s.slice().sort(new Intl.Collator(undefined, {numeric: true, sensitivity: 'base'}).compare)"
        % json.dumps(hostnames)
    )
    expect(
        hostnames == collated
        and sorted(hostnames) == sorted(r[0] for r in rows)
        and page.js("document.querySelector('#devices th:nth-child(2)').getAttribute('aria-sort')") == "ascending",
        "%s: a click on Hostname sorts by hostname" % name,
        hostnames,
    )
    before = [r[1] for r in table(page, "missed")]
    click(page, "#missed th:nth-child(2) button")  # the other table sorts too, on its own
    after = [r[1] for r in table(page, "missed")]
    expect(
        sorted(after) == sorted(before)
        and after
        == page.js(
            "%s.slice().sort(new Intl.Collator(undefined, {numeric: true, sensitivity: 'base'}).compare)"
            % json.dumps(after)
        ),
        "%s: a click on Hostname of the table of those not at their expected status sorts it" % name,
        after,
    )


def choose(page, selector, value):
    page.js(
        "(function (s) { s.value = %s; s.dispatchEvent(new Event('change')); })(document.querySelector(%s))"
        % (json.dumps(value), json.dumps(selector))
    )


def check_filters(page, name, rows, chart):
    total = len(rows)
    page.js("document.getElementById('search').focus()")
    page.call("Input.insertText", dict(text="OK-0"))
    visible = table(page)
    wanted = [r for r in rows if "ok-0" in "".join(r).lower()]
    expect(
        sorted(r[1:8] for r in visible) == sorted(wanted) and 0 < len(visible) < total,
        "%s: typing 'OK-0' shows only the %d rows that contain it" % (name, len(wanted)),
        visible,
    )
    missed = table(page, "missed")
    expect(
        all("ok-0" in "".join(r).lower() for r in missed),
        "%s: and filters the table of those not at their expected status too (%d rows)" % (name, len(missed)),
        missed,
    )
    expect(
        text_of(page, "#shown") == "%d of %d devices shown" % (len(wanted), total),
        "%s: and says how many it shows" % name,
    )
    click(page, "#show-all")
    status, _label, count = chart[-1]
    click(page, "#chart button:nth-child(%d)" % len(chart))
    visible = table(page)
    expect(
        len(visible) == count and all(r[4] == status for r in visible),
        "%s: a click on the bar %r shows only its %d devices" % (name, status, count),
        visible,
    )
    click(page, "#chart button:nth-child(%d)" % len(chart))
    expect(len(table(page)) == total, "%s: a second click shows all again" % name)
    choose(page, "#outcome", "missed")
    visible = table(page)
    expect(
        len(visible) == len(table(page, "missed")) and all(r[0] != "\u2713" for r in visible),
        "%s: the outcome 'not at their expected status' shows those %d" % (name, len(visible)),
    )
    click(page, "#show-all")


def check_changes(browser, path, shots):
    """The second report of dot1x_report: what changed since the first, and the filter by a kind of change."""
    name = os.path.basename(path)
    page = browser.open(path)
    try:
        kinds = page.js(
            "Array.prototype.map.call(document.querySelectorAll('#changes button'), function (b) {"
            " return [b.getAttribute('data-change'), Number(b.querySelector('b').textContent)]; })"
        )
        expect(
            kinds == [["newly failing", 1], ["recovered", 1], ["new", 1]],
            "%s: since the first report, 1 newly failing, 1 recovered, 1 new" % name,
            kinds,
        )
        gone = page.js(
            "Array.prototype.map.call(document.querySelectorAll('#changes li'), function (e) { return e.textContent; })"
        )
        expect(gone == ["nomac-01"], "%s: and names the device no longer in the report: %s" % (name, gone))
        since = dict((cells[1], cells[-1]) for cells in table(page))
        expect(
            since == {"ok-01": "newly failing", shown(CONTROL_HOST): "recovered", "ok-02": "new", SCRIPT_HOST: ""},
            "%s: each device's change in the table" % name,
            since,
        )
        click(page, "#changes button[data-change='newly failing']")
        expect(
            [r[1] for r in table(page)] == ["ok-01"] and [r[1] for r in table(page, "missed")] == ["ok-01"],
            "%s: a click on 'newly failing' shows only ok-01, in both tables" % name,
            table(page),
        )
        if shots:
            shutil.copy(path, shots)
            page.screenshot(os.path.join(shots, name + ".png"))
        expect(page.problems() == [], "%s: no request, error or dialog" % name, page.problems())
    finally:
        page.close()


def fleet(count, seed=0):
    """Results and listed records of ``count`` devices: in every 28, 6 at their expected status, 4 still
    connecting and 18 failed (FAILED: 22 of 28), with groups, profiles, MACs and IPs."""
    results, devices = [], []
    for number in range(1, count + 1):
        kind = (number + seed) % 28
        status = "AUTHENTICATED" if kind < 6 else "CONNECTING" if kind < 10 else "UNAUTHENTICATED"
        message = None if kind < 10 else "No MAC address registered" if kind % 2 else "EAP-TLS: certificate rejected"
        results.append(
            dict(
                id=number,
                hostname="dev-%06d" % number,
                expected_status="AUTHENTICATED",
                status=status,
                auth_method="EAP-TLS" if kind < 6 else None,
                username=None,
                message=message,
            )
        )
        devices.append(
            dict(
                id=number,
                hostname="dev-%06d" % number,
                group=["Cameras", "Printers", "Phones"][number % 3],
                profile=dict(name=["Camera", "Printer", "Phone"][number % 3]),
                macs=["02:00:%02x:%02x:%02x:01" % (number >> 16, (number >> 8) & 255, number & 255)],
                ips=["10.%d.%d.%d" % (number >> 16, (number >> 8) & 255, number & 255)],
            )
        )
    return results, devices


def check_fleet(browser, workdir, count, shots):
    """A page of ``count`` devices, with the record of a previous report (another mix): the load time, the first
    page of each table, the last page, the header that stays, a filter and a sort over every row."""
    results, devices = fleet(count)
    previous = base64.b64encode(report_record(fleet(count - 3, seed=5)[0], generated_at="earlier").encode()).decode()
    started = time.perf_counter()
    source = report_page(
        results,
        title="802.1x status of %d devices" % count,
        nac="https://nac.example.com",
        devices=devices,
        context={
            "AWX job": "4711 onboard cameras",
            "Playbook": "onboard.yml",
            "Duration": "95 s",
            "Wait timeout": "300 s",
        },
        csv="device_onboarding_4711.csv",
        previous=previous,
    )
    made = time.perf_counter() - started
    path = os.path.join(workdir, "fleet-%d.html" % count)
    with open(path, "w") as handle:
        handle.write(source)
    started = time.perf_counter()
    page = browser.open(path)
    loaded = time.perf_counter() - started
    name = "%d devices" % count
    try:
        print(
            "ok - %s: page of %.1f MB made in %.2f s, loaded in headless Chromium in %.2f s"
            % (name, len(source) / 1e6, made, loaded)
        )
        expect(page.problems() == [], "%s: loads with no request, error, warning or dialog" % name, page.problems())
        waiting = sum(1 for n in range(1, count + 1) if 6 <= n % 28 < 10)
        failed = sum(1 for n in range(1, count + 1) if n % 28 >= 10)
        sentence = "FAILED: %d of %d not at their expected status (%d failed, %d still in progress)" % (
            failed + waiting,
            count,
            failed,
            waiting,
        )
        expect(text_of(page, "#verdict") == sentence, "%s: %s" % (name, sentence), text_of(page, "#verdict"))
        size = min(count, 100)
        expect(
            len(table(page)) == size
            and text_of(page, "#devices-pager .where") == "rows 1\u2013%d of %d" % (size, count),
            "%s: the first page of all devices: %d rows" % (name, size),
            text_of(page, "#devices-pager .where"),
        )
        if shots:
            shutil.copy(path, shots)
            page.screenshot(os.path.join(shots, "fleet-%d.png" % count))
        click(page, "#devices-pager button[data-go=last]")
        last = table(page)
        expect(
            last[-1][1] == "dev-%06d" % count and text_of(page, "#devices-pager .where").endswith("of %d" % count),
            "%s: the last page ends with the last device" % name,
        )
        started = time.perf_counter()
        click(page, "#devices th:nth-child(2) button")
        click(page, "#devices th:nth-child(2) button")
        sorted_in = time.perf_counter() - started
        expect(
            table(page)[0][1] == "dev-%06d" % count,
            "%s: two clicks on Hostname sort every row, descending (%.2f s)" % (name, sorted_in),
        )
        started = time.perf_counter()
        page.js("document.getElementById('search').focus()")
        page.call("Input.insertText", dict(text="dev-000028"))
        filtered_in = time.perf_counter() - started
        expect(
            [r[1] for r in table(page)] == ["dev-000028"] and [r[1] for r in table(page, "missed")] == [],
            "%s: a filter over every row, both tables (%.2f s)" % (name, filtered_in),
            table(page),
        )
        click(page, "#show-all")
        # The header stays at the top of its table's scrolled box.
        heads = page.js(
            "(function () { var box = document.querySelector('#devices').parentNode; box.scrollIntoView();"
            " box.scrollTop = 1500; var head = document.querySelector('#devices th');"
            " return [box.scrollTop,"
            " Math.round(head.getBoundingClientRect().top - box.getBoundingClientRect().top)]; })()"
        )
        expect(heads[0] > 0 and abs(heads[1]) <= 1, "%s: the header stays in view as the rows scroll" % name, heads)
        expect(page.problems() == [], "%s: after every click, no request, error or dialog" % name, page.problems())
    finally:
        page.close()


def problems_of(browser, path, source):
    """What the browser sees ``source`` do, written to ``path`` and opened."""
    with open(path, "w") as handle:
        handle.write(source)
    page = browser.open(path)
    try:
        return page.problems()
    finally:
        page.close()


def check_the_checks(browser, workdir, good_page):
    """Pages that break the rules must be caught: a raw value that loads an image and runs a script, and a page
    whose script was changed (its hash no longer allowed)."""
    with open(good_page) as handle:
        good = handle.read()
    broken = os.path.join(workdir, "broken.html")
    found = problems_of(
        browser, broken, good.replace("<main>", '<main><img src="http://leak.invalid/x.png" onerror="alert(1)">', 1)
    )
    expect(
        any("leak.invalid" in p and p.startswith("request") for p in found) and any("violation" in p for p in found),
        "the check sees a request and a policy violation of a page with a raw value",
        found,
    )
    unguarded = good.replace("Content-Security-Policy", "X-Nothing", 1)
    found = problems_of(browser, broken, unguarded.replace("<main>", '<main><img src="http://leak.invalid/x.png">', 1))
    expect(
        any(p.startswith("request blocked: GET http://leak.invalid/") for p in found),
        "without the policy, the page's request is caught and blocked before it leaves, not sent to the network",
        found,
    )
    found = problems_of(browser, broken, good.replace('"use strict";', '"use strict"; alert(1);', 1))
    expect(
        any("violation" in p for p in found) and not any(p.startswith("dialog") for p in found),
        "a changed script is refused by the policy",
        found,
    )


def main():
    python = sys.argv[1]
    workdir = tempfile.mkdtemp(prefix="nac-html-report-")
    shots = os.environ.get("NAC_HTML_REPORT_SHOTS")
    try:
        with Emulator(config=CONFIG).start() as emulator:
            onboarding, first, second = write_reports(workdir, emulator, python)
        with cdp.Browser(timeout=120) as browser:
            print("ok - %s, headless" % browser.version)
            check_the_checks(browser, workdir, onboarding)
            listed = dict(
                (column, dict((shown(host), value) for host in ONBOARDED)) for column, value in CAMERA.items()
            )
            check_page(
                browser, onboarding, "802.1x status after onboarding", ONBOARDED, ["new-01", "new-02"], shots, listed
            )
            listed = {
                "Group": {"ok-01": "Cameras", "nomac-01": "Printers"},
                "Profile": {"ok-01": "Camera", "nomac-01": "Printer"},
                "MACs": {"ok-01": "02:00:00:27:00:0b"},
                "IPs": {"nomac-01": "10.20.0.117, 10.20.0.118"},
            }
            check_page(browser, first, "802.1x re-check", RECHECKED, None, shots, listed)
            check_changes(browser, second, shots)
            # The short form (NAC_TEST_FORM, from runme.sh) leaves out the large page: the browser's work, not ours.
            for count in (28,) if os.environ.get("NAC_TEST_FORM") == "short" else (28, 20000):
                check_fleet(browser, workdir, count, shots)
    except (Failed, cdp.BrowserError) as failure:
        print("FAILED - %s" % failure)
        return 1
    finally:
        shutil.rmtree(workdir, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
