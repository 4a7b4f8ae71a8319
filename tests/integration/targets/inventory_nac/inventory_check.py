# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin netaccess.nac.nac end to end, against an emulator of this target's own.

ansible-inventory --list and --graph (hosts, groups, host variables, cache), errors at -vvvv (clear
message, no credential, no traceback), and playbooks/dot1x_report.yml on status groups: two complementary
--limit slices query every device exactly once (the emulator's per-device fire counters say so), and
devices that stay unauthenticated fail the play by name and are in its report. Usage:
inventory_check.py PYTHON [ansible-test args, ignored].
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)

from ansible.module_utils.urls import open_url  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator  # noqa: E402  pylint: disable=wrong-import-position

KEY, NOACCESS_KEY, WRONG_KEY = "nac-demo-admin-key", "nac-demo-noaccess-key", "wrong-key-5ecret-0123456789"
SECRETS = (KEY, NOACCESS_KEY, WRONG_KEY)
LIST, INTENTS, FIRE = "GET /api/device", "GET /api/intent", "POST /api/intent/dot1x_status/fire"
CONNECTING = ["conn-%02d" % number for number in range(1, 7)]  # authenticate once the clock is advanced


def device(hostname, number, mac=True, **extra):
    record = dict(
        id=number, hostname=hostname, group="Cameras", profile="Camera", ips=["10.20.0.%d" % (10 + number)], **extra
    )
    if mac:
        record["macs"] = ["02:00:00:20:00:%02x" % number]
    return record


DEVICES = [device(name, number, authenticated=False) for number, name in enumerate(CONNECTING, 1)] + [
    device("auth-01", 11),
    device("dup-host", 12),
    device("dup-host", 13),
    device("unauth-01", 14, mac=False),
    device("unauth-02", 15, mac=False),
    device("nostatus-01", 16),
    device("quarantine-01", 17),
]
CONFIG = dict(
    devices=DEVICES,
    dot1x=dict(
        auth_delay=1000.0,
        overrides={
            "nostatus-01": {"omit_status": True},
            "quarantine-01": {"status": "Quarantined / VLAN 99", "message": "Posture check failed"},
        },
    ),
)
EXPECTED_GROUPS = {
    "nac_dot1x_connecting": CONNECTING,
    "nac_dot1x_authenticated": ["auth-01", "dup-host_12", "dup-host_13"],
    "nac_dot1x_unauthenticated": ["unauth-01", "unauth-02"],
    "nac_dot1x_unknown": ["nostatus-01"],
    "nac_dot1x_quarantined___vlan_99": ["quarantine-01"],
}


class Failed(Exception):
    pass


def expect(condition, what, output=""):
    if not condition:
        raise Failed("%s%s" % (what, "\n---- output ----\n%s" % output[-4000:] if output else ""))
    print("ok - %s" % what)


class Run:
    def __init__(self, python, emulator, workdir):
        self.python = python
        self.emulator = emulator
        self.workdir = workdir
        self.outputs = []

    def env(self, **extra):
        env = dict(
            os.environ,
            NAC_API_URL=self.emulator.url,
            NAC_API_KEY=KEY,
            ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true",
            ANSIBLE_PYTHON_INTERPRETER=self.python,
            ANSIBLE_LOCALHOST_WARNING="false",
            ANSIBLE_NOCOLOR="true",
        )
        for name in ("NAC_USERNAME", "NAC_PASSWORD", "NAC_TENANT"):
            env.pop(name, None)
        env.update(extra)
        return env

    def command(self, args, **env):
        done = subprocess.run(
            args,
            env=self.env(**env),
            cwd=self.workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            check=False,
        )
        self.outputs.append(done.stdout + done.stderr)
        return done

    def source(self, name, **options):
        path = os.path.join(self.workdir, name)
        with open(path, "w") as handle:
            handle.write("plugin: netaccess.nac.nac\n")
            for key, value in options.items():
                handle.write("%s: %s\n" % (key, json.dumps(value)))
        return path

    def counts(self):
        return collections.Counter(self.emulator.request_counts())

    def fires(self):
        """Per-device fire counts from the emulator's admin endpoint."""
        return collections.Counter(
            dict((int(k), v) for k, v in json.loads(open_url(self.emulator.url + "/_emulator/fires").read()).items())
        )


