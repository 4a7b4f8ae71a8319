# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin's host variables on their way through AWX, against an emulator of this check's own.

An AWX inventory update runs ``ansible-inventory --list --export --output FILE`` and stores what
``json.load(FILE)`` gives (awx/main/tasks/jobs.py, RunInventoryUpdate); a job then reads the stored
inventory back from a script. This check does both and asserts: the server's ordinary strings are stored
as plain strings (so that AWX shows and filters them); a server string that could be a template
(``{{ lookup('pipe', ...) }}`` as a group name and as a status message) is never run (not by compose, groups
or keyed_groups during the update, not by a job that uses the variable) and is stored as
``{"__ansible_unsafe": ...}``, never as a plain, templatable string. Usage: awx_vars_check.py PYTHON.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import stat
import sys
import tempfile

from inventory_check import Emulator, Failed, Run, expect  # the same directory

SAFE = "Cameras"


def config(marker):
    evil = "{{ lookup('pipe', 'touch %s') }}" % marker
    return evil, dict(
        groups=[dict(name=SAFE, subnet="10.20.0.0/24"), dict(name=evil, subnet="10.21.0.0/24")],
        profiles=[dict(name="Camera", max_pairs=1, host_start=10, host_end=200)],
        devices=[
            dict(id=1, hostname="evil-01", group=evil, profile="Camera", macs=["02:00:00:21:00:01"]),
            dict(id=2, hostname="plain-01", group=SAFE, profile="Camera", macs=["02:00:00:20:00:02"]),
            dict(id=3, hostname="plain-02", group=SAFE, profile="Camera"),
        ],
        dot1x=dict(overrides={"evil-01": {"message": evil}, "plain-02": {"message": "No MAC {#1"}}),
    )


