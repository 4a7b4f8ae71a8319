#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Soak the modules through faults and through the server variants the API guide leaves "not shown".

Every scenario starts its own NAC API emulator in this process (tests/emulator/README.md) and drives the
real modules through ``ansible-playbook``, as a user runs them (the collection of this checkout). Then it
reads the truth from the emulator (its whole record list, never paginated nor padded) and judges every
report against it. It prints what it saw, one table row per scenario (devices requested, devices in
place, duplicates created, false reports, status results with a status, wall time), PASS/FAIL per target,
and exits non-zero when a target is missed.

Scenarios (``--scenarios`` picks some, comma-separated; default all):

- ``faults``: a bulk nac_device of N devices, an all-devices nac_dot1x_status and the rerun, through
  20 % injected faults (500, 502, 503, 429, reset, commit_drop, commit_500, slow; duplicate hostnames
  allowed, so that a creation sent twice shows); requests beyond the minimum are shown too.
- ``paginated`` (issue 16, point 1): a server that pages its lists by 100 with RFC 8288 Link headers and
  150 devices: nac_device_info, nac_dot1x_status all_devices, a bulk ensure of the 150 existing and a
  single ensure of a device on page 2, twice.
- ``page-signs`` (point 1): the 150 existing ensured in bulk against each other way a page may say there
  is more (relative Link, X-Total-Count only, Content-Range, a body with "next", a Link loop, a Link to
  another host): either the complete list is read (no duplicate), or the task fails loudly before any
  POST with a message naming the sign; the other host never sees a request.
- ``lookalike`` (point 2): names that match only by a looser rule than "NFC, ASCII without case" (RFC
  4343): strasse-01 listed and straße-01 requested, CAFÉ-02 listed and café-02 requested; and names that
  are the same by that rule: NFD café-01 requested with NFC café-01 listed, Kiosk-01 written with U+212A
  KELVIN SIGN (canonically equivalent to K) with Kiosk-01 listed. nac_device, nac_device_info and
  nac_dot1x_status by hostname. A listed lookalike must be named (with its id) in the result.
- ``duplicate-ids`` (point 3): two records sharing an id: nac_device_info must flag it (a warning naming
  the id and both hostnames), a status query of the two hostnames must return both.
