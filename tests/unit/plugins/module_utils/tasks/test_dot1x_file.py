# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nac_dot1x_status's ``dest`` (dot1x_file.py, dot1x_query.stream_poll, dest_file.py): the file holds, line for
line, the results that the same query returns without ``dest``, whatever the rounds of a wait, the failures or a
refusal; the summary and the failure message are the same; the entries are not held (only those waited for);
``dest`` is put in place as ansible.builtin.copy does (check mode, changed, mode 0600, links refused)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import json
import os
import stat
import tempfile

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacAuthError,
    NacConnectionError,
    NacHTTPError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks import dot1x_query
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dest_file import put_in_place
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_file import RESULT_COLUMNS, ResultFile
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import BatchStopped, dot1x_status
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient

CONNECTING = dict(status="CONNECTING", authMethod=None, username=None, message="Authentication in progress")
REJECTED = dict(status="UNAUTHENTICATED", authMethod=None, username=None, message="Certificate rejected")
RECORDS = [
    dict(id=1, hostname="cam-01"),
    dict(id=2, hostname="Printer-01"),
    dict(id=3, hostname="dup-host"),
    dict(id=4, hostname="DUP-HOST"),
    dict(id=5, hostname="ws-01"),
]


def authenticated(device_id):
    return dict(status="AUTHENTICATED", authMethod="EAP-TLS", username="user%d" % device_id, message=None)


def fake_client(records=None, scripts=None, **kwargs):
    """A status query's fake client (as test_dot1x_query's): RECORDS unless told, each id's replies from
    ``scripts``, AUTHENTICATED for the others."""
    records = RECORDS if records is None else records
    return FakeClient(records, scripts, default_reply=authenticated, compact_only=True, **kwargs)


class FakeClock:
    """clock() and sleep() of the wait loop: sleeping advances the time, nothing waits."""

    def __init__(self):
        self.now = 1000.0

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds > 0
        self.now += seconds


FLAKY = NacConnectionError("No reply from the NAC API at http://nac within 30s", outcome_unknown=True)
BROKEN = NacHTTPError("The NAC API refused POST /api/intent/dot1x_status/fire with HTTP 502.")
MANY = [dict(id=i, hostname="d%d" % i) for i in range(1, 161)]
ODD = dict(status="=cmd|' /C calc'!A0", authMethod="a,b", username='say "hi"', message="line\nbreak\x1b[31m")

SCENARIOS = {
    "all answered": (None, None, dict(all_devices=True, concurrency=3)),
    "failures and unknown ids": ({2: [BROKEN], 4: [FLAKY]}, None, dict(device_id=[5, 42, 2, 4, 1, 5])),
    "unknown hostname": (None, None, dict(hostname=["printer-01", "ghost", "cam-01"])),
    "waits over rounds": (
        {1: [CONNECTING, CONNECTING, authenticated(1)], 3: [REJECTED], 5: [CONNECTING, FLAKY, authenticated(5)]},
        None,
        dict(all_devices=True, wait_for="AUTHENTICATED", wait_interval=5, wait_timeout=30),
    ),
    "error until the deadline": (
        {1: [CONNECTING, BROKEN]},
        None,
        dict(device_id=[1, 2], wait_for="AUTHENTICATED", wait_interval=1, wait_timeout=3),
    ),
    "server text": ({2: [ODD]}, None, dict(all_devices=True)),
    "ids repeated in the list": (
        {7: [CONNECTING, authenticated(7)]},
        [dict(id=7, hostname="a"), dict(id=8, hostname="b"), dict(id=7, hostname="c")],
        dict(all_devices=True, wait_for="AUTHENTICATED", wait_interval=2, wait_timeout=10),
    ),
    "more than named": (
        dict((i, [CONNECTING]) for i in range(1, 161)),
        MANY,
        dict(all_devices=True, wait_for="AUTHENTICATED", wait_timeout=0, concurrency=16),
    ),
}


def run(scenario, tmp_path=None, form="jsonl", check_mode=False):
    scripts, records, options = SCENARIOS[scenario]
    scripts = dict((ident, list(replies)) for ident, replies in (scripts or {}).items())  # (a client plays them out)
    client = fake_client(records=records, scripts=scripts)
    clock = FakeClock()
    if tmp_path is not None:
        options = dict(options, dest=str(tmp_path / ("status." + form)), format=form, check_mode=check_mode)
    return dot1x_status(client, clock=clock.clock, sleep=clock.sleep, **options), client


