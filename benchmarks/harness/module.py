# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run playbooks under ``ansible-playbook -c local`` and measure one module's own process, so that a module is
compared with the bare client process by process.

The module process's wall time is its lifetime, so it includes the interpreter's start-up and AnsiballZ (a fixed
cost per task), which a client running in an already started process does not pay."""

import json
import os
import shutil
import subprocess
import sys
import time
from typing import List, Tuple

from harness.emulator import EmulatorProcess, Sample, sent
from harness.rusage import SITECUSTOMIZE

BARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bare.py")


def playbook_command(*arguments: str) -> List[str]:
    """Return the command line of ``ansible-playbook -c local`` on localhost with ``arguments``: the one beside this
    interpreter, so that the benchmark's toolchain runs the playbook."""
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    tool = playbook if os.path.exists(playbook) else "ansible-playbook"
    return [tool, "-i", "localhost,", "-c", "local"] + list(arguments)


def play(command: List[str], env: dict, workdir: str) -> float:
    """Run ``command`` (playbook_command's) and return its wall time; a failed playbook ends the benchmark with its
    output's end, since a figure of a failed run means nothing."""
    start = time.perf_counter()
    done = subprocess.run(
        command, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True
    )
    if done.returncode:
        raise SystemExit("ansible-playbook failed (rc %d):\n%s" % (done.returncode, done.stdout[-4000:]))
    return time.perf_counter() - start


class ModuleProcess:
    """Runs playbooks with ``ansible-playbook -c local`` and measures one module's own process.

    A ``sitecustomize`` on PYTHONPATH makes each module process log its CPU time (RUSAGE_SELF at its
    exit: every thread of it) and its lifetime; pipelining is off so that the module's file
    (AnsiballZ_<module>.py) names the process. Not counted: the interpreter's teardown after atexit."""

    def __init__(self, workdir: str, collections_path: str) -> None:
        self.workdir = workdir
        self.log = os.path.join(workdir, "module-rusage.jsonl")
        site = os.path.join(workdir, "site")
        os.mkdir(site)
        with open(os.path.join(site, "sitecustomize.py"), "w") as handle:
            handle.write(SITECUSTOMIZE % dict(log=self.log))
        self.bare_script = os.path.join(workdir, "nac_bench_bare.py")  # the name the sitecustomize logs
        shutil.copy(BARE, self.bare_script)
        self.command = playbook_command()
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

    def run(self, emulator: EmulatorProcess, module: str, arguments: List[str]) -> Tuple[Sample, float]:
        """(Sample of the module's process, ansible-playbook's whole wall time): ``ansible-playbook`` with
        ``arguments`` (playbook and options). Every counted request is the module's: it is the only task
        that talks to the emulator."""
        if os.path.exists(self.log):
            os.remove(self.log)
        before, server = emulator.counts(), emulator.cpu()
        whole = play(self.command + list(arguments), self.env, self.workdir)
        mine = self._logged("AnsiballZ_%s.py" % module)
        return Sample(mine["wall"], mine["cpu"], sent(before, emulator.counts()), emulator.cpu() - server), whole

    def bare(self, emulator: EmulatorProcess, kind: str, concurrency: int, bodies: "list | None" = None) -> Sample:
        """Sample of the bare client (harness/bare.py) doing a ``kind`` batch (status, or bulk with ``bodies``) in a
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
