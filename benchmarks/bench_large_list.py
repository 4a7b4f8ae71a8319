#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure the modules on a large network (issue 16, "Bounded replies and large networks").

Against the NAC API emulator in a process of its own with N bulk-seeded devices (``--seed-devices``,
200,000 by default), in the same run:

- the size of the device list (bytes of ``GET /api/device``);
- a bare client: a fresh Python process that lists the devices with ``requests`` (one GET, ``.json()``),
  finds the one hostname and fires the dot1x_status intent once; its wall time from the GET to the
  fire's reply (interpreter start-up and imports not counted) and its peak RSS;
- ``nac_device_info`` (every device) and ``nac_dot1x_status`` (``hostname: [one]``) under ansible-playbook, and the
  start-up of a module process (the same module failing on its arguments, before any request):
  the module's own process (a ``sitecustomize`` on PYTHONPATH, harness/rusage.py, records its lifetime, CPU
  time, peak RSS ``ru_maxrss`` and its RSS just before its first request), and the whole ansible-playbook run
  (controller included);
- with ``--huge-bytes`` (default 1,100,000,000): the device list padded to that many more bytes, sent with a
  Content-Length and then chunked; ``nac_device_info`` must fail naming the reply size limit
  (``max_reply_mb``), its peak RSS far below the reply's size.

Targets (printed PASS/FAIL, never the exit status): the status of one hostname <= 1.5x the bare client's
wall time (the module process's lifetime against the bare client's list + fire; and without the module's
start-up), peak RSS <= 3x the list's size (for the bare client and both modules: the whole process's peak, and
the peak less the RSS just before the first request), the huge reply refused with a message naming the limit.

    .venv/bin/python benchmarks/bench_large_list.py [--devices 200000] [--repeat 3]
        [--huge-bytes 1100000000] [--hostname bulk-100000] [--no-info]
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import requests
from harness.emulator import EmulatorProcess
from harness.module import ModuleProcess, play
from harness.paths import ADMIN_KEY, collections_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = 1024.0 * 1024.0

# The bare client, in a process of its own (its peak RSS is its own): list, find, fire.
BARE = r"""
import json, os, resource, sys, time
import requests
url, key, hostname = sys.argv[1:]
session = requests.Session()
session.headers.update({"Authorization": "Bearer " + key, "Accept": "application/json"})
with open("/proc/self/statm") as handle:
    before = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
start = time.perf_counter()
reply = session.get(url + "/api/device", timeout=300)
reply.raise_for_status()
ids = [record["id"] for record in reply.json() if record["hostname"].lower() == hostname.lower()]
body = {"targetId": ids[0], "additionalPayload": {"json": True}}
fired = session.post(url + "/api/intent/dot1x_status/fire", json=body, timeout=30)
fired.raise_for_status()
wall = time.perf_counter() - start
print(json.dumps(dict(wall=wall, rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, rss_before=before,
                      status=fired.json().get("status"))))
"""


class Playbooks(ModuleProcess):
    """ansible-playbook -c local, each module process's lifetime, CPU and peak RSS logged by a sitecustomize
    (harness.module.ModuleProcess), with the task's message kept when it is expected to fail."""

    def run(self, module, arguments, expect_failure=False):
        """{wall, cpu, rss} of the module's process, the playbook's whole wall time, and the task's msg."""
        for path in (self.log, os.path.join(self.workdir, "msg.txt")):
            if os.path.exists(path):
                os.remove(path)
        task = {"netaccess.nac.%s" % module: arguments, "register": "result", "ignore_errors": expect_failure}
        tasks = [task]
        if expect_failure:  # the message, kept for the report
            tasks.append({"ansible.builtin.copy": dict(content="{{ result.msg | default('') }}", dest="msg.txt")})
            tasks.append({"ansible.builtin.assert": dict(that=["result is failed"])})
        playbook = os.path.join(self.workdir, "play.yml")
        with open(playbook, "w") as handle:
            json.dump([dict(hosts="localhost", gather_facts=False, tasks=tasks)], handle)
        whole = play(self.command + [playbook], self.env, self.workdir)
        mine = self._logged("AnsiballZ_%s.py" % module)
        message = None
        if expect_failure:
            with open(os.path.join(self.workdir, "msg.txt")) as handle:
                message = handle.read()
        return dict(mine, whole=whole, msg=message)