def strings(value):
    """Every plain string in a JSON value, keys included (an {"__ansible_unsafe": s} holds none)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict) and list(value) != ["__ansible_unsafe"]:
        return list(value) + [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def check(run, evil, marker):
    source = run.source(
        "awx.nac.yml",
        dot1x_status=True,
        compose=dict(nac_group_copy="nac_group", nac_message_copy="nac_dot1x_message"),
        groups=dict(nac_grouped="nac_group is string"),
        keyed_groups=[dict(key="nac_group", prefix="by_group")],
    )
    output = os.path.join(run.workdir, "output.json")
    done = run.command(["ansible-inventory", "-i", source, "--list", "--export", "--output", output])
    expect(done.returncode == 0, "ansible-inventory --list --export --output, as an AWX update runs it", done.stderr)
    expect(not os.path.exists(marker), "the templatable server strings did not run during the inventory update")
    with open(output) as handle:
        data = json.load(handle)  # as AWX reads it
    hostvars = data["_meta"]["hostvars"]

    plain = hostvars["plain-01"]
    expect(
        plain["nac_group"] == SAFE
        and plain["nac_group_copy"] == SAFE
        and plain["nac_dot1x_status"] == "AUTHENTICATED"
        and plain["nac_hostname"] == "plain-01"
        and plain["nac_macs"] == ["02:00:00:20:00:02"]
        and plain["nac_record"]["group"] == SAFE,
        "ordinary server strings are stored as plain strings",
        json.dumps(plain),
    )
    expect(
        hostvars["plain-02"]["nac_dot1x_message"] == {"__ansible_unsafe": "No MAC {#1"}
        and hostvars["plain-02"]["nac_dot1x_status"] == "UNAUTHENTICATED",
        "a string with a brace stays marked unsafe",
        json.dumps(hostvars["plain-02"]),
    )
    wrapped = {"__ansible_unsafe": evil}
    bad = hostvars["evil-01"]
    expect(
        bad["nac_group"] == wrapped
        and bad["nac_group_copy"] == wrapped
        and bad["nac_dot1x_message"] == wrapped
        and bad["nac_message_copy"] == wrapped
        and bad["nac_record"]["group"] == wrapped,
        "the templatable server strings are stored as {'__ansible_unsafe': ...}, also where compose copied them",
        json.dumps(bad),
    )
    expect(
        not [text for text in strings(data) if "{" in text or "}" in text],
        "no plain (templatable) string with a brace anywhere in the stored inventory",
        json.dumps(data),
    )
    groups = sorted(name for name in data if name not in ("_meta", "all"))
    expect(
        "by_group_Cameras" in groups
        and "nac_grouped" in groups
        and data["nac_dot1x_unauthenticated"]["hosts"] == ["plain-02"],
        "status, composed and keyed groups are there",
        json.dumps(groups),
    )

    done = run.command(
        ["ansible-playbook", "-i", source, "netaccess.nac.dot1x_report", "-e", "nac_hosts=nac_dot1x_held"]
    )
    expect(
        done.returncode == 0 and "No device of the NAC inventory is in nac_dot1x_held" in done.stdout,
        "dot1x_report on a status group that no device is in: nothing to re-check, and it says so",
        done.stdout + done.stderr,
    )

    # A job on the stored inventory: AWX gives it to ansible-playbook as a script that prints it.
    script = os.path.join(run.workdir, "hosts")
    with open(script, "w") as handle:
        handle.write("#!%s\nimport sys\nsys.stdout.write(open(%r).read())\n" % (run.python, output))
    os.chmod(script, stat.S_IRWXU)
    play = os.path.join(run.workdir, "job.yml")
    with open(play, "w") as handle:
        handle.write(
            "- hosts: nac_devices\n  gather_facts: false\n  connection: local\n  tasks:\n"
            "    - ansible.builtin.debug:\n        msg: 'GROUP={{ nac_group }} MESSAGE={{ nac_dot1x_message }}'\n"
        )
    done = run.command(["ansible-playbook", "-i", script, play, "-e", "ansible_python_interpreter=" + run.python])
    expect(done.returncode == 0 and "GROUP=%s" % SAFE in done.stdout, "a job on the stored inventory runs", done.stdout)
    expect(
        not os.path.exists(marker) and "GROUP=%s MESSAGE=%s" % (evil, evil) in done.stdout,
        "the job shows the templatable strings as they are and does not run them",
        done.stdout,
    )
    return data


def check_smart_inventory(run, data):
    """A smart inventory (filter groups__name=nac_dot1x_unauthenticated) holds the hosts and their variables
    but no group: dot1x_report.yml without nac_hosts fails instead of checking nothing; with nac_hosts: all it
    re-checks them."""
    hosts = data["nac_dot1x_unauthenticated"]["hosts"]
    smart = os.path.join(run.workdir, "smart")
    with open(smart, "w") as handle:
        json.dump(
            dict(all=dict(hosts=hosts), _meta=dict(hostvars=dict((h, data["_meta"]["hostvars"][h]) for h in hosts))),
            handle,
        )
    script = os.path.join(run.workdir, "smart.py")
    with open(script, "w") as handle:
        handle.write("#!%s\nimport sys\nsys.stdout.write(open(%r).read())\n" % (run.python, smart))
    os.chmod(script, stat.S_IRWXU)
    report = [
        "ansible-playbook",
        "-i",
        script,
        "netaccess.nac.dot1x_report",
        "-e",
        "ansible_python_interpreter=" + run.python,
    ]
    done = run.command(report)
    output = " ".join((done.stdout + done.stderr).split())
    expect(
        done.returncode == 2
        and "nac_hosts 'nac_dot1x_unauthenticated' matches no host of this inventory (1 hosts; groups: none)" in output
        and "set the extra variable nac_hosts: all" in output
        and "Query this run's devices" not in output,
        "on a smart inventory without nac_hosts, dot1x_report fails before checking anything and says what to set",
        output,
    )
    done = run.command(report + ["-e", "nac_hosts=all", "-e", "nac_wait_timeout=1", "-e", "nac_wait_interval=0.2"])
    output = " ".join((done.stdout + done.stderr).split())
    expect(
        done.returncode == 2 and "1 of 1 devices did not reach AUTHENTICATED within 1 s: plain-02 (id 3)" in output,
        "with nac_hosts: all it re-checks the smart inventory's hosts and fails naming the device",
        output,
    )


def main():
    python = sys.argv[1]
    workdir = tempfile.mkdtemp(prefix="nac-awx-vars-")
    marker = os.path.join(workdir, "TEMPLATED")
    evil, settings = config(marker)
    try:
        with Emulator(config=settings).start() as emulator:
            try:
                run = Run(python, emulator, workdir)
                check_smart_inventory(run, check(run, evil, marker))
            except Failed as failure:
                print("FAILED - %s" % failure)
                return 1
    finally:
        shutil.rmtree(workdir, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