def read_jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_file_holds_what_the_results_would_be_line_for_line(scenario, tmp_path):
    held, held_client = run(scenario)
    written, client = run(scenario, tmp_path)
    dest = str(tmp_path / "status.jsonl")
    assert written.results == [] and sorted(client.fired) == sorted(held_client.fired)
    assert read_jsonl(dest) == held.results
    assert written.summary == held.summary
    failure = held.failure and held.failure.replace("(see results)", "(see dest)")
    assert written.failure == failure
    export = written.export
    assert export["dest"] == dest and export["written"] == len(held.results) and export["changed"] is True
    failed = [entry for entry in held.results if "error" in entry]
    assert export["failed_devices"] == failed[:100]
    late = [e for e in held.results if "error" not in e and e["status"] != "AUTHENTICATED"]
    assert export["late_devices"] == (late[:100] if "wait_for" in SCENARIOS[scenario][2] else [])
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert os.listdir(str(tmp_path)) == ["status.jsonl"]  # no temporary file left


def test_the_csv_holds_the_columns_with_server_text_neutralised(tmp_path):
    held, _client = run("server text")
    run("server text", tmp_path, form="csv")
    with open(str(tmp_path / "status.csv"), newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == list(RESULT_COLUMNS) and len(rows) == len(held.results) + 1
    assert rows[1] == ["1", "cam-01", "AUTHENTICATED", "EAP-TLS", "user1", "", ""]
    assert rows[2][:6] == ["2", "Printer-01", "'=cmd|' /C calc'!A0", "a,b", 'say "hi"', "line\nbreak\\x1b[31m"]
    assert "\x1b" not in (tmp_path / "status.csv").read_text(encoding="utf-8")


def test_only_the_entries_waited_for_are_held(tmp_path, monkeypatch):
    rewritten = []
    monkeypatch.setattr(ResultFile, "rewrite", lambda self, entries: rewritten.append(dict(entries)))
    records = [dict(id=i, hostname="d%d" % i) for i in range(1, 1001)]
    client = fake_client(records=records, scripts={500: [CONNECTING, authenticated(500)], 7: [REJECTED]})
    clock = FakeClock()
    dot1x_status(
        client,
        clock=clock.clock,
        sleep=clock.sleep,
        all_devices=True,
        wait_for="AUTHENTICATED",
        wait_timeout=20,
        dest=str(tmp_path / "s.jsonl"),
    )
    assert [sorted(entry["id"] for entry in entries.values()) for entries in rewritten] == [[7, 500]]


def test_refused_credentials_write_every_target_and_stop(tmp_path):
    refused = NacAuthError("Access refused (HTTP 403) to POST /api/intent/dot1x_status/fire.", status=403)
    client = fake_client(records=MANY[:10], scripts=dict((i, [refused]) for i in range(3, 11)))
    dest = str(tmp_path / "s.jsonl")
    with pytest.raises(BatchStopped) as caught:
        dot1x_status(client, all_devices=True, concurrency=1, check_access=False, dest=dest)
    assert client.fired == [1, 2, 3]
    lines = read_jsonl(dest)
    assert [line["id"] for line in lines] == list(range(1, 11))
    assert [line["status"] for line in lines] == ["AUTHENTICATED"] * 2 + ["ERROR"] * 8
    assert caught.value.result["summary"] == {"AUTHENTICATED": 2, "ERROR": 8}
    assert caught.value.result["written"] == 10 and caught.value.result["stopped"] is True
    assert "2 of 10 targets were answered before" in caught.value.message and "(dest has every target" in (
        caught.value.message
    )


def test_a_failure_before_the_queries_leaves_dest_as_it_was(tmp_path):
    dest = tmp_path / "s.jsonl"
    dest.write_text("before\n")
    client = fake_client(intents=[])
    with pytest.raises(NacAuthError):
        dot1x_status(client, all_devices=True, dest=str(dest))
    assert dest.read_text() == "before\n" and os.listdir(str(tmp_path)) == ["s.jsonl"]


def test_an_identical_rewrite_is_not_a_change_and_check_mode_writes_nothing(tmp_path):
    dest = tmp_path / "status.jsonl"
    first, _client = run("all answered", tmp_path, check_mode=True)
    assert first.export["changed"] is True and not dest.exists() and os.listdir(str(tmp_path)) == []
    first, _client = run("all answered", tmp_path)
    assert first.export["changed"] is True
    inode = os.stat(str(dest)).st_ino
    again, _client = run("all answered", tmp_path)
    assert again.export["changed"] is False and os.stat(str(dest)).st_ino == inode
    again, _client = run("all answered", tmp_path, check_mode=True)
    assert again.export["changed"] is False
    os.chmod(str(dest), 0o644)
    again, _client = run("all answered", tmp_path, check_mode=True)
    assert again.export["changed"] is True and stat.S_IMODE(os.stat(str(dest)).st_mode) == 0o644
    again, _client = run("all answered", tmp_path)
    assert again.export["changed"] is True and stat.S_IMODE(os.stat(str(dest)).st_mode) == 0o600
    dest.write_text("other\n")
    again, _client = run("all answered", tmp_path, check_mode=True)
    assert again.export["changed"] is True and dest.read_text() == "other\n"
    assert os.listdir(str(tmp_path)) == ["status.jsonl"]


def test_a_symbolic_link_or_a_directory_is_refused_before_any_query(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("kept\n")
    link = tmp_path / "link.jsonl"
    os.symlink(str(target), str(link))
    client = fake_client()
    with pytest.raises(NacConfigError, match="is a symbolic link: give the path of the file itself"):
        dot1x_status(client, all_devices=True, dest=str(link))
    with pytest.raises(NacConfigError, match="is a directory"):
        dot1x_status(client, all_devices=True, dest=str(tmp_path))
    assert client.fired == [] and target.read_text() == "kept\n" and os.path.islink(str(link))


def test_a_link_made_while_writing_is_refused_and_the_temporary_file_removed(tmp_path):
    temporary = tmp_path / "t"
    temporary.write_text("new\n")
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "dest"))
    with pytest.raises(NacConfigError, match="symbolic link"):
        put_in_place(str(temporary), str(tmp_path / "dest"))
    assert not temporary.exists()


