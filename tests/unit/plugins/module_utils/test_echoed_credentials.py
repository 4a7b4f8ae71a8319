# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials that a hostile NAC echoes back in a status reply (issue 32): the Authorization header raw,
URL-encoded and JSON-escaped in authMethod, username and message (the emulator's hostile ``echo``). Every form of
every credential (the API key, the password, the HTTP Basic token, a proxy's password and token) is masked in a
module's result (exit_json, not only fail_json), its warnings, the event source's events and log lines."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import logging
import re
from urllib.parse import quote

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import MASK, hidden_forms, mask
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.modules import nac_dot1x_status
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import printed, run_module, run_source

USERNAME, PASSWORD, TENANT = "svc-ansible", "nac-demo-password", "nac-demo-tenant"  # the emulator's Basic account
KEY = "nac-demo-admin-key"
TOKEN = base64.b64encode(("%s:%s" % (USERNAME, PASSWORD)).encode()).decode()  # c3ZjLWFuc2libGU6bmFjLWRlbW8tcGFzc3dvcmQ=


def lower_hex(text):
    return re.sub("%[0-9A-F]{2}", lambda hexa: hexa.group(0).lower(), text)


def forms_of(secret):
    """The forms in which the echo shows ``secret`` (as the emulator writes them), and the lower-case hex one."""
    return [
        secret,
        quote(secret, safe=""),
        lower_hex(quote(secret, safe="")),
        json.dumps(secret)[1:-1].replace("/", "\\/"),
    ]


@pytest.fixture
def echoing(monkeypatch, tmp_path):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD", "NAC_TENANT", "NAC_API_URL"):
        monkeypatch.delenv(name, raising=False)
    with Emulator(DEFAULT_CONFIG, hostile=dict(on=True, canary=str(tmp_path), echo=True)).start() as running:
        yield running


def test_hidden_forms_hold_the_basic_token_in_every_escaping():
    token = base64.b64encode(b"user:pa/ss+word?").decode()  # '/', '+' and '=': escaped differently by each form
    forms = hidden_forms(["pa/ss+word?"], basic=[("user", "pa/ss+word?")])
    for form in forms_of(token) + [quote(token), token.replace("/", "\\/")]:
        assert form in forms, form
    assert mask("x %s y" % lower_hex(quote(token, safe="")), forms) == "x %s y" % MASK


def test_hidden_forms_hold_a_proxys_password_and_its_token():
    forms = hidden_forms([], proxies=["http://proxy-user:pr%40xy-pass@proxy.example:3128"])
    assert "pr@xy-pass" in forms and "pr%40xy-pass" in forms  # as given in the URL, and decoded
    token = base64.b64encode(b"proxy-user:pr@xy-pass").decode()  # what Proxy-Authorization carries
    assert token in forms and quote(token, safe="") in forms
    assert hidden_forms([], proxies=["http://proxy.example:3128"]) == []  # no credentials: nothing to mask


def test_mask_masks_every_string_and_key_of_a_result():
    forms = hidden_forms(["s3cret"])
    result = {"results": [{"username": "a s3cret b", "n": 1, "s3cret": None}], "t": ("s3cret",), "ok": True}
    assert mask(result, forms) == {
        "results": [{"username": "a %s b" % MASK, "n": 1, MASK: None}],
        "t": (MASK,),
        "ok": True,
    }


def test_the_client_masks_the_proxy_credentials_of_the_environment(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy-user:pr0xy-pa55@127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = NacClient("https://nac.example.com", api_key=KEY)
    try:
        assert "pr0xy-pa55" in client.secrets
        assert base64.b64encode(b"proxy-user:pr0xy-pa55").decode() in client.secrets
    finally:
        client.close()


@pytest.mark.parametrize("credentials, secret", [(dict(api_key=KEY), KEY), (dict(), TOKEN)])
def test_a_status_reply_that_echoes_the_credential_is_masked_in_the_modules_result(
    capsys, echoing, credentials, secret
):
    """Before: with username and password the Basic token came back whole in results[].auth_method, username and
    message (and in -vvv output and the HTML report made of them); an API key was hidden by Ansible's masking of
    no_log values only."""
    if not credentials:
        credentials = dict(username=USERNAME, password=PASSWORD, tenant=TENANT)
    run_module(nac_dot1x_status.main, api_url=echoing.url, hostname=["cam-01", "cam-02"], **credentials)
    result, out = printed(capsys)
    assert not result.get("failed"), result
    entry = result["results"][0]
    assert entry["auth_method"].endswith(MASK) and MASK in entry["username"] and MASK in entry["message"]
    for form in forms_of(secret) + [PASSWORD]:
        assert form not in out, form


def test_the_event_source_masks_an_echoed_basic_token_in_its_events_and_log(echoing, caplog, monkeypatch):
    """Before: the event carried the Basic token whole in auth_method, username and message."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("NAC_USERNAME", USERNAME)
    monkeypatch.setenv("NAC_PASSWORD", PASSWORD)
    monkeypatch.setenv("NAC_TENANT", TENANT)
    events = run_source(
        {"api_url": echoing.url, "hostname": ["cam-01"], "interval": 0.05, "initial": True},
        [(lambda events: len(events) >= 1, None)],
    )
    device = events[0]["nac_dot1x"]
    message = base64.b64decode(re.search("'([A-Za-z0-9+/=]+)'", device["message"]).group(1)).decode()  # (a brace)
    assert device["auth_method"] == "Basic " + MASK and MASK in device["username"]
    assert message == '{"authorization": "Basic %s"} credential=%s %s' % (MASK, MASK, MASK)
    text = repr(events) + message + caplog.text
    for form in forms_of(TOKEN) + [PASSWORD]:
        assert form not in text, form


def test_a_structure_with_nothing_to_mask_is_returned_as_it_is():
    forms = hidden_forms(["s3cret"])
    devices = [{"id": i, "hostname": "host-%d" % i, "ips": ["10.0.0.%d" % i]} for i in range(100)]
    result = {"devices": devices}
    assert mask(result, forms) is result  # not copied: a list of a million devices costs one JSON pass
    devices[7]["hostname"] = "x s3cret"
    assert mask(result, forms)["devices"][7]["hostname"] == "x " + MASK and mask(result, forms) is not result
    assert mask({"m": "cut at s3c..."}, forms) == {"m": "cut at %s..." % MASK}  # the start of one before a cut too