def bare(url, hostname):
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", BARE, url, ADMIN_KEY, hostname],
        stdout=subprocess.PIPE,
        universal_newlines=True,
        check=True,
    )
    return dict(json.loads(done.stdout), whole=time.perf_counter() - start)  # whole: the process's lifetime


def median(values):
    return statistics.median(values)


def spread(values, form):
    return (form + " [" + form + "-" + form + "]") % (median(values), min(values), max(values))


def verdict(passed):
    return "PASS" if passed else "FAIL"


def list_bytes(emulator):
    """The device list's size in bytes, read a MiB at a time: held whole here, it would stay in this process's peak
    RSS, which Linux reports as the least peak of every process started after it (the figures of the runs)."""
    reply = requests.get(emulator.url + "/api/device", headers={"Authorization": "Bearer " + ADMIN_KEY}, stream=True)
    with reply:
        reply.raise_for_status()
        return sum(len(chunk) for chunk in reply.iter_content(1 << 20))


# house: long because one table: its sides in turns, then its rows, ratios and targets
def measure(emulator, playbooks, args):
    connection = dict(api_url=emulator.url, api_key=ADMIN_KEY)
    size = list_bytes(emulator)
    print("device list: %d devices, %d bytes (%.1f MiB)" % (args.devices + 5, size, size / MB))
    sides = dict(bare=[], info=[], status=[], startup=[])
    for index in range(args.repeat):
        turn = [
            ("bare", lambda: bare(emulator.url, args.hostname)),
            ("info", lambda: playbooks.run("nac_device_info", connection)),
            ("status", lambda: playbooks.run("nac_dot1x_status", dict(connection, hostname=[args.hostname]))),
        ]
        turn = [side for side in turn if args.info or side[0] != "info"]
        turn = turn[index % 3 :] + turn[: index % 3]  # who goes first rotates
        # The fixed cost of a module task: the same module failing on its arguments, before any request.
        turn.append(("startup", lambda: playbooks.run("nac_dot1x_status", dict(connection, hostname=[""]), True)))
        for name, run in turn:
            sides[name].append(run())
        print(
            "  run %d: %s"
            % (
                index + 1,
                " | ".join(
                    "%s %.2f s, %.0f MiB" % (name, sides[name][-1]["wall"], sides[name][-1]["rss"] / MB)
                    for name in ("bare", "info", "status")
                    if sides[name]
                ),
            )
        )
    print("median [min-max] of %d runs" % args.repeat)
    print("  %-52s %-22s %-22s %-22s %s" % ("", "wall s", "CPU s", "peak RSS MiB", "ansible-playbook s"))
    labels = (
        ("bare", "bare requests: list + find + one fire (own process)"),
        ("info", "nac_device_info, every device (module process)"),
        ("status", "nac_dot1x_status, one hostname (module process)"),
    )
    labels = tuple(label for label in labels if sides[label[0]])
    for name, label in labels:
        runs = sides[name]
        print(
            "  %-52s %-22s %-22s %-22s %s"
            % (
                label,
                spread([r["wall"] for r in runs], "%.2f"),
                spread([r["cpu"] for r in runs], "%.2f") if name != "bare" else "-",
                spread([r["rss"] / MB for r in runs], "%.0f"),
                spread([r["whole"] for r in runs], "%.2f")
                if name != "bare"
                else "(process: %s)" % spread([r["whole"] for r in runs], "%.2f"),
            )
        )
    startup = [r["wall"] for r in sides["startup"]]
    print(
        "  %-52s %-22s (interpreter, AnsiballZ, imports, arguments: the same module failing before any request)"
        % ("start-up of a module process", spread(startup, "%.2f"))
    )
    ratio = [s["wall"] / b["wall"] for s, b in zip(sides["status"], sides["bare"])]
    print(
        "  status of one hostname / bare, run by run: %sx (target <= 1.5x: %s)"
        % (spread(ratio, "%.2f"), verdict(median(ratio) <= 1.5))
    )
    whole = [s["wall"] / b["whole"] for s, b in zip(sides["status"], sides["bare"])]
    print(
        "  status of one hostname / the bare client's whole process (its start-up and imports counted too): %sx"
        % spread(whole, "%.2f")
    )
    work = [(s["wall"] - u) / b["wall"] for s, b, u in zip(sides["status"], sides["bare"], startup)]
    print(
        "  the same without the module's start-up (the bare client's is not counted either): %sx (target <= 1.5x: %s)"
        % (spread(work, "%.2f"), verdict(median(work) <= 1.5))
    )
    print("  peak RSS / list size (target <= 3x): of the whole process, and what it added after its first request:")
    for name in [name for name, _label in labels]:
        rss = median([r["rss"] for r in sides[name]])
        added = median([r["rss"] - r["rss_before"] for r in sides[name]])
        before = median([r["rss_before"] for r in sides[name]])
        print(
            "    %-34s whole %.2fx (%s); added %.2fx (%s); RSS before the first request %.0f MiB"
            % (
                dict(labels)[name].split(",")[0].split(":")[0],
                rss / size,
                verdict(rss <= 3 * size),
                added / size,
                verdict(added <= 3 * size),
                before / MB,
            )
        )
    for name in [name for name, _label in labels if name != "bare"]:
        controller = [r["whole"] - r["wall"] for r in sides[name]]
        print(
            "  %s: ansible-playbook's run less the module's process: %s s (start-up, the controller's result handling)"
            % (dict(labels)[name].split(",")[0], spread(controller, "%.2f"))
        )


