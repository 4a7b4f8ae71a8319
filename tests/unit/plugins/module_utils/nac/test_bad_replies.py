# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Malformed server replies through the real code paths (NacClient over a scripted transport, then
ensure_devices.ensure_devices, ensure_devices.select and dot1x_query.dot1x_status): every one ends as a NacError or a
per-item error that says what was wrong, never as a KeyError, TypeError or the like, and never as a
half-done change."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import ssl
import threading

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common import server_text
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import retry_after
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacAuthError,
    NacClient,
    NacError,
    NacResponseError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import select
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_results import ERROR
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    CREATED,
    FAILED,
    device_specs,
    ensure_devices,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import AtConnect, Routes, mounted, raw

URL = "https://nac.example.com"
KEY = "k3y-that-must-never-show"
LIST = "GET /api/device"
CREATE = "POST /api/device"
INTENTS = "GET /api/intent"
FIRE = "POST /api/intent/dot1x_status/fire"
GET_ONLY = "GET /api/device/9"  # where a followed redirect would go
DEVICES = [{"id": 1, "hostname": "cam-01"}, {"id": 2, "hostname": "printer-01"}]
AUTHENTICATED = {"status": "AUTHENTICATED", "authMethod": "EAP-TLS", "username": "u1", "message": None}
HTML = "text/html"


def client_for(routes):
    client = NacClient(URL, api_key=KEY, max_retries=1, sleep=lambda seconds: None)
    server = Routes(routes)
    mounted(client, server)
    return client, server


def routes(devices=None, fire=None, create=None, intents=None):
    """The routes of a healthy server, with the given replies instead."""
    return {
        INTENTS: intents or [(200, [{"tag": "dot1x_status"}])],
        LIST: devices or [(200, DEVICES)],
        FIRE: fire or [(200, AUTHENTICATED)],
        CREATE: create or [(201, {"id": 9})],
    }


def clean(error):
    """A failure a user can act on: says what went wrong, short, and no credential in it."""
    text = str(error)
    assert KEY not in text and KEY not in json.dumps(getattr(error, "failure", {}))
    assert "Traceback" not in text and len(text) < 1200
    return text


# -- the device list ------------------------------------------------------------------------------

BAD_LISTS = [
    ((200, {"devices": DEVICES}), "expected a JSON array, got an object"),
    ((200, raw("null")), "expected a JSON array, got null or an empty body"),
    ((200, raw("")), "expected a JSON array, got null or an empty body"),
    ((200, raw('"cam-01"')), "expected a JSON array, got a string"),
    ((200, raw("42")), "expected a JSON array, got a number"),
    ((200, [{"id": "1", "hostname": "cam-01"}]), "item 0 has no int 'id'"),
    ((200, [{"id": 1.0, "hostname": "cam-01"}]), "item 0 has no int 'id'"),
    ((200, [{"id": False, "hostname": "cam-01"}]), "item 0 has no int 'id'"),
    ((200, [{"id": 1, "hostname": "cam-01"}, None]), "item 1 has no int 'id': null"),
    ((200, [{"id": 1, "hostname": "cam-01"}, "printer-01"]), "item 1 has no int 'id'"),
    ((200, [{"id": 1, "hostname": None}]), "item 0 (id 1) has no string 'hostname'"),
    ((200, [{"id": 1, "hostname": ["cam-01"]}]), "item 0 (id 1) has no string 'hostname'"),
    ((200, [{"id": 1}]), "item 0 (id 1) has no string 'hostname'"),
    (
        (200, raw("<html><body><h1>Please log in</h1></body></html>", HTML)),
        "expected a JSON reply but got text/html: 'Please log in'",
    ),
    ((200, raw('[{"id": 1, "hostname": "cam-01"}')), "expected a JSON reply"),
    ((200, raw("[" * 100000)), "expected a JSON reply"),
    ((200, raw("[" * 100000 + "]" * 100000)), "expected a JSON reply"),
    ((200, raw(b"\xff\xfe\x00garbage")), "expected a JSON reply"),
]


