# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets masked before any cut and in every transformed form: a server that echoes the key (or the password)
in an error body, a status reply or a header never gets any part of it into a message, a ``failure`` field, a
result's error or an event, however the text was cut or its whitespace collapsed (masking.mask, server_text.excerpt)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import MASK, hidden_forms, mask
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import REASON_LEN, excerpt
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import poll_once
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.tests.unit.helpers import URL, Site, mounted

KEY = "Zk9q-4TfWc-2Lr8x-Vb7Nm-3Hs6p-Qd1Jy-8Ge5t"  # 40 characters, as in the issue
PASSWORD = "correct  horse   battery"  # runs of spaces, which an excerpt collapses


def with_site(routes, **credentials):
    credentials = credentials or dict(api_key=KEY)
    client = NacClient(URL, max_retries=0, sleep=lambda seconds: None, **credentials)
    site = Site(routes)
    mounted(client, site)
    return client


def prefixes(secret, shortest=4):
    return [secret[:size] for size in range(shortest, len(secret) + 1)]


def assert_no_part(texts, secret):
    for text in texts:
        for part in prefixes(secret) + [" ".join(secret.split())]:
            assert part not in text, (part, text)


def everything(error):
    return [error.message, str(error), error.reason or ""] + [str(value) for value in error.failure.values()]


@pytest.mark.parametrize("filler", [REASON_LEN - 18 - 3, REASON_LEN - 30, REASON_LEN - 5, 100])
def test_a_body_that_echoes_the_key_near_the_cut_shows_no_part_of_it(filler):
    """Before: the reason was cut at 400 characters and then masked, so the first 18 characters of the key
    stayed in msg, failure.reason and events."""
    body = {"error": "x" * filler + " invalid key " + KEY + " for tenant"}
    client = with_site({URL + "/api/device": (403, body, {})})
    with pytest.raises(NacError) as caught:
        client.list_devices()
    assert_no_part(everything(caught.value), KEY)
    assert MASK in caught.value.message or filler > REASON_LEN - 30


def test_a_password_with_runs_of_spaces_echoed_back_is_masked_not_collapsed():
    """Before: the excerpt collapsed 'correct  horse   battery' to 'correct horse battery', which no mask matched."""
    client = with_site(
        {URL + "/api/device": (401, "<html><body>bad password: %s</body></html>" % PASSWORD, {})},
        username="svc",
        password=PASSWORD,
    )
    with pytest.raises(NacError) as caught:
        client.list_devices()
    assert_no_part(everything(caught.value), PASSWORD)
    assert "bad password: %s" % MASK in caught.value.message


def test_the_basic_credentials_echoed_are_masked_too():
    token = base64.b64encode(("svc:%s" % PASSWORD).encode()).decode()
    client = with_site(
        {URL + "/api/device": (401, {"error": "y" * 380 + token}, {})}, username="svc", password=PASSWORD
    )
    with pytest.raises(NacError) as caught:
        client.list_devices()
    assert_no_part(everything(caught.value), token)


def test_a_status_reply_echoing_the_key_is_masked_in_the_results_and_the_events():
    routes = {
        URL + "/api/intent": (200, [{"tag": "dot1x_status"}], {}),
        URL + "/api/device": (200, [{"id": 1, "hostname": "cam-01"}], {}),
        URL + "/api/intent/dot1x_status/fire": (200, {"error": "z" * 190 + KEY}, {}),
    }
    report = dot1x_status(with_site(routes), hostname=["cam-01"])
    assert_no_part([report.failure, report.results[0]["error"]], KEY)
    result = poll_once(with_site(routes), initial=True)
    assert_no_part([repr(result.events)], KEY)


def test_a_round_that_fails_on_a_body_echoing_the_key_gives_an_event_without_it():
    routes = {URL + "/api/device": (500, {"message": "w" * 370 + KEY}, {})}
    result = poll_once(with_site(routes))
    assert_no_part([repr(result.events)], KEY)


# -- the masking itself -------------------------------------------------------------------------


def test_mask_hides_the_start_of_a_secret_left_before_a_cut():
    forms = hidden_forms([KEY])
    assert mask("reason: invalid key " + KEY[:18] + "...", forms) == "reason: invalid key " + MASK + "..."
    assert mask("a " + KEY[:5] + "... and " + KEY[:3] + "...", forms) == "a %s... and %s..." % (MASK, MASK)
    assert mask("nothing of it here...", forms) == "nothing of it here..."


def test_every_form_is_also_hidden_with_its_whitespace_collapsed():
    forms = hidden_forms([PASSWORD])
    assert "correct horse battery" in forms
    assert mask("was: correct horse battery.", forms) == "was: %s." % MASK


def test_an_excerpt_masks_before_it_collapses_and_cuts():
    forms = hidden_forms([PASSWORD, KEY])
    assert excerpt("pw " + PASSWORD, 160, forms) == "pw " + MASK
    text = excerpt("k" * 155 + KEY, 160, forms)
    assert text == ("k" * 155 + MASK)[:157] + "..."  # the cut falls within the mask: no part of the key
