#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure the inventory plugin netaccess.nac.nac against a bare requests + thread-pool client.

Starts the NAC API emulator as a process of its own (so that no client shares its interpreter) with N
devices and an injected latency per request, then times, in turns, on the same emulator:

- the bare client: one requests.Session, GET /api/device, then one dot1x_status fire per device on a
  ThreadPoolExecutor of --concurrency threads (the least any client has to do);
- ``ansible-inventory --list`` with ``dot1x_status: true`` (the plugin: Ansible's start-up, the device
  list, the intent check, the fires, building and printing the inventory);
- ``ansible-inventory --list`` with ``dot1x_status: false`` (Ansible's start-up and the listing alone).

It prints every run, each run's ratio, the medians, and the inventory's time beyond start-up and listing
against the bare client's; the plugin's own status-query time (its -vvv line); and the CPU time of each (a
figure that the load of a shared machine moves less than wall time). It prints figures; it asserts nothing
about them (it does check the results are complete).

    .venv/bin/python benchmarks/bench_inventory.py [--devices 5000] [--latency 0.02] [--concurrency 32] [--repeat 3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import atexit
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import requests
from harness.bare import BareClient
from harness.emulator import EmulatorProcess
from harness.nac import COLLECTIONS, config
from harness.paths import ADMIN_KEY


def start_emulator(devices, latency, workdir):
    """The emulator in a process of its own (stopped at exit); returns its URL."""
    emulator = EmulatorProcess(config(devices), latency).start()
    atexit.register(emulator.stop)
    return emulator.url


def counts(url):
    return requests.get(url + "/_emulator/requests", timeout=10).json()


def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def bare_client(url, concurrency):
    """(total seconds, seconds of the fire phase, CPU seconds, statuses): 1 device list + one fire per device."""
    client = BareClient(url, concurrency)
    start, cpu_start = time.perf_counter(), cpu(resource.RUSAGE_SELF)
    ids = [record["id"] for record in client.get("/api/device")]
    listed = time.perf_counter()
    statuses = [reply.get("status", "UNKNOWN") for reply in client.fire_all(ids)]
    end = time.perf_counter()
    client.close()
    return end - start, end - listed, cpu(resource.RUSAGE_SELF) - cpu_start, statuses


def inventory_run(url, source, workdir):
    """(seconds, CPU seconds, parsed --list output, seconds of the plugin's status queries or None) of one
    ansible-inventory -vvv --list --output FILE, with the connection from the environment."""
    bindir = os.path.dirname(sys.executable)
    command = os.path.join(bindir, "ansible-inventory")
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
        NAC_API_URL=url,
        NAC_API_KEY=ADMIN_KEY,
        ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true",
    )
    output = os.path.join(workdir, "inventory.json")
    start, cpu_start = time.perf_counter(), cpu(resource.RUSAGE_CHILDREN)  # the emulator is not waited for: not counted
    done = subprocess.run(
        [
            command if os.path.exists(command) else "ansible-inventory",
            "-vvv",
            "-i",
            source,
            "--list",
            "--output",
            output,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
    )
    elapsed, used = time.perf_counter() - start, cpu(resource.RUSAGE_CHILDREN) - cpu_start
    if done.returncode:
        raise SystemExit("ansible-inventory failed:\n" + done.stdout[-3000:])
    queried = re.search(r"802\.1x status of \d+ devices queried in ([0-9.]+) s", done.stdout)
    with open(output) as handle:
        return elapsed, used, json.load(handle), float(queried.group(1)) if queried else None


# house: long because its argument table and the runs in the order they print
def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=5000, help="devices (default 5000)")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added to every API request (default 0.02)")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight at once (default 32)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each, in turns; medians are compared (default 3)"
    )
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="nac-bench-inventory-")
    atexit.register(shutil.rmtree, workdir, True)
    url = start_emulator(args.devices, args.latency, workdir)
    sources = {}
    for name, dot1x in (("status", True), ("listing", False)):
        sources[name] = os.path.join(workdir, "%s.nac.yml" % name)
        with open(sources[name], "w") as handle:
            handle.write(
                "plugin: netaccess.nac.nac\ndot1x_status: %s\nconcurrency: %d\n"
                % (str(dot1x).lower(), args.concurrency)
            )

    print(
        "inventory plugin netaccess.nac.nac: %d devices, %.0f ms latency per request, concurrency %d,"
        " emulator in its own process" % (args.devices, args.latency * 1000, args.concurrency)
    )
    times = dict(bare=[], fires=[], status=[], listing=[], plugin_fires=[], bare_cpu=[], status_cpu=[], listing_cpu=[])
    for run in range(1, args.repeat + 1):
        before = counts(url)
        total, fires, used, statuses = bare_client(url, args.concurrency)
        assert len(statuses) == args.devices
        times["bare"].append(total)
        times["fires"].append(fires)
        times["bare_cpu"].append(used)
        for name in ("status", "listing"):
            elapsed, used, listing, queried = inventory_run(url, sources[name], workdir)
            times[name + "_cpu"].append(used)
            assert len(listing["_meta"]["hostvars"]) == args.devices, "not every device is a host"
            if name == "status":
                grouped = sum(
                    len(group.get("hosts", [])) for key, group in listing.items() if key.startswith("nac_dot1x_")
                )
                assert grouped == args.devices, "not every host is in a status group"
                times["plugin_fires"].append(queried)
            times[name].append(elapsed)
        after = counts(url)
        sent = dict((key, after.get(key, 0) - before.get(key, 0)) for key in after)
        print(
            "  run %d: bare client %5.2f s (fires %5.2f s) | ansible-inventory dot1x_status: true %5.2f s"
            " (its status queries %5.2f s)"
            " | dot1x_status: false %5.2f s  [requests: %s]"
            % (run, total, fires, times["status"][-1], times["plugin_fires"][-1], times["listing"][-1], sent)
        )
        print(
            "         CPU time: bare client %5.2f s | ansible-inventory dot1x_status: true %5.2f s"
            " | dot1x_status: false %5.2f s"
            % (times["bare_cpu"][-1], times["status_cpu"][-1], times["listing_cpu"][-1])
        )
    ratios = [
        (status - listing) / bare for status, listing, bare in zip(times["status"], times["listing"], times["bare"])
    ]
    print(
        "  per run, inventory time beyond start-up and listing / bare client: %s (median %.2fx, target <= 1.5x)"
        % (", ".join("%.2fx" % ratio for ratio in ratios), statistics.median(ratios))
    )
    for label, pick in (("median", statistics.median),):
        value = dict((name, pick(values)) for name, values in times.items())
        beyond = value["status"] - value["listing"]
        print(
            "  %s: bare client %.2f s (fires %.2f s); ansible-inventory with status %.2f s,"
            " start-up and listing alone %.2f s"
            % (label, value["bare"], value["fires"], value["status"], value["listing"])
        )
        print(
            "    inventory time beyond start-up and listing: %.2f s = %.2fx the bare client's %.2f s (target <= 1.5x);"
            " of it the plugin's status queries %.2f s = %.2fx the bare client's fires, the rest (%.2f s)"
            " Ansible's own work"
            " on the status variables and groups"
            % (
                beyond,
                beyond / value["bare"],
                value["bare"],
                value["plugin_fires"],
                value["plugin_fires"] / value["fires"],
                beyond - value["plugin_fires"],
            )
        )
        beyond_cpu = value["status_cpu"] - value["listing_cpu"]
        print(
            "    CPU time beyond start-up and listing: %.2f s = %.2fx the bare client's %.2f s"
            % (beyond_cpu, beyond_cpu / value["bare_cpu"], value["bare_cpu"])
        )


if __name__ == "__main__":
    main()
