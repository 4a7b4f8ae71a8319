#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure the collection at scale (issue 36): 10,000 to 1,000,000 devices against the least work that does the
same, one device count after another, each against an emulator of its own (bulk-seeded, in a process of its own):

- inventory: ``ansible-inventory --list --output FILE`` with the plugin (``record_var`` false, the default, then
  true), each against ansible-core's own floor: an inventory script (inventory_floor.sh) that prints that run's
  output (the same hosts, groups and variables) for ansible-inventory to parse and print again;
- list: ``nac_device_info`` of every device under ansible-playbook, against a bare ``requests`` client
  (one GET, ``.json()``);
- export: ``nac_device_info`` with ``dest`` (JSON Lines, then CSV), against the bare client that writes the
  same JSON Lines file;
- status (up to --status-max devices, 5 ms latency by default): ``nac_dot1x_status all_devices`` at
  --concurrency with ``dest`` (unless --no-status-dest), against harness/aio.py's client writing the same JSON
  Lines file (the ratio; both files compared, byte for byte) and harness/bare.py's requests + thread pool client,
  each firing at every device; with the emulator's CPU time for each; then the module alone (its peak RSS).

Each figure: wall seconds, peak RSS (ru_maxrss of the process tree's largest process, from wait4), and the ratio
to the baseline. It prints figures; it asserts nothing about them beyond the runs succeeding.

    .venv/bin/python benchmarks/bench_scale.py [--devices 10000 100000 300000] [--parts inventory list export status]
        [--status-max 100000] [--latency 0.005] [--concurrency 64] [--status-pairs 1] [--no-requests-status]
        [--record-var false true] [--no-floor]
"""

from __future__ import absolute_import, division, print_function

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from harness.emulator import EmulatorProcess
from harness.paths import ADMIN_KEY, BENCHMARKS, collections_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
MB = 1024.0 * 1024.0
FLOOR = os.path.join(ROOT, "benchmarks", "inventory_floor.sh")

# The hosts of an inventory's output, counted in a process of its own: parsed here, the whole inventory would stay
# in this process's memory, and Linux reports a child's peak RSS as at least its parent's at the fork (the peak of
# every later run would be this process's).
COUNT_HOSTS = "import json, sys; print(len(json.load(open(sys.argv[1]))['_meta']['hostvars']))"

# The bare client: one GET of the whole list, .json(), optionally every record written as a line of JSON.
BARE_LIST = r"""
import json, sys, requests
url, key, dest = sys.argv[1:]
session = requests.Session()
session.headers.update({"Authorization": "Bearer " + key, "Accept": "application/json"})
reply = session.get(url + "/api/device", timeout=600)
reply.raise_for_status()
devices = reply.json()
if dest != "-":
    with open(dest, "w") as handle:
        for record in devices:
            handle.write(json.dumps(record) + "\n")
print(len(devices))
"""

# The reference for the whole-network status: harness/aio.py's client (intent list, device list, one fire a
# device at --concurrency on keep-alive connections); with a file name, each device's entry as nac_dot1x_status
# writes it to its dest (JSON Lines: id, hostname, status, auth_method, username, message), in the list's order.
BARE_AIOHTTP_STATUS = r"""
import json, sys
sys.path.insert(0, %r)
from harness.aio import aiohttp_status_listed
devices, replies = aiohttp_status_listed(sys.argv[1], int(sys.argv[2]))
if len(sys.argv) > 3:
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    with open(sys.argv[3], "w", encoding="utf-8") as handle:
        for device, reply in zip(devices, replies):
            handle.write(encode(dict(id=device["id"], hostname=device["hostname"],
                status=reply.get("status") or "UNKNOWN", auth_method=reply.get("authMethod"),
                username=reply.get("username"), message=reply.get("message"))) + "\n")
print(len(replies))
""" % os.path.join(ROOT, "benchmarks")

# The module alone, as Ansible runs it (its arguments in a file), for its own peak RSS: VmHWM of its own process,
# written at its exit (ru_maxrss of a child counts its parent's memory at the fork: this process's).
MODULE = "ansible_collections.netaccess.nac.plugins.modules.nac_dot1x_status"
MODULE_PEAK = (
    r"""
import atexit, runpy, sys
def peak(path=sys.argv[2]):
    with open("/proc/self/status") as status, open(path, "w") as out:
        out.write([line.split()[1] for line in status if line.startswith("VmHWM:")][0])
atexit.register(peak)
sys.argv = [sys.argv[0], sys.argv[1]]
runpy.run_module(%r, run_name="__main__")
"""
    % MODULE
)


def timed(command, env=None, cwd=None):
    """(wall seconds, peak RSS MiB, stdout, CPU seconds) of ``command`` run to its end (CPU: user and system of it
    and the children it waited for); SystemExit when it fails."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.stdout.read()
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit("%s failed (rc %d):\n%s" % (command[0], process.returncode, output[-4000:].decode()))
    return wall, usage.ru_maxrss / 1024.0, output.decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime


class Scale:
    def __init__(self, workdir, args):
        self.workdir, self.args = workdir, args
        self.env = dict(
            os.environ,
            ANSIBLE_COLLECTIONS_PATH=collections_path(workdir),
            ANSIBLE_PYTHON_INTERPRETER=sys.executable,
            ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true",
            ANSIBLE_LOCALHOST_WARNING="false",
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_RETRY_FILES_ENABLED="false",
            NAC_API_KEY=ADMIN_KEY,
            NAC_MAX_LIST_MB="4096",
            NAC_TIMEOUT="600",
        )
        self.rows = []

    def row(self, devices, part, name, sample, baseline=None):
        wall, rss, _output, cpu = sample
        ratio = "%.2fx" % (wall / baseline[0]) if baseline else "-"
        cpu_ratio = "%.2fx" % (cpu / baseline[3]) if baseline else "-"
        self.rows.append((devices, part, name, wall, rss, ratio))
        print(
            "  %9d  %-9s %-42s %8.2f s %6s %8.2f s %6s %8.0f MiB %6.2f KiB/device"
            % (devices, part, name, wall, ratio, cpu, cpu_ratio, rss, rss * 1024 / devices),
            flush=True,
        )

    def tool(self, name):
        path = os.path.join(BIN, name)
        return path if os.path.exists(path) else name

    def inventory(self, devices, url):
        """Each of --record-var's settings (the default's first), each against the floor of its own output."""
        env = dict(self.env, NAC_API_URL=url)
        for record_var in self.args.record_var:
            out = os.path.join(self.workdir, "inventory.json")
            source = os.path.join(self.workdir, "scale.nac.yml")
            with open(source, "w") as handle:
                handle.write("plugin: netaccess.nac.nac\nrecord_var: %s\n" % record_var)
            command = [self.tool("ansible-inventory"), "-i", source, "--list", "--output", out]
            sample, floor, outputs = timed(command, env=env, cwd=self.workdir), None, [out]
            if self.args.floor:
                outputs.append(os.path.join(self.workdir, "floor.json"))
                floor_env = dict(env, NAC_FLOOR_JSON=out)
                floor = timed(
                    [command[0], "-i", FLOOR, "--list", "--output", outputs[1]], env=floor_env, cwd=self.workdir
                )
            for output in outputs:
                hosts = int(subprocess.check_output([sys.executable, "-c", COUNT_HOSTS, output]))
                if hosts != devices:
                    raise SystemExit("the inventory %s lacks hosts: %d of %d" % (output, hosts, devices))
            if floor:
                self.row(devices, "inventory", "ansible-core's floor, record_var: %s" % record_var, floor)
            self.row(devices, "inventory", "plugin, record_var: %s" % record_var, sample, floor)

    def playbook(self, url, module, arguments):
        playbook = os.path.join(self.workdir, "play.yml")
        task = {"netaccess.nac.%s" % module: arguments, "register": "result"}
        with open(playbook, "w") as handle:
            json.dump([dict(hosts="localhost", gather_facts=False, tasks=[task])], handle)
        command = [self.tool("ansible-playbook"), "-i", "localhost,", "-c", "local", playbook]
        return timed(command, env=dict(self.env, NAC_API_URL=url), cwd=self.workdir)

    def bare_list(self, url, dest="-"):
        return timed([sys.executable, "-c", BARE_LIST, url, ADMIN_KEY, dest], cwd=self.workdir)

    def listing(self, devices, url):
        bare = self.bare_list(url)
        self.row(devices, "list", "bare client (requests, .json())", bare)
        self.row(devices, "list", "nac_device_info (every device)", self.playbook(url, "nac_device_info", {}), bare)

    def export(self, devices, url):
        dest = os.path.join(self.workdir, "devices")
        bare = self.bare_list(url, dest + ".bare.jsonl")
        self.row(devices, "export", "bare client (.json(), a JSON line each)", bare)
        for form in ("jsonl", "csv"):
            sample = self.playbook(url, "nac_device_info", dict(dest="%s.%s" % (dest, form), format=form))
            with open("%s.%s" % (dest, form), "rb") as handle:
                lines = sum(1 for _line in handle)
            if lines != devices + (form == "csv"):
                raise SystemExit("the %s export has %d lines for %d devices" % (form, lines, devices))
            self.row(devices, "export", "nac_device_info dest, format: %s" % form, sample, bare)
        for path in os.listdir(self.workdir):
            if path.startswith("devices."):
                os.remove(os.path.join(self.workdir, path))

    def status(self, devices, emulator):
        """--status-pairs pairs of the aiohttp client and the collection, the order swapped in every other pair (a
        busy machine weighs on both alike); harness/bare.py's requests client once, in the first pair, unless
        --no-requests-status."""
        concurrency = str(self.args.concurrency)
        bare_script = os.path.join(BENCHMARKS, "harness", "bare.py")
        aiohttp = ("bare client (aiohttp)", [sys.executable, "-c", BARE_AIOHTTP_STATUS, emulator.url, concurrency])
        threads = (
            "bare client (requests, %s threads)" % concurrency,
            [sys.executable, bare_script, "status", emulator.url, concurrency],
        )
        dest = os.path.join(self.workdir, "status.jsonl") if self.args.status_dest else None
        if dest:
            aiohttp[1].append(dest + ".bare")
        mine = ("nac_dot1x_status all_devices%s (ratio to aiohttp)" % (", dest" if dest else ""), None)
        for pair in range(self.args.status_pairs):
            sides = [aiohttp, mine] if pair % 2 == 0 else [mine, aiohttp]
            if pair == 0 and self.args.requests_status:
                sides.insert(1, threads)
            samples, server = {}, {}
            for name, command in sides:
                cpu = emulator.cpu()
                if command is None:
                    arguments = dict(all_devices=True, concurrency=int(concurrency))
                    if dest:
                        arguments.update(dest=dest)
                    samples[name] = self.playbook(emulator.url, "nac_dot1x_status", arguments)
                else:
                    samples[name] = timed(command, cwd=self.workdir)
                server[name] = emulator.cpu() - cpu
            for name, _command in (aiohttp, threads, mine):
                if name in samples:
                    self.row(devices, "status", name, samples[name], samples[aiohttp[0]] if name == mine[0] else None)
            print(
                "  %9d  %-9s server CPU: %.1f s for aiohttp, %.1f s for the collection (%.2fx aiohttp)%s"
                % (
                    devices,
                    "status",
                    server[aiohttp[0]],
                    server[mine[0]],
                    server[mine[0]] / max(server[aiohttp[0]], 1e-9),
                    ", %.1f s for requests" % server[threads[0]] if threads[0] in server else "",
                ),
                flush=True,
            )
            if dest:
                self.same_files(devices, dest, dest + ".bare")
        if dest:
            self.module_alone(devices, emulator, dict(all_devices=True, concurrency=int(concurrency), dest=dest))

    def same_files(self, devices, mine, bare):
        """SystemExit unless the module's file and the bare client's have one line a device, the same bytes (read a
        piece at a time: this process's memory would count in its children's peak RSS)."""
        with open(mine, "rb") as one:
            lines = sum(1 for _line in one)
        if lines != devices or not filecmp.cmp(mine, bare, shallow=False):
            raise SystemExit("the dest file (%d lines) differs from the bare client's (%d devices)" % (lines, devices))
        print("  %9d  %-9s dest: %d lines, the same bytes as the bare client's file" % (devices, "status", lines))

    def module_alone(self, devices, emulator, arguments):
        """The module run as Ansible runs it, outside ansible-playbook: its own wall time and peak RSS."""
        args = os.path.join(self.workdir, "args.json")
        with open(args, "w") as handle:
            json.dump(dict(ANSIBLE_MODULE_ARGS=dict(arguments, api_url=emulator.url)), handle)
        env = dict(self.env, PYTHONPATH=self.env["ANSIBLE_COLLECTIONS_PATH"])
        peak = os.path.join(self.workdir, "peak")
        wall, _rss, output, cpu = timed([sys.executable, "-c", MODULE_PEAK, args, peak], env=env, cwd=self.workdir)
        with open(peak) as handle:
            rss = int(handle.read()) / 1024.0
        self.row(devices, "status", "the module alone (its own VmHWM)", (wall, rss, output, cpu))

    def run(self):
        for devices in self.args.devices:
            parts = [part for part in self.args.parts if part != "status" or devices <= self.args.status_max]
            latency = self.args.latency if "status" in parts else 0.0
            with EmulatorProcess(dict(seed_devices=devices - 5), latency=latency) as emulator:
                if {"list", "export"} & set(parts):
                    self.bare_list(emulator.url)  # unmeasured: the emulator's first list is slower (whoever asks)
                for part in parts:
                    if part == "status":
                        self.status(devices, emulator)
                    else:
                        getattr(self, {"list": "listing"}.get(part, part))(devices, emulator.url)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[10000, 100000, 300000])
    parser.add_argument(
        "--parts",
        nargs="+",
        default=["inventory", "list", "export", "status"],
        choices=["inventory", "list", "export", "status"],
    )
    parser.add_argument("--status-max", type=int, default=100000, help="the most devices the status is run at")
    parser.add_argument("--latency", type=float, default=0.005, help="the emulator's latency for the status part")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument(
        "--status-pairs", type=int, default=1, help="runs of the aiohttp client and the collection, in turn"
    )
    parser.add_argument(
        "--no-status-dest",
        dest="status_dest",
        action="store_false",
        help="the status without dest (every result handed to Ansible, the aiohttp client writing no file)",
    )
    parser.add_argument(
        "--no-requests-status",
        dest="requests_status",
        action="store_false",
        help="no status run of harness/bare.py's requests client",
    )
    parser.add_argument(
        "--record-var",
        nargs="+",
        default=["false", "true"],
        choices=["false", "true"],
        help="the inventory's record_var settings to run, in this order (default: false, the default, then true)",
    )
    parser.add_argument(
        "--no-floor", dest="floor", action="store_false", help="no inventory run of ansible-core's floor (1,000,000)"
    )
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="nac-bench-scale-")
    try:
        print(
            "  %9s  %-9s %-42s %10s %6s %10s %6s %12s"
            % ("devices", "part", "", "wall", "ratio", "CPU", "ratio", "peak RSS")
        )
        Scale(workdir, args).run()
    finally:
        shutil.rmtree(workdir, True)


if __name__ == "__main__":
    main()
