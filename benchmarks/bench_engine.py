# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# house: long because its three tables share the cases, the child processes and the reference clients they run
"""Measure the request engine against the aiohttp reference client and against a rate limit (issue 26).

Against the emulator in a process of its own (harness.emulator.EmulatorProcess, its listen backlog large enough for
256 clients connecting at once), three tables:

1. status: the status batch of ``--devices`` devices at ``--latency`` by the aiohttp client (harness/aio.py)
   and by module_utils (dot1x_query.dot1x_status, the code the module runs), in turns (the order rotates), at each
   ``--concurrency``: wall ms per device, CPU ms per request and context switches per request (RUSAGE_SELF of
   this process: every thread of it, never the emulator's), medians [min-max], and the ratios module / aiohttp
   taken run by run.
2. rate limits of every shape (harness.rates.SHAPES: nginx ``limit_req`` without and with burst, answering 429 or
   503; a token bucket; a fixed window; DRF's throttle; 429 without Retry-After; a 503 storm with reset connections; a
   penalty box; a server closing kept-alive connections just after each reply): per shape, the status of its devices
   and a bulk creation of as many new ones (``--rate-kinds``: both by default) at each ``--rate-concurrency``, against
   the emulator's limiter (tests/emulator/nac_emu/ratelimit.py): the wall time against the ideal (devices / rate)
   and against a reference client that paces at the true rate, the refusals the emulator sent, the devices in
   error, and duplicates (hostnames listed twice; the emulator allows them here, so that a creation sent twice
   would show). Each case runs in a child process, killed after ``--timeout-factor`` times its ideal (at least
   ``--case-timeout``).
3. bulk: the creation of ``--bulk`` devices at ``--bulk-concurrency`` by aiohttp and by module_utils
   (ensure_devices.ensure_devices), on a reset emulator each time: wall, requests.

It prints figures and PASS/FAIL against the targets of issues 26 and 33; it never fails on them. ``--quick`` makes
every table small.
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests
from harness.aio import aiohttp_bulk, aiohttp_status_batch
from harness.compare import median_spread, show
from harness.emulator import EmulatorProcess
from harness.fast_server import FastServerProcess
from harness.nac import client_for, config
from harness.paths import ADMIN_KEY
from harness.rates import RATE_TARGET, SHAPE_TARGET, SHAPES, wall_text

from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    device_specs,
    ensure_devices,
    summary,
)

try:
    from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_creation import creation_body
except ImportError:  # the code before the plan/apply engine (issue 24), for figures of that code
    from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import creation_body

Sample = collections.namedtuple("Sample", "wall cpu switches requests server_cpu")
STATUS_TARGETS = (1.2, 1.5)  # wall, CPU per request: module / aiohttp
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


# house: long because one table: its sides in turns at each concurrency, then its rows and ratios
def status_table(args):
    print(
        "1. Status batch: %d devices, %.0f ms latency, module_utils vs aiohttp in turns, %d rounds; CPU and context"
        " switches: RUSAGE_SELF of this process (all threads), per request"
        % (args.devices, args.latency * 1000, args.repeat)
    )
    if args.server == "fast":
        print("  against an independent server on aiohttp's event loop (harness/fast_server.py), not the emulator")
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


# ---- the rate-limit shapes: each case in a child process (``--case``), killed at its timeout --------------------


def run_case(url, kind, count, concurrency, rate=0.0):
    """In the child: the status of every device, or the bulk creation of ``count`` (``pace-*``: by the reference
    client pacing at ``rate``); prints a JSON line."""
    start = time.perf_counter()
    if kind.startswith("pace-"):
        result = paced_case(url, kind[5:], count, concurrency, rate)
    elif kind == "status":
        report = module_status(url, concurrency)
        failed = [entry["error"] for entry in report.results if entry.get("error")]
        result = dict(errors=len(failed), results=len(report.results), summary=report.summary)
        result["first_error"] = failed[0] if failed else None
    else:
        nac = client_for(url, concurrency)
        try:
            outcomes = ensure_devices(device_specs(bulk_items(count)), nac.list_devices, nac.create_device, concurrency)
        finally:
            nac.close()
        result = dict(summary(outcomes))
        result["errors"] = result.get("failures", 0)
        result["first_error"] = next((outcome.error for outcome in outcomes if outcome.error), None)
    result["wall"] = time.perf_counter() - start
    print(json.dumps(result))


def paced_case(url, kind, count, concurrency, rate):
    """The reference: a client that knows the true ``rate`` and starts its requests 1 / rate apart (a refusal: sent
    again after its Retry-After, else one gap; a reset connection: sent again), the same requests as the module's."""
    lock, state = threading.Lock(), dict(next=time.monotonic(), errors=0)
    local = threading.local()

    def call(method, path, body=None):
        for _attempt in range(100):
            with lock:
                start = max(time.monotonic(), state["next"])
                state["next"] = start + (1.0 / rate if rate else 0.0)
            time.sleep(max(0.0, start - time.monotonic()))
            if not hasattr(local, "session"):
                local.session = requests.Session()
                local.session.headers["Authorization"] = "Bearer " + ADMIN_KEY
            try:
                reply = local.session.request(method, url + path, json=body, timeout=30)
            except requests.exceptions.ConnectionError:
                continue
            if reply.status_code not in (429, 503):
                return reply
            with lock:
                state["next"] = max(state["next"], time.monotonic() + float(reply.headers.get("Retry-After") or 0))
        state["errors"] += 1
        return None

    if kind == "status":
        call("GET", "/api/intent")
        devices = call("GET", "/api/device").json()
        work = [
            ("POST", "/api/intent/dot1x_status/fire", dict(targetId=d["id"], additionalPayload=dict(json=True)))
            for d in devices
        ]
    else:
        call("GET", "/api/device")
        work = [("POST", "/api/device", creation_body(spec)) for spec in device_specs(bulk_items(count))]
    pool = ThreadPoolExecutor(concurrency)
    replies = list(pool.map(lambda item: call(*item), work))
    pool.shutdown()
    if kind != "status":
        call("GET", "/api/device")
    bad = sum(1 for reply in replies if reply is None or reply.status_code >= 300)
    return dict(errors=bad, results=len(replies))


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


