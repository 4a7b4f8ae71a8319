# -*- coding: utf-8 -*-
# Copyright: (c) 2026, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the emulator's hostile framing (README, "Hostile framing"): the bytes each mode sends for a reply to an
/api request, read off a raw socket; the request itself is processed as usual; admin replies stay honest."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import socket

import pytest
import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import ADMIN_KEY

FORGED = b'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"id": 4242}'


def raw_exchange(emu, method, path, body=None):
    """The bytes the emulator sends for one request on a fresh connection, read until it stops sending."""
    data = b"" if body is None else json.dumps(body).encode()
    head = "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n" % (
        method,
        path,
        ADMIN_KEY,
        len(data),
    )
    if body is not None:
        head += "Content-Type: application/json\r\n"
    with socket.create_connection(("127.0.0.1", emu.port), timeout=5) as sock:
        sock.sendall(head.encode() + b"\r\n" + data)
        sock.settimeout(0.5)
        received = b""
        while True:
            try:
                piece = sock.recv(65536)
            except socket.timeout:
                return received
            if not piece:
                return received
            received += piece


@pytest.fixture
def emu():
    with Emulator().start() as emulator:
        yield emulator


def framing(emu, mode):
    reply = requests.post(emu.url + "/_emulator/framing", json={"mode": mode}, timeout=5)
    assert reply.status_code == 200 and reply.json()["mode"] == mode


@pytest.mark.parametrize(
    "mode, starts, ends",
    [
        ("none", b"HTTP/1.1 200 OK\r\n", b"]"),
        ("forged_reply", b"HTTP/1.1 200 OK\r\n", FORGED),
        ("stray_crlf", b"HTTP/1.1 200 OK\r\n", b"]\r\n"),
        ("interim_103", b"HTTP/1.1 103 Early Hints\r\n", b"]"),
        ("switch_101", b"HTTP/1.1 101 Switching Protocols\r\n", FORGED),
        ("chunked_with_length", b"HTTP/1.1 200 OK\r\n", b"0\r\n\r\n" + FORGED),
        ("chunked_http10", b"HTTP/1.0 200 OK\r\n", b"0\r\n\r\n" + FORGED),
    ],
)
def test_each_mode_frames_the_reply_to_a_list_as_the_readme_says(emu, mode, starts, ends):
    framing(emu, mode)
    sent = raw_exchange(emu, "GET", "/api/device")
    assert sent.startswith(starts) and sent.endswith(ends)
    if mode in ("chunked_with_length", "chunked_http10"):
        assert b"Transfer-Encoding: chunked\r\n" in sent
        assert (b"Content-Length: 0\r\n" in sent) == (mode == "chunked_with_length")
    if mode == "switch_101":  # the same request again: the honest reply
        again = raw_exchange(emu, "GET", "/api/device")
        assert again.startswith(b"HTTP/1.1 200 OK\r\n") and not again.endswith(FORGED)


def test_words_refused_breaks_the_status_line_of_a_creation_it_processed(emu):
    framing(emu, "words_refused")
    before = len(emu.records())
    sent = raw_exchange(emu, "POST", "/api/device", {"hostname": "fr-1", "group": "Cameras", "profile": "Camera"})
    assert sent.startswith(b"HTTP/1.1 2xx Connection refused NameResolutionError\r\n")
    assert len(emu.records()) == before + 1  # processed all the same
    assert raw_exchange(emu, "GET", "/api/device").startswith(b"HTTP/1.1 200 OK\r\n")  # reads are honest


def test_admin_replies_stay_honest_and_a_bad_mode_is_refused(emu):
    framing(emu, "forged_reply")
    sent = raw_exchange(emu, "GET", "/_emulator/health")
    assert sent.startswith(b"HTTP/1.1 200 OK\r\n") and not sent.endswith(FORGED)
    refused = requests.post(emu.url + "/_emulator/framing", json={"mode": "smuggle"}, timeout=5)
    assert refused.status_code == 400 and "forged_reply" in refused.text
