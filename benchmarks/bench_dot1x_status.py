#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure nac_dot1x_status's all-devices query against the NAC API emulator.

Starts the emulator in this process with N seeded devices and an injected latency per request,
then runs the query through ``plugins/module_utils/tasks/dot1x_query.py`` (the code the module runs) at each
concurrency, and prints wall times, the speed-up, and the peak Python memory (tracemalloc) of the
query for several numbers of devices. With --ansible it also times the module under
ansible-playbook.

Then, side by side in the same run (harness/compare.py), against the emulator in a process of its own
with --compare-devices devices: a bare requests + ThreadPoolExecutor client making the same requests
(intent list, device list, one fire per device), the query through module_utils in this process and,
with --ansible, the module's own process under ansible-playbook: wall time, CPU time per request and
their ratios to the bare client, median and spread of --compare-repeat runs, with PASS/FAIL against
the targets of issue 17 (<= 1.15x in wall time, <= 1.2x in CPU per request). It prints figures; it
never fails on them.

    .venv/bin/python benchmarks/bench_dot1x_status.py [--devices 1000] [--latency 0.02]
        [--concurrency 1 32] [--memory-devices 1000 5000] [--ansible]
        [--compare-devices 5000] [--compare-concurrency 32] [--compare-repeat 3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc

from harness.bare import bare_status_batch
from harness.compare import compare
from harness.emulator import EmulatorProcess
from harness.module import ModuleProcess
from harness.nac import COLLECTIONS, client_for, config
from harness.paths import ADMIN_KEY

from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status, poll, resolve
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator


def client(emulator, concurrency):
    return client_for(emulator.url, concurrency)


def timed_query(emulator, concurrency):
    """Wall time of one all-devices query as the module makes it (intent check, list, fires)."""
    nac = client(emulator, concurrency)
    try:
        start = time.perf_counter()
        report = dot1x_status(nac, all_devices=True, concurrency=concurrency)
        return time.perf_counter() - start, report
    finally:
        nac.close()


def memory(devices, latency, concurrency):
    """Peak traced memory of the whole query, and of the fire phase alone beyond its results."""
    with Emulator(config=config(devices), latency=latency).start() as emulator:
        nac = client(emulator, concurrency)
        nac.list_devices()  # warm the emulator's list cache and the connection outside the trace
        tracemalloc.start()
        report = dot1x_status(nac, all_devices=True, concurrency=concurrency)
        _current, whole_peak = tracemalloc.get_traced_memory()
        targets, _warnings = resolve(nac.list_devices(), all_devices=True)
        tracemalloc.reset_peak()
        before, _peak = tracemalloc.get_traced_memory()
        results, _refused = poll(nac, targets, concurrency)
        after, fire_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        nac.close()
    assert len(report.results) == len(results) == devices
    return whole_peak, fire_peak - before, after - before


def ansible_run(emulator, concurrency, workdir):
    """Wall time of ansible-playbook running the module once (includes Ansible's own start-up)."""
    playbook = os.path.join(workdir, "bench.yml")
    with open(playbook, "w") as handle:
        json.dump(
            [
                dict(
                    hosts="localhost",
                    gather_facts=False,
                    tasks=[
                        dict(
                            name="all devices",
                            register="status",
                            **{
                                "netaccess.nac.nac_dot1x_status": dict(
                                    api_url=emulator.url, api_key=ADMIN_KEY, all_devices=True, concurrency=concurrency
                                )
                            },
                        ),
                        dict(
                            name="count",
                            **{"ansible.builtin.debug": dict(msg="{{ status.results | length }} {{ status.summary }}")},
                        ),
                    ],
                )
            ],
            handle,
        )
    bindir = os.path.dirname(sys.executable)
    command = [
        os.path.join(bindir, "ansible-playbook")
        if os.path.exists(os.path.join(bindir, "ansible-playbook"))
        else "ansible-playbook",
        "-i",
        "localhost,",
        "-c",
        "local",
        playbook,
    ]
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
        ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
    )
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    elapsed = time.perf_counter() - start
    if done.returncode:
        raise SystemExit("ansible-playbook failed:\n" + done.stdout[-3000:])
    return elapsed


STATUS_TARGETS = (1.15, 1.2)  # issue 17: wall time and CPU per request, as ratios to the bare client


def status_playbook(workdir, url, concurrency, devices):
    """A playbook of one nac_dot1x_status all_devices task, then a check that it has every device's result."""
    path = os.path.join(workdir, "status.yml")
    with open(path, "w") as handle:
        json.dump(
            [
                dict(
                    hosts="localhost",
                    gather_facts=False,
                    tasks=[
                        dict(
                            name="all devices",
                            register="status",
                            **{
                                "netaccess.nac.nac_dot1x_status": dict(
                                    api_url=url, api_key=ADMIN_KEY, all_devices=True, concurrency=concurrency
                                )
                            },
                        ),
                        dict(
                            name="complete",
                            **{
                                "ansible.builtin.assert": dict(
                                    that=["status.results | length == %d" % devices], quiet=True
                                )
                            },
                        ),
                    ],
                )
            ],
            handle,
        )
    return path