def huge(emulator, playbooks, args):
    connection = dict(api_url=emulator.url, api_key=ADMIN_KEY)
    for chunked in (False, True):
        settings = dict(pad_list_bytes=args.huge_bytes, pad_list_chunked=chunked)
        requests.post(emulator.url + "/_emulator/settings", json=settings, timeout=30).raise_for_status()
        run = playbooks.run("nac_device_info", connection, expect_failure=True)
        limited = "max_reply_mb" in (run["msg"] or "")
        print(
            "  %-15s reply of %.2f GB: module %s in %.2f s, peak RSS %.0f MiB (%.3f of the reply); message: %s"
            % (
                "chunked" if chunked else "Content-Length",
                (args.huge_bytes + args.list_bytes) / 1e9,
                "refused it naming the limit (PASS)" if limited else "did NOT name the limit (FAIL)",
                run["wall"],
                run["rss"] / MB,
                run["rss"] / float(args.huge_bytes),
                (run["msg"] or "")[:300],
            )
        )
    requests.post(emulator.url + "/_emulator/settings", json=dict(pad_list_bytes=0, pad_list_chunked=False), timeout=30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=200000, help="bulk devices seeded (default 200000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument("--hostname", default="bulk-100000", help="the one hostname of the status query")
    parser.add_argument("--huge-bytes", type=int, default=1100000000, help="padding of the huge reply; 0: skip it")
    parser.add_argument(
        "--no-info", dest="info", action="store_false", help="no nac_device_info of every device (1,000,000 devices)"
    )
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="nac-bench-large-")
    try:
        playbooks = Playbooks(workdir, collections_path(workdir))
        with EmulatorProcess(dict(seed_devices=args.devices)) as emulator:
            print("%d devices seeded in the emulator at %s" % (args.devices, emulator.url))
            measure(emulator, playbooks, args)
            if args.huge_bytes:
                args.list_bytes = list_bytes(emulator)
                print("huge replies (the device list padded by %d bytes):" % args.huge_bytes)
                huge(emulator, playbooks, args)
    finally:
        shutil.rmtree(workdir, True)


if __name__ == "__main__":
    main()
