# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the soak's playbooks and judge their reports against the emulator's truth, for every soak scenario.

soak_faults.py (its scenarios) and harness/soak_servers.py (issue 25's servers that confirm nothing) share this:
the emulator's configuration, the requested devices, the ``Runner`` of ``ansible-playbook`` and the judges that
count false reports, duplicates and devices in place (the rules are in soak_faults.py's docstring)."""

import collections
import json
import os
import re
import subprocess
import sys
import time
import unicodedata

from harness.module import playbook_command
from harness.paths import collections_path, import_emulator

import_emulator()
from nac_emulator import FAULT_MODES, Emulator, hostname_key, stored_hostname  # noqa: E402, F401 (the soak's)

API_KEY = "nac-demo-admin-key"  # the emulator's fake demo credential
ACCOUNT = {"name": "admin", "api_key": API_KEY, "privileges": ["public_api"], "intents": ["dot1x_status"]}
SOAK = dict(group="Soak", profile="Sensor")
FAULT_TARGETS = (
    "in place after one run >= 99 %",
    "duplicates == 0",
    "wrong reports == 0",
    "statuses >= 99 %",
    "rerun converges to exactly N",
)

PLAY = """---
- name: Soak %(name)s
  hosts: localhost
  gather_facts: false
  tasks:
%(tasks)s"""
TASK = """    - name: Task %(index)d
      %(module)s: %(args)s
      register: soak_result
      ignore_errors: true

    - name: Keep the result of task %(index)d
      ansible.builtin.copy:
        content: "{{ soak_result | to_json }}"
        dest: %(result)s
        mode: "0600"
"""


def config(**changes):
    base = dict(
        accounts=[ACCOUNT],
        groups=[dict(name="Soak", subnet="10.128.0.0/16")],
        profiles=[dict(name="Sensor", max_pairs=1, host_start=10, host_end=65000)],
        devices=[],
        allow_duplicate_hostnames=True,
    )
    base.update(changes)
    return base


def mac(n):
    return "02:50:4b:%02x:%02x:%02x" % (n >> 16 & 255, n >> 8 & 255, n & 255)


def requested(count, prefix="soak-", macs_every=4):
    items = []
    for n in range(count):
        item = dict(hostname="%s%04d" % (prefix, n), **SOAK)
        if macs_every and n % macs_every == 0:
            item["macs"] = [mac(n)]
        items.append(item)
    return items


def seeds(count, prefix):
    """Settled devices with a MAC each (their 802.1x status is AUTHENTICATED)."""
    return [dict(hostname="%s%03d" % (prefix, n), macs=[mac(0x10000 + n)], **SOAK) for n in range(count)]


def same(name):
    """The identity of a hostname (issue 16): its NFC form, ASCII letters without case (RFC 4343)."""
    return hostname_key(name, "ascii-nocase")


def loose(name):
    """Looser rules a client must not mistake for identity: compatibility form, casefold, surrounding space."""
    return unicodedata.normalize("NFKC", name).casefold().strip()


def mentions(text, ident):
    return re.search(r"(?<![0-9])%d(?![0-9])" % ident, text) is not None


def truth(emulator):
    """{identity: [ids]} and the records, from the emulator's whole list."""
    records = emulator.records()
    held = collections.defaultdict(list)
    for record in records:
        held[same(record["hostname"])].append(record["id"])
    return held, records


# ---- running playbooks -----------------------------------------------------------------------


class Runner:
    def __init__(self, workdir):
        self.workdir = workdir
        self.env = dict(
            os.environ,
            ANSIBLE_COLLECTIONS_PATH=collections_path(workdir),
            ANSIBLE_LOCALHOST_WARNING="false",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
            ANSIBLE_PYTHON_INTERPRETER=sys.executable,
            ANSIBLE_NOCOLOR="1",
        )
        self.count = 0

    def start(self, name, emulator, tasks, **connection):
        """Start ansible-playbook with one task per (module, args); returns a handle for finish()."""
        self.count += 1
        name = "%02d-%s" % (self.count, name)
        results, text = [], []
        for index, (module, module_args) in enumerate(tasks):
            args = dict(module_args, api_url=emulator.url, api_key=API_KEY, **connection)
            results.append(os.path.join(self.workdir, "%s-%d.result.json" % (name, index)))
            text.append(TASK % dict(index=index, module=module, args=json.dumps(args), result=json.dumps(results[-1])))
        path = os.path.join(self.workdir, name + ".yml")
        with open(path, "w") as handle:
            handle.write(PLAY % dict(name=name, tasks="\n".join(text)))
        command = playbook_command(path)
        process = subprocess.Popen(
            command,
            env=self.env,
            cwd=self.workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            universal_newlines=True,
        )
        return dict(process=process, results=results, started=time.monotonic(), name=name)

    @staticmethod
    def finish(handle):
        """(results, seconds) of a started run."""
        output, _unused = handle["process"].communicate()
        seconds = time.monotonic() - handle["started"]
        results = []
        for path in handle["results"]:
            if not os.path.exists(path):
                sys.stderr.write(output[-4000:])
                raise SystemExit(
                    "%s: ansible-playbook failed before a task's result was kept (rc %d)"
                    % (handle["name"], handle["process"].returncode)
                )
            with open(path) as stream:
                results.append(json.load(stream))
        return results, seconds

    def run(self, name, emulator, tasks, **connection):
        return self.finish(self.start(name, emulator, tasks, **connection))


# ---- judging reports -------------------------------------------------------------------------


def settle(emulator, limit):
    """Faults off, and wait until no slow request or late commit is held (its creation has landed)."""
    emulator.faults(rate=0)
    deadline = time.monotonic() + limit
    while emulator.faults()["holding"]:
        if time.monotonic() > deadline:
            raise SystemExit("a slow request or late commit is still held %.0f s after the run" % limit)
        time.sleep(0.05)


def texts(values):
    return " | ".join(str(value) for value in values or ())


def entries_of(result, items):
    """The item entries of a nac_device result: the bulk form's, or the single form made into one."""
    if len(items) == 1 and "devices" not in result:
        device = result.get("device") or {}
        return [
            dict(
                id=device.get("id"),
                hostname=items[0]["hostname"],
                changed=result.get("changed"),
                error=result.get("msg") if result.get("failed") else None,
                failure=result.get("failure"),
            )
        ]
    return result.get("devices") or []


# house: long because every rule of a false report, in the order soak_faults.py states them
def judge_devices(items, result, held, clean_duplicates=True):
    """(false reports, contradictions): each a list of (hostname, what is wrong) for a nac_device result."""
    entries = entries_of(result, items)
    result_text = texts(result.get("warnings")) + " | " + str(result.get("msg") or "")
    wrong, contradictions = [], []
    for index, item in enumerate(items):
        name = item["hostname"]
        entry = entries[index] if index < len(entries) and entries[index].get("hostname") == name else None
        entry = entry or next((e for e in entries if e.get("hostname") == name), None)
        ids = held.get(same(name), [])
        if entry is None:
            wrong.append((name, "no report (module: %s)" % str(result.get("msg"))[:100]))
            continue
        error = str(entry.get("error") or "")
        item_text = error + " | " + texts(entry.get("warnings"))
        named_all = all(mentions(item_text + result_text, ident) for ident in ids)
        if error:
            unknown = bool((entry.get("failure") or {}).get("outcome_unknown")) or "unknown" in error.lower()
            if len(ids) == 1 and not unknown:
                wrong.append(
                    (
                        name,
                        "reported failed, but the device exists once (id %d), and the report does not say the outcome "
                        "is unknown: %s" % (ids[0], error[:100]),
                    )
                )
            elif len(ids) > 1 and not named_all:
                wrong.append(
                    (
                        name,
                        "the list shows %d devices of that name (ids %s), the failure does not name them all: %s"
                        % (len(ids), ", ".join(map(str, ids)), error[:100]),
                    )
                )
            if "did not show" in error:
                said = [
                    text
                    for text in (
                        texts(entry.get("warnings")),
                        texts(result.get("warnings")),
                        str(result.get("msg") or ""),
                    )
                    if name in text and re.search(r"shows [0-9]+ devices|devices named", text.replace(error, ""))
                ]
                if said:
                    contradictions.append(
                        (name, "the item says the list did not show it, the result says it does: %s" % said[0][:160])
                    )
        elif entry.get("id") not in ids:
            wrong.append(
                (
                    name,
                    "reported %s with id %s, but the devices of that name are %s"
                    % ("created" if entry.get("changed") else "existing", entry.get("id"), ids or "none"),
                )
            )
        elif clean_duplicates and len(ids) > 1 and not named_all:
            wrong.append(
                (
                    name,
                    "reported %s (id %s) while the list shows %d devices of that name (ids %s), not named in the result"
                    % (
                        "created" if entry.get("changed") else "existing",
                        entry.get("id"),
                        len(ids),
                        ", ".join(map(str, ids)),
                    ),
                )
            )
    return wrong + contradictions, contradictions


def judge_lookalikes(items, result, before):
    """Requested names whose listed lookalikes (same only by a looser rule; listed before the run) the result
    does not name with their id: (hostname, lookalike) pairs."""
    entries = dict((e.get("hostname"), e) for e in entries_of(result, items))
    result_text = texts(result.get("warnings")) + " | " + str(result.get("msg") or "")
    missed = []
    for item in items:
        name = item["hostname"]
        entry = entries.get(name) or {}
        text = str(entry.get("error") or "") + " | " + texts(entry.get("warnings")) + " | " + result_text
        for record in before:
            if (
                loose(record["hostname"]) == loose(name)
                and same(record["hostname"]) != same(name)
                and not mentions(text, record["id"])
            ):
                missed.append(
                    (name, "listed lookalike %s (id %d) not named" % (ascii(record["hostname"]), record["id"]))
                )
    return missed


def judge_info(result, records, names=None):
    """False reports of a nac_device_info result against the final records (all of them, or ``names``)."""
    if result.get("failed"):
        return [("device_info", "failed: %s" % str(result.get("msg"))[:120])] if not result.get("msg") else []
    returned = result.get("devices") or []
    wrong = []
    if names is None:
        if len(returned) != len(records):
            wrong.append(("device_info", "returned %d of %d devices without failing" % (len(returned), len(records))))
        return wrong
    wanted = set(same(name) for name in names)
    for record in returned:
        if same(record.get("hostname", "")) not in wanted:
            wrong.append((record.get("hostname"), "returned (id %s) for a request of another name" % record.get("id")))
    missing = set(same(str(name)) for name in result.get("missing") or ())
    for name in names:
        listed = [r["id"] for r in records if same(r["hostname"]) == same(name)]
        got = [r.get("id") for r in returned if same(r.get("hostname", "")) == same(name)]
        if listed and sorted(got) != sorted(listed):
            wrong.append((name, "devices %s listed, %s returned" % (listed, got)))
        if not listed and same(name) not in missing:
            wrong.append((name, "not listed, and not reported missing"))
    return wrong


def judge_status(result, records, names=None):
    """(false reports, results with a status) of a nac_dot1x_status result (by ``names``, or all devices)."""
    results = result.get("results") or []
    answered = [r for r in results if not r.get("error") and isinstance(r.get("status"), str)]
    wrong = []
    if names is None:
        pairs = sorted((r["id"], r["hostname"]) for r in records)
        got = sorted((r.get("id"), r.get("hostname")) for r in results)
        if got != pairs and not result.get("failed"):
            wrong.append(
                ("all_devices", "%d results for %d listed devices without failing" % (len(results), len(pairs)))
            )
        return wrong, answered
    wanted = set(same(name) for name in names)
    for entry in results:
        if same(str(entry.get("hostname") or "")) not in wanted:
            wrong.append(
                (entry.get("hostname"), "a result (id %s) for a name that was not requested" % entry.get("id"))
            )
    for name in names:
        listed = [r for r in records if same(r["hostname"]) == same(name)]
        got = [r for r in results if same(str(r.get("hostname") or "")) == same(name)]
        if listed and not got:
            wrong.append((name, "requested and listed (ids %s), missing from the results" % [r["id"] for r in listed]))
        elif len(got) < len(listed):
            wrong.append((name, "%d devices of that name listed, %d results" % (len(listed), len(got))))
    return wrong, [r for r in answered if same(str(r.get("hostname") or "")) in wanted]


def in_place(items, held):
    return sum(1 for item in items if held.get(same(item["hostname"])))


def duplicates(items, held):
    names = set(same(item["hostname"]) for item in items)
    return sum(max(len(held.get(name, ())) - 1, 0) for name in names)


def explain(problems, indent="          "):
    """Print (what, why) pairs grouped, most frequent first (the hostname dropped from the grouping key)."""
    grouped = collections.Counter(re.sub(r"[0-9]+", "N", why) for _name, why in problems)
    examples = {}
    for name, why in problems:
        examples.setdefault(re.sub(r"[0-9]+", "N", why), (name, why))
    for key, count in grouped.most_common(8):
        name, why = examples[key]
        print("%s%4d x %s (e.g. %s)" % (indent, count, why[:150], ascii(name)))


class Row:
    """One table row: figures and targets of a scenario."""

    def __init__(self, name):
        self.name = name
        self.requested = self.in_place = self.duplicates = self.false = 0
        self.statuses = "-"
        self.seconds = 0.0
        self.targets = []

    def target(self, label, value, passed):
        self.targets.append((label, value, passed))

    def count(self, items, held, wrong):
        """Fill the row's figures from the devices asked for (``items``), what the NAC holds (``held``, by name)
        and the reports found false (``wrong``)."""
        self.requested, self.in_place, self.duplicates, self.false = (
            len(items),
            in_place(items, held),
            duplicates(items, held),
            len(wrong),
        )

    @property
    def passed(self):
        return all(passed for _label, _value, passed in self.targets)
