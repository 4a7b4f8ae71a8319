# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request engine against the aiohttp reference client and against a rate limit (issue 26).

Against the emulator in a process of its own (bench_compare.EmulatorProcess, its listen backlog large enough for
256 clients connecting at once), three tables:

1. status: the status batch of ``--devices`` devices at ``--latency`` by the aiohttp client (bench_aiohttp.py)
   and by module_utils (dot1x.dot1x_status, the code the module runs), in turns (the order rotates), at each
   ``--concurrency``: wall ms per device, CPU ms per request and context switches per request (RUSAGE_SELF of
   this process: every thread of it, never the emulator's), medians [min-max], and the ratios module / aiohttp
   taken run by run.
2. rate limit: the emulator's token bucket (``--rate``/s, burst ``--burst``, Retry-After 1), the status of
   ``--rate-devices`` devices at each ``--rate-concurrency``: wall against the ideal (devices / rate), the
   refusals the emulator sent (GET /_emulator/rate_limit) and the devices in error; then Retry-After 30 with
   ``--slow-devices`` devices; then a bulk creation of ``--bulk-limited`` devices against 50/s (failed, and
   duplicates: hostnames listed twice; duplicates are allowed by the emulator here, so that a resent creation
   would show). Each case runs in a child process, killed after ``--case-timeout`` seconds (printed as such).
3. bulk: the creation of ``--bulk`` devices at ``--bulk-concurrency`` by aiohttp and by module_utils
   (devices.ensure_devices), on a reset emulator each time: wall, requests.

It prints figures and PASS/FAIL against the targets of issue 26; it never fails on them. ``--quick`` makes every
table small (a minute or two in all).
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import time

import requests
from bench_aiohttp import aiohttp_bulk, aiohttp_status_batch
from bench_compare import EmulatorProcess, median_spread, show
from bench_dot1x_status import ADMIN_KEY, COLLECTIONS, client_for, config  # noqa: F401 (COLLECTIONS: sys.path)
from bench_fast_server import FastServerProcess

from ansible_collections.netaccess.nac.plugins.module_utils.devices import device_specs, ensure_devices, summary
from ansible_collections.netaccess.nac.plugins.module_utils.dot1x import dot1x_status

try:
    from ansible_collections.netaccess.nac.plugins.module_utils.creation import creation_body
except ImportError:  # the code before the plan/apply engine (issue 24), for figures of that code
    from ansible_collections.netaccess.nac.plugins.module_utils.devices import creation_body

Sample = collections.namedtuple("Sample", "wall cpu switches requests server_cpu")
STATUS_TARGETS = (1.2, 1.5)  # wall, CPU per request: module / aiohttp
RATE_TARGET = 1.15  # wall / ideal against the token bucket
SLOW_MARGIN = 35.0  # Retry-After 30: within the ideal plus this many seconds
BULK_TARGET = 1.2


def usage():
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return mine.ru_utime + mine.ru_stime, mine.ru_nvcsw + mine.ru_nivcsw


def requests_sent(url):
    return sum(requests.get(url + "/_emulator/requests", timeout=30).json().values())


def measure(url, work, server=None):
    """(Sample, result) of ``work()``; ``server``: the server's process, whose CPU is counted too."""
    before = requests_sent(url)
    served = server.cpu() if server is not None else 0.0
    cpu, switches = usage()
    start = time.perf_counter()
    result = work()
    wall = time.perf_counter() - start
    cpu_after, switches_after = usage()
    served = (server.cpu() if server is not None else 0.0) - served
    sample = Sample(wall, cpu_after - cpu, switches_after - switches, requests_sent(url) - before, served)
    return sample, result


def module_status(url, concurrency):
    nac = client_for(url, concurrency)
    try:
        return dot1x_status(nac, all_devices=True, concurrency=concurrency)
    finally:
        nac.close()


def status_table(args):
    print(
        "1. Status batch: %d devices, %.0f ms latency, module_utils vs aiohttp in turns, %d rounds; CPU and context"
        " switches: RUSAGE_SELF of this process (all threads), per request"
        % (args.devices, args.latency * 1000, args.repeat)
    )
    if args.server == "fast":
        print("  against an independent server on aiohttp's event loop (bench_fast_server.py), not the emulator")
        server = FastServerProcess(args.devices, args.latency)
    else:
        server = EmulatorProcess(config(args.devices), args.latency)
    with server as emulator:
        url = emulator.url

        def aio():
            sample, replies = measure(url, lambda: aiohttp_status_batch(url, concurrency), emulator)
            assert len(replies) == args.devices
            return sample

        def module():
            sample, report = measure(url, lambda: module_status(url, concurrency), emulator)
            assert len(report.results) == args.devices and report.failure is None, report.failure
            return sample

        print(
            "  %-5s %-7s %-26s %-24s %-22s %-24s %-8s"
            % (
                "conc.",
                "side",
                "wall ms/device",
                "CPU ms/request",
                "switches/request",
                "server CPU ms/request",
                "requests",
            )
        )
        for concurrency in args.concurrency:
            runs = in_turns(aio, module, args.repeat)
            for name in ("aiohttp", "module"):
                samples = runs[name]
                print(
                    "  %-5d %-7s %-26s %-24s %-22s %-24s %-8s"
                    % (
                        concurrency,
                        name,
                        show([s.wall * 1000.0 / args.devices for s in samples], "%.3f"),
                        show([per(s.cpu * 1000.0, s) for s in samples], "%.3f"),
                        show([per(s.switches, s) for s in samples], "%.2f"),
                        show([per(s.server_cpu * 1000.0, s) for s in samples], "%.3f"),
                        "/".join(sorted(set(str(s.requests) for s in samples))),
                    )
                )
            wall = [m.wall / a.wall for m, a in zip(runs["module"], runs["aiohttp"])]
            cpu = [per(m.cpu, m) / per(a.cpu, a) for m, a in zip(runs["module"], runs["aiohttp"])]
            switches = [
                per(m.switches, m) / max(per(a.switches, a), 1e-9) for m, a in zip(runs["module"], runs["aiohttp"])
            ]
            print(
                "  %-5d module/aiohttp: wall %sx%s  CPU/request %sx%s  switches/request %sx"
                % (
                    concurrency,
                    show(wall, "%.2f"),
                    verdict(wall, STATUS_TARGETS[0]),
                    show(cpu, "%.2f"),
                    verdict(cpu, STATUS_TARGETS[1]),
                    show(switches, "%.2f"),
                )
            )


def in_turns(aio, module, repeat):
    """{"aiohttp": [Sample], "module": [Sample]}: each side run ``repeat`` times, in turns (who goes first rotates)."""
    runs, sides = dict(aiohttp=[], module=[]), [("aiohttp", aio), ("module", module)]
    for index in range(repeat):
        for name, run in sides[index % 2 :] + sides[: index % 2]:
            runs[name].append(run())
    return runs


def per(value, sample):
    return value / max(sample.requests, 1)


def verdict(values, limit):
    return " (<= %.2fx: %s)" % (limit, "PASS" if median_spread(values)[0] <= limit else "FAIL")


# ---- the rate-limit cases: each in a child process (``--case``), killed at --case-timeout ----------------------


def run_case(url, kind, count, concurrency):
    """In the child: the status of every device, or the bulk creation of ``count``; prints a JSON line."""
    start = time.perf_counter()
    if kind == "status":
        report = module_status(url, concurrency)
        errors = sum(1 for entry in report.results if entry.get("error"))
        result = dict(errors=errors, results=len(report.results), summary=report.summary)
    else:
        nac = client_for(url, concurrency)
        try:
            outcomes = ensure_devices(device_specs(bulk_items(count)), nac.list_devices, nac.create_device, concurrency)
        finally:
            nac.close()
        result = dict(summary(outcomes))
    result["wall"] = time.perf_counter() - start
    print(json.dumps(result))


def bulk_items(count):
    return [
        dict(
            hostname="bench-bulk-%05d" % n,
            group="Bench",
            profile="Bench",
            ips=["10.80.%d.%d" % (n // 250, n % 250 + 1)],
        )
        for n in range(count)
    ]


def case(emulator, args, kind, count, concurrency, limit):
    """(result of the child, refusals sent, requests) for one case on a reset emulator with the bucket ``limit``."""
    emulator.reset()
    requests.post(emulator.url + "/_emulator/rate_limit", json=limit, timeout=30).raise_for_status()
    before = requests_sent(emulator.url)
    command = [sys.executable, os.path.abspath(__file__), "--case", kind, emulator.url, str(count), str(concurrency)]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, timeout=args.case_timeout, universal_newlines=True)
        result = (
            json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else dict(crashed=done.returncode)
        )
    except subprocess.TimeoutExpired:
        result = dict(timeout=args.case_timeout)
    refused = requests.get(emulator.url + "/_emulator/rate_limit", timeout=30).json()["refused"]
    requests.post(emulator.url + "/_emulator/rate_limit", json={"rate": 0}, timeout=30).raise_for_status()
    return result, refused, requests_sent(emulator.url) - before


def wall_text(result):
    if "timeout" in result:
        return "> %.0f s (killed)" % result["timeout"]
    if "crashed" in result:
        return "crashed (rc %s)" % result["crashed"]
    return "%.1f s" % result["wall"]


def rate_table(args):
    rate, burst = args.rate, args.burst
    emulator_config = config(args.rate_devices)
    emulator_config["allow_duplicate_hostnames"] = True  # a resent creation shows as a duplicate
    with EmulatorProcess(emulator_config, args.rate_latency) as emulator:
        ideal = args.rate_devices / rate
        print(
            "2. Rate limit: token bucket %g/s, burst %d, Retry-After 1; status of %d devices, %.0f ms latency;"
            " ideal %.1f s (devices / rate)" % (rate, burst, args.rate_devices, args.rate_latency * 1000, ideal)
        )
        print("  %-5s %-22s %-14s %-9s %-7s %s" % ("conc.", "wall", "wall / ideal", "refusals", "errors", "requests"))
        for concurrency in args.rate_concurrency if "status" in args.rate_parts else ():
            result, refused, sent = case(
                emulator, args, "status", args.rate_devices, concurrency, dict(rate=rate, burst=burst, retry_after=1)
            )
            ratio = result["wall"] / ideal if "wall" in result else None
            print(
                "  %-5d %-22s %-14s %-9d %-7s %d"
                % (
                    concurrency,
                    wall_text(result),
                    "%.2fx%s"
                    % (
                        ratio,
                        " (<= %.2fx, 0 errors: %s)"
                        % (RATE_TARGET, "PASS" if ratio <= RATE_TARGET and not result["errors"] else "FAIL"),
                    )
                    if ratio
                    else "-",
                    refused,
                    result.get("errors", "-"),
                    sent,
                )
            )
        if "slow" in args.rate_parts:
            slow_case(args)
        if "bulk" not in args.rate_parts:
            return
        # the bulk: its list is of the seeded devices; the new ones have their own names
        result, refused, sent = case(
            emulator,
            args,
            "bulk",
            args.bulk_limited,
            args.bulk_limited_concurrency,
            dict(rate=50, burst=burst, retry_after=1),
        )
        names = collections.Counter(
            r["hostname"].lower() for r in requests.get(emulator.url + "/_emulator/devices", timeout=60).json()
        )
        duplicates = sum(count - 1 for count in names.values() if count > 1)
        print(
            "  bulk of %d at 50/s, concurrency %d: %s, created %s, failed %s, duplicates %d, %d refusals,"
            " %d requests (%s)"
            % (
                args.bulk_limited,
                args.bulk_limited_concurrency,
                wall_text(result),
                result.get("created", "-"),
                result.get("failures", "-"),
                duplicates,
                refused,
                sent,
                "PASS"
                if result.get("failures") == 0 and not duplicates and result.get("created") == args.bulk_limited
                else "FAIL",
            )
        )


def slow_case(args):
    """Retry-After 30 against its own emulator of ``--slow-devices`` devices."""
    with EmulatorProcess(config(args.slow_devices), args.rate_latency) as emulator:
        burst = args.burst
        slow_ideal = args.slow_devices / args.slow_rate
        result, refused, sent = case(
            emulator,
            args,
            "status",
            args.slow_devices,
            args.slow_concurrency,
            dict(rate=args.slow_rate, burst=burst, retry_after=30),
        )
        print(
            "  Retry-After 30, %g/s: status of %d devices at concurrency %d: %s (ideal %.0f s + %.0f s: %s), %d"
            " refusals, %s errors, %d requests"
            % (
                args.slow_rate,
                args.slow_devices,
                args.slow_concurrency,
                wall_text(result),
                slow_ideal,
                SLOW_MARGIN,
                "PASS"
                if "wall" in result and result["wall"] <= slow_ideal + SLOW_MARGIN and not result["errors"]
                else "FAIL",
                refused,
                result.get("errors", "-"),
                sent,
            )
        )


def bulk_table(args):
    print(
        "3. Bulk creation of %d at concurrency %d, %.0f ms latency, aiohttp vs module_utils in turns"
        % (args.bulk, args.bulk_concurrency, args.latency * 1000)
    )
    items = bulk_items(args.bulk)
    specs = device_specs(items)
    bodies = [creation_body(spec) for spec in specs]
    with EmulatorProcess(config(0), args.latency) as emulator:
        url = emulator.url

        def aio():
            emulator.reset()
            sample, replies = measure(url, lambda: aiohttp_bulk(url, args.bulk_concurrency, bodies))
            assert len(replies) == args.bulk
            return sample

        def module():
            emulator.reset()

            def work():
                nac = client_for(url, args.bulk_concurrency)
                try:
                    return summary(ensure_devices(specs, nac.list_devices, nac.create_device, args.bulk_concurrency))
                finally:
                    nac.close()

            sample, result = measure(url, work)
            assert result["created"] == args.bulk, result
            return sample

        runs = in_turns(aio, module, args.repeat)
        for name in ("aiohttp", "module"):
            samples = runs[name]
            print(
                "  %-7s wall %s s  CPU ms/request %s  requests %s"
                % (
                    name,
                    show([s.wall for s in samples], "%.2f"),
                    show([per(s.cpu * 1000.0, s) for s in samples], "%.3f"),
                    "/".join(sorted(set(str(s.requests) for s in samples))),
                )
            )
        wall = [m.wall / a.wall for m, a in zip(runs["module"], runs["aiohttp"])]
        most = max(s.requests for s in runs["module"])
        print(
            "  module/aiohttp wall %sx%s; module requests %d (<= N+3 = %d: %s)"
            % (
                show(wall, "%.2f"),
                verdict(wall, BULK_TARGET),
                most,
                args.bulk + 3,
                "PASS" if most <= args.bulk + 3 else "FAIL",
            )
        )


def main():
    if sys.argv[1:2] == ["--case"]:
        kind, url, count, concurrency = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        return run_case(url, kind, count, concurrency)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=["status", "rate", "bulk"], choices=["status", "rate", "bulk"])
    parser.add_argument("--quick", action="store_true", help="small runs: every table in a minute or two")
    parser.add_argument("--devices", type=int, default=5000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--server",
        choices=["emulator", "fast"],
        default="emulator",
        help="the status table's server: the emulator, or an independent one on aiohttp's event loop",
    )
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--rate-devices", type=int, default=2000)
    parser.add_argument("--rate-latency", type=float, default=0.02)
    parser.add_argument("--rate-concurrency", type=int, nargs="+", default=[2, 4, 8, 32, 64, 256])
    parser.add_argument(
        "--rate-parts", nargs="+", default=["status", "slow", "bulk"], choices=["status", "slow", "bulk"]
    )
    parser.add_argument("--slow-devices", type=int, default=300)
    parser.add_argument("--slow-rate", type=float, default=50.0)
    parser.add_argument("--slow-concurrency", type=int, default=8)
    parser.add_argument("--bulk-limited", type=int, default=500)
    parser.add_argument("--bulk-limited-concurrency", type=int, default=8)
    parser.add_argument("--bulk", type=int, default=1000)
    parser.add_argument("--bulk-concurrency", type=int, default=32)
    parser.add_argument("--case-timeout", type=float, default=180.0, help="kill a rate-limit case after this long")
    args = parser.parse_args()
    if args.quick:
        args.devices, args.concurrency, args.repeat = 1000, [32, 128], 2
        args.rate_devices, args.rate_concurrency, args.slow_devices = 500, [2, 8, 64], 100
        args.bulk_limited, args.bulk, args.case_timeout = 150, 300, 90.0
    print("load average at start: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    for table in args.tables:
        dict(status=status_table, rate=rate_table, bulk=bulk_table)[table](args)
    print("load average at end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
