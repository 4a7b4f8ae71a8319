# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every entry point of the collection against a hostile NAC (the emulator's hostile mode, README "Hostile
mode"): the modules, the role and its reports, playbooks/dot1x_report.yml, the inventory plugin (with a compose
that decodes values), the event source under a real ansible-rulebook (the shipped rulebook dot1x_watch, and a
user's rulebook and playbook that template every event field), and a module listing an endless list.

Asserted: no canary command ran (the canary directory stays empty); every report reads back to the server's
values (CSV with Python's csv reader, the Markdown tables with the right rows and columns); no raw control
character and no fragment of a secret in any output (stdout and stderr of every command, reports, events,
the Ansible log); the module's peak memory under MEMORY_CAP_MB for the endless list.

usage: hostile_check.py PYTHON
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import unquote_plus

import requests

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "eda_dot1x_status"))  # needs/target/eda_dot1x_status

import hostile_asserts as asserts  # noqa: E402  pylint: disable=wrong-import-position,import-error
import hostile_eda  # noqa: E402  pylint: disable=wrong-import-position,import-error
from hostile_memory import watch_memory  # noqa: E402  pylint: disable=wrong-import-position,import-error

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import (  # noqa: E402  pylint: disable=wrong-import-position
    Emulator,
    complete_config,
)

ADMIN_KEY = "hx-admin-" + secrets.token_hex(20)
NOPRIV_KEY = "hx-nopriv-" + secrets.token_hex(20)
WRONG_KEY = "hx-wrong-" + secrets.token_hex(20)
USERNAME, TENANT = "svc-hostile", "tenant-hostile"
PASSWORD = "pw  %s  %s" % (secrets.token_hex(12), secrets.token_hex(12))  # two spaces in a row: collapsed
WRONG_PASSWORD = "wrong  %s  pw" % secrets.token_hex(16)
FRAGMENTS = asserts.secret_fragments(
    (ADMIN_KEY, NOPRIV_KEY, WRONG_KEY, PASSWORD, WRONG_PASSWORD), [(USERNAME, PASSWORD), (USERNAME, WRONG_PASSWORD)]
)
# The endless list: nac_device_info with max_list_items LIST_ITEMS (NAC_MAX_LIST_ITEMS; the default, 2,000,000,
# costs a module about 1.6 GB: benchmarks/bench_endless_pages.py measures it) must stop, naming the option, its
# peak RSS under MEMORY_CAP_MB. Without a bound it passes 1 GB within 20 s (66 pages).
LIST_ITEMS = 200000
MEMORY_CAP_MB = 512
ENDLESS_PAGE = 20000  # records per page
ENDLESS_SECONDS = 120


def config():
    accounts = [
        dict(name="admin", api_key=ADMIN_KEY, privileges=["public_api"], intents=["dot1x_status", "ping"]),
        dict(name="nopriv", api_key=NOPRIV_KEY, privileges=[], intents=["dot1x_status"]),
        dict(
            name="basic",
            username=USERNAME,
            password=PASSWORD,
            tenant=TENANT,
            privileges=["public_api"],
            intents=["dot1x_status"],
        ),
    ]
    return complete_config(dict(accounts=accounts))


