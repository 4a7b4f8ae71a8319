# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Side by side, in the same run: the collection's code and a bare ``requests`` + ThreadPoolExecutor
client making the same requests to the NAC API emulator, which runs in a process of its own.

Shared by bench_dot1x_status.py (the status batch), bench_nac_device_bulk.py (the bulk creation) and
bench_eda_round.py (the event source's round). Each side's figures are its wall time, its CPU time per
request and the requests the emulator counted during its run; each comparison runs every side once per
repeat, in turns (the order rotates from repeat to repeat), so that both see the same load, and prints
the median and the spread (min-max) of every figure and of the ratios to the bare client, which are
taken run by run (side / bare client of the same repeat).

CPU time, all threads of the process that makes the requests, never the emulator's:

- code run in this process (the bare client, module_utils, the event source's round):
  ``resource.getrusage(RUSAGE_SELF)`` before and after; nothing else runs in this process meanwhile;
- a module run by ``ansible-playbook``: the module's own Python process, RUSAGE_SELF read at its exit by a
  ``sitecustomize`` that the benchmark puts on PYTHONPATH (see ModuleProcess): the module process with all
  its threads, not ansible-playbook's controller or its workers. Its wall time is that process's lifetime,
  so it includes the interpreter's start-up and AnsiballZ (a fixed cost per task), which the bare client,
  running in this already started process, does not pay.

The emulator's CPU time per request (``/proc/<pid>/stat``) is printed too: on a 2-core machine the
server shares the cores with the client.

Targets are printed PASS/FAIL against the median ratio; a missed target never changes the exit status.
"""

from __future__ import absolute_import, division, print_function

import collections
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import requests
from bench_bare import ADMIN_KEY, FIRE_PATH, BareClient, bare_bulk, bare_status_batch  # noqa: F401 (shared)
from bench_rusage import SITECUSTOMIZE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMULATOR = os.path.join(ROOT, "tests", "emulator", "nac_emulator.py")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

Sample = collections.namedtuple("Sample", "wall cpu requests server_cpu")


def self_cpu():
    """CPU seconds (user + system) of every thread of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def stop_process(process):
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

    def __init__(self, config, latency=0.0):
        self.config, self.latency = config, latency
        self.process = self.url = self.workdir = None

    def start(self):
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

    def stop(self):
        stop_process(self.process)
        if self.workdir:
            shutil.rmtree(self.workdir, True)
        self.process = self.workdir = None

    def __enter__(self):
        return self.start() if self.process is None else self

    def __exit__(self, *exc_info):
        self.stop()

    def counts(self):
        """{"METHOD /api/path": requests} since the start or the last reset (admin requests are not counted)."""
        return requests.get(self.url + "/_emulator/requests", timeout=30).json()

    def reset(self):
        """Back to the configured devices (a bulk creation can run again) and zero counts."""
        requests.post(self.url + "/_emulator/reset", timeout=60).raise_for_status()

    def cpu(self):
        """CPU seconds of the emulator process so far (all its threads)."""
        with open("/proc/%d/stat" % self.process.pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / float(CLOCK_TICKS)  # utime, stime: fields 14 and 15 of stat(5)

    def measure(self, work):
        """Sample of ``work()`` run in this process, and what it returned."""
        before, server = self.counts(), self.cpu()
        cpu, start = self_cpu(), time.perf_counter()
        result = work()
        wall, cpu = time.perf_counter() - start, self_cpu() - cpu
        return Sample(wall, cpu, sent(before, self.counts()), self.cpu() - server), result


def sent(before, after):
    """Requests counted between two ``counts()``."""
    return sum(after.get(kind, 0) - before.get(kind, 0) for kind in after)


class ModuleProcess:
    """Runs playbooks with ``ansible-playbook -c local`` and measures one module's own process.

    A ``sitecustomize`` on PYTHONPATH makes each module process log its CPU time (RUSAGE_SELF at its
    exit: every thread of it) and its lifetime; pipelining is off so that the module's file
    (AnsiballZ_<module>.py) names the process. Not counted: the interpreter's teardown after atexit."""

    def __init__(self, workdir, collections_path):
        self.workdir = workdir
        self.log = os.path.join(workdir, "module-rusage.jsonl")
        site = os.path.join(workdir, "site")
        os.mkdir(site)
        with open(os.path.join(site, "sitecustomize.py"), "w") as handle:
            handle.write(SITECUSTOMIZE % dict(log=self.log))
        self.bare_script = os.path.join(workdir, "nac_bench_bare.py")  # the name the sitecustomize logs
        shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_bare.py"), self.bare_script)
        bindir = os.path.dirname(sys.executable)
        playbook = os.path.join(bindir, "ansible-playbook")
        self.command = [playbook if os.path.exists(playbook) else "ansible-playbook", "-i", "localhost,", "-c", "local"]
        pythonpath = os.pathsep.join(path for path in (site, os.environ.get("PYTHONPATH")) if path)
        self.env = dict(
            os.environ,
            ANSIBLE_COLLECTIONS_PATH=collections_path,
            ANSIBLE_PYTHON_INTERPRETER=sys.executable,
            PYTHONPATH=pythonpath,
            ANSIBLE_PIPELINING="false",
            ANSIBLE_LOCALHOST_WARNING="false",
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
            ANSIBLE_RETRY_FILES_ENABLED="false",
        )

    def run(self, emulator, module, arguments):
        """(Sample of the module's process, ansible-playbook's whole wall time): ``ansible-playbook`` with
        ``arguments`` (playbook and options). Every counted request is the module's: it is the only task
        that talks to the emulator."""
        if os.path.exists(self.log):
            os.remove(self.log)
        before, server = emulator.counts(), emulator.cpu()
        start = time.perf_counter()
        done = subprocess.run(
            self.command + list(arguments),
            env=self.env,
            cwd=self.workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            universal_newlines=True,
        )
        whole = time.perf_counter() - start
        if done.returncode:
            raise SystemExit("ansible-playbook failed (rc %d):\n%s" % (done.returncode, done.stdout[-4000:]))
        mine = self._logged("AnsiballZ_%s.py" % module)
        return Sample(mine["wall"], mine["cpu"], sent(before, emulator.counts()), emulator.cpu() - server), whole

    def bare(self, emulator, kind, concurrency, bodies=None):
        """Sample of the bare client (bench_bare.py) doing a ``kind`` batch (status, or bulk with ``bodies``) in a
        process of its own, measured as a module's process is: its lifetime and its CPU time at exit."""
        if os.path.exists(self.log):
            os.remove(self.log)
        arguments = [sys.executable, self.bare_script, kind, emulator.url, str(concurrency)]
        if bodies is not None:
            path = os.path.join(self.workdir, "bare-bodies.json")
            with open(path, "w") as handle:
                json.dump(bodies, handle)
            arguments.append(path)
        before, server = emulator.counts(), emulator.cpu()
        subprocess.run(arguments, env=self.env, cwd=self.workdir, stdout=subprocess.DEVNULL, check=True)
        mine = self._logged("nac_bench_bare.py")
        return Sample(mine["wall"], mine["cpu"], sent(before, emulator.counts()), emulator.cpu() - server)

    def _logged(self, name):
        """The one process whose command line names ``name`` in the sitecustomize's log."""
        runs = []
        if os.path.exists(self.log):
            with open(self.log) as handle:
                runs = [json.loads(line) for line in handle]
        mine = [run for run in runs if any(name in arg for arg in run["argv"])]
        if len(mine) != 1:
            raise SystemExit("expected one process of %s to log its rusage, got %s" % (name, runs))
        return mine[0]


def median_spread(values):
    return statistics.median(values), min(values), max(values)


def show(value, form):
    median, low, high = median_spread(value)
    return (form + " [" + form + "-" + form + "]") % (median, low, high)


def compare(title, sides, repeat=3, targets=None):
    """Run every side ``repeat`` times in turns and print the figures and the ratios to the first side.

    ``sides``: [(name, run)], ``run(repeat_index)`` returning a Sample; the first is the baseline (the bare
    client). ``targets``: {name: (wall limit, CPU per request limit)}, either None for no target, or {name: (wall
    limit, CPU limit, baseline)}: the target is then held against the side named ``baseline`` (a module's process
    against the bare client's process), and the ratios to it are printed too. Returns {name: [Sample, ...]}."""
    targets = targets or {}
    samples = collections.OrderedDict((name, []) for name, _run in sides)
    baseline = sides[0][0]
    print(title)
    for index in range(repeat):
        turn = sides[index % len(sides) :] + sides[: index % len(sides)]  # who goes first rotates
        for name, run in turn:
            samples[name].append(run(index))
        print(
            "  run %d: %s"
            % (
                index + 1,
                " | ".join(
                    "%s %.2f s, %.3f ms CPU/request" % (name, samples[name][-1].wall, per_request(samples[name][-1]))
                    for name, _run in sides
                ),
            )
        )
    header = "median [min-max] of %d runs" % repeat
    width = max([len(header)] + [len(name) for name in samples])
    print(
        "  %-*s  %-20s  %-23s  %-8s  %s"
        % (width, header, "wall s", "CPU ms/request", "requests", "emulator CPU ms/request")
    )
    for name, runs in samples.items():
        print(
            "  %-*s  %-20s  %-23s  %-8s  %s"
            % (
                width,
                name,
                show([s.wall for s in runs], "%.2f"),
                show([per_request(s) for s in runs], "%.3f"),
                "/".join(sorted(set(str(s.requests) for s in runs))),
                show([s.server_cpu * 1000.0 / max(s.requests, 1) for s in runs], "%.3f"),
            )
        )
    ratios(samples, baseline, width, dict((name, limits[:2]) for name, limits in targets.items() if len(limits) == 2))
    for other in sorted(set(limits[2] for limits in targets.values() if len(limits) > 2)):
        mine = dict((name, limits[:2]) for name, limits in targets.items() if limits[2:] == (other,))
        ratios(samples, other, width, mine, only=mine)
    return samples


def ratios(samples, baseline, width, targets, only=None):
    """Print every side's ratios to ``baseline`` (or only those of ``only``), run by run, with ``targets``."""
    base = samples[baseline]
    print("  ratio to %s, run by run: median [min-max]" % baseline)
    for name, runs in samples.items():
        if name == baseline or (only is not None and name not in only):
            continue
        if any(s.requests != b.requests for s, b in zip(runs, base)):
            print(
                "  NOTE: %s did not make the same number of requests as %s (see the requests column)" % (name, baseline)
            )
        wall = [s.wall / b.wall for s, b in zip(runs, base)]
        cpu = [per_request(s) / per_request(b) for s, b in zip(runs, base)]
        wall_limit, cpu_limit = targets.get(name, (None, None))
        print(
            "  %-*s  wall %sx%s   CPU/request %sx%s"
            % (width, name, show(wall, "%.2f"), verdict(wall, wall_limit), show(cpu, "%.2f"), verdict(cpu, cpu_limit))
        )


def per_request(sample):
    return sample.cpu * 1000.0 / max(sample.requests, 1)


def verdict(ratios, limit):
    if limit is None:
        return ""
    return " (target <= %.2fx: %s)" % (limit, "PASS" if statistics.median(ratios) <= limit else "FAIL")
