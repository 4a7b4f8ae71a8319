# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every unit test gets a time limit, so that a bug that makes a test hang (a wait loop that stops
sleeping on a fake clock, a lost wake-up) fails it instead of hanging CI.

ansible-test units runs pytest with its own ini file (``-c``), so the limit cannot come from one of
ours: it is a ``timeout`` marker added here to every test that has none. ``func_only``: ansible-test
runs each test in a forked child (its ansible_forked plugin), and only the test call runs in that
child with pytest-timeout's hooks; the SIGALRM then interrupts the test itself and fails it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.server
import threading

import pytest

TEST_TIMEOUT = 60  # seconds; the slowest test (ansible-playbook started and killed) takes under 10


def pytest_configure(config):
    if not config.pluginmanager.hasplugin("timeout"):  # pytest-timeout's entry point
        raise pytest.UsageError(
            "pytest-timeout is required (tests/unit/requirements.txt): without it a hanging test hangs the run"
        )


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT, func_only=True))


@pytest.fixture
def local_http():
    """``local_http(Handler)``: the address of a threaded HTTP server on a free loopback port answering with
    ``Handler`` (a BaseHTTPRequestHandler), stopped when the test ends."""
    servers = []

    def serve(handler):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads, server.block_on_close = True, False
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return "http://127.0.0.1:%d" % server.server_address[1]

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()
