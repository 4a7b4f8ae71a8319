# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials a hostile NAC echoes in another encoding (issue 48): the Basic token without its ``=`` padding, in
base64url, the base64 of the token, of the API key or of the password, each also URL-encoded and JSON-escaped.
None of them reaches a module's result (its -vvv output is that result), the event source's events or its log."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import logging
from urllib.parse import quote

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import MASK, hidden_forms, mask
from ansible_collections.netaccess.nac.plugins.modules import nac_dot1x_status
from ansible_collections.netaccess.nac.tests.emulator.nac_emu.hostile import HostileMixin
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import printed, run_module, run_source

USERNAME, PASSWORD, TENANT = "svc-ansible", "nac-demo-password", "nac-demo-tenant"  # the emulator's Basic account
KEY = "nac-demo-admin-key"
PAIR = ("%s:%s" % (USERNAME, PASSWORD)).encode()
TOKEN = base64.b64encode(PAIR).decode()  # 40 characters, the last one "=" padding


def b64(raw):
    return base64.b64encode(raw).decode()


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode()


def encodings(secret, pair=None):
    """What the hostile server echoes of ``secret`` (and of the Basic ``pair``): base64 and base64url forms."""
    raw = secret.encode()
    forms = [b64(raw), b64(raw).rstrip("="), b64url(raw), b64url(raw).rstrip("=")]
    if pair is not None:
        token = b64(pair)
        forms += [token.rstrip("="), b64url(pair), b64url(pair).rstrip("="), b64(token.encode())]
    escaped = [json.dumps(form)[1:-1].replace("/", "\\/") for form in forms]
    return forms + [quote(form, safe="") for form in forms] + escaped


def echo_encodings(self, device_id, headers=None):
    """An 802.1x status that echoes the request's credential in every encoding of ``encodings``."""
    scheme, _space, credential = ((headers or {}).get("Authorization") or "").partition(" ")
    if scheme == "Basic":
        pair = base64.b64decode(credential)
        forms = encodings(pair.partition(b":")[2].decode(), pair)
    else:
        forms = encodings(credential)
    half = len(forms) // 2
    return dict(
        status="AUTHENTICATED",
        authMethod=forms[0],
        username=" ".join(forms[1:half]),
        message="echo: %s" % " ".join(forms[half:]),
    )


@pytest.fixture
def echoing(monkeypatch, tmp_path):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD", "NAC_TENANT", "NAC_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(HostileMixin, "hostile_result", echo_encodings)
    with Emulator(DEFAULT_CONFIG, hostile=dict(on=True, canary=str(tmp_path), echo=True)).start() as running:
        yield running


def test_the_basic_token_without_its_padding_is_39_of_its_40_characters():
    assert len(TOKEN) == 40 and TOKEN.endswith("=") and not TOKEN.endswith("==")


@pytest.mark.parametrize("secret, pair", [(KEY, None), (PASSWORD, PAIR)])
def test_hidden_forms_hold_every_encoding_of_each_credential(secret, pair):
    basic = [(USERNAME, PASSWORD)] if pair else []
    forms = hidden_forms([secret], basic=basic)
    for form in encodings(secret, pair):
        assert mask("<%s>" % form, forms) == "<%s>" % MASK, form


def test_a_short_secret_s_base64_forms_mask_no_common_word():
    forms = hidden_forms(["ab"])  # base64 "YWI=", "YWI": too short to mean the secret
    assert "YWI" not in forms and mask("YWI", forms) == "YWI" and mask("x ab y", forms) == "x %s y" % MASK


@pytest.mark.parametrize("credentials, secret", [(dict(api_key=KEY), KEY), (dict(), PASSWORD)])
def test_a_reply_that_echoes_encoded_credentials_is_masked_in_the_module_s_result(capsys, echoing, credentials, secret):
    if not credentials:
        credentials = dict(username=USERNAME, password=PASSWORD, tenant=TENANT)
    run_module(nac_dot1x_status.main, api_url=echoing.url, hostname=["cam-01", "cam-02"], **credentials)
    result, out = printed(capsys)
    assert not result.get("failed"), result
    entry = result["results"][0]
    assert entry["auth_method"] == MASK and entry["message"].startswith("echo: " + MASK)
    for form in encodings(secret, None if "api_key" in credentials else PAIR):
        assert form not in out, form


def test_the_event_source_masks_encoded_credentials_in_its_events_and_log(echoing, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("NAC_USERNAME", USERNAME)
    monkeypatch.setenv("NAC_PASSWORD", PASSWORD)
    monkeypatch.setenv("NAC_TENANT", TENANT)
    events = run_source(
        {"api_url": echoing.url, "hostname": ["cam-01"], "interval": 0.05, "initial": True},
        [(lambda events: len(events) >= 1, None)],
    )
    device = events[0]["nac_dot1x"]
    assert device["auth_method"] == MASK and device["message"].startswith("echo: " + MASK)
    text = repr(events) + json.dumps(events) + caplog.text
    for form in encodings(PASSWORD, PAIR):
        assert form not in text, form