def test_an_unwritable_directory_is_named(tmp_path):
    with pytest.raises(NacConfigError, match="cannot be written: its directory .* does not exist"):
        dot1x_status(fake_client(), all_devices=True, dest=str(tmp_path / "missing" / "s.jsonl"))


def test_an_unknown_format_is_named(tmp_path):
    with pytest.raises(NacConfigError, match="format must be one of jsonl, csv, got xml"):
        ResultFile(str(tmp_path / "s"), "xml")
    assert dot1x_query.ResultFile is ResultFile


def test_the_targets_of_every_device_go_through_a_private_file_that_is_removed(tmp_path, monkeypatch):
    system = tmp_path / "system"
    system.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system))
    seen = []
    real = dot1x_query.stream_poll

    def watched(client, targets, *args, **kwargs):
        seen.append(sorted(os.listdir(str(system))))
        seen.append(stat.S_IMODE(os.stat(targets.directory).st_mode))
        return real(client, targets, *args, **kwargs)

    monkeypatch.setattr(dot1x_query, "stream_poll", watched)
    report = dot1x_status(fake_client(records=MANY), all_devices=True, dest=str(tmp_path / "s.jsonl"))
    assert len(seen[0]) == 1 and seen[0][0].startswith(".nac_dot1x.") and seen[1] == 0o700
    assert os.listdir(str(system)) == [] and report.export["written"] == len(MANY)
    with pytest.raises(NacAuthError):
        dot1x_status(fake_client(intents=()), all_devices=True, dest=str(tmp_path / "s.jsonl"))
    failing = fake_client(records=MANY)
    failing.list_error = NacHTTPError("The NAC API refused GET /api/device with HTTP 502.")
    with pytest.raises(NacHTTPError):
        dot1x_status(failing, all_devices=True, dest=str(tmp_path / "s.jsonl"))
    assert os.listdir(str(system)) == []
