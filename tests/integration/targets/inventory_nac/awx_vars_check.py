# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin's host variables on their way through AWX, against an emulator of this check's own.

An AWX inventory update runs ``ansible-inventory --list --export --output FILE`` and stores what
``json.load(FILE)`` gives (awx/main/tasks/jobs.py, RunInventoryUpdate); a job then reads the stored
inventory back from a script. This check does both and asserts: the server's ordinary strings are stored
as plain strings (so that AWX shows and filters them) on ansible-core 2.19+, and as ``{"__ansible_unsafe": ...}``
before 2.19 (where every server string is unsafe, so that one that a compose decodes never becomes a template;
the job reads them back as text); a server string that could be a template
(``{{ lookup('pipe', ...) }}`` as a group name and as a status message) is never run (not by compose, groups
or keyed_groups during the update, not by a job that uses the variable) and is stored as
``{"__ansible_unsafe": ...}``, never as a plain, templatable string. Usage: awx_vars_check.py PYTHON.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import shutil
import stat
import sys
import tempfile

from ansible.release import __version__ as ansible_version
from inventory_check import Emulator, Failed, Run, expect  # the same directory

SAFE = "Cameras"
FORGED = "cam-05\x1b[2J\nok: [cam-06] => ALL DEVICES AUTHENTICATED"  # a hostname with control characters
BEFORE_2_19 = tuple(int(part) for part in ansible_version.split(".")[:2]) < (2, 19)


def stored(text):
    """How AWX stores an ordinary server string: plain on 2.19+, marked unsafe before 2.19."""
    return {"__ansible_unsafe": text} if BEFORE_2_19 else text


def config(marker):
    evil = "{{ lookup('pipe', 'touch %s') }}" % marker
    # The same template, without a brace until a compose decodes it (2.16-2.18 ran it before every server string
    # was unsafe there).
    urlencoded = "".join("%%%02X" % ord(char) for char in evil)
    return evil, dict(
        groups=[
            dict(name=SAFE, subnet="10.20.0.0/24"),
            dict(name=evil, subnet="10.21.0.0/24"),
            dict(name=urlencoded, subnet="10.22.0.0/24"),
        ],
        profiles=[dict(name="Camera", max_pairs=1, host_start=10, host_end=200)],
        devices=[
            dict(id=1, hostname="evil-01", group=evil, profile="Camera", macs=["02:00:00:21:00:01"]),
            dict(id=2, hostname="plain-01", group=SAFE, profile="Camera", macs=["02:00:00:20:00:02"]),
            dict(id=3, hostname="plain-02", group=SAFE, profile="Camera"),
            dict(id=4, hostname="coded-01", group=urlencoded, profile="Camera", macs=["02:00:00:22:00:04"]),
            dict(id=5, hostname=FORGED, group=SAFE, profile="Camera", macs=["02:00:00:20:00:05"]),
        ],
        dot1x=dict(
            overrides={
                "evil-01": {"message": evil},
                "plain-02": {"message": "No MAC {#1"},
                "coded-01": {"message": base64.b64encode(evil.encode()).decode()},
            }
        ),
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
        record_var=True,  # (the record's strings are stored as the variables' are)
        compose=dict(
            nac_group_copy="nac_group",
            nac_message_copy="nac_dot1x_message",
            nac_group_decoded="nac_group | urldecode",
            nac_message_decoded="nac_dot1x_message | b64decode if nac_id == 4 else None",  # others: not base64
        ),
        groups=dict(nac_grouped="nac_group is string"),
        keyed_groups=[dict(key="nac_group", prefix="by_group")],
    )
    output = os.path.join(run.workdir, "output.json")
    done = run.command(["ansible-inventory", "-i", source, "--list", "--export", "--output", output])
    expect(done.returncode == 0, "ansible-inventory --list --export --output, as an AWX update runs it", done.stderr)
    expect(not os.path.exists(marker), "the templatable server strings did not run during the inventory update")
    warning = " ".join(done.stderr.split())  # before 2.19 warnings are wrapped at 80 columns
    expect(
        "device id 5: the hostname 'cam-05\\x1b[2J\\nok: [cam-06] => ALL DEVICES AUTHENTICATED' holds control "
        "characters, so it is no host name: host named nac_device_5"
        in warning
        and "\x1b" not in done.stderr + done.stdout,
        "a hostname with control characters is no host name; the warning names the id and shows it escaped",
        done.stderr,
    )
    with open(output) as handle:
        data = json.load(handle)  # as AWX reads it
    hostvars = data["_meta"]["hostvars"]

    plain = hostvars["plain-01"]
    expect(
        plain["nac_group"] == stored(SAFE)
        and plain["nac_group_copy"] == stored(SAFE)
        and plain["nac_dot1x_status"] == stored("AUTHENTICATED")
        and plain["nac_hostname"] == stored("plain-01")
        and plain["nac_macs"] == [stored("02:00:00:20:00:02")]
        and plain["nac_record"]["group"] == stored(SAFE),
        "ordinary server strings are stored as %s"
        % ("marked unsafe (before 2.19)" if BEFORE_2_19 else "plain strings"),
        json.dumps(plain),
    )
    expect(
        hostvars["plain-02"]["nac_dot1x_message"] == {"__ansible_unsafe": "No MAC {#1"}
        and hostvars["plain-02"]["nac_dot1x_status"] == stored("UNAUTHENTICATED"),
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
        FORGED not in json.dumps(sorted(hostvars)) and hostvars["nac_device_5"]["nac_hostname"] == stored(FORGED),
        "the device with control characters in its hostname is host nac_device_5, its hostname in nac_hostname",
        json.dumps(sorted(hostvars)),
    )
    coded = hostvars["coded-01"]
    expect(
        coded["nac_group_decoded"] == wrapped and coded["nac_message_decoded"] == wrapped,
        "server strings that a compose decodes into a template are stored as {'__ansible_unsafe': ...}",
        json.dumps(coded),
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
            "    - ansible.builtin.debug:\n        msg: 'DECODED={{ nac_group_decoded }}|{{ nac_message_decoded }}"
            "|{{ nac_group | urldecode }}'\n      when: nac_id == 4\n"
        )
    done = run.command(["ansible-playbook", "-i", script, play, "-e", "ansible_python_interpreter=" + run.python])
    expect(done.returncode == 0 and "GROUP=%s" % SAFE in done.stdout, "a job on the stored inventory runs", done.stdout)
    expect(
        not os.path.exists(marker)
        and "GROUP=%s MESSAGE=%s" % (evil, evil) in done.stdout
        and "DECODED=%s|%s|%s" % (evil, evil, evil) in done.stdout,
        "the job shows the templatable strings, and those a compose or the job decoded, as they are and runs none",
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
