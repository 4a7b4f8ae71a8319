#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fault table (issue 49): a bulk creation of new devices through ordinary faults, at full speed.

The emulator (tests/emulator) runs in a process of its own, with no latency, duplicate hostnames allowed (a
creation sent twice shows) and its fault injection in front of the service: the mix of the issue (500, 502,
503, 429 with ``Retry-After: 1``, a reset before forwarding, commit-then-drop, commit-then-500, a reply held
``--slow`` seconds), each of ``--rates`` of the requests. For each rate and each ``--concurrency`` the bulk of
``--devices`` new devices runs through ensure_devices (the code nac_device runs) with the client timeout
``--timeout`` and the settle window ``--settle`` (default 60 s, the module's), on an emulator reset each time.

Each row: the wall time; the write phase (from the first write sent until every device's first attempt was
answered, the settle windows waited meanwhile apart: the proof's, when it was uncertain); the last sent (the same
phase until the last device's first write was sent: the writing's pace, without the tail of the last fault met);
the requests the emulator received; the windows waited (the seconds the engine slept waiting for the device list
to show its uncertain writes, in settle windows); duplicates (hostnames listed more than once, target 0); devices
in place (target all); reports that contradict the final list (target 0); the faults injected. A rate
of 0 is the same bulk without faults: the write phase of a faulty row is compared with it (target at most 2x).
It prints figures and PASS/FAIL; it never fails on them.

    .venv/bin/python benchmarks/bench_faults.py [--devices 500] [--rates 0 0.05 0.2 0.4] [--concurrency 8 32]
        [--timeout 2] [--settle 60] [--slow 3] [--seed 49]
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import requests
from harness.paths import ADMIN_KEY as API_KEY
from harness.paths import EMULATOR, import_collection

MODES = ["500", "502", "503", "429", "reset", "commit_drop", "commit_500", "slow"]
WALL_TARGET = 300.0  # seconds for 500 devices through the 20 % mix (issue 49)
PHASE_TARGET = 2.0  # the write phase, at most this many times the fault-free one


import_collection()

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient  # noqa: E402
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (  # noqa: E402
    device_specs,
    ensure_devices,
)


def emulator_config():
    return dict(
        accounts=[dict(name="admin", api_key=API_KEY, privileges=["public_api"], intents=["dot1x_status"])],
        groups=[dict(name="Faults", subnet="10.128.0.0/16")],
        profiles=[dict(name="Sensor", max_pairs=1, host_start=10, host_end=65000)],
        devices=[],
        allow_duplicate_hostnames=True,
    )


class Emulator:
    """The emulator as a process of its own, on a free loopback port."""

    def __enter__(self):
        self.workdir = tempfile.mkdtemp(prefix="nac-bench-faults-emulator-")
        config, port_file = os.path.join(self.workdir, "config.json"), os.path.join(self.workdir, "port")
        with open(config, "w") as handle:
            json.dump(emulator_config(), handle)
        command = [sys.executable, EMULATOR, "--host", "127.0.0.1", "--port", "0", "--port-file", port_file]
        self.process = subprocess.Popen(command + ["--quiet", "--config", config])
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise SystemExit("the emulator did not start")
            time.sleep(0.05)
        with open(port_file) as handle:
            self.url = "http://127.0.0.1:%s" % handle.read().strip()
        return self

    def __exit__(self, *_exc):
        self.process.terminate()
        self.process.wait(30)
        shutil.rmtree(self.workdir, True)

    def admin(self, method, what, body=None):
        reply = requests.request(method, self.url + "/_emulator/" + what, json=body, timeout=60)
        reply.raise_for_status()
        return reply.json() if reply.content else None

    def requests(self):
        return sum(self.admin("GET", "requests").values())

    def settle(self, limit=60.0):
        """Faults off, and wait until no held reply or late commit is pending."""
        self.admin("POST", "faults", dict(rate=0))
        deadline = time.monotonic() + limit
        while self.admin("GET", "faults")["holding"] and time.monotonic() < deadline:
            time.sleep(0.05)


def items(count):
    return [dict(hostname="fault-%05d" % n, group="Faults", profile="Sensor") for n in range(count)]


class Watch:
    """The engine's settle sleeps (each with when it began) and the write phase: from the first write sent to the
    first attempt of the last device answered (the progress line's "written"), the sleeps within it apart."""

    def __init__(self, create):
        self._create, self.sleeps, self.first, self.last = create, [], None, None
        self.lock = threading.Lock()
        self.tried, self.sent = set(), set()
        self.last_sent = None  # when the last device's first write was sent

    @property
    def slept(self):
        return sum(seconds for _at, seconds in self.sleeps)

    def sleep(self, seconds):
        self.sleeps.append((time.monotonic(), seconds))
        time.sleep(seconds)

    def create(self, body):
        """The creation as the engine calls a plain write (on a helper thread of its loop)."""
        self._began(body)
        try:
            return self._create(body)
        finally:
            self._ended(body)

    def create_steps(self, body):
        """The creation as steps (the client's create_device_steps): what the engine runs on its event loop."""
        self._began(body)
        try:
            return (yield from self._create.__self__.create_device_steps(body))
        finally:
            self._ended(body)

    def _began(self, body):
        started = time.monotonic()
        with self.lock:
            self.first = started if self.first is None else self.first
            if body["hostname"] not in self.sent:
                self.sent.add(body["hostname"])
                self.last_sent = started

    def _ended(self, body):
        with self.lock:
            if body["hostname"] not in self.tried:
                self.tried.add(body["hostname"])
                self.last = time.monotonic()

    def phase(self, end=None):
        """The write phase: from the first write to the last device's first attempt answered (``end``: to another
        clock time), the settle sleeps within it apart."""
        if self.first is None:
            return 0.0
        end = self.last if end is None else end
        within = sum(seconds for at, seconds in self.sleeps if self.first <= at < end)
        return max(0.0, end - self.first - within)


Row = collections.namedtuple("Row", "wall phase sending sent windows duplicates placed wrong injected throttle")


def run(emulator, args, rate, concurrency):
    emulator.admin("POST", "reset")
    faults = dict(rate=rate, seed=args.seed, retry_after=1, slow=args.slow, modes=MODES)
    emulator.admin("POST", "faults", faults)
    before = emulator.requests()
    client = NacClient(emulator.url, api_key=API_KEY, timeout=args.timeout, pool_size=concurrency)
    watch = Watch(client.create_device)
    start = time.monotonic()
    try:
        outcomes = ensure_devices(
            device_specs(items(args.devices)),
            client.list_devices,
            watch.create,
            concurrency,
            settle_timeout=args.settle,
            max_resends=client.max_retries,
            sleep=watch.sleep,
        )
    finally:
        client.close()
    wall = time.monotonic() - start
    injected = emulator.admin("GET", "faults")["injected"]
    emulator.settle()
    sent = emulator.requests() - before
    listed = collections.defaultdict(list)
    for record in emulator.admin("GET", "devices"):
        listed[record["hostname"].lower()].append(record["id"])
    placed = sum(1 for item in items(args.devices) if listed.get(item["hostname"]))
    duplicates = sum(len(ids) - 1 for ids in listed.values() if len(ids) > 1)
    phase = watch.phase()
    windows = watch.slept / args.settle if args.settle else 0.0
    throttle = client.throttle
    paced = "paced %.0f/s" % throttle.rate if throttle.rate else "never paced"
    refusals = "refusals %d (stray %d), %s" % (throttle.refusals, getattr(throttle, "strays", 0), paced)
    sending = watch.phase(watch.last_sent)
    return Row(wall, phase, sending, sent, windows, duplicates, placed, wrong(outcomes, listed), injected, refusals)


def wrong(outcomes, listed):
    """Reports the final list contradicts: done with an id not listed under its name, failed while the device is
    listed once and the report does not say its outcome is unknown, or no report at all."""
    count = 0
    for outcome in outcomes:
        ids = listed.get(outcome.hostname.lower(), [])
        if outcome.state == "failed":
            count += len(ids) == 1 and not (outcome.failure or {}).get("outcome_unknown")
        elif outcome.state in ("done", "existing"):
            count += outcome.id not in ids
        else:
            count += 1
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=500)
    parser.add_argument("--rates", type=float, nargs="+", default=[0.05, 0.2, 0.4], help="fault rates (0 added)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--timeout", type=float, default=2.0, help="the client's timeout (s)")
    parser.add_argument("--settle", type=float, default=60.0, help="the settle window (s)")
    parser.add_argument("--slow", type=float, default=3.0, help="seconds a held reply is held")
    parser.add_argument("--seed", type=int, default=49)
    args = parser.parse_args()
    print("load average at start: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    print(
        "Fault table: %d new devices, faults %s (Retry-After 1, held %g s), timeout %g s, settle window %g s, no"
        " latency, seed %d" % (args.devices, "/".join(MODES), args.slow, args.timeout, args.settle, args.seed)
    )
    print(
        "  %-6s %-5s %-8s %-12s %-9s %-8s %-8s %-6s %-9s %-6s %s"
        % (
            "faults",
            "conc.",
            "wall",
            "write phase",
            "last sent",
            "requests",
            "windows",
            "dupl.",
            "in place",
            "wrong",
            "injected",
        )
    )
    for concurrency in args.concurrency:
        with Emulator() as emulator:
            clean = None
            for rate in [0.0] + [rate for rate in args.rates if rate > 0]:
                row = run(emulator, args, rate, concurrency)
                clean = row.phase if rate == 0 else clean
                show(args, rate, concurrency, row, clean)
    print("load average at end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))


def show(args, rate, concurrency, row, clean):
    ratio = row.phase / clean if clean else 0.0
    verdict = ""
    if rate:
        passed = row.duplicates == 0 and row.placed == args.devices and row.wrong == 0 and ratio <= PHASE_TARGET
        verdict = "%s (0 duplicates, all in place, 0 wrong, write phase %.1fx <= %gx)" % (
            "PASS" if passed else "FAIL",
            ratio,
            PHASE_TARGET,
        )
    print(
        "  %-6s %-5d %-8s %-12s %-9s %-8d %-8.1f %-6d %-9s %-6d %s; %s %s"
        % (
            "%.0f %%" % (rate * 100),
            concurrency,
            "%.1f s" % row.wall,
            "%.1f s" % row.phase,
            "%.1f s" % row.sending,
            row.sent,
            row.windows,
            row.duplicates,
            "%d/%d" % (row.placed, args.devices),
            row.wrong,
            " ".join("%s=%d" % (mode, row.injected.get(mode, 0)) for mode in MODES),
            row.throttle,
            verdict,
        )
    )


if __name__ == "__main__":
    main()