- ``two-controllers`` (point 4): two ansible-playbook processes ensure the same 200 hostnames at once
  (the first list of each is held until both asked for it, so both read it before either writes;
  duplicates allowed, creations answered with an empty body, 10 % faults on the POSTs): duplicates
  cannot be prevented without a server-side key and are only counted; a report must not contradict the list
  the two runs left, nor itself ("did not show" in an item's error while a warning of the same result says the
  list shows it twice). A task whose first creation the list shows twice (the other controller's too) stops
  there, saying so; the next run, alone and without faults, must leave all 200 in place.
- ``late-commit`` (point 5): timeout 5 s, every first POST loses its reply and commits 20 s later; then
  the next run: devices in place, duplicates, and reports that said clean success while a duplicate
  appeared.
- ``restart`` (point 6): connections refused for 30 s in the middle of a 200-device bulk, and in the
  middle of a 200-device all_devices status batch (default client settings).
- ``capped-list``, ``racing-client``, ``normalised-name``, ``lagging-replica``, ``redirect-commit``,
  ``shifting-pages`` (issue 25, servers that confirm nothing): harness/soak_servers.py.

What counts as a false report (a result or message that contradicts what the server's final list
shows; names compared by the rule above): an item with no report; an item reported created/existing
with an id that is not a device of its name; an item reported failed although its device exists
exactly once, without the report saying the outcome is unknown; a name the final list shows more than
once, whose report (item or result warnings) does not name every id (in two-controllers only when the
item failed: a clean creation cannot know of the other controller's later one); an item error saying
the list "did not show" it while the same result says the list shows it; a device_info or status result
that returns another device for a requested name, drops a requested name, or a partial list without
failing; device_info not flagging a repeated id.

    .venv/bin/python benchmarks/soak_faults.py [--scenarios faults,paginated,...] [--devices 500]
        [--rate 0.2] [--seed 8] [--timeout 2] [--slow SECONDS] [--latency 0.01] [--list]
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import os
import sys
import tempfile
import time

from harness.soak import Runner
from harness.soak_crowds import scenario_restart, scenario_two_controllers
from harness.soak_lists import scenario_duplicate_ids, scenario_lookalike, scenario_page_signs, scenario_paginated
from harness.soak_servers import SERVER_SCENARIOS
from harness.soak_writes import scenario_faults, scenario_late_commit

SCENARIOS = collections.OrderedDict(
    (
        ("faults", scenario_faults),
        ("paginated", scenario_paginated),
        ("page-signs", scenario_page_signs),
        ("lookalike", scenario_lookalike),
        ("duplicate-ids", scenario_duplicate_ids),
        ("two-controllers", scenario_two_controllers),
        ("late-commit", scenario_late_commit),
        ("restart", scenario_restart),
    )
)


# house: long because its argument table and the runs in the order they print
def main():
    SCENARIOS.update(SERVER_SCENARIOS)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scenarios", default="all", help="comma-separated scenarios to run (default all: %s)" % ", ".join(SCENARIOS)
    )
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--devices", type=int, default=500, help="devices of the faults scenario (default 500)")
    parser.add_argument(
        "--rate", type=float, default=0.2, help="faults scenario: share of /api requests that get a fault (default 0.2)"
    )
    parser.add_argument(
        "--seed", type=int, default=8, help="faults scenario: seed of the emulator's fault generator (default 8)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        help="faults scenario: the client's timeout in seconds (default 2; collection default 30)",
    )
    parser.add_argument(
        "--slow", type=float, help="faults scenario: seconds the emulator holds a slow request (default 1.5 x timeout)"
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.01,
        help="faults scenario: seconds the emulator adds to every /api request (default 0.01)",
    )
    args = parser.parse_args()
    if args.list:
        for name, function in SCENARIOS.items():
            print("%-16s %s" % (name, (function.__doc__ or "").strip().split("\n")[0]))
        return 0
    names = (
        list(SCENARIOS)
        if args.scenarios == "all"
        else [name.strip() for name in args.scenarios.split(",") if name.strip()]
    )
    unknown = [name for name in names if name not in SCENARIOS]
    if unknown or not names:
        parser.error("unknown scenario(s) %s; known: %s" % (", ".join(unknown) or "(none given)", ", ".join(SCENARIOS)))
    if args.slow is None:
        args.slow = 1.5 * args.timeout
    print("soak: scenarios %s; %s cores" % (", ".join(names), os.cpu_count()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="soak-faults-") as workdir:
        runner = Runner(workdir)
        for name in names:
            print("\n== %s" % name)
            started = time.monotonic()
            row = SCENARIOS[name](args, runner)
            for label, value, passed in row.targets:
                print("  %s  %-58s %s" % ("PASS" if passed else "FAIL", label + ":", value))
            print("  scenario %s: %s (%.0f s)" % (name, "PASS" if row.passed else "FAIL", time.monotonic() - started))
            rows.append(row)
    print(
        "\n%-16s %9s %9s %10s %8s %10s %8s  %s"
        % ("scenario", "requested", "in place", "duplicates", "false", "statuses", "wall s", "result")
    )
    for row in rows:
        failed = [label for label, _value, passed in row.targets if not passed]
        print(
            "%-16s %9d %9d %10d %8d %10s %8.1f  %s"
            % (
                row.name,
                row.requested,
                row.in_place,
                row.duplicates,
                row.false,
                row.statuses,
                row.seconds,
                "PASS" if row.passed else "FAIL: " + "; ".join(failed),
            )
        )
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