@pytest.mark.parametrize("reply, fragment", BAD_LISTS)
def test_a_bad_device_list_is_a_clear_error_for_every_caller(reply, fragment):
    callers = [
        lambda client: select(client.list_devices(), ["cam-01"], [2]),
        lambda client: ensure_devices(
            device_specs([dict(hostname="new", group="g", profile="p")]), client.list_devices, client.create_device
        ),
        lambda client: dot1x_status(client, all_devices=True),
        lambda client: dot1x_status(client, hostname=["cam-01"]),
    ]
    for call in callers:
        client, server = client_for(routes(devices=[reply]))
        with pytest.raises(NacError) as raised:
            call(client)
        assert "GET /api/device" in clean(raised.value)
        assert fragment in str(raised.value)
        assert server.count(CREATE) == 0 and server.count(FIRE) == 0  # nothing was done on a bad list


def test_a_huge_html_reply_gives_a_short_message_with_its_text():
    page = (
        "<html><head><title>Error</title><style>"
        + "p { color: red; }" * 10000
        + "</style></head><body>"
        + "<p>Something went wrong.</p>" * 100000
        + "</body></html>"
    )
    client, dummy = client_for(routes(devices=[(200, raw(page, HTML))]))
    with pytest.raises(NacResponseError) as raised:
        client.list_devices()
    assert "got text/html: 'Something went wrong. Something went wrong." in clean(raised.value)
    assert len(str(raised.value)) < 400 and "color" not in str(raised.value)


@pytest.mark.parametrize("text", ["<script" * 50000, "<a" * 200000, "<style>" + "<head" * 40000])
def test_excerpt_of_unclosed_tags_does_not_hang(text):
    """Unclosed tags once made excerpt() quadratic: 350 kB of them took hours. Now it takes
    milliseconds; the generous bound only turns a regression into a failure instead of a hang."""
    done = []
    worker = threading.Thread(target=lambda: done.append(server_text.excerpt(text)))
    worker.daemon = True
    worker.start()
    worker.join(60)
    assert done and len(done[0]) <= server_text.EXCERPT_LEN


def test_a_huge_valid_device_list_is_used():
    devices = [{"id": n, "hostname": "ws-%05d" % n, "note": "x" * 200} for n in range(1, 20001)]
    client, dummy = client_for(routes(devices=[(200, devices)]))
    selected, missing = select(client.list_devices(), ["WS-19999", "nope"], [1])
    assert [r["id"] for r in selected] == [1, 19999]
    assert missing == ["nope"]


def test_negative_and_huge_integer_ids_are_integers_and_used_as_they_are():
    client, dummy = client_for(routes(devices=[(200, [{"id": -3, "hostname": "a"}, {"id": 10**20, "hostname": "b"}])]))
    selected, missing = select(client.list_devices(), ids=[10**20, -3])
    assert [r["hostname"] for r in selected] == ["a", "b"] and missing == []


@pytest.mark.parametrize(
    "reply, fragment",
    [
        ((200, {"intents": ["dot1x_status"]}), "expected a JSON array, got an object"),
        ((200, ["dot1x_status"]), "item 0 has no str 'tag'"),
        ((200, [{"tag": None}]), "item 0 has no str 'tag'"),
        ((200, raw("<html>Maintenance</html>", HTML)), "expected a JSON reply but got text/html"),
    ],
)
def test_a_bad_intent_list_fails_before_any_status_query(reply, fragment):
    client, server = client_for(routes(intents=[reply]))
    with pytest.raises(NacError) as raised:
        dot1x_status(client, all_devices=True)
    assert fragment in clean(raised.value)
    assert server.count(FIRE) == 0


# -- 802.1x status replies ------------------------------------------------------------------------

