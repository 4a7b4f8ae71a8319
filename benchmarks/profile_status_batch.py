#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Profile of the status batch's per-request path (issue 17): py-spy over every thread, top entries.

Runs one all-devices status query through module_utils (``dot1x_status``, the module's code) or the
bare requests + ThreadPoolExecutor client (``--bare``) in a child process sampled by py-spy
(``--gil``: only samples of the thread holding the GIL, that is the Python work, not the waits),
against the emulator in a process of its own, then prints the top functions of the request threads
by cumulative and by self share of the samples. py-spy is not part of requirements-dev.txt:
``.venv/bin/pip install py-spy``. Not part of ``make bench``; it prints figures, nothing more.

    .venv/bin/python benchmarks/profile_status_batch.py [--devices 5000] [--latency 0.02]
        [--concurrency 32] [--rate 250] [--top 25] [--bare] [--raw FILE]
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compare import EmulatorProcess, bare_status_batch, self_cpu
from bench_dot1x_status import client_for, config

FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def child(args):
    """The sampled process: one status batch, its wall and CPU time printed."""
    from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status

    with EmulatorProcess(config(args.devices), args.latency) as emulator:
        cpu, start = self_cpu(), time.perf_counter()
        if args.bare:
            results = bare_status_batch(emulator.url, args.concurrency)
        else:
            nac = client_for(emulator.url, args.concurrency)
            try:
                results = dot1x_status(nac, all_devices=True, concurrency=args.concurrency).results
            finally:
                nac.close()
        wall, cpu = time.perf_counter() - start, self_cpu() - cpu
    print(
        "%s: %d devices, %.2f s, %.3f ms CPU per request (under py-spy)"
        % (
            "bare client" if args.bare else "module_utils dot1x_status",
            len(results),
            wall,
            cpu * 1000 / (len(results) + 2),
        )
    )


def short(frame):
    found = FRAME.match(frame)
    if not found:
        return frame
    where = found.group("file")
    for marker in ("site-packages/", "/lib/python3.", "/plugins/module_utils/"):
        if marker in where:
            where = (
                where.split(marker, 1)[1].split("/", 1)[-1] if marker == "/lib/python3." else where.split(marker, 1)[1]
            )
    return "%s (%s)" % (found.group("function"), where)


def report(raw, top):
    """Top functions of the stacks that run in a worker thread (the requests): a thread pool's, or engine.py's."""
    cumulative, own, total = collections.Counter(), collections.Counter(), 0
    with open(raw) as handle:
        for line in handle:
            stack, _space, count = line.rstrip("\n").rpartition(" ")
            frames = [short(frame) for frame in stack.split(";")]
            if not any(frame.startswith(("_worker (", "_OrderedMap._work (")) for frame in frames):
                continue
            total += int(count)
            for frame in set(frames):
                cumulative[frame] += int(count)
            own[frames[-1]] += int(count)
    if not total:
        raise SystemExit("no samples of a worker thread in %s" % raw)
    print("request threads: %d samples holding the GIL" % total)
    for title, counter in (("cumulative", cumulative), ("self", own)):
        print("  top %d by %s share:" % (top, title))
        for frame, count in counter.most_common(top):
            print("    %5.1f%%  %s" % (100.0 * count / total, frame))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=5000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second (default 250)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--bare", action="store_true", help="profile the bare client instead of module_utils")
    parser.add_argument("--raw", help="keep py-spy's raw (collapsed stacks) output in this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    spy = shutil.which("py-spy", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if not spy:
        raise SystemExit("py-spy is not installed: %s -m pip install py-spy" % sys.executable)
    workdir = tempfile.mkdtemp(prefix="nac-profile-")
    try:
        raw = args.raw or os.path.join(workdir, "profile.raw")
        command = [
            spy,
            "record",
            "--gil",
            "--rate",
            str(args.rate),
            "--format",
            "raw",
            "--output",
            raw,
            "--",
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            "--devices",
            str(args.devices),
            "--latency",
            str(args.latency),
            "--concurrency",
            str(args.concurrency),
        ] + (["--bare"] if args.bare else [])
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        print("\n".join(line for line in done.stdout.splitlines() if line.strip() and not line.startswith("py-spy>")))
        if done.returncode:
            raise SystemExit("py-spy failed (rc %d):\n%s" % (done.returncode, done.stdout[-3000:]))
        report(raw, args.top)
    finally:
        shutil.rmtree(workdir, True)


if __name__ == "__main__":
    main()
