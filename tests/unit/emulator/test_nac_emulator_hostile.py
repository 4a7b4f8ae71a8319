# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the emulator's hostile mode (README, "Hostile mode"): payloads in every field it returns (hostnames,
groups, profiles, 802.1x status, intents, error bodies), the Authorization header echoed in errors, the admin
endpoint, the command line and reset."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re
from urllib.parse import unquote

import pytest
import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import (
    ADMIN_KEY,
    Api,
    start_cli,
)

CANARY = "/nonexistent/nac-canary"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
KINDS = {
    "jinja": re.compile(r"\{\{|\{%"),
    "formula": re.compile("^[=+\\-@\t\r\uff1d]"),
    "breaker": re.compile('[,"|\n]'),
    "escape": re.compile("\x1b"),
    "c1": re.compile("[\x80-\x9f]"),
    "bidi": re.compile("[\u202a-\u202e\u2066-\u2069]"),
    "html": re.compile("<script"),
    "long": re.compile("^.{10000,}$", re.S),
}


@pytest.fixture
def hostile():
    with Emulator(hostile=dict(on=True, canary=CANARY)).start() as running:
        yield running


def admin(url, method="GET", body=None):
    reply = requests.request(method, url + "/_emulator/hostile", json=body, timeout=10)
    return reply


def test_the_payloads_cover_every_kind_and_name_their_canary(hostile):
    payloads = hostile.hostile()["payloads"]
    for kind, pattern in KINDS.items():
        assert any(pattern.search(text) for text in payloads.values()), kind
    for name in ("jinja_expression", "jinja_statement", "jinja_query", "jinja_raw_break", "jinja_comment_break"):
        assert "touch %s/%s" % (CANARY, name) in payloads[name]
    template = "{{ lookup('pipe', 'touch %s/decoded') }}" % CANARY
    assert unquote(payloads["url_encoded_jinja"]) == template and "{" not in payloads["url_encoded_jinja"]
    assert base64.b64decode(payloads["base64_jinja"]).decode() == template
    assert "Authorization" not in "".join(payloads.values())  # only an error echoes the header


def test_hostnames_groups_and_profiles_of_the_seeded_devices_are_hostile(hostile):
    snapshot = hostile.hostile()
    texts = list(snapshot["payloads"].values())
    listed = Api(hostile.url).devices()
    seeded = [record for record in listed if record["id"] in snapshot["device_ids"]]
    assert len(seeded) == len(texts) == len(snapshot["device_ids"])
    assert [record["hostname"] for record in seeded] == [text[:253] for text in texts]
    assert {record["group"] for record in seeded} == set(texts) == {record["profile"] for record in seeded}
    assert all(len(record["hostname"]) <= 253 for record in seeded)
    assert [r["hostname"] for r in listed[:5]] == ["cam-01", "cam-02", "printer-01", "ws-01", "ws-02"]


def test_every_device_answers_a_hostile_802_1x_status(hostile):
    api, texts = Api(hostile.url), list(hostile.hostile()["payloads"].values())
    for device_id in (1, 5, hostile.hostile()["device_ids"][0]):
        result = api.status(device_id)
        assert set(result) == {"status", "authMethod", "username", "message"}
        assert all(value in texts for value in result.values()), result
    plain = api.fire(1)  # the text reply of the query carries them too
    assert plain.status_code == 200 and api.status(1)["status"] in plain.text


def test_an_override_still_wins_over_the_hostile_status(hostile):
    requests.post(hostile.url + "/_emulator/dot1x", json={"id": 2, "status": "AUTHENTICATED"}, timeout=10)
    assert Api(hostile.url).status(2)["status"] == "AUTHENTICATED"


def test_the_intent_list_adds_hostile_intents_after_the_account_own(hostile):
    intents = Api(hostile.url).get("/api/intent").json()
    assert [i["tag"] for i in intents[:3]] == ["dot1x_status", "ping", "who_is_logged_in"]
    assert any(KINDS["escape"].search(i["tag"]) for i in intents[3:])
    assert any(KINDS["jinja"].search(i["name"]) for i in intents[3:])


