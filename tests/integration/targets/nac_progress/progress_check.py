# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress of long work as a user sees it, against an emulator whose every request takes LATENCY seconds (one
query at a time, so that the work runs past progress.FIRST seconds):

- nac_dot1x_status: lines "N of 160 queried ..." then "done in", between the task banner and its result; none
  with NAC_PROGRESS=false, none under async (and the same result);
- a wait: its rounds, "queried again (round ...)", bounded by what is left of wait_timeout;
- nac_device with 160 devices to create: "N of 160 written";
- ansible-inventory --list: the JSON on stdout without any progress line, the lines on stderr;
- an AWX job (ansible-runner): each line is a verbose event, shown while the task runs.
Usage: progress_check.py PYTHON.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator  # noqa: E402  pylint: disable=wrong-import-position

KEY = "nac-demo-admin-key"
LATENCY = 0.04
COUNT = 160  # devices: COUNT * LATENCY = 6.4 s of queries, one at a time
DEVICES = [dict(id=n, hostname="pg-%03d" % n, group="Cameras", profile="Camera") for n in range(1, COUNT + 1)]
LINE = (
    r"\[localhost\] nac_dot1x_status: [0-9,]+ of %d queried, 0 failed, 0 refusals waited out, about \d+ s left" % COUNT
)

PLAY = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/netaccess.nac.nac:
      api_url: "{{ nac_url }}"
      api_key: %s
  tasks:
%s
""" % (KEY, "%s")

STATUS = """
    - name: status of every device
      netaccess.nac.nac_dot1x_status:
        all_devices: true
        concurrency: 1
      register: status
    - name: the summary
      ansible.builtin.debug:
        msg: "summary {{ status.summary | to_json }}"
"""

ASYNC_STATUS = """
    - name: status of every device
      netaccess.nac.nac_dot1x_status:
        all_devices: true
        concurrency: 1
      async: 120
      poll: 2
      register: status
    - name: the summary
      ansible.builtin.debug:
        msg: "summary {{ status.summary | to_json }}"
"""

WAIT = """
    - name: wait for a status the devices never reach
      netaccess.nac.nac_dot1x_status:
        hostname: [pg-001, pg-002, pg-003]
        wait_for: AUTHENTICATED
        wait_timeout: 8
        wait_interval: 1
      register: waited
      failed_when: waited.results is not defined
"""


def playbook(directory, name, tasks):
    path = os.path.join(directory, name)
    with open(path, "w") as handle:
        handle.write(PLAY % tasks)
    return path


def run(command, env=None, check=True):
    done = subprocess.run(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        env=dict(os.environ, **(env or {})),
        check=False,
    )
    if check and done.returncode:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (command, done.returncode, done.stdout, done.stderr))
    return done


def play(python, path, url, env=None, extra=()):
    command = ["ansible-playbook", "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + python]
    return run(command + ["-e", "nac_url=" + url] + list(extra) + [path], env).stdout


def progress_lines(out, label="nac_dot1x_status"):
    return [line for line in out.splitlines() if line.startswith("[localhost] %s: " % label)]


def summary(out):
    return re.search(r'"summary (\{.*\})"', out).group(1)


def check_status(python, directory, url):
    out = play(python, playbook(directory, "status.yml", STATUS), url)
    lines = progress_lines(out)
    assert len(lines) >= 2, out
    assert all(re.match(LINE + "$", line) for line in lines[:-1]), lines
    assert re.match(r"\[localhost\] nac_dot1x_status: done in \d+ s$", lines[-1]), lines
    banner, result = out.index("TASK [status of every device]"), out.index("ok: [localhost]")
    assert banner < out.index(lines[0]) < result
    quiet = play(python, os.path.join(directory, "status.yml"), url, env=dict(NAC_PROGRESS="false"))
    assert progress_lines(quiet) == [] and summary(quiet) == summary(out), quiet
    silenced = play(python, os.path.join(directory, "status.yml"), url, extra=["-e", "nac_progress=false"])
    assert progress_lines(silenced) == [], silenced
    # The job files in the work directory: ansible-core's async_status looks for them under the account's home
    # from the password database (~root), async_wrapper under $HOME, so a run given another HOME (as CI's
    # fresh machine is) would look in a folder outside it and not find the job.
    jobs = dict(ANSIBLE_ASYNC_DIR=os.path.join(directory, "async-jobs"))
    background = play(python, playbook(directory, "async.yml", ASYNC_STATUS), url, env=jobs)
    assert progress_lines(background) == [] and summary(background) == summary(out), background
    print("status: %d progress lines; none when silenced or async; the same summary" % len(lines))
    return lines


def check_wait(python, directory, url):
    out = play(python, playbook(directory, "wait.yml", WAIT), url)
    lines = progress_lines(out)
    rounds = [line for line in lines if "queried again (round " in line]
    assert rounds, out
    assert re.search(r"of 3 queried again \(round \d+: 3 of 3 without status AUTHENTICATED\), 0 failed", rounds[0])
    assert re.search(r"at most \d s left$", rounds[0]), rounds  # what is left of wait_timeout: 8 s
    print("wait: %s" % rounds[0])


def check_bulk(python, directory, url):
    tasks = """
    - name: create many devices
      netaccess.nac.nac_device:
        devices: "{{ new_devices }}"
        concurrency: 1
      register: created