def unwrapped(text):
    """The text without any whitespace: before ansible-core 2.19, warnings and errors are wrapped at 80 columns (and
    may be broken after a hyphen), so a message is looked for in the output with all whitespace removed from both."""
    return "".join(text.split())


def shows(message, output):
    """Whether the output shows the message, however ansible-core wrapped it."""
    return unwrapped(message) in unwrapped(output)


def plain(value):
    """ansible-core 2.19 writes strings an inventory plugin got from elsewhere as {"__ansible_unsafe": ...}."""
    if isinstance(value, dict):
        if list(value) == ["__ansible_unsafe"]:
            return value["__ansible_unsafe"]
        return dict((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def check_listing(run):
    cache = os.path.join(run.workdir, "cache")
    dot1x = run.source(
        "dot1x.nac.yml",
        dot1x_status=True,
        record_var=True,  # (its record too: the default leaves nac_record out)
        concurrency=4,
        cache=True,
        cache_plugin="ansible.builtin.jsonfile",
        cache_connection=cache,
        cache_timeout=3600,
    )
    done = run.command(["ansible-inventory", "-i", dot1x, "--list"])
    expect(done.returncode == 0, "ansible-inventory --list with dot1x_status: true succeeds", done.stdout + done.stderr)
    listing = plain(json.loads(done.stdout))
    expect(
        run.counts() == {LIST: 1, INTENTS: 1, FIRE: len(DEVICES)},
        "one device list, one intent list and one fire per device: %s" % dict(run.counts()),
    )
    expect(
        run.fires() == collections.Counter(dict((d["id"], 1) for d in DEVICES)),
        "every device's status was queried exactly once",
    )
    for group, hosts in EXPECTED_GROUPS.items():
        expect(sorted(listing.get(group, {}).get("hosts", [])) == hosts, "group %s is %s" % (group, ", ".join(hosts)))
    expect(
        sorted(listing["nac_devices"]["hosts"]) == sorted(sum(EXPECTED_GROUPS.values(), [])),
        "nac_devices has every device",
    )
    expect(
        shows("hostname 'dup-host' is shared by 2 devices (ids 12, 13)", done.stderr),
        "a warning names the shared hostname",
        done.stderr,
    )
    hostvars = listing["_meta"]["hostvars"]
    unauth = hostvars["unauth-01"]
    expect(
        (
            unauth["nac_id"],
            unauth["nac_hostname"],
            unauth["nac_group"],
            unauth["nac_profile"],
            unauth["nac_ips"],
            unauth["nac_dot1x_status"],
            unauth["nac_dot1x_message"],
        )
        == (
            14,
            "unauth-01",
            "Cameras",
            "Camera",
            ["10.20.0.24"],
            "UNAUTHENTICATED",
            "No MAC address registered for this device",
        ),
        "host variables of unauth-01",
    )
    expect(
        hostvars["dup-host_13"]["nac_record"]["id"] == 13 and hostvars["auth-01"]["nac_auth_method"] == "EAP-TLS",
        "host variables nac_record and nac_auth_method",
    )

    done = run.command(["ansible-inventory", "-i", dot1x, "--graph"])
    expect(
        done.returncode == 0
        and "|--@nac_dot1x_unauthenticated:\n  |  |--unauth-01\n  |  |--unauth-02\n" in done.stdout,
        "ansible-inventory --graph shows the status groups",
        done.stdout + done.stderr,
    )
    expect(run.counts() == {LIST: 1, INTENTS: 1, FIRE: len(DEVICES)}, "the cached run sent no request")
    for name in os.listdir(cache):
        with open(os.path.join(cache, name)) as handle:
            expect(
                not [secret for secret in SECRETS if secret in handle.read() + name],
                "the cache file holds no credential",
            )

    plain_source = run.source("plain.nac.yml")
    done = run.command(["ansible-inventory", "-i", plain_source, "--graph", "nac_devices"])
    expect(
        done.returncode == 0 and "|--quarantine-01" in done.stdout,
        "without dot1x_status every device is listed",
        done.stderr,
    )
    expect(
        run.counts() == {LIST: 2, INTENTS: 1, FIRE: len(DEVICES)},
        "without dot1x_status only the device list was requested",
    )
    return dot1x


def check_errors(run):
    before = run.counts()
    cases = [
        (
            "a bad key",
            run.source("badkey.nac.yml", dot1x_status=True, api_key=WRONG_KEY),
            {},
            "The NAC API answered 'Server error' (HTTP 500) to GET /api/device",
        ),
        (
            "no access to dot1x_status",
            run.source("noaccess.nac.yml", dot1x_status=True),
            dict(NAC_API_KEY=NOACCESS_KEY),
            "The account may not fire the intent dot1x_status ('Check 802.1x' / '802.1x status')",
        ),
        (
            "an unreachable service",
            run.source("down.nac.yml", api_url="http://127.0.0.1:9", max_retries=0),
            {},
            "Could not connect to the NAC API at http://127.0.0.1:9: connection refused",
        ),
    ]
    for what, source, env, message in cases:
        done = run.command(["ansible-inventory", "-vvvv", "-i", source, "--list"], **env)
        output = done.stdout + done.stderr
        expect(
            done.returncode != 0 and shows(message, output), "%s fails the inventory with: %s" % (what, message), output
        )
        expect(
            "Traceback" not in output and not [s for s in SECRETS if s in output],
            "%s: no traceback, no credential at -vvvv" % what,
        )
    expect(FIRE not in run.counts() - before, "no status query was sent by the failing sources")


def playbook(run, source, *args):
    return run.command(
        [
            "ansible-playbook",
            "-i",
            source,
            "netaccess.nac.dot1x_report",
            "-e",
            "ansible_python_interpreter=" + run.python,
            "-e",
            "nac_wait_interval=0.2",
        ]
        + list(args)
    )


def check_playbook(run, source):
    # The devices listed as CONNECTING authenticate now; the (cached) inventory still groups them as listed.
    run.emulator.advance_clock(1000)
    before = run.fires()
    first = CONNECTING[::2]
    slices = [",".join(first), "nac_dot1x_connecting:" + ":".join("!" + host for host in first)]
    for number, limit in enumerate(slices, 1):
        done = playbook(run, source, "-e", "nac_hosts=nac_dot1x_connecting", "--limit", limit)
        expect(
            done.returncode == 0 and "3 devices: {'AUTHENTICATED': 3}" in done.stdout,
            "slice %d (--limit %s) re-checked its 3 devices, all AUTHENTICATED" % (number, limit),
            done.stdout + done.stderr,
        )
    ids = dict((d["hostname"], d["id"]) for d in DEVICES)
    expect(
        run.fires() - before == collections.Counter(dict((ids[host], 1) for host in CONNECTING)),
        "the two complementary slices queried every device of the group exactly once, and no other device",
    )

    report = os.path.join(run.workdir, "report")
    done = playbook(run, source, "-e", "nac_wait_timeout=1", "-e", "nac_report_path=" + report)
    output = done.stdout + done.stderr
    expect(
        done.returncode == 2
        and "2 of 2 devices did not reach AUTHENTICATED within 1 s: unauth-01 (id 14): UNAUTHENTICATED" in output
        and "unauth-02 (id 15)" in output,
        "on nac_dot1x_unauthenticated the play fails naming the devices",
        output,
    )
    with open(os.path.join(report, "dot1x_report.csv")) as handle:
        rows = handle.read().splitlines()
    expect(
        rows[0] == "hostname,id,expected_status,status,auth_method,username,message"
        and sorted(rows[1:])
        == [
            "unauth-01,14,AUTHENTICATED,UNAUTHENTICATED,,,No MAC address registered for this device",
            "unauth-02,15,AUTHENTICATED,UNAUTHENTICATED,,,No MAC address registered for this device",
        ],
        "the report lists them",
        "\n".join(rows),
    )


def main():
    python = sys.argv[1]
    workdir = tempfile.mkdtemp(prefix="nac-inventory-")
    try:
        with Emulator(config=CONFIG).start() as emulator:
            run = Run(python, emulator, workdir)
            try:
                source = check_listing(run)
                check_errors(run)
                check_playbook(run, source)
            except Failed as failure:
                print("FAILED - %s" % failure)
                return 1
            leaks = [s for s in SECRETS if any(s in output for output in run.outputs)]
            expect(not leaks, "no credential in any output of %d commands" % len(run.outputs))
    finally:
        shutil.rmtree(workdir, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
