# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the NAC API emulator (tests/emulator/nac_emulator.py) as a process of its own, so that its CPU time is
never the client's: its request counts, its reset and its CPU time (``/proc/<pid>/stat``) are read over HTTP and
from /proc. ``EmulatorProcess.measure`` samples work run in this process: wall time, CPU time of every thread of
this process (``resource.getrusage(RUSAGE_SELF)``), the requests the emulator counted and its own CPU time."""

import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Tuple

import requests

from harness.paths import EMULATOR

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

Sample = collections.namedtuple("Sample", "wall cpu requests server_cpu")


def self_cpu() -> float:
    """CPU seconds (user + system) of every thread of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def stop_process(process: "subprocess.Popen | None") -> None:
    """Terminate a child process that is still running (killed if it does not end within 10 s)."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class EmulatorProcess:
    """The NAC API emulator (tests/emulator/nac_emulator.py) as a process of its own.

    ``config`` is an emulator config (a dict, written to a JSON file) or the path of one."""

    def __init__(self, config, latency: float = 0.0) -> None:
        self.config, self.latency = config, latency
        self.process = self.url = self.workdir = None

    def start(self) -> "EmulatorProcess":
        self.workdir = tempfile.mkdtemp(prefix="nac-bench-emulator-")
        config_path, port_file = self.config, os.path.join(self.workdir, "port")
        if not isinstance(config_path, str):
            config_path = os.path.join(self.workdir, "config.json")
            with open(config_path, "w") as handle:
                json.dump(self.config, handle)
        self.process = subprocess.Popen(
            [
                sys.executable,
                EMULATOR,
                "--port",
                "0",
                "--port-file",
                port_file,
                "--quiet",
                "--config",
                config_path,
                "--latency",
                str(self.latency),
            ]
        )
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit("the emulator did not start")
            time.sleep(0.05)
        with open(port_file) as handle:
            self.url = "http://127.0.0.1:%s" % handle.read().strip()
        return self

    def stop(self) -> None:
        stop_process(self.process)
        if self.workdir:
            shutil.rmtree(self.workdir, True)
        self.process = self.workdir = None

    def __enter__(self):
        return self.start() if self.process is None else self

    def __exit__(self, *exc_info):
        self.stop()

    def counts(self) -> dict:
        """{"METHOD /api/path": requests} since the start or the last reset (admin requests are not counted)."""
        return requests.get(self.url + "/_emulator/requests", timeout=30).json()

    def reset(self) -> None:
        """Back to the configured devices (a bulk creation can run again) and zero counts."""
        requests.post(self.url + "/_emulator/reset", timeout=60).raise_for_status()

    def cpu(self) -> float:
        """CPU seconds of the emulator process so far (all its threads)."""
        with open("/proc/%d/stat" % self.process.pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / float(CLOCK_TICKS)  # utime, stime: fields 14 and 15 of stat(5)

    def measure(self, work: Callable[[], Any]) -> Tuple[Sample, Any]:
        """Sample of ``work()`` run in this process, and what it returned."""
        before, server = self.counts(), self.cpu()
        cpu, start = self_cpu(), time.perf_counter()
        result = work()
        wall, cpu = time.perf_counter() - start, self_cpu() - cpu
        return Sample(wall, cpu, sent(before, self.counts()), self.cpu() - server), result


def sent(before: dict, after: dict) -> int:
    """Requests counted between two ``counts()``."""
    return sum(after.get(kind, 0) - before.get(kind, 0) for kind in after)