def side_by_side(devices, latency, concurrency, repeat, ansible):
    """The status batch by the bare client, module_utils and (with ``ansible``) the module process, in turns."""
    with EmulatorProcess(config(devices), latency) as emulator:

        def bare(_index):
            sample, replies = emulator.measure(lambda: bare_status_batch(emulator.url, concurrency))
            assert len(replies) == devices
            return sample

        def module_utils(_index):
            def query():
                nac = client_for(emulator.url, concurrency)
                try:
                    return dot1x_status(nac, all_devices=True, concurrency=concurrency)
                finally:
                    nac.close()

            sample, report = emulator.measure(query)
            assert len(report.results) == devices and report.failure is None, report.failure
            return sample

        sides = [("bare requests+threads", bare), ("module_utils dot1x_status", module_utils)]
        targets = {"module_utils dot1x_status": STATUS_TARGETS}
        if ansible:
            workdir = tempfile.mkdtemp(prefix="nac-bench-module-")
            atexit.register(shutil.rmtree, workdir, True)
            runner = ModuleProcess(workdir, COLLECTIONS)
            playbook = status_playbook(workdir, emulator.url, concurrency, devices)
            sides.append(("bare client process", lambda _index: runner.bare(emulator, "status", concurrency)))
            sides.append(
                (
                    "nac_dot1x_status module process",
                    lambda _index: runner.run(emulator, "nac_dot1x_status", [playbook])[0],
                )
            )
            targets["nac_dot1x_status module process"] = STATUS_TARGETS + ("bare client process",)
        compare(
            "Status batch side by side (issue 17): %d devices, %.0f ms latency, concurrency %d, emulator in its own"
            " process.\n"
            "  CPU: RUSAGE_SELF of this process for the bare client and module_utils; for the module process, its"
            " own\n"
            "  RUSAGE_SELF at exit (all its threads; not ansible-playbook's controller); its wall time is its"
            " lifetime,\n"
            "  Python start-up and AnsiballZ included; the bare client process (harness/bare.py) is measured the same"
            " way,\n"
            "  its start-up included, and the module process's targets are held against it."
            % (devices, latency * 1000, concurrency),
            sides,
            repeat,
            targets,
        )


# house: long because its argument table and the runs in the order they print
def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=1000, help="devices for the timing runs (default 1000)")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added to every API request (default 0.02)")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[1, 32], help="concurrencies to time (default 1 32)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="timing runs per concurrency; the best is shown (default 1)"
    )
    parser.add_argument(
        "--memory-devices",
        type=int,
        nargs="*",
        default=[1000, 5000],
        help="device counts for the memory runs (default 1000 5000; none to skip)",
    )
    parser.add_argument("--ansible", action="store_true", help="also time the module under ansible-playbook")
    parser.add_argument(
        "--compare-devices",
        type=int,
        default=5000,
        help="devices of the side-by-side comparison with a bare client (default 5000; 0 to skip)",
    )
    parser.add_argument(
        "--compare-concurrency", type=int, default=32, help="concurrency of the comparison (default 32)"
    )
    parser.add_argument("--compare-repeat", type=int, default=3, help="runs of each side in the comparison (default 3)")
    args = parser.parse_args()

    print(
        "nac_dot1x_status all-devices query: %d devices, %.0f ms latency per request, emulator in-process"
        % (args.devices, args.latency * 1000)
    )
    times = {}
    with Emulator(config=config(args.devices), latency=args.latency).start() as emulator:
        for concurrency in args.concurrency:
            runs = [timed_query(emulator, concurrency) for _run in range(args.repeat)]
            elapsed, report = min(runs, key=lambda run: run[0])
            times[concurrency] = elapsed
            assert len(report.results) == args.devices and report.failure is None, report.failure
            print(
                "  module_utils, concurrency %3d: %7.2f s  (%6.1f ms per device, %6.0f devices/s)  summary %s"
                % (concurrency, elapsed, elapsed * 1000 / args.devices, args.devices / elapsed, report.summary)
            )
        if len(times) > 1:
            low, high = min(times), max(times)
            print(
                "  speed-up concurrency %d vs %d: %.1fx (ideal with this latency alone: %.0fx)"
                % (high, low, times[low] / times[high], float(high) / low)
            )
        if args.ansible:
            workdir = tempfile.mkdtemp(prefix="nac-bench-play-")
            atexit.register(shutil.rmtree, workdir, True)
            for concurrency in args.concurrency:
                print(
                    "  ansible-playbook, concurrency %3d: %7.2f s  (one task, Ansible start-up included)"
                    % (concurrency, ansible_run(emulator, concurrency, workdir))
                )

    if args.compare_devices:
        side_by_side(args.compare_devices, args.latency, args.compare_concurrency, args.compare_repeat, args.ansible)

    if args.memory_devices:
        concurrency = max(args.concurrency)
        print("Peak Python memory (tracemalloc) of an all-devices query at concurrency %d:" % concurrency)
        for devices in args.memory_devices:
            whole, fire_peak, kept = memory(devices, args.latency, concurrency)
            print(
                "  %6d devices: whole query peak %7.1f KiB (%5.0f B/device, with the device list and results);"
                " fire phase peak %7.1f KiB of which results %7.1f KiB, working set beyond them %6.1f KiB"
                % (
                    devices,
                    whole / 1024.0,
                    whole / float(devices),
                    fire_peak / 1024.0,
                    kept / 1024.0,
                    (fire_peak - kept) / 1024.0,
                )
            )


if __name__ == "__main__":
    main()
