# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nac_hostile's event-source step: the shipped rulebook netaccess.nac.dot1x_watch (its playbook dot1x_requery) and
a user's rulebook and playbook that template every event field, under a real ansible-rulebook started and stopped as
eda_check.py (the target eda_dot1x_status) does."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import shutil
import time

# eda_check: the target eda_dot1x_status (needs/target), put on sys.path by hostile_check.py
import eda_check  # pylint: disable=import-error
import hostile_asserts as asserts  # pylint: disable=import-error
import requests

HERE = os.path.dirname(os.path.abspath(__file__))


class EdaSteps:
    """The event-source step of hostile_check.Check, which gives it its workdir, emulator, hostile (the snapshot),
    findings, outputs, env(), fragments (of the secrets), wrong_key and admin_key."""

    def admin_dot1x(self, device_id, status):
        requests.post(self.emulator.url + "/_emulator/dot1x", json=dict(id=device_id, status=status), timeout=10)

    def rulebook(self, what, args, until, env, deadline, data=False):
        """ansible-rulebook ``args`` (eda_check's way of running it), until ``until(output)``; its output."""
        command = [eda_check.ansible_rulebook(), "-i", "inventory.yml"] + args
        process, output = eda_check.rulebook_process(command, self.workdir, self.env(**env))
        try:
            until(output, process, deadline)
        except AssertionError as exc:
            self.findings.check(False, "%s: %s" % (what, exc), output.text()[-3000:])
        finally:
            eda_check.stop(process, output)
        self.outputs.append((what, output.text(), data))
        return output.text()

    def eda(self):
        payloads, ids = self.hostile["payloads"], self.hostile["device_ids"]
        reports = os.path.join(self.workdir, "eda-reports")
        watched = ids[0]  # the hostname {{ lookup('pipe', ...) }}
        self.admin_dot1x(watched, "AUTHENTICATED")

        def shipped(output, process, deadline):
            output.wait(lambda: " round 2: " in output.text() or process.poll() is not None, deadline, "round 2")
            self.admin_dot1x(watched, payloads["jinja_statement"])  # lost: dot1x_requery runs
            output.wait(lambda: " round 4: " in output.text() or process.poll() is not None, deadline, "round 4")
            self.admin_dot1x(watched, "AUTHENTICATED")  # back: dot1x_requery's wait ends at its next query
            eda_check.wait_until(
                lambda: glob.glob(os.path.join(reports, "*.json")) or process.poll() is not None,
                deadline,
                "the report of dot1x_requery",
            )

        self.rulebook(
            "ansible-rulebook netaccess.nac.dot1x_watch",
            ["-r", "netaccess.nac.dot1x_watch"],
            shipped,
            dict(NAC_WATCH_INTERVAL="1", NAC_REPORT_DIR=reports),
            time.monotonic() + 60,
        )
        found = glob.glob(os.path.join(reports, "*.json"))
        if self.findings.check(len(found) == 1, "dot1x_watch: dot1x_requery wrote its report", str(found)):
            with open(found[0], encoding="utf-8") as handle:
                report = json.load(handle)
            self.findings.check(
                report["event"]["hostname"] == self.emulator.records()[watched - 1]["hostname"]
                and report["event"]["status"] == payloads["jinja_statement"],
                "dot1x_requery: the event's values in its report exactly",
                str(report)[:1000],
            )
            check = asserts.check_report_text
            check(self.findings, "dot1x_requery report", found[0], self.fragments, allowed="\n")

        events = os.path.join(self.workdir, "events")
        flipped = ids[1:4]
        with open(os.path.join(self.workdir, "rulebook-vars.yml"), "w") as handle:
            json.dump(dict(events_dir=events, wrong_key=self.wrong_key), handle)
        shutil.copy(os.path.join(HERE, "user_playbook.yml"), self.workdir)  # run_playbook finds it in its directory

        def user(output, process, deadline):
            output.wait(
                lambda: output.text().count(" round 2: ") >= 1 or process.poll() is not None, deadline, "round 2"
            )
            for number, device_id in enumerate(flipped):
                self.admin_dot1x(device_id, payloads["forged_ok_line"] if number % 2 else payloads["ansi_clear_screen"])
            eda_check.wait_until(
                lambda: len(glob.glob(os.path.join(events, "*.json"))) >= len(flipped) or process.poll() is not None,
                deadline,
                "the user playbook's files",
            )

        self.rulebook(
            "ansible-rulebook with a user's rulebook and playbook",
            ["-r", os.path.join(HERE, "user_rulebook.yml"), "--vars", "rulebook-vars.yml", "--print-events"],
            user,
            {},
            time.monotonic() + 60,
            data=True,
        )
        written = sorted(glob.glob(os.path.join(events, "*.json")))
        self.findings.check(len(written) == len(flipped), "user playbook: one file per event", str(written))
        records = dict((r["id"], r) for r in self.emulator.records())
        for path in written:
            with open(path, encoding="utf-8") as handle:
                event = json.load(handle)
            truth = self.truth_of(event.get("id"))
            wanted = dict(
                hostname=records.get(event.get("id"), {}).get("hostname"),
                status=truth.get("status"),
                auth_method=truth.get("authMethod"),
                username=truth.get("username"),
                message=truth.get("message"),
            )
            inexact = [key for key, value in wanted.items() if event.get(key) != value]
            self.findings.check(
                not inexact and event.get("previous_status") in self.hostile["payloads"].values(),
                "user playbook: every field of event %s is the server's value exactly" % event.get("id"),
                "%s: %s" % (inexact, str(event)[:800]),
            )

    def truth_of(self, device_id):
        reply = requests.post(
            self.emulator.url + asserts.FIRE,
            json=dict(targetId=device_id, additionalPayload=dict(json=True)),
            headers=dict(Authorization="Bearer " + self.admin_key),
            timeout=30,
        )
        return reply.json()
