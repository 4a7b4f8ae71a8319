# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A hostile NAC under a real ansible-rulebook: no server string runs, every one arrives exactly.

A device (id 90) whose hostname, status, authMethod, username and message are each
``{{ lookup('pipe', 'touch <canary of that field>') }}`` loses its authentication, and

1. the collection's own rulebook netaccess.nac.dot1x_watch runs netaccess.nac.dot1x_requery on it (as its
   header says: NAC_WATCH_INTERVAL, NAC_REPORT_DIR); the device comes back, the playbook writes its report;
2. a user's own rulebook and playbook (hostile_rulebook.yml, hostile_playbook.yml) template every field of the
   event: directly, through a variable, a fact, a loop and a filter.

Asserted: no canary file exists afterwards, the rule conditions matched, the report and the playbook's
output hold the server's values exactly. Called by eda_check.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import shutil
import sys
import tempfile
import time

import requests
from eda_check import GOOD_KEY, HERE, Emulator, ansible_rulebook, rulebook_process, stop  # the same directory

FIELDS = ("hostname", "status", "authMethod", "username", "message")
EVENT_FIELDS = dict(
    hostname="hostname", status="status", auth_method="authMethod", username="username", message="message"
)


def payloads(canaries):
    """{server field: a template that creates the canary file of that field when it runs}."""
    return dict((field, "{{ lookup('pipe', 'touch %s') }}" % os.path.join(canaries, field)) for field in FIELDS)


def admin(emulator, **body):
    requests.post(emulator.url + "/_emulator/dot1x", json=dict(body, id=90), timeout=10).raise_for_status()


def start(prefix):
    """(workdir, canaries directory, hostile payloads, the emulator with the hostile device, environment): the
    device is AUTHENTICATED, every other field of it hostile."""
    workdir = tempfile.mkdtemp(prefix=prefix)
    canaries = os.path.join(workdir, "canaries")
    os.mkdir(canaries)
    evil = payloads(canaries)
    emulator = Emulator().start()
    emulator.seed([dict(id=90, hostname=evil["hostname"], macs=["02:00:00:90:00:90"])])
    admin(
        emulator,
        status="AUTHENTICATED",
        authMethod=evil["authMethod"],
        username=evil["username"],
        message=evil["message"],
    )
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("NAC_"))
    env.update(NAC_API_URL=emulator.url, NAC_API_KEY=GOOD_KEY, PYTHONUNBUFFERED="1", ANSIBLE_NOCOLOR="1")
    with open(os.path.join(workdir, "inventory.yml"), "w") as handle:
        handle.write(
            "all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_python_interpreter: %s\n"
            % json.dumps(sys.executable)
        )
    return workdir, canaries, evil, emulator, env


def run_until(command, workdir, env, emulator, evil, done, deadline, after_flip=None):
    """Run ansible-rulebook until ``done()``; after two rounds the device loses its authentication (its status
    becomes the hostile one). Returns the output's text."""
    process, output = rulebook_process(command, workdir, env)
    try:
        while emulator.request_counts().get("POST /api/intent/dot1x_status/fire", 0) < 12 and process.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for two rounds of the source")
            time.sleep(0.1)
        admin(emulator, status=evil["status"])
        while not done() and process.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for the hostile device's rule and playbook")
            if after_flip:
                after_flip(output)
            time.sleep(0.2)
    finally:
        stop(process, output)
    return output.text()


def check_values(got, evil, where, text):
    """The event's fields as the server sent them (previous_status: AUTHENTICATED), in ``got``."""
    expected = dict((name, evil[field]) for name, field in EVENT_FIELDS.items())
    expected.update(id=90, previous_status="AUTHENTICATED")
    wrong = dict((name, got.get(name)) for name in expected if got.get(name) != expected[name])
    if wrong:
        sys.stdout.write(text + "\n")
        raise AssertionError("%s: fields that did not arrive as the server sent them: %r" % (where, wrong))


def no_canary(canaries, text):
    ran = sorted(os.listdir(canaries))
    if ran:
        sys.stdout.write(text + "\n")
        raise AssertionError("server strings ran as templates: the canaries of %s exist" % ", ".join(ran))


def shipped(deadline):
    workdir, canaries, evil, emulator, env = start("eda-hostile-")
    reports = os.path.join(workdir, "reports")
    env.update(NAC_WATCH_INTERVAL="1", NAC_REPORT_DIR=reports)

    def back(output):  # once the requery runs, the device comes back (the report then says recovered)
        if "TASK [Wait up to " in output.text():  # the re-query task, which says what it waits for
            admin(emulator, status="AUTHENTICATED")

    try:
        text = run_until(
            [ansible_rulebook(), "-i", "inventory.yml", "-r", "netaccess.nac.dot1x_watch", "--print-events"],
            workdir,
            env,
            emulator,
            evil,
            lambda: glob.glob(os.path.join(reports, "*.json")),
            deadline,
            back,
        )
        no_canary(canaries, text)
        (path,) = glob.glob(os.path.join(reports, "*.json"))
        with open(path) as handle:
            report = json.load(handle)
        check_values(report["event"], evil, "the report's event", text)
        requery = report["requery"]
        assert (
            report["device"]["hostname"] == evil["hostname"]
            and str(report["device"]["id"]) == "90"  # before 2.19 a template's result is a string
            and requery["status"] == "AUTHENTICATED"
            and requery["recovered"] is True
            and (requery["auth_method"], requery["username"], requery["message"])
            == (evil["authMethod"], evil["username"], evil["message"])
        ), report
        print(
            "eda_dot1x_status: hostile device under netaccess.nac.dot1x_watch: the rule fired, dot1x_requery reported "
            "all 5 hostile fields exactly, no canary ran"
        )
    finally:
        emulator.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def user_style(deadline):
    workdir, canaries, evil, emulator, env = start("eda-hostile-user-")
    out_file = os.path.join(workdir, "got.json")
    with open(os.path.join(workdir, "vars.yml"), "w") as handle:
        json.dump(dict(out_file=out_file, playbook=os.path.join(HERE, "hostile_playbook.yml")), handle)
    command = [ansible_rulebook(), "-i", "inventory.yml", "-r", os.path.join(HERE, "hostile_rulebook.yml")]
    try:
        text = run_until(
            command + ["--vars", "vars.yml", "--print-events"], workdir, env, emulator, evil, lambda: False, deadline
        )
        no_canary(canaries, text)
        assert "RULE hostile " in text, "the rule on the hostile device did not fire"
        assert os.path.exists(out_file), "the user's playbook wrote nothing:\n" + text
        with open(out_file) as handle:
            got = json.load(handle)
        for where in ("direct", "via_vars"):
            check_values(got[where], evil, "the playbook's %s use" % where, text)
        check_values(dict(got["fact"], id=90), evil, "the playbook's fact", text)
        print(
            "eda_dot1x_status: hostile device under a user's rulebook and playbook that template every field: "
            "all 5 hostile fields arrived exactly (directly, through a variable, a fact), no canary ran"
        )
    finally:
        emulator.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(deadline):
    shipped(deadline)
    user_style(deadline)