BAD_FIRES = [
    ((200, ["AUTHENTICATED"]), "expected a JSON object for target 1, got an array"),
    ((200, raw('"AUTHENTICATED"')), "expected a JSON object for target 1, got a string"),
    ((200, raw("null")), "expected a JSON object for target 1, got null or an empty body"),
    ((200, raw("")), "expected a JSON object for target 1, got null or an empty body"),
    ((200, raw("true")), "expected a JSON object for target 1, got a boolean"),
    ((200, raw("AUTHENTICATED", "text/plain")), "expected a JSON reply but got text/plain: 'AUTHENTICATED'"),
    ((200, raw("<html><body>Login</body></html>", HTML)), "expected a JSON reply but got text/html"),
    ((200, raw("{" * 100000)), "expected a JSON reply"),
    ((200, {"status": 1}), "'status' is int 1, expected a string"),
    ((200, {"status": {"value": "AUTHENTICATED"}}), "'status' is dict"),
    ((200, dict(AUTHENTICATED, authMethod=13)), "'authMethod' is int 13, expected a string"),
    ((200, dict(AUTHENTICATED, username=["u1"])), "'username' is list"),
    ((200, dict(AUTHENTICATED, message={"text": "hi"})), "'message' is dict"),
    ((200, {"error": "Unknown target 1"}), "the reply has no status but an error: Unknown target 1"),
    ((404, {"error": "Not found", "message": "No device with id 1"}), "No device with id 1"),
]


@pytest.mark.parametrize("reply, fragment", BAD_FIRES)
def test_a_bad_status_reply_is_an_error_of_that_device_only(reply, fragment):
    replies = {1: reply, 2: (200, AUTHENTICATED)}
    client, dummy = client_for(routes(fire=lambda body: replies[body["targetId"]]))
    report = dot1x_status(client, device_id=[1, 2], concurrency=1)
    bad, good = report.results
    assert bad["status"] == ERROR and fragment in clean(bad["error"])
    assert good == dict(
        id=2, hostname="printer-01", status="AUTHENTICATED", auth_method="EAP-TLS", username="u1", message=None
    )
    assert report.summary == {"AUTHENTICATED": 1, "ERROR": 1}
    assert "cam-01 (id 1)" in report.failure and "printer-01" not in report.failure


@pytest.mark.parametrize(
    "reply, expected",
    [
        ({}, dict(status="UNKNOWN", auth_method=None, username=None, message=None)),
        ({"status": None, "message": None}, dict(status="UNKNOWN", auth_method=None, username=None, message=None)),
        (
            {"status": "HELD", "extra": {"any": ["thing"]}},
            dict(status="HELD", auth_method=None, username=None, message=None),
        ),
        (
            {"status": "AUTHENTICATED", "error": None},
            dict(status="AUTHENTICATED", auth_method=None, username=None, message=None),
        ),
    ],
)
def test_documented_or_harmless_status_replies_are_results(reply, expected):
    client, dummy = client_for(routes(fire=[(200, reply)]))
    report = dot1x_status(client, device_id=[1])
    assert report.results == [dict(expected, id=1, hostname="cam-01")]
    assert report.failure is None


def test_a_status_query_answered_in_html_while_waiting_is_retried_then_reported():
    client, server = client_for(routes(fire=[(200, raw("<html>busy</html>", HTML)), (200, AUTHENTICATED)]))
    ticks = iter(range(1000))
    report = dot1x_status(
        client,
        device_id=[1],
        wait_for="AUTHENTICATED",
        wait_timeout=10,
        wait_interval=1,
        clock=lambda: next(ticks),
        sleep=lambda seconds: None,
    )
    assert report.results[0]["status"] == "AUTHENTICATED" and report.failure is None
    assert server.count(FIRE) == 2


# -- creation replies -----------------------------------------------------------------------------


def ensure(server_routes, *hostnames):
    client, server = client_for(server_routes)
    specs = device_specs([dict(hostname=name, group="Cameras", profile="Camera") for name in hostnames])
    now = [0.0]  # a fake clock: the settle window passes without real sleeping
    return ensure_devices(
        specs,
        client.list_devices,
        client.create_device,
        clock=lambda: now[0],
        sleep=lambda seconds: now.__setitem__(0, now[0] + seconds),
    ), server


AFTER = [(200, DEVICES), (200, DEVICES + [{"id": 17, "hostname": "new-01"}])]  # the list before and after the creation


