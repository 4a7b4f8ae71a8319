#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Soak: a bulk nac_device of N devices and an all-devices nac_dot1x_status through 20 % faults.

Starts the NAC API emulator in this process with fault injection (tests/emulator/README.md,
"Faults": 500, 502, 503, 429, reset, commit_drop, commit_500, slow, evenly mixed), duplicate
hostnames allowed (a creation sent twice shows as a duplicate instead of a conflict) and a small
latency. Then, each as a user runs it, through ``ansible-playbook``:

1. ``nac_device`` with ``devices:`` of N new devices (every fourth with a MAC, so that a creation
   sent twice is also caught as a conflict reported on a device that exists);
2. ``nac_dot1x_status`` with ``all_devices: true``;
3. the same ``nac_device`` task again (the rerun).

Between the steps faults are switched off until no slow request is held, and the truth is read
from the emulator: devices in place, duplicates, each item's report compared with the device list
(an item reported created/existing must be listed under its id; an item reported failed must be
absent; an item with no report counts as wrong), status results with a status, wall time, and the
requests the emulator counted beyond the minimum (one list plus one POST per missing device; one
intent list, one device list and one fire per device). Prints PASS/FAIL per target and exits
non-zero on a miss.

Settings that differ from the collection's defaults, and why (everything else is the default:
concurrency 8, max_retries 3, settle_timeout):

- the client's ``timeout`` is 2 s (default 30), and the emulator holds a ``slow`` request 1.5 times
  as long (3 s): the commit lands after the client gave up on it, half a timeout later, as a 45 s
  commit would with the default timeout of 30 s, without making the run take minutes;
- the 429 ``Retry-After`` is 1 s, the emulator's latency 10 ms per request.

    .venv/bin/python benchmarks/soak_faults.py [--devices 500] [--rate 0.2] [--seed 8]
        [--timeout 2] [--slow SECONDS] [--latency 0.01]
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

from bench_nac_device_bulk import collections_dir
from nac_emulator import FAULT_MODES, Emulator  # bench_nac_device_bulk put tests/emulator on sys.path

API_KEY = "nac-demo-admin-key"  # the emulator's fake demo credential
ACCOUNT = {"name": "admin", "api_key": API_KEY, "privileges": ["public_api"], "intents": ["dot1x_status"]}
TARGETS = ("in place after one run >= 99 %", "duplicates == 0", "wrong reports == 0", "statuses >= 99 %",
           "rerun converges to exactly N")

PLAYBOOK = """---
- name: Soak through faults
  hosts: localhost
  gather_facts: false
  tasks:
    - name: The task under test
      %(module)s: %(args)s
      register: soak
      ignore_errors: true

    - name: Keep the result for the soak
      ansible.builtin.copy:
        content: "{{ soak | to_json }}"
        dest: %(result)s
        mode: "0600"
"""


def config():
    return dict(accounts=[ACCOUNT], groups=[dict(name="Soak", subnet="10.128.0.0/16")],
                profiles=[dict(name="Sensor", max_pairs=1, host_start=10, host_end=65000)], devices=[],
                allow_duplicate_hostnames=True)


def requested(count):
    items = []
    for n in range(count):
        item = dict(hostname="soak-%04d" % n, group="Soak", profile="Sensor")
        if n % 4 == 0:
            item["macs"] = ["02:50:4b:00:%02x:%02x" % (n >> 8 & 255, n & 255)]
        items.append(item)
    return items


