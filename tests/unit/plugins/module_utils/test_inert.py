# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of template_guard.py: which server strings could be templates, and the event source's template of a
string's exact value (what ansible-core makes of it: tests/unit/extensions/eda/test_inert_events.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.template_guard import (
    could_be_template,
    could_become_template,
    inert_event,
    literal_template,
)

TEMPLATE = re.compile(
    r"^\{\{ lookup\('ansible\.builtin\.list', '([A-Za-z0-9+/=]*)'\) \| ansible\.builtin\.b64decode \| string \}\}$"
)


@pytest.mark.parametrize(
    "text, could",
    [
        ("{{ lookup('pipe', 'id') }}", True),
        ("{% if 1 %}x{% endif %}", True),
        ("{# c #}", True),
        ("a { b", True),
        ("x}", True),
        ("  #jinja2: variable_start_string: '[['\n[[ x ]]", True),
        ("cam-01", False),
        ("AUTHENTICATED", False),
        ("Not Authorised/Quarantine", False),
        ("%7B%7B x %7D%7D", False),  # a template only once decoded: see the security page
        ("", False),
    ],
)
def test_could_be_template(text, could):
    assert could_be_template(text) is could


@pytest.mark.parametrize(
    "text",
    [
        "{{ lookup('pipe', 'touch /tmp/x') }}",
        "{1: 2}",
        "'\"\\ {{ }} {% raw %} {% endraw %}",
        "naïve {x} \U0001f4a5\n\t\r\x1b[2J\u2028",
        "{",
    ],
)
def test_a_literal_template_holds_the_exact_text_as_base64_only(text):
    template = literal_template(text)
    match = TEMPLATE.match(template)
    assert match, template  # nothing of the server's text is parsed by Jinja: only base64 between the quotes
    assert base64.b64decode(match.group(1)).decode("utf-8") == text


def test_a_lone_surrogate_becomes_a_question_mark():
    assert base64.b64decode(TEMPLATE.match(literal_template("{\ud800}")).group(1)) == b"{?}"


def test_inert_event_replaces_only_strings_that_could_be_templates():
    evil = "{{ lookup('pipe', 'id') }}"
    event = {
        "nac_dot1x": dict(
            id=7, hostname=evil, status="UNAUTHENTICATED", previous_status=None, auth_method="EAP-TLS", message=evil
        ),
        "nac_dot1x_error": dict(message="x", devices=[dict(id=1, hostname=evil, error="e {")]),
    }
    got = inert_event(event)
    device = got["nac_dot1x"]
    assert device == dict(
        id=7,
        hostname=literal_template(evil),
        status="UNAUTHENTICATED",  # rule conditions see the server's words
        previous_status=None,
        auth_method="EAP-TLS",
        message=literal_template(evil),
    )
    assert got["nac_dot1x_error"] == dict(
        message="x", devices=[dict(id=1, hostname=literal_template(evil), error=literal_template("e {"))]
    )
    assert event["nac_dot1x"]["hostname"] == evil  # the source's own event is not changed


CANARY_TEMPLATE = "{{ lookup('pipe', 'touch /tmp/canary') }}"


@pytest.mark.parametrize(
    "text",
    [
        base64.b64encode(CANARY_TEMPLATE.encode()).decode(),  # b64decode
        base64.urlsafe_b64encode(b"\xfb{{ x }}").decode(),  # b64decode(urlsafe=true)
        base64.b64encode(CANARY_TEMPLATE.encode()).decode().replace("A", "A!", 1),  # junk that b64decode drops
        "%7B%7B%20lookup('pipe',%20'id')%20%7D%7D",  # urldecode
        "%257B%257B x %257D%257D",  # urldecode twice
        base64.b64encode(b"%7B%7B x %7D%7D").decode(),  # urldecode of b64decode
        "\uff5b\uff5b lookup('pipe', 'id') \uff5d\uff5d",  # NFKC: full-width braces
        "\ufe5b% set x = 1 %\ufe5c",  # NFKC: small braces
        "&#123;&#123; x &#125;&#125;",  # HTML entities
        "\\u007b\\u007b x \\u007d\\u007d",  # JSON escapes (from_json of a quoted string)
        "  #jinja2: variable_start_string: '[['",
        "x" * 70000,  # too long to decode: delivered encoded
    ],
)
def test_a_string_that_becomes_a_template_once_decoded_or_normalised_is_made_inert(text):
    """Before: such a string (no ASCII brace) was in the event as the server sent it, and on ansible-core 2.16 a
    playbook that decoded it and stored it with set_fact, or used it as a loop item, ran it."""
    assert could_become_template(text)
    assert inert_event({"nac_dot1x": {"message": text}})["nac_dot1x"]["message"] == literal_template(text)


@pytest.mark.parametrize(
    "text",
    [
        "AUTHENTICATED",
        "UNAUTHENTICATED",
        "CONNECTING",
        "EAP-TLS",
        "cam-01",
        "switch01",
        "host_1.example.com",
        "Authentication in progress",
        "No MAC address registered for this device",
        "100%",
        "a+b",
        "R&D",
    ],
)
def test_ordinary_words_stay_as_they_are(text):
    assert not could_become_template(text)
    assert inert_event({"s": text}) == {"s": text}


def test_encode_all_makes_every_string_a_template_of_its_value():
    event = {"nac_dot1x": {"id": 3, "status": "AUTHENTICATED", "previous_status": None, "hostname": "cam-01"}}
    assert inert_event(event, encode_all=True) == {
        "nac_dot1x": {
            "id": 3,
            "status": literal_template("AUTHENTICATED"),
            "previous_status": None,
            "hostname": literal_template("cam-01"),
        }
    }
