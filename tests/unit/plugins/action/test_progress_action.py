# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's side of progress (plugin_utils/progress.py, the action plugins, the inventory plugin): when it
is shown and how it is silenced, the lines of the module's file shown as they come, the module's environment
naming the file, a failed bulk told readably, and the inventory's lines on standard error only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import threading
import time
from types import SimpleNamespace

import pytest
from ansible.plugins.loader import shell_loader

from ansible_collections.netaccess.nac.plugins.action.nac_device import failed_bulk_lines
from ansible_collections.netaccess.nac.plugins.inventory import nac as inventory_plugin
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.progress import Progress
from ansible_collections.netaccess.nac.plugins.plugin_utils import progress
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import inventory_source, parse_inventory


@pytest.mark.parametrize(
    "variables, environ, shown",
    [
        ({}, {}, True),
        ({}, {"NAC_PROGRESS": "false"}, False),
        ({}, {"NAC_PROGRESS": "0"}, False),
        ({"nac_progress": False}, {}, False),
        ({"nac_progress": "no"}, {}, False),
        ({"nac_progress": True}, {"NAC_PROGRESS": "false"}, True),  # the variable wins
        ({}, {"NAC_PROGRESS": "flase"}, True),  # a typo never hides what a long task does
    ],
)
def test_progress_is_shown_unless_silenced(variables, environ, shown):
    assert progress.wanted(variables, environ) is shown


def test_the_relay_shows_each_line_as_it_is_written_and_the_last_ones_at_its_stop(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "POLL", 0.05)
    path = tmp_path / "progress.txt"
    path.write_text("")
    shown, seen = [], threading.Event()

    def show(line):
        shown.append(line)
        seen.set()

    relay = progress.Relay(str(path), show)
    relay.start()
    with open(str(path), "a") as sink:
        sink.write("first line\nsecond ")
        sink.flush()
        assert seen.wait(5)
        assert shown == ["first line"]  # a line not yet ended waits for its end
        sink.write("line\nlast line\n")
    relay.stop()
    assert shown == ["first line", "second line", "last line"]


class Shell:
    def __init__(self):
        self.shell = shell_loader.get("sh")

    def env_prefix(self, **environment):
        return self.shell.env_prefix(**environment)


def action(environment, path):
    """A ProgressAction with just what _compute_environment_string reads."""
    instance = progress.ProgressAction.__new__(progress.ProgressAction)
    instance._task = SimpleNamespace(environment=environment)
    instance._connection = SimpleNamespace(_shell=Shell())
    instance._templar = SimpleNamespace(template=lambda value: value)
    instance._nac_progress_path = path
    return instance


def test_the_module_is_told_the_file_and_the_tasks_environment_is_kept():
    raw = {}
    text = action([{"HTTPS_PROXY": "http://proxy:3128"}], "/tmp/nac-progress-x.txt")._compute_environment_string(raw)
    assert raw == {"HTTPS_PROXY": "http://proxy:3128", "NAC_PROGRESS_FILE": "/tmp/nac-progress-x.txt"}
    assert "NAC_PROGRESS_FILE=/tmp/nac-progress-x.txt" in text and "HTTPS_PROXY=http://proxy:3128" in text
    assert "NAC_PROGRESS_FILE" not in action([{"A": "1"}], None)._compute_environment_string()


def test_a_failed_bulk_is_told_with_its_counts_and_first_failures():
    entries = [dict(hostname="ok-%d" % n, changed=True, id=n) for n in range(3)]
    entries += [dict(hostname="bad-%d\x1b" % n, changed=False, error="refused %d" % n) for n in range(7)]
    lines = failed_bulk_lines(dict(failed=True, devices=entries, created=3, existing=0))
    assert lines[0] == "nac_device: 7 of 10 devices failed (3 created, 0 existing); the first 5:"
    assert lines[1:6] == ["  - bad-%d\\x1b: refused %d" % (n, n) for n in range(5)]
    assert lines[6].startswith("  every device's outcome is in the result's devices")
    assert failed_bulk_lines(dict(failed=False, devices=entries)) == []
    assert failed_bulk_lines(dict(failed=True, msg="no devices key")) == []


@pytest.fixture
def slow_emulator():
    devices = [dict(id=n, hostname="dev-%02d" % n, group="Cameras", profile="Camera") for n in range(1, 31)]
    with Emulator(config=dict(devices=devices), latency=0.02).start() as emu:
        yield emu


@pytest.mark.parametrize("option, lines", [("true", True), ("false", False)])
def test_the_inventorys_progress_goes_to_standard_error_only(
    tmp_path, monkeypatch, capsys, slow_emulator, option, lines
):
    monkeypatch.setattr(inventory_plugin, "Progress", functools.partial(Progress, first=0.1, every=0.2))
    monkeypatch.setenv("NAC_API_KEY", "nac-demo-admin-key")
    path = inventory_source(tmp_path, api_url=slow_emulator.url, dot1x_status="true", concurrency=1, progress=option)
    started = time.monotonic()
    inventory = parse_inventory(path, cache=False)
    assert time.monotonic() - started > 0.3
    assert len(inventory.hosts) == 30
    out, err = capsys.readouterr()
    assert "queried" not in out
    said = [line for line in err.splitlines() if line.startswith("netaccess.nac.nac inventory: ")]
    if lines:
        assert said and said[-1].startswith("netaccess.nac.nac inventory: done in ")
        assert " of 30 queried, 0 failed, 0 refusals waited out, " in said[0]
    else:
        assert said == []