@pytest.mark.parametrize(
    "reply",
    [
        (201, {"id": "17"}),
        (201, {"id": True}),
        (201, {"id": 17.0}),
        (201, {"id": None}),
        (201, {"id": [17]}),
        (201, raw('{"id": 17')),
        (201, raw("[" * 100000)),
        (201, raw("Created", "text/plain")),
        (201, raw("<html><body>Created</body></html>", HTML)),
        (201, [{"id": 17}]),
        (201, raw("17")),
        (200, raw("")),
        (204, None),
    ],
)
def test_a_creation_reply_without_a_usable_id_is_settled_by_one_more_list(reply):
    outcomes, server = ensure(routes(devices=AFTER, create=[reply]), "new-01")
    assert (outcomes[0].state, outcomes[0].id, outcomes[0].error) == (CREATED, 17, None)
    assert (server.count(CREATE), server.count(LIST)) == (1, 2)


def test_an_integer_id_from_the_reply_is_taken_as_it_is():
    listed = [(200, DEVICES), (200, DEVICES + [{"id": -5, "hostname": "new-01"}])]
    outcomes, server = ensure(routes(devices=listed, create=[(201, {"id": -5})]), "new-01")
    assert (outcomes[0].state, outcomes[0].id) == (CREATED, -5)
    assert (server.count(CREATE), server.count(LIST)) == (1, 2)  # the plan, and the list that confirms it


@pytest.mark.parametrize(
    "reply",
    [
        (200, {"error": "Hostname already taken"}),
        (200, {"message": "Hostname already taken", "id": None}),
    ],
)
def test_a_2xx_creation_reply_with_an_error_and_no_device_afterwards_is_a_failure(reply):
    outcomes, server = ensure(routes(create=[reply]), "new-01", "new-02")
    first, second = outcomes
    assert first.state == FAILED and first.id is None
    assert "Hostname already taken" in clean(first.error)
    assert "the device list did not show new-01 during the settle window of 60 s" in first.error
    assert "whether it was created is unknown" in first.error
    assert (second.state, second.id) == (FAILED, None)  # the first creation was not confirmed: not sent
    assert second.error.startswith("not attempted: the first creation of this task, new-01, was not confirmed")
    assert (server.count(CREATE), server.count(LIST)) == (
        1,
        8,
    )  # never sent twice; the default window (60 s) lists at 0, 1, 3, 7, 15, 31, 60 s


def test_a_2xx_creation_reply_with_an_error_but_the_device_listed_afterwards_is_created():
    outcomes, server = ensure(routes(devices=AFTER, create=[(200, {"error": "slow backend, please check"})]), "new-01")
    assert (outcomes[0].state, outcomes[0].id, outcomes[0].error) == (CREATED, 17, None)


def test_a_bad_list_after_a_creation_without_id_keeps_the_creation_with_a_warning():
    outcomes, server = ensure(
        routes(devices=[(200, DEVICES), (200, raw("<html>oops</html>", HTML))], create=[(201, raw(""))]), "new-01"
    )
    assert outcomes[0].state == CREATED and outcomes[0].id is None
    assert "listing the devices failed" in outcomes[0].warnings[0]
    assert "expected a JSON reply but got text/html" in outcomes[0].warnings[0]
    assert server.count(CREATE) == 1


@pytest.mark.parametrize(
    "reply, fragment, sent",
    [
        # a 500 after the list succeeded: a server fault whose outcome is unknown, re-sent after each window
        (
            (500, raw("<html><head><style>h1{}</style></head><body><h1>Server error</h1></body></html>", HTML)),
            "HTTP 500: a fault of the server",
            4,
        ),
        ((400, raw("[" * 100000)), "HTTP 400", 1),
        (
            (409, {"error": {"code": 7}, "fields": ["macs", {"ips": None}]}),
            "HTTP 409. The server said: {'code': 7} - macs; {'ips': None}",
            1,
        ),
        ((422, raw("<p" * 100000, HTML)), "HTTP 422", 1),
    ],
)
def test_a_refused_creation_with_an_odd_body_is_a_clear_item_error(reply, fragment, sent):
    outcomes, server = ensure(routes(create=[reply]), "new-01")
    assert outcomes[0].state == FAILED and fragment in clean(outcomes[0].error)
    assert "api_key" not in outcomes[0].error
    assert server.count(CREATE) == sent


