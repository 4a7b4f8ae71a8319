#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure nac_device's bulk form creating N devices, then the rerun with nothing to do.

Starts the NAC API emulator in this process (tests/emulator, integration config), then for each
mode prints the wall time and the requests the emulator counted, for the first run and the rerun:

- ``playbook``: one ``ansible-playbook`` task ``netaccess.nac.nac_device: devices: [...]``, what
  a user runs (includes Ansible's own start-up, about a second);
- ``engine``: the module's logic alone (ensure_devices.ensure_devices over one NacClient).

Each mode gets a fresh emulator state. The devices are Workstations with one explicit IP each
(10.40.0.20 onwards; group Workstations is a /22), every second one with a MAC too (rules 2 and 3):
rule 1 would allocate two IPs per Workstation and the profile's host range holds 991.

    .venv/bin/python benchmarks/bench_nac_device_bulk.py [--devices 1000] [--concurrency 8]
        [--latency 0.0] [--mode both|playbook|engine] [--compare-repeat 3]

Then, side by side in the same run (harness/compare.py), against the emulator in a process of its own: a
bare requests + ThreadPoolExecutor client making the same requests (the device list, one POST per device; the
collection also lists once more, to confirm the creations),
the engine in this process and the module's own process under ansible-playbook, each creating the N
devices on a freshly reset emulator: wall time, CPU time per request and their ratios to the bare client,
median and spread of --compare-repeat runs, PASS/FAIL against the target of issue 17 (<= 1.2x the bare
client's wall time). A missed target does not change the exit status.

Exits non-zero when a run does not do what it must (every device created once, a rerun of one request).
"""

from __future__ import absolute_import, division, print_function

import argparse
import ipaddress
import json
import os
import subprocess
import sys
import tempfile
import time

from harness.bare import bare_bulk
from harness.compare import compare
from harness.emulator import EmulatorProcess
from harness.module import ModuleProcess, playbook_command
from harness.paths import EMULATOR_DIR, collections_path, import_emulator

import_emulator()
from nac_emulator import Emulator, load_config  # noqa: E402  pylint: disable=wrong-import-position

API_KEY = "nac-demo-admin-key"
FIRST_IP = ipaddress.IPv4Address("10.40.0.20")


def devices(count):
    if count > 1000:
        raise SystemExit("at most 1000 devices fit the Workstations group of the integration config")
    items = []
    for n in range(count):
        item = dict(hostname="bench-ws-%04d" % n, group="Workstations", profile="Workstation", ips=[str(FIRST_IP + n)])
        if n % 2 == 0:
            item["macs"] = ["02-BE-%02X-%02X-%02X-00" % (n >> 16 & 255, n >> 8 & 255, n & 255)]
        items.append(item)
    return items


def playbook_runner(workdir, emulator, items, concurrency):
    with open(os.path.join(workdir, "devices.json"), "w") as handle:
        json.dump(dict(bench_devices=items), handle)
    with open(os.path.join(workdir, "bench.yml"), "w") as handle:
        handle.write(PLAYBOOK % dict(url=emulator.url, key=API_KEY, concurrency=concurrency))
    result_file = os.path.join(workdir, "result.json")
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=collections_path(workdir),
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        ANSIBLE_NOCOLOR="1",
    )
    command = playbook_command(
        "-e",
        "@" + os.path.join(workdir, "devices.json"),
        "-e",
        "bench_result=" + result_file,
        os.path.join(workdir, "bench.yml"),
    )

    def run():
        done = subprocess.run(
            command, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True
        )
        if done.returncode != 0:
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit("ansible-playbook failed (rc %d)" % done.returncode)
        with open(result_file) as handle:
            result = json.load(handle)
        return dict(
            changed=result["changed"],
            created=result["created"],
            existing=result["existing"],
            failures=result["failures"],
        )

    return run


PLAYBOOK = """---
- name: Benchmark of nac_device's bulk form
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Ensure the devices exist
      netaccess.nac.nac_device:
        api_url: %(url)s
        api_key: %(key)s
        devices: "{{ bench_devices }}"
        concurrency: %(concurrency)d
      register: bench

    - name: Keep the result for the benchmark
      ansible.builtin.copy:
        content: "{{ bench | to_json }}"
        dest: "{{ bench_result }}"
        mode: "0600"
"""


def engine_runner(workdir, emulator, items, concurrency):
    sys.path.insert(0, collections_path(workdir))
    from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
    from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
        device_specs,
        ensure_devices,
        summary,
    )

    specs = device_specs(items)

    def run():
        client = NacClient(emulator.url, api_key=API_KEY, pool_size=max(concurrency, 8))
        try:
            outcomes = ensure_devices(specs, client.list_devices, client.create_device, concurrency)
        finally:
            client.close()
        return dict(summary(outcomes), changed=any(o.changed for o in outcomes))

    return run


def measure(name, make_runner, args, items):
    config = load_config(os.path.join(EMULATOR_DIR, "integration_config.json"))
    with (
        tempfile.TemporaryDirectory(prefix="bench-nac-device-") as workdir,
        Emulator(config, latency=args.latency).start() as emulator,
    ):
        run = make_runner(workdir, emulator, items, args.concurrency)
        rows = []
        for label, expected in (
            ("first run", dict(created=len(items), existing=0)),
            ("rerun", dict(created=0, existing=len(items))),
        ):
            before = emulator.request_counts()
            started = time.monotonic()
            result = run()
            seconds = time.monotonic() - started
            after = emulator.request_counts()
            sent = dict(
                (key, after.get(key, 0) - before.get(key, 0))
                for key in after
                if after.get(key, 0) != before.get(key, 0)
            )
            rows.append((label, seconds, sent, result))
            wrong = [k for k, v in dict(expected, failures=0).items() if result[k] != v]
            if wrong or (label == "rerun" and sum(sent.values()) != 1):
                raise SystemExit("%s %s is wrong: %s, requests %s" % (name, label, result, sent))
        held = [r["hostname"] for r in emulator.model.devices.values() if r["hostname"].startswith("bench-ws-")]
        if len(held) != len(items) or len(set(held)) != len(items):
            raise SystemExit(
                "%s: the emulator holds %d bench devices (%d distinct), expected %d"
                % (name, len(held), len(set(held)), len(items))
            )
    for label, seconds, sent, result in rows:
        print(
            "%-8s %-9s %8.2f s  %5d requests  %s  created=%d existing=%d changed=%s"
            % (
                name,
                label,
                seconds,
                sum(sent.values()),
                ", ".join("%s: %d" % kv for kv in sorted(sent.items())),
                result["created"],
                result["existing"],
                result["changed"],
            )
        )


BULK_TARGETS = (1.2, None)  # issue 17: wall time as a ratio to the bare client; CPU per request shown, no target


# house: long because one table: its sides in turns, then its rows and ratios
def side_by_side(args, items):
    """The bulk creation by the bare client, the engine and the module process, in turns, each on a reset emulator."""
    config = os.path.join(EMULATOR_DIR, "integration_config.json")
    with (
        tempfile.TemporaryDirectory(prefix="bench-nac-device-compare-") as workdir,
        EmulatorProcess(config, args.latency) as emulator,
    ):
        engine = engine_runner(workdir, emulator, items, args.concurrency)
        from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_creation import creation_body
        from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import device_specs

        bodies = [creation_body(spec) for spec in device_specs(items)]  # what the module sends, prepared untimed

        def bare(_index):
            emulator.reset()
            sample, replies = emulator.measure(lambda: bare_bulk(emulator.url, args.concurrency, bodies))
            check("bare client", len(replies), sample)
            return sample

        def bare_process(_index):
            emulator.reset()
            sample = runner.bare(emulator, "bulk", args.concurrency, bodies)
            check("bare client process", len(items), sample)
            return sample

        def module_utils(_index):
            emulator.reset()
            sample, result = emulator.measure(engine)
            check("engine", result["created"], sample)
            return sample

        runner = ModuleProcess(workdir, collections_path(workdir))
        result_file = os.path.join(workdir, "result.json")
        with open(os.path.join(workdir, "devices.json"), "w") as handle:
            json.dump(dict(bench_devices=items), handle)
        with open(os.path.join(workdir, "bench.yml"), "w") as handle:
            handle.write(PLAYBOOK % dict(url=emulator.url, key=API_KEY, concurrency=args.concurrency))
        arguments = [
            "-e",
            "@" + os.path.join(workdir, "devices.json"),
            "-e",
            "bench_result=" + result_file,
            os.path.join(workdir, "bench.yml"),
        ]

        def module(_index):
            emulator.reset()
            sample, _whole = runner.run(emulator, "nac_device", arguments)
            with open(result_file) as handle:
                check("module", json.load(handle)["created"], sample)
            return sample

        def check(name, created, sample):
            # the device list, the first POST and the list that confirms it, one POST per other device, and the list
            # that confirms them (the bare client trusts the replies: N + 1)
            expected = len(items) + (1 if name.startswith("bare") else 3)
            if created != len(items) or sample.requests != expected:
                raise SystemExit(
                    "%s: created %s devices with %d requests, expected %d with %d"
                    % (name, created, sample.requests, len(items), expected)
                )

        compare(
            "Bulk creation side by side (issue 17): %d devices, %.0f ms latency, concurrency %d, emulator in its own"
            " process.\n"
            "  CPU: RUSAGE_SELF of this process for the bare client and the engine; for the module process, its"
            " own\n"
            "  RUSAGE_SELF at exit (all its threads; not ansible-playbook's controller); its wall time is its"
            " lifetime,\n"
            "  Python start-up, AnsiballZ and argument validation included; the bare client process (harness/bare.py)"
            " is measured\n"
            "  the same way, its start-up included, and the module process's target is held against it."
            % (len(items), args.latency * 1000, args.concurrency),
            [
                ("bare requests+threads", bare),
                ("engine ensure_devices", module_utils),
                ("bare client process", bare_process),
                ("nac_device module process", module),
            ],
            args.compare_repeat,
            {
                "engine ensure_devices": BULK_TARGETS,
                "nac_device module process": BULK_TARGETS + ("bare client process",),
            },
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the emulator adds to every /api request")
    parser.add_argument("--mode", choices=("both", "playbook", "engine"), default="both")
    parser.add_argument(
        "--compare-repeat",
        type=int,
        default=3,
        help="runs of each side in the comparison with a bare client (default 3; 0 to skip)",
    )
    args = parser.parse_args()
    items = devices(args.devices)
    print(
        "nac_device bulk: %d devices, concurrency %d, emulator latency %.3f s, %s cores"
        % (args.devices, args.concurrency, args.latency, os.cpu_count())
    )
    if args.mode in ("both", "playbook"):
        measure("playbook", playbook_runner, args, items)
    if args.mode in ("both", "engine"):
        measure("engine", engine_runner, args, items)
    if args.compare_repeat:
        side_by_side(args, items)


if __name__ == "__main__":
    main()
