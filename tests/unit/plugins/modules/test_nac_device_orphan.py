# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An orphaned nac_device stops creating: the watch itself (fake /proc, a pipe without reader), and
end to end - ansible-playbook killed while a bulk creation runs against a slow emulator."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import requests

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue import controller_alive
from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.controller_alive import (
    CONTROLLER_GONE,
    controller_watch,
)
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator


def fake_proc(tmp_path, processes):
    """A /proc with a ``stat`` file per process: {pid: (name, parent pid)}."""
    for pid, (name, parent) in processes.items():
        (tmp_path / str(pid)).mkdir(exist_ok=True)
        (tmp_path / str(pid) / "stat").write_text("%d (%s) S %d 1 1 0 -1\n" % (pid, name, parent))
    return str(tmp_path)


def test_the_chain_module_shells_worker_is_watched_up_to_the_worker_and_its_parent(tmp_path):
    me = os.getpid()
    proc = fake_proc(
        tmp_path,
        {
            me: ("python3.11", 901),
            901: ("sh", 900),
            900: ("sh", 800),
            800: ("ansible-playboo", 700),
            700: ("ansible-playboo", 600),
            600: ("bash", 1),
        },
    )
    assert controller_alive._ancestry(proc) == [(me, 901), (901, 900), (900, 800), (800, 700)]
    gone = controller_watch(proc)
    assert gone() is None
    fake_proc(tmp_path, {600: ("bash", 1), 700: ("ansible-playboo", 1)})
    assert gone() is None  # the user's shell going away does not matter: ansible-playbook is still there
    fake_proc(tmp_path, {800: ("ansible-playboo", 1)})  # ansible-playbook killed: its worker re-parented
    assert gone() == CONTROLLER_GONE
    fake_proc(tmp_path, {800: ("ansible-playboo", 700)})
    assert gone() is None
    shutil.rmtree(os.path.join(proc, "900"))  # a shell of the chain gone
    assert gone() == CONTROLLER_GONE


def test_a_process_name_with_spaces_and_parentheses_is_read_right(tmp_path):
    me = os.getpid()
    proc = fake_proc(tmp_path, {me: ("python (3) x", 901), 901: ("sh", 800), 800: ("a) (b", 700), 700: ("init", 1)})
    assert controller_alive._name(800, proc) == "a) (b" and controller_alive._parent(800, proc) == 700
    assert controller_alive._ancestry(proc) == [(me, 901), (901, 800), (800, 700)]
    gone = controller_watch(proc)
    assert gone() is None
    fake_proc(tmp_path, {800: ("a) (b", 1)})  # re-parented: its parent was killed
    assert gone() == CONTROLLER_GONE


def test_without_proc_only_the_own_parent_is_watched(tmp_path):
    gone = controller_watch(str(tmp_path / "none"))
    assert controller_alive._ancestry(str(tmp_path / "none")) == [(os.getpid(), os.getppid())]
    assert gone() is None


def test_a_stdout_pipe_without_reader_means_the_controller_is_gone(tmp_path):
    saved = os.dup(1)
    read_end, write_end = os.pipe()
    try:
        os.dup2(write_end, 1)
        gone = controller_watch(str(tmp_path / "none"))
        assert gone() is None
        os.close(read_end)
        read_end = None
        assert gone() == CONTROLLER_GONE
    finally:
        os.dup2(saved, 1)
        for fd in (saved, write_end, read_end):
            if fd is not None:
                os.close(fd)


# -- end to end: kill ansible-playbook ------------------------------------------------------------

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - netaccess.nac.nac_device:
        api_url: %s
        api_key: nac-demo-admin-key
        concurrency: 1
        devices: %s
"""


def collections_root():
    here = os.path.abspath(__file__)
    return here[: here.rindex(os.sep + "ansible_collections" + os.sep)]


def posts(emulator):
    return emulator.request_counts().get("POST /api/device", 0)


def test_killing_ansible_playbook_stops_the_creations(tmp_path):
    playbook_bin = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    playbook_bin = playbook_bin if os.path.exists(playbook_bin) else shutil.which("ansible-playbook")
    assert playbook_bin, "ansible-playbook is needed beside the test's Python or on PATH"
    devices = [dict(hostname="orphan-%02d" % n, group="Workstations", profile="Workstation") for n in range(80)]
    with Emulator(DEFAULT_CONFIG, latency=0.1).start() as emulator:
        (tmp_path / "play.yml").write_text(PLAYBOOK % (emulator.url, json.dumps(devices)))
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # ansible-test units points it at a partial ansible (no ansible.cli)
        env.update(
            ANSIBLE_COLLECTIONS_PATH=collections_root(),
            ANSIBLE_PYTHON_INTERPRETER=sys.executable,
            ANSIBLE_LOCALHOST_WARNING="false",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
            ANSIBLE_HOME=str(tmp_path),
        )
        output = open(str(tmp_path / "output"), "w")
        process = subprocess.Popen(
            [playbook_bin, "-c", "local", "-i", "localhost,", str(tmp_path / "play.yml")],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while posts(emulator) < 3:
                assert process.poll() is None and time.monotonic() < deadline, (
                    "the creations did not start: %s" % (tmp_path / "output").read_text()[-3000:]
                )
                time.sleep(0.05)
            process.kill()  # ansible-playbook only: its worker and the module live on, as after a kill -9
            process.wait()
            time.sleep(1.0)  # the creation in flight ends, the next one is not sent
            stopped_at = posts(emulator)
            time.sleep(1.5)  # 15 more creations at 0.1 s each, if it went on
            assert posts(emulator) == stopped_at < len(devices)
            listed = requests.get(
                emulator.url + "/api/device", headers={"Authorization": "Bearer nac-demo-admin-key"}
            ).json()
            assert len([d for d in listed if d["hostname"].startswith("orphan-")]) == stopped_at
        finally:
            output.close()
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
