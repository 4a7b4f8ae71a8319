# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML reports of the role device_onboarding and of playbooks/dot1x_report.yml, written from an emulator of
this target's own whose values are hostile in every field the page shows, then opened in headless Chromium
(cdp.py): the page renders without an error, sends no request and runs nothing of the NAC's; the counts of the
chart are the table's; each value is shown as text, exactly; sorting by a column orders the rows, a filter hides
the others. Two broken pages first prove that the checks see a request, a script and a policy violation.
Usage: html_report_check.py PYTHON [ansible-test args, ignored]. With NAC_HTML_REPORT_SHOTS=DIR, the pages and
full-page screenshots are kept in DIR."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

import cdp

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)

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

    inventory = os.path.join(workdir, "recheck.yml")
    with open(inventory, "w") as handle:
        hosts = dict(("device-%d" % number, dict(nac_id=number)) for number in RECHECKED)
        json.dump(dict(all=dict(children=dict(nac_dot1x_unauthenticated=dict(hosts=hosts)))), handle)
    rc, output = ansible(
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
    expect(rc == 2 and "did not reach AUTHENTICATED" in output, "dot1x_report ran, failing as it must", output)
    return os.path.join(report, "device_onboarding.html"), os.path.join(report, "dot1x_report.html")


def click(page, selector):
    """A real click (mouse events at the element's centre), as a person's."""
    box = page.js(
        "(function (e) { e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })(document.querySelector(%s))" % json.dumps(selector)
    )
    for kind in ("mousePressed", "mouseReleased"):
        page.call("Input.dispatchMouseEvent", dict(type=kind, x=box[0], y=box[1], button="left", clickCount=1))


def table(page, visible_only=True):
    return page.js(
        "Array.prototype.filter.call(document.querySelectorAll('#devices tbody tr'), function (r) { return %s; })"
        ".map(function (r) { return Array.prototype.map.call(r.cells, function (c) { return c.textContent; }); })"
        % ("!r.hidden" if visible_only else "true")
    )


def check_page(browser, path, title, expected, created, shots):
    name = os.path.basename(path)
    page = browser.open(path)
    try:
        expect(page.problems() == [], "%s: loads with no request, error, warning or dialog" % name, page.problems())
        expect(page.js("document.title") == title, "%s: its title" % name)
        elements = page.js(
            "[document.scripts.length, document.querySelectorAll('img,iframe,object,embed,link,base,form').length,"
            " Array.prototype.filter.call(document.querySelectorAll('*'), function (e) {"
            "  return Array.prototype.some.call(e.attributes, function (a) { return /^on/i.test(a.name); }); }).length,"
            " document.querySelectorAll('svg').length === document.querySelectorAll('#chart svg').length]"
        )
        expect(
            elements == [1, 0, 0, True], "%s: only its own script, no element or handler of the NAC's" % name, elements
        )

        rows = [cells[1:] for cells in table(page)]
        wanted = sorted(expected.values())
        expect(
            sorted(rows) == wanted,
            "%s: the table shows every device, each value exactly as text (%d rows)" % (name, len(rows)),
            "shown but not expected: %s\nexpected but not shown: %s"
            % (json.dumps([r for r in rows if r not in wanted]), json.dumps([w for w in wanted if w not in rows])),
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
        missed = page.js(
            "Array.prototype.map.call(document.querySelectorAll('#missed tbody tr'), function (r) {"
            " return r.cells[0].textContent; })"
        )
        not_reached = [r[0] for r in rows if r[3].lower() != r[2].lower() or not r[1]]
        expect(sorted(missed) == sorted(not_reached), "%s: lists what did not authenticate: %d" % (name, len(missed)))
        if created is not None:
            listed = page.js(
                "Array.prototype.map.call(document.querySelectorAll('#created li'),"
                " function (e) { return e.textContent; })"
            )
            expect(sorted(listed) == sorted(created), "%s: lists what this run created: %s" % (name, listed))
        expect("127.0.0.1" in page.js("document.querySelector('header .nac').textContent"), "%s: names the NAC" % name)

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


def check_filters(page, name, rows, chart):
    total = len(rows)
    page.js("document.getElementById('search').focus()")
    page.call("Input.insertText", dict(text="OK-0"))
    visible = table(page)
    wanted = [r for r in rows if "ok-0" in "".join(r).lower()]
    expect(
        sorted(r[1:] for r in visible) == sorted(wanted) and 0 < len(visible) < total,
        "%s: typing 'OK-0' shows only the %d rows that contain it" % (name, len(wanted)),
        visible,
    )
    expect(
        page.js("document.getElementById('shown').textContent") == "%d of %d devices shown" % (len(wanted), total),
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
    click(page, "#missed-only")
    visible = table(page)
    expect(
        len(visible) == page.js("document.querySelectorAll('#missed tbody tr').length")
        and all(r[0] == "\u2717" for r in visible),
        "%s: 'only those not at their expected status' shows those %d" % (name, len(visible)),
    )
    click(page, "#show-all")


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
        any(p.startswith("request through the proxy: GET http://leak.invalid/") for p in found),
        "without the policy, the request reaches the recording proxy, not the network",
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
            onboarding, recheck = write_reports(workdir, emulator, python)
        with cdp.Browser() as browser:
            print("ok - %s, headless" % browser.version)
            check_the_checks(browser, workdir, onboarding)
            check_page(browser, onboarding, "802.1x status after onboarding", ONBOARDED, ["new-01", "new-02"], shots)
            check_page(browser, recheck, "802.1x re-check", RECHECKED, None, shots)
    except (Failed, cdp.BrowserError) as failure:
        print("FAILED - %s" % failure)
        return 1
    finally:
        shutil.rmtree(workdir, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