class Soak:
    def __init__(self, args, workdir, emulator):
        self.args = args
        self.workdir = workdir
        self.emulator = emulator
        self.env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_dir(workdir), ANSIBLE_LOCALHOST_WARNING="false",
                        ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_PYTHON_INTERPRETER=sys.executable,
                        ANSIBLE_NOCOLOR="1")

    def playbook(self, name, module, module_args):
        """Run one task under ansible-playbook with faults on; (result, seconds, requests, faults by mode)."""
        args = dict(module_args, api_url=self.emulator.url, api_key=API_KEY, timeout=self.args.timeout)
        result_file = os.path.join(self.workdir, name + ".result.json")
        path = os.path.join(self.workdir, name + ".yml")
        with open(path, "w") as handle:
            handle.write(PLAYBOOK % dict(module=module, args=json.dumps(args), result=json.dumps(result_file)))
        command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", path]
        before, faults_before = self.emulator.request_counts(), self.emulator.faults()["injected"]
        self.emulator.faults(rate=self.args.rate)
        started = time.monotonic()
        done = subprocess.run(command, env=self.env, cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        seconds = time.monotonic() - started
        self.settle()
        if not os.path.exists(result_file):
            sys.stderr.write(done.stdout[-4000:])
            raise SystemExit("ansible-playbook failed before the task's result was kept (rc %d)" % done.returncode)
        with open(result_file) as handle:
            result = json.load(handle)
        after, faults_after = self.emulator.request_counts(), self.emulator.faults()["injected"]
        sent = sum(after.values()) - sum(before.values())
        injected = dict((mode, faults_after[mode] - faults_before[mode]) for mode in FAULT_MODES)
        return result, seconds, sent, injected

    def settle(self):
        """Faults off, and wait until no slow request is held (its creation has landed)."""
        self.emulator.faults(rate=0)
        deadline = time.monotonic() + self.args.slow + 30
        while self.emulator.faults()["holding"]:
            if time.monotonic() > deadline:
                raise SystemExit("a slow request is still held %.0f s after the run" % (self.args.slow + 30))
            time.sleep(0.05)

    def truth(self):
        """{lower-case hostname: [ids]} of every device, read with faults off."""
        held = collections.defaultdict(list)
        for device in json.loads(self.emulator.model.list_devices(None, None, None)[2]):
            held[device["hostname"].lower()].append(device["id"])
        return held


def judge_reports(items, result, held):
    """Items whose report is not the truth, as (hostname, what is wrong, the module's words)."""
    reports = result.get("devices") or []
    wrong = []
    for index, item in enumerate(items):
        name = item["hostname"].lower()
        report = reports[index] if index < len(reports) and str(reports[index].get("hostname")).lower() == name else None
        if report is None:
            wrong.append(("no report", "module: %s" % str(result.get("msg"))[:100]))
        elif report.get("error"):
            if held.get(name):
                times = len(held[name])
                wrong.append(("reported failed but exists" + (" %d times" % times if times > 1 else ""), cause(report)))
        elif report.get("id") not in held.get(name, ()):
            wrong.append(("reported with an id not listed under its hostname", cause(report)))
    return wrong


def cause(report):
    """What the module said went wrong with one item: its failure's type, status and the start of its message."""
    failure = report.get("failure") or {}
    kind = " ".join(str(part) for part in (failure.get("type"), failure.get("status")) if part)
    if failure.get("outcome_unknown"):
        kind += " (outcome unknown)"
    return "%s: %s" % (kind or "no failure", str(report.get("error") or "")[:90])


def in_place(items, held):
    return sum(1 for item in items if held.get(item["hostname"].lower()))


def duplicates(items, held):
    return sum(max(len(held.get(item["hostname"].lower(), ())) - 1, 0) for item in items)


def show_run(label, seconds, sent, minimum, per, injected):
    print("%-9s wall %6.1f s   requests %5d (minimum %d), extra per device %.2f   faults injected: %s" % (
        label, seconds, sent, minimum, (sent - minimum) / float(max(per, 1)),
        " ".join("%s=%d" % (mode, injected[mode]) for mode in FAULT_MODES)))


def explain(problems):
    """Count and print (what, cause) pairs, most frequent first."""
    for (what, why), count in collections.Counter(problems).most_common():
        print("          %4d x %s: %s" % (count, what, why))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=500)
    parser.add_argument("--rate", type=float, default=0.2, help="share of /api requests that get a fault (default 0.2)")
    parser.add_argument("--seed", type=int, default=8, help="seed of the emulator's fault generator (default 8)")
    parser.add_argument("--timeout", type=float, default=2.0, help="the client's timeout in seconds (default 2; collection default 30)")
    parser.add_argument("--slow", type=float, help="seconds the emulator holds a slow request (default 1.5 x timeout)")
    parser.add_argument("--latency", type=float, default=0.01, help="seconds the emulator adds to every /api request (default 0.01)")
    args = parser.parse_args()
    if args.slow is None:
        args.slow = 1.5 * args.timeout
    items = requested(args.devices)
    count = len(items)
    print("soak: %d devices through %.0f %% faults (%s; seed %d), client timeout %g s, slow commit %g s, "
          "latency %g s, %s cores" % (count, args.rate * 100, ", ".join(FAULT_MODES), args.seed, args.timeout, args.slow,
                                      args.latency, os.cpu_count()))
    print("settings: the collection's defaults but timeout %g s (default 30), so that a slow commit (%g s) outlasts it "
          "without a run of minutes; emulator: duplicate hostnames allowed, Retry-After 1 s" % (args.timeout, args.slow))
    faults = dict(rate=0, seed=args.seed, retry_after=1, slow=args.slow)
    with tempfile.TemporaryDirectory(prefix="soak-faults-") as workdir, \
            Emulator(config(), latency=args.latency, faults=faults).start() as emulator:
        soak = Soak(args, workdir, emulator)

        first, seconds, sent, injected = soak.playbook("first", "netaccess.nac.nac_device", dict(devices=items))
        held = soak.truth()
        show_run("first run", seconds, sent, count + 1, count, injected)
        placed, doubled, wrong = in_place(items, held), duplicates(items, held), judge_reports(items, first, held)
        print("          devices in place %d of %d (%.1f %%), duplicates %d, items reported wrongly %d "
              "(module: created %s, existing %s, failures %s)" % (
                  placed, count, 100.0 * placed / count, doubled, len(wrong),
                  first.get("created"), first.get("existing"), first.get("failures")))
        explain(wrong)

        status, seconds, sent, injected = soak.playbook("status", "netaccess.nac.nac_dot1x_status", dict(all_devices=True))
        listed = sorted(i for ids in held.values() for i in ids)
        results = status.get("results") or []
        answered = [r for r in results if not r.get("error") and isinstance(r.get("status"), str)]
        show_run("status", seconds, sent, len(listed) + 2, len(listed), injected)
        print("          results %d for %d devices (every device: %s), with a status %d (%.1f %%), summary %s%s" % (
            len(results), len(listed), sorted(r.get("id") for r in results) == listed, len(answered),
            100.0 * len(answered) / max(len(listed), 1), json.dumps(status.get("summary")),
            "" if answered or not status.get("msg") else "; module: %s" % status["msg"][:300]))
        explain([("error", str(r["error"])[:120]) for r in results if r.get("error")])

        rerun, seconds, sent, injected = soak.playbook("rerun", "netaccess.nac.nac_device", dict(devices=items))
        final = soak.truth()
        total = sum(len(final.get(item["hostname"].lower(), ())) for item in items)
        converged = in_place(items, final) == count == total
        show_run("rerun", seconds, sent, count - placed + 1, count, injected)
        print("          module: created %s, existing %s, failures %s; devices with the requested hostnames %d (%d distinct)%s" % (
            rerun.get("created"), rerun.get("existing"), rerun.get("failures"), total, in_place(items, final),
            "" if not rerun.get("failed") else "; module: %s" % str(rerun.get("msg"))[:300]))

    figures = ((100.0 * placed / count, "%.1f %%", 100.0 * placed / count >= 99), (doubled, "%d", doubled == 0),
               (len(wrong), "%d", not wrong), (100.0 * len(answered) / max(len(listed), 1), "%.1f %%",
                                               len(answered) >= 0.99 * len(listed) and sorted(r.get("id") for r in results) == listed),
               (total, "%d", converged))
    print("targets:")
    for name, (value, form, passed) in zip(TARGETS, figures):
        print("  %s  %-34s %s" % ("PASS" if passed else "FAIL", name.replace(" N", " %d" % count) + ":", form % value))
    return 0 if all(passed for _value, _form, passed in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