def case(emulator, args, kind, count, concurrency, shape, timeout):
    """(result of the child, refusals sent, requests, duplicates) for one case on a reset emulator with the
    limiter (and faults) of ``shape``."""
    emulator.reset()
    requests.post(emulator.url + "/_emulator/rate_limit", json=shape.limit, timeout=30).raise_for_status()
    if shape.faults:
        requests.post(emulator.url + "/_emulator/faults", json=shape.faults, timeout=30).raise_for_status()
    before = requests_sent(emulator.url)
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--case",
        kind,
        emulator.url,
        str(count),
        str(concurrency),
        str(shape.rate),
    ]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, timeout=timeout, universal_newlines=True)
        result = (
            json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else dict(crashed=done.returncode)
        )
    except subprocess.TimeoutExpired:
        result = dict(timeout=timeout)
    if shape.faults:
        requests.post(emulator.url + "/_emulator/faults", json=dict(rate=0), timeout=30).raise_for_status()
    refused = requests.get(emulator.url + "/_emulator/rate_limit", timeout=30).json()["refused"]
    requests.post(
        emulator.url + "/_emulator/rate_limit", json=dict(rate=0, close_after=0, quota_headers=False), timeout=30
    )
    names = collections.Counter(
        r["hostname"].lower() for r in requests.get(emulator.url + "/_emulator/devices", timeout=60).json()
    )
    duplicates = sum(n - 1 for n in names.values() if n > 1)
    return result, refused, requests_sent(emulator.url) - before, duplicates


