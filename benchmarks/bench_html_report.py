#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the HTML report (issues 27, 35) for fleets of N devices (1,000 and 20,000 by default), one device in
ten not authenticated: the time the filter netaccess.nac.html_report takes to make the page and its size, then in
headless Chromium (tests/integration/targets/html_report/cdp.py) the time to load it, to sort by hostname, and to
filter by words (a few rows left, then all again). The code measured is the installed copy's (make build; its
collections path in ANSIBLE_COLLECTIONS_PATH, as make bench sets it). Each figure is the median of --repeat runs.
It prints the figures only: no target, no exit status for speed (the page in a browser is tested by the
integration target html_report).

    ANSIBLE_COLLECTIONS_PATH=<make build's path> .venv/bin/python benchmarks/bench_html_report.py \
        [--devices 1000 20000] [--repeat 3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "targets", "html_report"))
# The filter's code as built and installed (make bench: ANSIBLE_COLLECTIONS_PATH is the staged copy).
for entry in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if entry and entry not in sys.path:
        sys.path.append(entry)

import cdp  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import page  # noqa: E402  pylint: disable=wrong-import-position

SEARCH = "var s = document.getElementById('search'); s.value = %r; s.dispatchEvent(new Event('input'));"
LAYOUT = " document.body.offsetHeight"  # the time includes the layout that the change causes


def fleet(count):
    return [
        dict(
            id=number,
            hostname="dev-%06d" % number,
            expected_status="AUTHENTICATED",
            status="AUTHENTICATED" if number % 10 else "UNAUTHENTICATED",
            auth_method="EAP-TLS" if number % 10 else None,
            username="dev-%06d" % number if number % 10 else None,
            message=None if number % 10 else "No MAC address registered for this device",
        )
        for number in range(1, count + 1)
    ]


def timed(action):
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure(browser, path, results):
    figures = {}
    figures["make"] = timed(lambda: figures.update(text=page(results, nac="https://nac.example.com")))
    with open(path, "w") as handle:
        handle.write(figures.pop("text"))
    opened = []
    figures["load"] = timed(lambda: opened.append(browser.open(path)))
    tab = opened[0]
    try:
        figures["sort"] = timed(
            lambda: tab.js("document.querySelector('#devices th:nth-child(2) button').click();" + LAYOUT)
        )
        figures["filter"] = timed(lambda: tab.js(SEARCH % "dev-00099" + LAYOUT))
        figures["unfilter"] = timed(lambda: tab.js(SEARCH % "" + LAYOUT))
        problems = tab.problems()
        if problems:
            raise SystemExit("the page did what it must not: %s" % problems)
    finally:
        tab.close()
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[1000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="nac-bench-html-")
    try:
        with cdp.Browser(timeout=300) as browser:
            print("html_report: %s, headless; median of %d runs" % (browser.version, args.repeat))
            for count in args.devices:
                path = os.path.join(workdir, "report-%d.html" % count)
                runs = [measure(browser, path, fleet(count)) for _ in range(args.repeat)]
                median = dict((key, statistics.median(run[key] for run in runs)) for key in runs[0])
                print(
                    "  %6d devices: page %.1f MB made in %.2f s; in Chromium: load %.2f s, sort by hostname %.2f s, "
                    "filter to 10 rows %.2f s, all again %.2f s"
                    % (
                        count,
                        os.path.getsize(path) / 1e6,
                        median["make"],
                        median["load"],
                        median["sort"],
                        median["filter"],
                        median["unfilter"],
                    )
                )
    finally:
        shutil.rmtree(workdir, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