"""
    devices = [dict(hostname="new-%03d" % n, group="Workstations", profile="Workstation") for n in range(COUNT)]
    extra = os.path.join(directory, "bulk_vars.json")
    with open(extra, "w") as handle:
        json.dump(dict(new_devices=devices), handle)
    out = play(python, playbook(directory, "bulk.yml", tasks), url, extra=["-e", "@" + extra])
    lines = progress_lines(out, "nac_device")
    assert lines and re.match(
        r"\[localhost\] nac_device: [0-9,]+ of %d written, 0 failed, 0 refusals waited out, about \d+ s left$" % COUNT,
        lines[0],
    ), out
    print("bulk: %s" % lines[0])


def check_inventory(directory, url):
    source = os.path.join(directory, "progress.nac.yml")
    with open(source, "w") as handle:
        handle.write("plugin: netaccess.nac.nac\ndot1x_status: true\nconcurrency: 1\napi_url: %s\n" % url)
    done = run(["ansible-inventory", "-i", source, "--list"], env=dict(NAC_API_KEY=KEY))
    listed = json.loads(done.stdout)  # nothing but the JSON on stdout
    assert len(listed["_meta"]["hostvars"]) == COUNT + 160  # the devices created by check_bulk too
    assert "queried" not in done.stdout
    lines = [line for line in done.stderr.splitlines() if line.startswith("netaccess.nac.nac inventory: ")]
    assert lines and lines[-1].startswith("netaccess.nac.nac inventory: done in "), done.stderr
    print("inventory: %s (stderr)" % lines[0])


def check_runner(python, directory, url):
    private = os.path.join(directory, "runner")
    for sub in ("env", "inventory", "project"):
        os.makedirs(os.path.join(private, sub))
    shutil.copy(os.path.join(directory, "status.yml"), os.path.join(private, "project"))
    with open(os.path.join(private, "inventory", "hosts"), "w") as handle:
        handle.write("localhost ansible_connection=local ansible_python_interpreter=%s\n" % python)
    with open(os.path.join(private, "env", "extravars"), "w") as handle:
        json.dump(dict(nac_url=url), handle)
    runner = shutil.which("ansible-runner") or os.path.join(os.path.dirname(sys.executable), "ansible-runner")
    run([runner, "run", private, "-p", "status.yml", "--ident", "1"])
    events = []
    for path in glob.glob(os.path.join(private, "artifacts", "1", "job_events", "*.json")):
        with open(path) as handle:
            events.append(json.load(handle))
    events.sort(key=lambda event: event["counter"])
    shown = [event for event in events if "nac_dot1x_status: " in event.get("stdout", "")]
    assert shown and all(event["event"] == "verbose" for event in shown), [e["event"] for e in events]
    kinds = [event["event"] for event in events]
    first = kinds.index("verbose", kinds.index("runner_on_start"))
    assert kinds.index("runner_on_start") < first < kinds.index("runner_on_ok")
    print("ansible-runner: %d verbose events, between runner_on_start and runner_on_ok" % len(shown))


def main():
    python = sys.argv[1]
    with tempfile.TemporaryDirectory() as directory:
        with Emulator(config=dict(devices=DEVICES), latency=LATENCY).start() as emulator:
            check_status(python, directory, emulator.url)
            check_wait(python, directory, emulator.url)
            check_bulk(python, directory, emulator.url)
            check_inventory(directory, emulator.url)
            check_runner(python, directory, emulator.url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