def test_a_retry_after_header_that_is_not_a_number_falls_back_to_backoff():
    odd = {"Retry-After": "\u00b2"}  # a digit to str.isdigit(), not to float(); written as the byte 0xB2
    client, server = client_for(routes(devices=[(503, DEVICES, odd), (200, DEVICES, odd)]))
    assert client.list_devices() == DEVICES
    assert server.count(LIST) == 2
    assert retry_after("\u00b2") is None and retry_after("\u0663") is None


def test_redirects_are_not_followed_but_explained():
    moved = (301, raw(""), {"Location": "https://svc:pw@nac.example.com/api/device"})
    client, server = client_for(routes(devices=[moved], create=[moved], fire=[moved]))
    with pytest.raises(NacError) as raised:
        client.list_devices()
    assert clean(raised.value).startswith(
        "The NAC API answered GET /api/device with a redirect (HTTP 301) to "
        "https://nac.example.com/api/device, which is not followed: set api_url"
    )
    # A write answered with a redirect may have been processed (a 303 says it was): looked up in the list.
    outcomes, server = ensure(routes(devices=AFTER, create=[moved]), "new-01")
    assert (outcomes[0].state, outcomes[0].id, outcomes[0].error) == (CREATED, 17, None)
    assert server.sent == [LIST, CREATE, LIST]  # never followed, never re-sent as a GET
    outcomes, server = ensure(routes(create=[moved]), "new-01")  # never listed: unknown, never "not created"
    assert outcomes[0].state == FAILED and outcomes[0].failure["outcome_unknown"] is True
    assert "POST /api/device with a redirect (HTTP 301)" in outcomes[0].error and "unknown" in outcomes[0].error
    assert server.count(CREATE) == 4 and GET_ONLY not in server.sent  # sent again only after whole windows
    client, server = client_for(routes(fire=[(302, raw(""), {"Location": "/login"})]))
    report = dot1x_status(client, device_id=[1])
    assert "redirect (HTTP 302) to /login" in report.results[0]["error"]
    assert server.sent == [INTENTS, LIST, FIRE]


def test_a_tls_failure_that_is_not_about_the_certificate_does_not_blame_it():
    client, server = client_for(routes())
    client.verify = False

    def plain_http(request):  # the handshake answered by a plain HTTP service, when the connection is made
        return AtConnect(ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1010)"))

    server.at_connect = plain_http
    with pytest.raises(NacError) as raised:
        client.list_devices()
    assert clean(raised.value) == (
        "TLS handshake with https://nac.example.com failed: wrong version number. "
        "Is it an https:// service on that port (or an http:// one)?"
    )


# -- a status batch through server faults (the real client and its retries) -----------------------


def test_a_batch_whose_lists_needed_retries_and_one_fire_kept_failing_returns_every_result():
    server_error = (500, raw("<h1>Server error</h1>", HTML))
    fires = {
        1: [server_error, server_error],
        2: [server_error, (200, AUTHENTICATED)],
    }  # max_retries 1: two attempts each

    def fire(body):
        script = fires[body["targetId"]]
        return script.pop(0) if len(script) > 1 else script[0]

    client, server = client_for(
        routes(
            intents=[server_error, (200, [{"tag": "dot1x_status"}])],
            devices=[(503, raw("")), (200, DEVICES)],
            fire=fire,
        )
    )
    report = dot1x_status(client, all_devices=True, concurrency=1)
    first, second = report.results
    assert second["status"] == "AUTHENTICATED" and "error" not in second
    assert first["status"] == ERROR and "HTTP 500 (2 attempts): a fault of the server" in clean(first["error"])
    assert "api_key" not in first["error"]
    assert report.summary == {"AUTHENTICATED": 1, "ERROR": 1}
    assert report.failure.startswith("1 of 2 targets could not be queried: cam-01 (id 1)")
    assert (server.count(INTENTS), server.count(LIST), server.count(FIRE)) == (2, 2, 4)


def test_a_500_on_every_attempt_of_the_first_request_is_still_taken_for_the_credentials():
    client, server = client_for(routes(intents=[(500, raw("<h1>Server error</h1>", HTML))]))
    with pytest.raises(NacAuthError) as raised:
        dot1x_status(client, all_devices=True)
    assert "check api_key" in str(raised.value) and server.count(INTENTS) == 2 and server.count(FIRE) == 0