class Check(hostile_eda.EdaSteps):
    """The run: its emulator, work directory and canary directory, every output, and the steps."""

    def __init__(self, python):
        self.python = python
        self.findings = asserts.Findings()
        self.workdir = tempfile.mkdtemp(prefix="nac-hostile-")
        self.canary = os.path.join(self.workdir, "canary")
        os.mkdir(self.canary)
        self.log = os.path.join(self.workdir, "ansible.log")
        self.outputs = []  # (what, text, shows data): every command's output
        self.canaries = set()  # the canary files found so far
        self.stdout = ""  # of the last command run
        self.fragments, self.wrong_key, self.admin_key = FRAGMENTS, WRONG_KEY, ADMIN_KEY
        self.emulator = Emulator(config(), hostile=dict(on=True, canary=self.canary)).start()
        self.hostile = self.emulator.hostile()
        with open(os.path.join(self.workdir, "inventory.yml"), "w") as handle:
            handle.write(
                "all:\n  hosts:\n    localhost:\n      ansible_connection: local\n"
                "      ansible_python_interpreter: %s\n" % json.dumps(python)
            )

    # ---- running things -------------------------------------------------------------------

    def env(self, **extra):
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith("NAC_"))
        env.update(
            NAC_API_URL=self.emulator.url,
            NAC_API_KEY=ADMIN_KEY,
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_FORCE_COLOR="0",
            ANSIBLE_LOG_PATH=self.log,
            ANSIBLE_PYTHON_INTERPRETER=self.python,
            ANSIBLE_LOCALHOST_WARNING="false",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return dict((k, v) for k, v in env.items() if v is not None)

    def run(self, what, args, expect_rc=(0,), data=False, **env):
        started = time.monotonic()
        done = subprocess.run(
            args, cwd=self.workdir, env=self.env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False
        )
        self.stdout = done.stdout.decode("utf-8", "replace")
        text = self.stdout + done.stderr.decode("utf-8", "replace")
        self.outputs.append((what, text, data))
        self.findings.check(
            done.returncode in expect_rc,
            "%s: exit status %d (%.0f s)" % (what, done.returncode, time.monotonic() - started),
            text[-3000:],
        )
        return done.returncode, text

    def playbook(self, what, playbook, *args, **kwargs):
        extra = dict(
            hostile_workdir=self.workdir,
            hostile_ids=self.hostile["device_ids"],
            hostile_taken_mac="02:00:5e:10:00:00",
            hostile_wrong_key=WRONG_KEY,
            hostile_nopriv_key=NOPRIV_KEY,
            hostile_role_devices=self.role_devices(),
        )
        with open(os.path.join(self.workdir, "extra.json"), "w") as handle:
            json.dump(extra, handle)
        command = ["ansible-playbook", "-i", "inventory.yml", "-e", "@extra.json", playbook] + list(args)
        return self.run(what, command, **kwargs)

    def role_devices(self):
        """The role's devices: two hostile ones that are valid names (they exist), and a new one."""
        return [
            dict(hostname="+1+1"),
            dict(hostname=self.hostile["payloads"]["formula_fullwidth"]),
            dict(hostname="hx-role-01", group="Cameras", profile="Camera"),
        ]

    # ---- the server's truth ------------------------------------------------------------------

    def truth(self):
        """{id: {hostname, status, auth_method, username, message, error}} as the server answers now."""
        devices = {}
        for record in self.emulator.records():
            reply = requests.post(
                self.emulator.url + asserts.FIRE,
                json=dict(targetId=record["id"], additionalPayload=dict(json=True)),
                headers=dict(Authorization="Bearer " + ADMIN_KEY),
                timeout=30,
            )
            result = reply.json() if reply.status_code == 200 else {}
            devices[record["id"]] = dict(
                hostname=record["hostname"],
                status=result.get("status"),
                auth_method=result.get("authMethod"),
                username=result.get("username"),
                message=result.get("message"),
                error=reply.status_code != 200,
                record=record,
            )
        return devices

    # ---- the entry points -------------------------------------------------------------------

    def modules(self):
        self.playbook(
            "modules (nac_device_info, nac_intent_info, nac_dot1x_status, nac_device)",
            "%s/modules.yml" % HERE,
            "-vvv",
            data=True,
        )
        self.run(
            "modules with HTTP Basic and a wrong password",
            ["ansible-playbook", "-i", "inventory.yml", "%s/basic.yml" % HERE, "-vvv"],
            NAC_API_KEY=None,
            NAC_USERNAME=USERNAME,
            NAC_PASSWORD=WRONG_PASSWORD,
            NAC_TENANT=TENANT,
        )
        path = os.path.join(self.workdir, "results.json")
        if not self.findings.check(os.path.exists(path), "modules: results written"):
            return
        with open(path, encoding="utf-8") as handle:
            results = json.load(handle)
        truth = self.truth()
        listed = dict((d["id"], d) for d in results["info"].get("devices", []))
        wrong = [
            "%s: %r" % (i, listed.get(i, {}).get("hostname", "")[:80])
            for i in self.hostile["device_ids"]
            if listed.get(i, {}).get("hostname") != truth[i]["hostname"]
            or listed[i].get("group") != truth[i]["record"]["group"]
        ]
        self.findings.check(not wrong, "nac_device_info returns the hostile records exactly", "; ".join(wrong[:5]))
        by_id = dict((r.get("id"), r) for r in results["status"].get("results", []))
        wrong = []
        for device_id in self.hostile["device_ids"]:
            got, want = by_id.get(device_id, {}), truth[device_id]
            if want["error"]:
                if got.get("status") != "ERROR" or not got.get("error"):
                    wrong.append("%s: no error: %r" % (device_id, got))
            elif [got.get(k) for k in ("hostname", "status", "auth_method", "username", "message")] != [
                want[k] for k in ("hostname", "status", "auth_method", "username", "message")
            ]:
                wrong.append("%s: %r" % (device_id, dict((k, str(v)[:60]) for k, v in got.items())))
        self.findings.check(not wrong, "nac_dot1x_status returns the hostile statuses exactly", "\n".join(wrong[:5]))
        tags = [i.get("tag") for i in results["intents"].get("intents", [])]
        hostile_tags = [t[:200] for t in self.hostile["payloads"].values()]
        self.findings.check(
            tags[:2] == ["dot1x_status", "ping"] and tags[2:] == hostile_tags,
            "nac_intent_info returns the hostile intents exactly",
            str(tags)[:500],
        )
        for key in ("wrong", "nopriv"):
            self.findings.check(
                bool(results[key].get("msg")) and not results[key].get("devices"),
                "modules: the %s credentials fail with a message" % key,
                str(results[key])[:500],
            )
        bulk = json.dumps(results["bulk"])
        self.findings.check("hx-bulk-02" in bulk, "nac_device bulk: the hostile 409 is named", bulk[:500])

    def echo(self):
        """A NAC that echoes the Authorization header in every status: the modules with HTTP Basic (-vvv, a fact, the
        HTML report) and one round of the event source (its events and log) show no fragment of the Basic token or
        the password (everything() looks at every output)."""
        self.emulator.hostile(echo=True)
        try:
            basic = dict(NAC_API_KEY=None, NAC_USERNAME=USERNAME, NAC_PASSWORD=PASSWORD, NAC_TENANT=TENANT)
            self.playbook("modules against a NAC that echoes the credentials", "%s/echo.yml" % HERE, "-vvv", **basic)
            report = os.path.join(self.workdir, "echo-report.html")
            if self.findings.check(os.path.exists(report), "echo: the HTML report written"):
                with open(report, encoding="utf-8") as handle:
                    text = handle.read()
                self.outputs.append(("echo: the HTML report", text, True))
                self.findings.check("********" in text, "echo: the HTML report shows the echo masked", text[-500:])
            self.run(
                "event source: one round against a NAC that echoes the credentials",
                [self.python, os.path.join(HERE, "echo_source.py"), str(self.hostile["device_ids"][0])],
                data=True,
                **basic,
            )
            self.findings.check("********" in self.stdout, "echo: the event shows the echo masked", self.stdout[-500:])
        finally:
            self.emulator.hostile(echo=False)

    def role(self):
        rc, text = self.playbook("role device_onboarding", "%s/role.yml" % HERE, expect_rc=(2,))
        self.findings.check(
            "did not reach their expected status" in text, "role: fails naming the devices", text[-2000:]
        )
        truth = self.truth()
        base = os.path.join(self.workdir, "role-reports", "device_onboarding")
        rows = asserts.check_csv_report(
            self.findings, "role CSV report", base + ".csv", truth, "AUTHENTICATED", FRAGMENTS
        )
        role_hostnames = set(d["hostname"].lower() for d in self.role_devices())
        mine = dict((i, d) for i, d in truth.items() if d["hostname"].lower() in role_hostnames)
        asserts.check_html_report(self.findings, "role HTML report", base + ".html", mine, FRAGMENTS)
        if rows:
            results = rows[1:]
            statuses = set(r[3] for r in results)
            asserts.check_markdown_report(
                self.findings, "role Markdown report", base + ".md", results, statuses, FRAGMENTS
            )

    def inventory(self):
        source = os.path.join(self.workdir, "hostile.nac.yml")
        with open(source, "w") as handle:
            handle.write(
                "plugin: netaccess.nac.nac\ndot1x_status: true\nstrict: false\ncompose:\n"
                "  hostile_decoded_group: nac_group | urldecode\n"
                "  hostile_decoded_message: nac_dot1x_message | b64decode\n"
                "  hostile_upper_hostname: nac_hostname | upper\n"
            )
        rc, text = self.run("ansible-inventory --list", ["ansible-inventory", "-i", source, "--list"], data=True)
        try:
            listed = json.loads(self.stdout)
        except ValueError:
            listed = {}
        hostvars = listed.get("_meta", {}).get("hostvars", {})
        bad_names = [name for name in hostvars if asserts.RAW.search(name)]
        self.findings.check(
            hostvars and not bad_names,
            "inventory: %d hosts, none named with a control character" % len(hostvars),
            str(bad_names[:5]),
        )
        records = dict((r["id"], r) for r in self.emulator.records())
        inexact, decoded = [], 0
        for variables in hostvars.values():
            # ansible-inventory writes a value that is not trusted as {"__ansible_unsafe": value}
            variables = dict(
                (k, v["__ansible_unsafe"] if isinstance(v, dict) and "__ansible_unsafe" in v else v)
                for k, v in variables.items()
            )
            record = records.get(variables.get("nac_id"), {})
            wanted = dict(
                nac_hostname=record.get("hostname"),
                nac_group=record.get("group"),
                hostile_decoded_group=unquote_plus(record.get("group") or ""),  # as the filter urldecode does
                hostile_upper_hostname=(record.get("hostname") or "").upper(),
            )
            inexact += [
                "%s of id %s: %r" % (key, variables.get("nac_id"), str(variables.get(key))[:80])
                for key, value in wanted.items()
                if variables.get(key) != value
            ]
            decoded += "{{" in variables.get("hostile_decoded_group", "") + variables.get("hostile_decoded_message", "")
        self.findings.check(
            hostvars and not inexact,
            "inventory: every host variable, and what the compose made of it, is the server's value exactly",
            "\n".join(inexact[:8]),
        )
        self.findings.check(
            decoded >= 2, "inventory: the compose decoded the encoded templates into text (not run)", str(decoded)
        )
        self.run(
            "inventory values used in a play",
            ["ansible-playbook", "-i", source, "%s/inventory_use.yml" % HERE],
            data=True,
        )
        self.run(
            "playbooks/dot1x_report.yml",
            [
                "ansible-playbook",
                "-i",
                source,
                "netaccess.nac.dot1x_report",
                "-e",
                "nac_hosts=nac_devices",
                "-e",
                "nac_wait_timeout=0",
                "-e",
                "nac_report_path=%s" % os.path.join(self.workdir, "dot1x-report"),
            ],
            expect_rc=(2,),
        )
        asserts.check_csv_report(
            self.findings,
            "dot1x_report CSV report",
            os.path.join(self.workdir, "dot1x-report", "dot1x_report.csv"),
            self.truth(),
            "AUTHENTICATED",
            FRAGMENTS,
        )
        asserts.check_html_report(
            self.findings,
            "dot1x_report HTML report",
            os.path.join(self.workdir, "dot1x-report", "dot1x_report.html"),
            self.truth(),
            FRAGMENTS,
        )

    def endless(self):
        """nac_device_info on a list without end (each page new records and a next link): it stops with a message
        that names max_list_items, its peak RSS under the cap."""
        canary = dict(on=True, canary=self.canary, endless=ENDLESS_PAGE)
        with Emulator(config(), hostile=canary).start() as endless:
            process = subprocess.Popen(
                ["ansible", "localhost", "-i", "inventory.yml", "-m", "netaccess.nac.nac_device_info"],
                cwd=self.workdir,
                env=self.env(NAC_API_URL=endless.url, NAC_MAX_LIST_ITEMS=str(LIST_ITEMS)),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            peak, over = watch_memory(process, MEMORY_CAP_MB, ENDLESS_SECONDS)
            text = process.communicate()[0].decode("utf-8", "replace")
            self.outputs.append(("endless list", text, False))
            pages = endless.request_counts().get("GET /api/device", 0)
        self.findings.check(
            not over and peak < MEMORY_CAP_MB,
            "endless list: nac_device_info stopped after %d pages of %d records, peak RSS %d MB (cap %d MB)"
            % (pages, ENDLESS_PAGE, peak, MEMORY_CAP_MB),
            over or text[-1500:],
        )
        self.findings.check(
            process.returncode == 2 and "max_list_items" in text,
            "endless list: the module fails naming max_list_items",
            text[-1500:],
        )

    # ---- every output ------------------------------------------------------------------------

    def everything(self):
        """Every output: no raw control character, no fragment of a secret. Where the command displays server
        values as data (ansible-core's JSON of a result at -v, a debug of a value, ansible-inventory --list),
        only C0 controls are asserted: ansible-core writes that JSON with ensure_ascii=False, so C1 controls,
        DEL and bidi characters of the values stay as they are (counted and said, but not the collection's)."""
        if os.path.exists(self.log):
            with open(self.log, encoding="utf-8", errors="replace") as handle:
                self.outputs.append(("the Ansible log", handle.read(), True))
        ran = sorted(os.listdir(self.canary))
        self.findings.check(not ran, "no canary command ran at all", "files: %s" % ran)
        for what, text, data in self.outputs:
            raw = asserts.raw_controls(text, c0_only=data)
            self.findings.check(
                not raw,
                "%s: no raw %scontrol character in its output" % (what, "C0 " if data else ""),
                "%s\n%s" % (", ".join(raw[:10]), excerpt_around(text, asserts.RAW_C0 if data else asserts.RAW)),
            )
            if data:
                print(
                    "note - %s: %d C1, DEL or bidi characters of server values in ansible-core's display of data"
                    % (what, len(asserts.raw_controls(text)))
                )
            found = asserts.leaks(text, FRAGMENTS)
            self.findings.check(not found, "%s: no fragment of a secret in its output" % what, str(found[:3]))

    def keep(self):
        kept = os.path.join(self.workdir, "outputs")
        os.makedirs(kept, exist_ok=True)
        for number, (what, text, _data) in enumerate(self.outputs):
            with open(os.path.join(kept, "%02d.txt" % number), "w", encoding="utf-8") as handle:
                handle.write("# %s\n%s" % (what, text))
        return self.workdir


def excerpt_around(text, pattern):
    match = pattern.search(text)
    return ascii(text[max(0, match.start() - 200) : match.end() + 100]) if match else ""


def main():
    check = Check(sys.argv[1] if len(sys.argv) > 1 else sys.executable)
    started = time.monotonic()
    # NAC_HOSTILE_STEPS=modules,role runs only those steps; NAC_HOSTILE_KEEP=1 keeps the work directory (outputs/).
    wanted = [name for name in os.environ.get("NAC_HOSTILE_STEPS", "").split(",") if name]
    try:
        for step in (check.modules, check.echo, check.role, check.inventory, check.eda, check.endless):
            if wanted and step.__name__ not in wanted:
                continue
            try:
                step()
            except Exception as exc:  # pylint: disable=broad-except
                check.findings.check(False, "%s: %s: %s" % (step.__name__, type(exc).__name__, exc))
            ran = sorted(set(os.listdir(check.canary)) - check.canaries)
            check.canaries.update(ran)
            check.findings.check(not ran, "%s: no canary command ran" % step.__name__, "files: %s" % ran)
        check.everything()
    finally:
        check.emulator.stop()
        if os.environ.get("NAC_HOSTILE_KEEP"):
            print("nac_hostile: outputs kept in %s" % check.keep())
        else:
            shutil.rmtree(check.workdir, ignore_errors=True)
    passed = len(check.findings.lines) - check.findings.failed
    print(
        "nac_hostile: %d assertions hold, %d fail (%.0f s)"
        % (passed, check.findings.failed, time.monotonic() - started)
    )
    sys.exit(1 if check.findings.failed else 0)


if __name__ == "__main__":
    main()