def rate_table(args):
    """Per shape, the status of its devices and a bulk of as many new ones, at each concurrency: the wall time
    against the ideal (devices / rate) and against the reference client pacing at the true rate."""
    shapes = [shape for shape in SHAPES if shape.name in args.shapes]
    print(
        "2. Rate limits of every shape, %.0f ms latency; ideal: devices / rate; paced: the reference client that"
        " starts its requests at the true rate (concurrency %d); a case is killed after %.0fx its ideal (at least"
        " %.0f s)" % (args.rate_latency * 1000, args.pace_concurrency, args.timeout_factor, args.case_timeout)
    )
    print(
        "  %-8s %-6s %-5s %-18s %-9s %-9s %-9s %-7s %-5s %s"
        % ("shape", "kind", "conc.", "wall", "/ ideal", "/ paced", "refusals", "errors", "dupl.", "requests")
    )
    for shape in shapes:
        count = max(1, int(shape.devices * args.scale))
        emulator_config = config(count)
        emulator_config["allow_duplicate_hostnames"] = True  # a creation sent twice shows as a duplicate
        print("  %s: %s; %d devices" % (shape.name, shape.text, count))
        with EmulatorProcess(emulator_config, args.rate_latency) as emulator:
            for kind in args.rate_kinds:
                ideal = count / shape.rate if shape.rate else None
                timeout = max(args.case_timeout, args.timeout_factor * (ideal or 10.0))
                paced, refused, sent, dupl = case(
                    emulator, args, "pace-" + kind, count, args.pace_concurrency, shape, timeout
                )
                reference = paced.get("wall")
                ideal = ideal or reference  # no limit: the reference is the ideal
                show_case(shape, "paced", args.pace_concurrency, paced, ideal, reference, refused, dupl, sent)
                for concurrency in args.rate_concurrency:
                    result, refused, sent, dupl = case(emulator, args, kind, count, concurrency, shape, timeout)
                    show_case(shape, kind, concurrency, result, ideal, reference, refused, dupl, sent)


def show_case(shape, kind, concurrency, result, ideal, reference, refused, duplicates, sent):
    wall = result.get("wall")
    target = SHAPE_TARGET.get(shape.name, RATE_TARGET)
    verdict = ""
    if kind != "paced":
        ok = wall is not None and (ideal is None or wall <= target * ideal) and not result.get("errors")
        verdict = "%s (<= %.2fx, 0 errors, 0 duplicates)" % ("PASS" if ok and not duplicates else "FAIL", target)
    print(
        "  %-8s %-6s %-5d %-18s %-9s %-9s %-9d %-7s %-5d %-8d %s"
        % (
            shape.name,
            kind,
            concurrency,
            wall_text(result),
            "%.2fx" % (wall / ideal) if wall and ideal else "-",
            "%.2fx" % (wall / reference) if wall and reference else "-",
            refused,
            result.get("errors", "-"),
            duplicates,
            sent,
            verdict,
        )
    )
    if result.get("first_error"):  # what the first device in error was told, to tell a pace from a retry budget
        print("  %-8s first error: %s" % ("", result["first_error"][:300]))
    sys.stdout.flush()


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
        return run_case(url, kind, count, concurrency, float(sys.argv[6]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=["status", "rate", "bulk"], choices=["status", "rate", "bulk"])
    parser.add_argument("--quick", action="store_true", help="small runs: every table in a few minutes")
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
    parser.add_argument(
        "--shapes", nargs="+", default=[shape.name for shape in SHAPES], choices=[shape.name for shape in SHAPES]
    )
    parser.add_argument("--scale", type=float, default=1.0, help="the devices of every shape's cases, times this")
    parser.add_argument("--rate-latency", type=float, default=0.02)
    parser.add_argument("--rate-concurrency", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument(
        "--rate-kinds", nargs="+", default=["status", "bulk"], choices=["status", "bulk"], help="the rate table's cases"
    )
    parser.add_argument("--pace-concurrency", type=int, default=32)
    parser.add_argument("--bulk", type=int, default=1000)
    parser.add_argument("--bulk-concurrency", type=int, default=32)
    parser.add_argument("--case-timeout", type=float, default=60.0, help="kill a rate-limit case after this long ...")
    parser.add_argument("--timeout-factor", type=float, default=6.0, help="... or this many times its ideal")
    args = parser.parse_args()
    if args.quick:
        args.devices, args.concurrency, args.repeat = 1000, [32, 128], 2
        args.scale, args.rate_concurrency, args.bulk = 0.3, [8, 128], 300
    print("load average at start: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    for table in args.tables:
        dict(status=status_table, rate=rate_table, bulk=bulk_table)[table](args)
    print("load average at end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