@pytest.mark.parametrize(
    "key, status", [(ADMIN_KEY, 404), ("wrong-key-0123456789abcdef", 500), ("nac-demo-nopriv-key", 403)]
)
def test_errors_are_hostile_and_echo_the_authorization_header(hostile, key, status):
    api = Api(hostile.url, key=key)
    reply = api.fire(999999) if status == 404 else api.get("/api/device")
    assert reply.status_code == status
    assert "Authorization: Bearer %s" % key in reply.text
    assert "\x1b[2J" in reply.content.decode("utf-8") or "\\u001b[2J" in reply.text
    if status == 500:
        assert reply.headers["Content-Type"].startswith("text/html") and "<pre>" in reply.text
    else:
        body = reply.json()
        assert CONTROL.search(body["error"]) and "{{ lookup('pipe'" in body["message"]


def test_the_last_hostile_device_answers_a_hostile_404(hostile):
    snapshot = hostile.hostile()
    assert snapshot["error_ids"] == snapshot["device_ids"][-1:]
    reply = Api(hostile.url).fire(snapshot["error_ids"][0])
    assert reply.status_code == 404 and "Authorization: Bearer %s" % ADMIN_KEY in reply.json()["message"]


def test_admin_endpoint_turns_it_off_and_on_and_refuses_bad_settings(hostile):
    assert admin(hostile.url, "POST", {"on": "yes"}).status_code == 400
    assert admin(hostile.url, "POST", {"canary": "relative"}).status_code == 400
    assert admin(hostile.url, "POST", {"loud": True}).status_code == 400
    assert admin(hostile.url, "POST", {"on": False}).json()["on"] is False
    api = Api(hostile.url)
    assert api.status(1) == {"status": "AUTHENTICATED", "authMethod": "EAP-TLS", "username": "cam-01", "message": None}
    assert api.fire(999999).json() == {"error": "Not found", "message": "No device with id 999999"}
    assert len(api.get("/api/intent").json()) == 3
    devices = len(api.devices())
    snapshot = admin(hostile.url, "POST", {"on": True}).json()
    assert snapshot["on"] is True and len(api.devices()) == devices  # seeded once only
    assert api.status(1)["status"] in snapshot["payloads"].values()


def test_reset_returns_to_the_start_up_hostile_settings(hostile):
    admin(hostile.url, "POST", {"on": False})
    hostile.reset()
    snapshot = hostile.hostile()
    assert snapshot["on"] is True and len(hostile.records()) == 5 + len(snapshot["payloads"])
    with Emulator().start() as plain:
        assert plain.hostile()["on"] is False and len(plain.records()) == 5
        plain.reset()
        assert len(plain.records()) == 5


def test_command_line_hostile_and_canary(tmp_path):
    process, port = start_cli(tmp_path, "--quiet", "--hostile", "--hostile-canary", str(tmp_path / "canary"))
    try:
        url = "http://127.0.0.1:%d" % port
        snapshot = admin(url).json()
        assert snapshot["on"] is True and snapshot["canary"] == str(tmp_path / "canary")
        assert "touch %s/jinja_expression" % (tmp_path / "canary") in snapshot["payloads"]["jinja_expression"]
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_endless_pages_never_end_and_never_repeat_an_id(hostile):
    assert admin(hostile.url, "POST", {"endless": -1}).status_code == 400
    admin(hostile.url, "POST", {"endless": 50})
    api, seen = Api(hostile.url), set()
    reply = api.get("/api/device")
    for number in range(1, 4):
        records = reply.json()
        assert [r["id"] for r in records] == list(range((number - 1) * 50 + 1, number * 50 + 1))
        assert not seen & set(r["id"] for r in records)
        seen.update(r["id"] for r in records)
        assert reply.links["next"]["url"] == "%s/api/device?page=%d" % (hostile.url, number + 1)
        reply = api.session.get(reply.links["next"]["url"], timeout=10)
    admin(hostile.url, "POST", {"endless": 0})
    assert "next" not in api.get("/api/device").links


def test_a_state_file_keeps_the_hostile_devices_once(tmp_path):
    state = str(tmp_path / "state.sqlite")
    with Emulator(state_path=state, hostile=dict(on=True, canary=CANARY)).start() as first:
        ids, count = first.hostile()["device_ids"], len(first.records())
    with Emulator(state_path=state, hostile=dict(on=True, canary=CANARY)).start() as again:
        assert again.hostile()["device_ids"] == ids and len(again.records()) == count
