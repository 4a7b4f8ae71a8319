# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the emulator's tests share (the one helper module of tests/unit/emulator; its fixtures ``emu`` and
``api`` are in conftest.py): where the emulator is, its demo credentials, a client bound to one emulator and one
credential (``Api``), and starting its command line (``start_cli``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys
import time

import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import load_config

EMULATOR_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "emulator"))
SCRIPT = os.path.join(EMULATOR_DIR, "nac_emulator.py")
INTEGRATION_CONFIG = os.path.join(EMULATOR_DIR, "integration_config.json")

ADMIN_KEY = "nac-demo-admin-key"
AUDITOR_KEY = "nac-demo-noaccess-key"
NOPRIV_KEY = "nac-demo-nopriv-key"
BASIC_USER, BASIC_PASSWORD, TENANT = "svc-ansible", "nac-demo-password", "nac-demo-tenant"
SECRETS = (ADMIN_KEY, AUDITOR_KEY, NOPRIV_KEY, BASIC_PASSWORD, TENANT)
SERVER_ERROR_HTML = "<html><head><title>Server error</title></head><body><h1>Server error</h1></body></html>"
FIRE = "/api/intent/dot1x_status/fire"
JSON_TRUE = {"json": True}


class Api:
    """A requests.Session bound to one emulator and one credential."""

    def __init__(self, url, key=ADMIN_KEY, basic=None, tenant=None):
        self.url = url
        self.session = requests.Session()
        if key:
            self.session.headers["Authorization"] = "Bearer " + key
        if basic:
            self.session.auth = basic
        if tenant:
            self.session.headers["X-Tenant"] = tenant

    def get(self, path, **kwargs):
        return self.session.get(self.url + path, timeout=10, **kwargs)

    def post(self, path, body=None, **kwargs):
        return self.session.post(self.url + path, json=body, timeout=10, **kwargs)

    def request(self, method, path, **kwargs):
        return self.session.request(method, self.url + path, timeout=10, **kwargs)

    def create(self, **fields):
        return self.post("/api/device", fields)

    def fire(self, target_id, payload=None):
        body = {"targetId": target_id}
        if payload is not None:
            body["additionalPayload"] = payload
        return self.post(FIRE, body)

    def status(self, target_id):
        reply = self.fire(target_id, JSON_TRUE)
        assert reply.status_code == 200, reply.text
        return reply.json()

    def devices(self):
        reply = self.get("/api/device")
        assert reply.status_code == 200, reply.text
        return reply.json()


def by_hostname(devices, hostname):
    return [device for device in devices if device["hostname"] == hostname]


def advance(api, seconds):
    reply = requests.post(api.url + "/_emulator/clock", json={"advance": seconds}, timeout=10)
    assert reply.status_code == 200, reply.text
    return reply.json()


def config_with(**changes):
    config = load_config(INTEGRATION_CONFIG)
    config.update(changes)
    return config


def start_cli(tmp_path, *extra):
    port_file = tmp_path / "port"
    process = subprocess.Popen(
        [sys.executable, SCRIPT, "--port", "0", "--port-file", str(port_file)] + list(extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
    )
    deadline = time.monotonic() + 10
    while not (port_file.exists() and port_file.read_text().strip()):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the emulator did not write its port file"
        time.sleep(0.02)
    return process, int(port_file.read_text())
