# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server text shown safely (server_text.shown): what a hostile server puts in hostnames, statuses, groups, error
bodies and headers reaches messages, warnings, ``failure`` fields and log lines with its control characters
escaped visibly, never raw; the data of the results stays exact. Through the real client (NacClient) over a
transport that answers by URL (test_pages.client_for)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.server
import json
import sys
import unicodedata

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL, excerpt, shown
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import Round, log_text, round_summary
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import differences
from ansible_collections.netaccess.nac.plugins.modules import nac_device_info
from ansible_collections.netaccess.nac.tests.unit.helpers import URL, printed
from ansible_collections.netaccess.nac.tests.unit.helpers import run_module as run
from ansible_collections.netaccess.nac.tests.unit.helpers import site_client as client_for

KEY = "unit-k3y-0123456789"  # the key of a module run

ESC_TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J\x1b[H"  # clears the screen
FORGED = '\nok: [cam-01] => {"changed": false}\r\n'  # a line of Ansible's output, forged
HOSTILE = "cam-01" + CLEAR + "ALL DEVICES AUTHENTICATED" + FORGED + "\u2028\u2029\x85\x9b31m\u202e\x7f"
RAW = set("\x1b\x07\n\r\u2028\u2029\x85\x9b\u202e\x7f")


def raw_controls(text):
    """The raw control characters of ``text`` (none, when it is shown safely)."""
    return sorted(set(CONTROL.findall(text)))


def texts(value):
    """Every string within a result (dicts, lists), for the checks."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from texts(item)


# -- shown itself ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cam-01", "cam-01"),
        ("\x1b[2J", "\\x1b[2J"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x00\x07\x7f\x85\x9b", "\\x00\\x07\\x7f\\x85\\x9b"),
        ("x\u2028y\u2029z", "x\\u2028y\\u2029z"),
        ("\u202eevil\u200b\ufeff", "\\u202eevil\\u200b\\ufeff"),
        ("\ud800", "\\ud800"),
        ("\U000e0041", "\\U000e0041"),
        ("caf\u00e9 stra\u00dfe \u65e5\u672c \\x1b C:\\temp", "caf\u00e9 stra\u00dfe \u65e5\u672c \\x1b C:\\temp"),
    ],
)
def test_control_characters_are_escaped_visibly_and_nothing_else_changes(text, expected):
    assert shown(text) == expected
    assert shown(shown(text)) == shown(text)  # shown twice is shown once


def test_none_stays_none_and_other_values_are_shown_as_text():
    assert shown(None) is None
    assert shown(42) == "42"


def test_a_cut_never_splits_an_escape_and_ends_in_three_dots():
    for limit in range(8, 40):
        text = shown("ab" + "\x1b" * 30, limit)
        assert len(text) <= limit and text.endswith("...")
        assert not text[:-3].endswith(("\\", "\\x", "\\x1")), text
    assert shown("abcdef", 6) == "abcdef" and shown("abcdefg", 6) == "abc..."


def test_a_huge_text_is_cut_before_it_is_escaped():
    assert shown("\x1b" * 10**7, 40).startswith("\\x1b\\x1b")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Unicode 14 or later")
def test_control_is_every_character_of_the_categories_cc_cf_cs_zl_zp():
    wanted = ("Cc", "Cf", "Cs", "Zl", "Zp")
    for code in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(code))
        matched = CONTROL.match(chr(code)) is not None
        assert matched == (category in wanted) or (matched and category == "Cn"), (hex(code), category)


def test_an_excerpt_collapses_line_breaks_and_escapes_the_rest():
    assert excerpt("<p>line one\nline two</p>" + ESC_TITLE) == "line one line two \\x1b]0;pwned\\x07"


# -- through the client ------------------------------------------------------------------------


def test_a_403_body_cannot_set_the_terminal_title():
    client, _site = client_for({URL + "/api/device": (403, {"error": "denied" + ESC_TITLE + FORGED}, {})})
    with pytest.raises(NacError) as caught:
        client.list_devices()
    error = caught.value
    for text in (error.message, str(error), error.reason) + tuple(texts(error.failure)):
        assert raw_controls(text) == [], text
    assert "denied\\x1b]0;pwned\\x07" in error.message


def test_a_hostile_status_reply_shows_safely_in_the_failure_and_the_warnings_but_the_data_stays_exact():
    devices = [{"id": 1, "hostname": HOSTILE}, {"id": 2, "hostname": HOSTILE}, {"id": 3, "hostname": "ok-01"}]
    fire = {"status": "NOT" + CLEAR, "authMethod": "EAP", "username": "u" + FORGED, "message": ESC_TITLE}
    routes = {
        URL + "/api/intent": (200, [{"tag": "dot1x_status"}], {}),
        URL + "/api/device": (200, devices, {}),
        URL + "/api/intent/dot1x_status/fire": (200, fire, {}),
    }
    client, _site = client_for(routes)
    report = dot1x_status(client, hostname=["ok-01", "cam-01"], wait_for="AUTHENTICATED", wait_timeout=0)
    for text in [report.failure] + list(report.warnings):
        assert raw_controls(text) == [], text
    assert "NOT\\x1b[2J\\x1b[H" in report.failure
    assert report.results[0]["status"] == "NOT" + CLEAR and report.results[0]["username"] == "u" + FORGED
    report = dot1x_status(client, all_devices=True, wait_for="AUTHENTICATED", wait_timeout=0)
    assert raw_controls(report.failure) == [] and HOSTILE in [entry["hostname"] for entry in report.results]
    assert "cam-01\\x1b[2J\\x1b[HALL DEVICES AUTHENTICATED\\nok: [cam-01]" in report.failure


def test_a_status_reply_with_an_error_shows_it_safely_in_the_results():
    routes = {
        URL + "/api/intent": (200, [{"tag": "dot1x_status"}], {}),
        URL + "/api/device": (200, [{"id": 1, "hostname": "cam-01"}], {}),
        URL + "/api/intent/dot1x_status/fire": (200, {"error": "failed" + CLEAR + FORGED}, {}),
    }
    client, _site = client_for(routes)
    report = dot1x_status(client, hostname=["cam-01"])
    assert all(raw_controls(text) == [] for text in texts(report.results[0]["error"]))
    assert raw_controls(report.failure) == []


def test_a_listed_device_that_differs_is_named_safely():
    found = differences({"group": "Cameras", "profile": "Camera"}, {"group": "x" + CLEAR, "profile": FORGED})
    assert found and all(raw_controls(text) == [] for text in found)


def test_the_event_sources_round_line_shows_a_status_safely():
    known = {1: {"id": 1, "hostname": HOSTILE, "status": "OK" + FORGED + "round 9: 0 devices"}}
    line = round_summary(3, Round([], known, []), 0.1)
    assert raw_controls(line) == [] and "OK\\nok: [cam-01]" in line
    assert raw_controls(log_text("warning: " + HOSTILE)) == []


def test_a_modules_failure_and_warnings_show_the_servers_text_safely(capsys, local_http):
    class Refusing(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"error": "denied" + ESC_TITLE + FORGED}).encode()
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    run(nac_device_info.main, api_url=local_http(Refusing), api_key=KEY, max_retries=0, validate_certs=False)
    result, _out = printed(capsys)
    assert result["failed"] and "denied\\x1b]0;pwned\\x07 ok: [cam-01]" in result["msg"]
    for text in list(texts(result["msg"])) + list(texts(result["failure"])) + list(texts(result.get("warnings"))):
        assert raw_controls(text) == [], text
