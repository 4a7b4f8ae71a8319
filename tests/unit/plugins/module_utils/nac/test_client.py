# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the pure API client, over a scripted transport (no network)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import http.server
import json
import os
import socket
import time
from urllib.parse import quote, quote_plus

import pytest
import requests

from ansible_collections.netaccess.nac.plugins.module_utils.common import masking, options
from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import EXCHANGE, TLS, ExchangeError
from ansible_collections.netaccess.nac.plugins.module_utils.http import response
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    BACKOFF_CAP,
    RATE_LIMIT_PATIENCE,
    REFUSAL_PAUSE,
    RETRY_AFTER_CAP,
    backoff,
    retry_after,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacAuthError,
    NacClient,
    NacConfigError,
    NacConnectionError,
    NacHTTPError,
    NacNotFound,
    NacResponseError,
    NacServerError,
    ReadOnlyViolation,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import (
    CUT,
    SILENT,
    Scripted,
    connect_timeout,
    mounted,
    never_sent,
    refused,
    tls_rejected,
    wire_of,
)

URL = "https://nac.example.com"
KEY = "s3cr3t-key-value"
PASSWORD = "pa55-word-value"
TENANT = "tenant-token-value"
SECRETS = (KEY, PASSWORD)  # the tenant is an identifier, not a secret


def make_client(*script, **kwargs):
    kwargs.setdefault("api_key", KEY)
    sleeps = []
    client = NacClient(URL + "/", sleep=sleeps.append, **kwargs)
    transport = Scripted(*script)
    mounted(client, transport)
    return client, transport, sleeps


def assert_no_secret(error):
    text = " ".join([str(error), json.dumps(error.failure)])
    for secret in SECRETS:
        assert secret not in text


# -- construction -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(), "no credentials"),
        (dict(api_key=KEY, username="u", password=PASSWORD), "not both"),
        (dict(username="u"), r"password \(NAC_PASSWORD\) is missing"),
        (dict(password=PASSWORD), r"username \(NAC_USERNAME\) is missing"),
        (dict(api_key=""), r"set api_key \(NAC_API_KEY\), or username and password \(NAC_USERNAME, NAC_PASSWORD\)"),
    ],
)
def test_exactly_one_credential_scheme(kwargs, fragment):
    with pytest.raises(NacConfigError, match=fragment) as raised:
        NacClient(URL, **kwargs)
    assert_no_secret(raised.value)


def test_api_url_must_be_http_and_is_shown_without_userinfo():
    with pytest.raises(NacConfigError, match="http:// or https://"):
        NacClient("nac.example.com", api_key=KEY)
    with pytest.raises(NacConfigError) as raised:
        NacClient("ftp://user:%s@nac" % PASSWORD, api_key=KEY)
    assert PASSWORD not in str(raised.value)


def test_bearer_key_and_tenant_headers_and_trailing_slash():
    client, transport, dummy = make_client((200, []), tenant=TENANT)
    assert client.list_devices() == []
    sent = transport.sent[0]
    assert sent.url == URL + "/api/device"
    assert sent.headers["Authorization"] == "Bearer " + KEY
    assert sent.headers["X-Tenant"] == TENANT


def test_basic_credentials():
    client, transport, dummy = make_client(
        (200, [{"tag": "dot1x_status"}]), api_key=None, username="svc", password=PASSWORD
    )
    assert client.has_intent()
    expected = base64.b64encode(("svc:" + PASSWORD).encode()).decode()
    assert transport.sent[0].headers["Authorization"] == "Basic " + expected
    assert "X-Tenant" not in transport.sent[0].headers


CA = requests.utils.DEFAULT_CA_BUNDLE_PATH  # a PEM bundle that exists


@pytest.mark.parametrize(
    "kwargs, verify",
    [
        (dict(), "ENVIRONMENT"),  # default verification trusts the environment's bundle
        (dict(ca_path=CA), CA),
        (dict(validate_certs=False, ca_path="/no/such/ca.pem"), False),  # not used, so not checked
    ],
)
def test_tls_settings_win_over_the_environment(monkeypatch, tmp_path, kwargs, verify):
    bundle = tmp_path / "else.pem"
    bundle.write_bytes(open(CA, "rb").read())
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    monkeypatch.setenv("CURL_CA_BUNDLE", str(bundle))
    client, transport, dummy = make_client((200, []), **kwargs)
    client.list_devices()
    assert transport.verify == (str(bundle) if verify == "ENVIRONMENT" else verify)


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"])
def test_a_ca_bundle_of_the_environment_that_cannot_be_read_is_a_clear_error_before_any_request(monkeypatch, variable):
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.setenv(variable, "/somewhere/else.pem")
    with pytest.raises(NacConfigError) as raised:
        NacClient(URL, api_key=KEY)
    assert str(raised.value).startswith(
        "The CA bundle /somewhere/else.pem (ca_path, else REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE) cannot be read:"
    )
    assert KEY not in str(raised.value)


def test_pool_is_large_enough_for_concurrency():
    client = NacClient(URL, api_key=KEY, pool_size=48)
    assert wire_of(client).pool_size == 48


# -- the endpoints ------------------------------------------------------------------------


def test_fire_sends_the_documented_body():
    client, transport, dummy = make_client(
        (200, {"status": "AUTHENTICATED", "authMethod": "EAP-TLS", "username": "u", "message": None})
    )
    reply = client.fire_intent(7)
    assert reply["status"] == "AUTHENTICATED"
    sent = transport.sent[0]
    assert sent.method == "POST"
    assert sent.url == URL + "/api/intent/dot1x_status/fire"
    assert sent.headers["Content-Type"] == "application/json"
    assert json.loads(sent.body) == {"targetId": 7, "additionalPayload": {"json": True}}


@pytest.mark.parametrize(
    "reply, expected",
    [
        ((201, {"id": 9, "hostname": "cam"}), {"id": 9, "hostname": "cam"}),
        ((201, ""), None),
        ((200, "Device created", {"Content-Type": "text/plain"}), None),
    ],
)
def test_create_device_reply_body_is_optional(reply, expected):
    client, transport, dummy = make_client(reply)
    assert client.create_device({"hostname": "cam", "group": "g", "profile": "p"}) == expected
    assert json.loads(transport.sent[0].body) == {"hostname": "cam", "group": "g", "profile": "p"}


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"devices": []}, "expected a JSON array"),
        ([{"hostname": "x"}], "item 0 has no int 'id'"),
        ([{"id": True, "hostname": "x"}], "item 0 has no int 'id'"),
        ([{"id": 1, "hostname": "a"}, {"id": 2}], "item 1 (id 2) has no string 'hostname'"),
    ],
)
def test_device_list_shape_is_checked(body, fragment):
    client, dummy, dummy2 = make_client((200, body))
    with pytest.raises(NacResponseError) as raised:
        client.list_devices()
    assert fragment in str(raised.value)
    assert "GET /api/device" in str(raised.value)


def test_non_json_reply_where_json_expected_says_so_with_an_excerpt():
    client, dummy, dummy2 = make_client(
        (200, "<html><body><p>Login page</p></body></html>", {"Content-Type": "text/html"})
    )
    with pytest.raises(NacResponseError) as raised:
        client.list_intents()
    assert "expected a JSON reply but got text/html" in str(raised.value)
    assert "Login page" in str(raised.value)


def test_fire_reply_must_be_an_object():
    client, dummy, dummy2 = make_client((200, ["AUTHENTICATED"]))
    with pytest.raises(NacResponseError, match="expected a JSON object for target 3"):
        client.fire_intent(3)


# -- errors -------------------------------------------------------------------------------


def test_server_error_is_explained_as_an_invalid_key():
    html = "<html><head><title>Server error</title></head><body><h1>Server error</h1></body></html>"
    client, transport, sleeps = make_client((500, html, {"Content-Type": "text/html"}), tenant=TENANT)
    with pytest.raises(NacAuthError) as raised:
        client.list_devices()
    message = str(raised.value)
    assert "answered 'Server error' (HTTP 500) to GET /api/device" in message
    assert "invalid or missing API key" in message and "(4 attempts)" in message
    assert raised.value.failure["status"] == 500
    assert len(transport.sent) == 4 and len(sleeps) == 3  # retried like 502/503/504: it may be the server failing
    assert_no_secret(raised.value)


@pytest.mark.parametrize("method", ["list_devices", "list_intents"])
def test_a_500_after_any_success_is_a_server_fault_never_the_credentials(method):
    client, transport, sleeps = make_client((200, []), (500, "<h1>Server error</h1>", {"Content-Type": "text/html"}))
    assert client.succeeded is False
    getattr(client, method)()
    assert client.succeeded is True
    with pytest.raises(NacServerError) as raised:
        getattr(client, method)()
    assert not isinstance(raised.value, NacAuthError)
    message = str(raised.value)
    assert "HTTP 500 (4 attempts): a fault of the server" in message and "not of the credentials" in message
    assert "api_key" not in message and "check" not in message
    assert raised.value.outcome_unknown is False  # a read changes nothing


def test_a_500_that_ends_before_the_retries_run_out_is_no_error_at_all():
    client, transport, sleeps = make_client((500, ""), (500, ""), (200, [{"tag": "dot1x_status"}]))
    assert client.has_intent()
    assert len(transport.sent) == 3


def test_only_a_2xx_reply_counts_as_success():
    client, transport, sleeps = make_client((404, {"error": "Not found"}), (500, ""), max_retries=0)
    with pytest.raises(NacNotFound):
        client.fire_intent(5)
    with pytest.raises(NacAuthError):
        client.list_devices()


@pytest.mark.parametrize(
    "path_call, fragment",
    [
        (lambda c: c.list_devices(), "the privilege public_api"),
        (lambda c: c.fire_intent(1), "access to the intent dot1x_status ('Check 802.1x' / '802.1x status')"),
    ],
)
def test_forbidden_names_what_is_missing(path_call, fragment):
    client, dummy, dummy2 = make_client((403, {"error": "Forbidden", "message": "nope"}))
    with pytest.raises(NacAuthError) as raised:
        path_call(client)
    assert fragment in str(raised.value)
    assert "The server said: Forbidden - nope" in str(raised.value)


def test_not_found_and_field_errors_carry_the_servers_reason():
    client, dummy, dummy2 = make_client((404, {"error": "Not found", "message": "No device with id 5"}))
    with pytest.raises(NacNotFound, match="No device with id 5"):
        client.fire_intent(5)
    client, dummy, dummy2 = make_client(
        (400, {"error": "Validation failed", "fields": {"profile": "unknown profile 'Cam'"}})
    )
    with pytest.raises(NacHTTPError) as raised:
        client.create_device({"hostname": "a", "group": "g", "profile": "Cam"})
    assert "HTTP 400" in str(raised.value)
    assert raised.value.reason == "Validation failed - profile: unknown profile 'Cam'"


def test_a_secret_echoed_by_the_server_is_scrubbed():
    client, dummy, dummy2 = make_client((400, {"error": "bad key " + KEY}))
    with pytest.raises(NacHTTPError) as raised:
        client.list_intents()
    assert_no_secret(raised.value)
    assert "********" in str(raised.value)


def test_connection_refused_names_the_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = NacClient("http://127.0.0.1:%d" % port, api_key=KEY, max_retries=1, sleep=lambda s: None)
    with pytest.raises(NacConnectionError) as raised:
        client.list_devices()
    assert str(raised.value) == (
        "Could not connect to the NAC API at http://127.0.0.1:%d: "
        "connection refused (is the service running and the port right?)" % port
    )
    assert raised.value.outcome_unknown is False


def tls_failure(reason):
    """The TLS handshake failing OpenSSL's verification with this reason, when the connection is made."""
    return tls_rejected(reason)


def test_tls_failure_is_explained_and_not_retried():
    client, transport, sleeps = make_client(tls_failure("self-signed certificate"))
    with pytest.raises(NacConnectionError) as raised:
        client.list_devices()
    assert str(raised.value).startswith(
        "TLS verification failed for https://nac.example.com: certificate verify failed: "
        "self-signed certificate. Trust its certificate with ca_path"
    )
    assert "ca_path" in str(raised.value)
    assert len(transport.sent) == 1


# -- retries ------------------------------------------------------------------------------


def test_reads_are_retried_on_retryable_statuses_with_backoff():
    client, transport, sleeps = make_client((500, ""), (502, ""), (504, ""), (200, []))
    assert client.list_devices() == []
    assert len(transport.sent) == 4
    assert len(sleeps) == 3
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0 and 1.0 <= sleeps[2] <= 2.0


@pytest.mark.parametrize("headers", [{}, {"Retry-After": "2"}])
def test_a_read_answered_503_is_a_refusal_waited_out_without_spending_retries(headers):
    """nginx's limit_req answers 503 without Retry-After: a refusal like a 429 (before: retried with backoff, and
    failed once max_retries was spent)."""
    client, transport, sleeps = make_client((503, "", headers), (503, "", headers), (200, []), max_retries=0)
    assert client.list_devices() == []
    assert len(transport.sent) == 3 and client.refusals == 2
    assert sleeps[0] == pytest.approx(float(headers.get("Retry-After", REFUSAL_PAUSE)), abs=0.5)


def test_a_creation_refused_with_503_is_not_sent_again_by_the_transport_but_said_refused():
    """A write answered 503 within the patience: the shared pause is taken, and the error says it was refused, so
    that the apply engine looks it up in the list at once and sends it again (after the pause) if it is absent."""
    client, transport, sleeps = make_client((503, "", {"Retry-After": "1"}), (201, {"id": 1}))
    with pytest.raises(NacServerError) as raised:
        client.create_device(BODY)
    assert raised.value.refused is True and raised.value.outcome_unknown is True
    assert len(transport.sent) == 1 and client.refusals == 1


def test_a_proxy_that_refuses_the_credentials_fails_at_once():
    refusal = never_sent(  # as the wire raises it: a typed cause, whatever the words
        "Unable to connect to proxy: the proxy refused the tunnel",
        cause=response.PROXY_AUTH,
    )
    client, transport, sleeps = make_client(refusal, (200, []), max_retries=3)
    with pytest.raises(NacConnectionError) as raised:
        client.list_devices()
    assert "the proxy refused the credentials (407" in str(raised.value) and raised.value.outcome_unknown is False
    assert len(transport.sent) == 1 and sleeps == []


def broken(reused):
    """What the wire raises when the connection broke before any byte of the reply (a kept-alive one the server
    was closing: ``reused``)."""
    return ExchangeError("Connection aborted. RemoteDisconnected", EXCHANGE, sent=True, replied=False, reused=reused)


def test_once_a_reused_connection_broke_under_a_write_writes_take_new_connections():
    # Each cut at the wire: the first on a new connection, the second on the one kept alive after {"id": 1}.
    script = [CUT, (201, {"id": 1}), CUT, (201, {"id": 2}), (201, {"id": 3})]
    client, transport, sleeps = make_client(*script)
    with pytest.raises(NacConnectionError) as raised:
        client.create_device(BODY)  # a new connection broke: uncertain (the list decides), nothing else changes
    assert raised.value.outcome_unknown is True and raised.value.stale is False  # the settle window decides
    assert client.create_device(BODY) == {"id": 1} and transport.fresh_sends == 0
    with pytest.raises(NacConnectionError) as raised:
        client.create_device(BODY)  # a kept-alive one broke: the server was closing it, most likely
    assert raised.value.outcome_unknown is True and raised.value.stale is True  # looked up at once (apply)
    assert client.create_device(BODY) == {"id": 2} and client.create_device(BODY) == {"id": 3}
    assert transport.fresh_sends == 2 and len(transport.sent) == 5  # each write since on a new connection


def test_a_read_broken_on_a_connection_the_server_was_closing_goes_again_at_once_without_spending_retries():
    """With no retries at all: a read that broke before any byte of its reply on a kept-alive connection is sent
    again at once on a new one (a server closing it just after its previous reply never read it); one that broke
    so on a new connection spends a retry, as any connection error does, and fails here."""
    listed = [dict(id=1, hostname="cam-01")]
    client, transport, sleeps = make_client(broken(True), (200, listed), broken(False), max_retries=0)
    assert client.list_devices() == listed and sleeps == [] and len(transport.sent) == 2
    assert transport.fresh_sends == 1  # the second attempt, on a new connection
    with pytest.raises(NacConnectionError) as raised:
        client.list_devices()
    assert raised.value.stale is False and len(transport.sent) == 3
    with pytest.raises(NacConnectionError):  # a new connection that broke the same way again: no second free send
        make_client(broken(True), broken(True), (200, listed), max_retries=0)[0].list_devices()


def test_retry_after_is_honoured_and_capped():
    client, transport, sleeps = make_client(
        (429, "", {"Retry-After": "2"}), (429, "", {"Retry-After": "3600"}), (200, [])
    )
    client.list_devices()
    assert sleeps == [pytest.approx(2.0, abs=0.5), pytest.approx(RETRY_AFTER_CAP, abs=0.5)]


def test_retries_stop_after_max_retries_with_the_last_error():
    client, transport, sleeps = make_client((502, {"error": "maintenance"}), max_retries=2)
    with pytest.raises(NacHTTPError, match="HTTP 502.*maintenance"):
        client.list_intents()
    assert len(transport.sent) == 3


def test_fire_is_retried_on_connection_errors():
    cut = CUT  # the connection closed before any byte of a reply
    client, transport, sleeps = make_client(cut, (200, {"status": "AUTHENTICATED"}))
    assert client.fire_intent(1)["status"] == "AUTHENTICATED"
    assert len(transport.sent) == 2


BODY = {"hostname": "a", "group": "g", "profile": "p"}


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_creation_answered_with_5xx_is_not_resent_and_its_outcome_is_unknown(status):
    client, transport, sleeps = make_client((200, []), (status, ""), (201, {"id": 1}))
    client.list_devices()
    with pytest.raises(NacServerError) as raised:
        client.create_device(BODY)
    assert raised.value.outcome_unknown is True and raised.value.failure["outcome_unknown"] is True
    assert len(transport.sent) == 2 and sleeps == []


def test_a_creation_refused_with_429_is_resent_after_the_pause_without_spending_retries():
    client, transport, sleeps = make_client((429, "", {"Retry-After": "2"}), (429, ""), (201, {"id": 7}), max_retries=0)
    assert client.create_device(BODY) == {"id": 7}
    assert [r.method for r in transport.sent] == ["POST"] * 3 and client.refusals == 2
    assert len(sleeps) == 2 and sleeps[0] == pytest.approx(2.0, abs=0.5)  # (this fake sleep stops no clock)
    # Refused for longer than RATE_LIMIT_PATIENCE: the refusals that follow spend retries, as any 429 did.
    client, transport, sleeps = make_client((429, "", {"Retry-After": "30"}), max_retries=2)
    with pytest.raises(NacHTTPError) as raised:
        client.create_device(BODY)
    assert raised.value.status == 429 and raised.value.outcome_unknown is False
    waited_out = int(RATE_LIMIT_PATIENCE // 30)
    assert client.refusals == waited_out and len(transport.sent) == waited_out + 3


def test_a_creation_whose_connection_was_never_made_is_resent():
    client, transport, sleeps = make_client(refused(), (201, {"id": 3}))
    assert client.create_device(BODY) == {"id": 3}
    assert len(transport.sent) == 2


def test_max_retries_is_capped():
    client, transport, sleeps = make_client((502, ""), max_retries=1000)
    assert client.max_retries == options.MAX_RETRIES_CAP
    with pytest.raises(NacServerError):
        client.list_devices()
    assert len(transport.sent) == options.MAX_RETRIES_CAP + 1


@pytest.mark.parametrize(
    "exc, unknown",
    [
        (SILENT, True),  # no reply before the deadline
        (CUT, True),  # the connection closed before any byte of a reply
        (connect_timeout(), False),
    ],
)
def test_a_creation_whose_outcome_is_unknown_says_so(exc, unknown):
    client, transport, sleeps = make_client(exc)
    with pytest.raises(NacConnectionError) as raised:
        client.create_device({"hostname": "a", "group": "g", "profile": "p"})
    assert raised.value.outcome_unknown is unknown
    assert raised.value.failure["outcome_unknown"] is unknown
    assert len(transport.sent) == (1 if unknown else 4)  # a connection never made sent nothing: safe to retry


def test_read_only_client_refuses_writes_without_sending():
    client, transport, sleeps = make_client((201, {"id": 1}), read_only=True)
    with pytest.raises(ReadOnlyViolation, match="refusing to send POST /api/device"):
        client.create_device({"hostname": "a", "group": "g", "profile": "p"})
    assert transport.sent == []
    transport.script = [(200, {"status": "AUTHENTICATED"})]
    assert client.fire_intent(1)  # the status query is a read


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, None),
        ("", None),
        ("5", 5.0),
        ("999", RETRY_AFTER_CAP),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
    ],
)
def test_retry_after_parsing(value, expected):
    now = 1445412480.0  # 07:28:00 GMT that day
    assert retry_after(value, now=now) == expected


def test_backoff_is_jittered_exponential_and_capped():
    for attempt, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0), (10, BACKOFF_CAP)):
        for dummy in range(20):
            assert ceiling / 2 <= backoff(attempt) <= ceiling


# -- credentials: refused before any request, sent as UTF-8, hidden in every form -----------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(api_key=KEY + "\n"),
            "api_key contains a line break (at its end), which cannot be sent in an HTTP header",
        ),
        (dict(api_key="\r\n" + KEY), "api_key contains a line break (at its start)"),
        (dict(api_key=KEY[:4] + "\x00" + KEY[4:]), "api_key contains a control character (at position 5)"),
        (
            dict(api_key=KEY + "\u20ac"),
            "api_key contains a character that is not ASCII (at its end): it is sent as an HTTP header",
        ),
        (dict(api_key=KEY + "\u00e9"), "api_key contains a character that is not ASCII"),
        (dict(api_key=KEY + " "), "api_key contains a space (at its end)"),
        (dict(api_key=KEY, tenant="lab\n"), "tenant contains a line break (at its end)"),
        (dict(api_key=KEY, tenant="Z\u00fcrich"), "tenant contains a character that is not ASCII (at position 2)"),
        (dict(api_key=KEY, tenant=" lab"), "tenant contains a space (at its start)"),
        (dict(username="svc:1", password=PASSWORD), "username contains ':' (at position 4)"),
        (dict(username="svc\t", password=PASSWORD), "username contains a control character (at its end)"),
        (dict(username="svc", password=PASSWORD + "\n"), "password contains a line break (at its end)"),
        (
            dict(username="svc", password=PASSWORD[:3] + "\u2028" + PASSWORD[3:]),
            "password contains a line break (at position 4)",
        ),
        (dict(username="svc", password=PASSWORD + "\x7f"), "password contains a control character (at its end)"),
    ],
)
def test_credentials_that_cannot_be_sent_are_refused_naming_the_option(kwargs, message):
    with pytest.raises(NacConfigError) as raised:
        NacClient(URL, **kwargs)
    assert str(raised.value) == message + raised.value.message[len(message) :]
    assert raised.value.message.endswith("; nothing was sent")
    assert_no_secret(raised.value)


def test_basic_credentials_are_sent_as_utf8():
    username, password = "svc-\u00fc", "p\u00e4ssw\u00f6rd-\u20ac-\U0001f511"
    client, transport, dummy = make_client((200, []), api_key=None, username=username, password=password)
    client.list_devices()
    sent = transport.sent[0].headers["Authorization"]
    assert sent == "Basic " + base64.b64encode((username + ":" + password).encode("utf-8")).decode("ascii")


def test_a_netrc_entry_does_not_replace_the_credentials(tmp_path, monkeypatch):
    (tmp_path / ".netrc").write_text("machine nac.example.com login other password other-pass\n")
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))
    client, transport, dummy = make_client((200, []))
    client.list_devices()
    assert transport.sent[0].headers["Authorization"] == "Bearer " + KEY


def test_the_tenant_is_not_scrubbed_from_messages():
    client, dummy, dummy2 = make_client((400, {"error": "group Lab is full"}), tenant="Lab")
    with pytest.raises(NacHTTPError) as raised:
        client.create_device({"hostname": "cam-01", "group": "Lab", "profile": "Camera"})
    assert "group Lab is full" in str(raised.value)


KEY_WITH_SPECIALS = "k3y/+&=?#%\\value"
PASSWORD_NON_ASCII = "p\u00e4ss w\u00f6rd/+&\\-\u20ac"


@pytest.mark.parametrize(
    "kwargs, secret",
    [
        (dict(api_key=KEY_WITH_SPECIALS), KEY_WITH_SPECIALS),
        (dict(api_key=None, username="svc", password=PASSWORD_NON_ASCII), PASSWORD_NON_ASCII),
    ],
)
@pytest.mark.parametrize(
    "form",
    [
        str,
        lambda s: repr(s)[1:-1],
        lambda s: ascii(s)[1:-1],
        lambda s: json.dumps(s)[1:-1],
        quote,
        lambda s: quote(s, safe=""),
        quote_plus,
        lambda s: repr(s.encode("utf-8"))[2:-1],
    ],
)
def test_a_secret_echoed_in_any_form_is_scrubbed(kwargs, secret, form):
    shown = form(secret)
    client, dummy, dummy2 = make_client((400, {"error": "bad credential [%s]" % shown}), **kwargs)
    with pytest.raises(NacHTTPError) as raised:
        client.list_intents()
    assert shown not in str(raised.value) and shown not in raised.value.reason
    assert "bad credential [********]" in str(raised.value)


@pytest.mark.parametrize("password", ["pa#ss", "pa?ss", "pa/ss", "pa@ss", "p%40ss", "pa ss", "pa\nss", "pa:ss"])
@pytest.mark.parametrize(
    "url",
    [
        "https://svc:%s@nac.example.com/",
        "http://svc:%s@nac.example.com:8443/base",
        "svc:%s@nac.example.com",
        "HTTPS://svc:%s@nac.example.com/?x=1#y",
    ],
)
def test_a_password_in_api_url_is_recognised_whatever_it_holds(url, password):
    url = url % (password + "-0123456789")
    assert password + "-0123456789" not in masking.strip_userinfo(url)
    assert (
        masking.url_password(url).endswith(password + "-0123456789")
        or masking.url_password(url) == password + "-0123456789"
    )
    with pytest.raises(NacConfigError) as raised:
        NacClient(url, api_key=KEY)
    assert "-0123456789" not in str(raised.value)
    assert "nac.example.com" in str(raised.value)


def test_hidden_forms_cover_the_url_password_decoded():
    forms = masking.hidden_forms([KEY], "https://svc:p%23ss%2Fword@nac.example.com")
    assert {KEY, "p%23ss%2Fword", "p#ss/word", "p%23ss/word"} <= set(forms)
    assert forms == sorted(forms, key=len, reverse=True)  # longer forms first: none is cut by a shorter one


# -- ca_path and certificate names --------------------------------------------------------------


def test_a_missing_ca_path_is_named_before_any_request(tmp_path):
    with pytest.raises(
        NacConfigError, match="^ca_path %s/nowhere.pem does not exist: give the path of a PEM bundle" % tmp_path
    ):
        NacClient(URL, api_key=KEY, ca_path=str(tmp_path / "nowhere.pem"))


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "holds no PEM certificate"),
        (b"not a certificate\n", "holds no PEM certificate"),
        (b"\x30\x82\x01\x0a\x02\x82", "holds no PEM certificate"),  # DER
        (b"-----BEGIN CERTIFICATE-----\nMC4=\n-----END CERTIFICATE-----\n", "is not a usable PEM bundle"),
    ],
)
def test_a_ca_path_without_a_pem_certificate_is_named(tmp_path, content, problem):
    path = tmp_path / "ca.pem"
    path.write_bytes(content)
    with pytest.raises(NacConfigError, match="^ca_path %s %s" % (path, problem)):
        NacClient(URL, api_key=KEY, ca_path=str(path))


def test_a_ca_path_directory_is_accepted(tmp_path):
    assert NacClient(URL, api_key=KEY, ca_path=str(tmp_path)).verify == str(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_ca_path_is_named(tmp_path):
    path = tmp_path / "ca.pem"
    path.write_bytes(b"x")
    path.chmod(0)
    with pytest.raises(NacConfigError, match="cannot be read"):
        NacClient(URL, api_key=KEY, ca_path=str(path))


def test_a_certificate_for_another_name_says_so_and_that_ca_path_cannot_fix_it(monkeypatch):
    text = str(tls_failure("Hostname mismatch, certificate is not valid for 'nac.example.com'."))
    names = ["nac-emulator.test", "127.0.0.1"]  # as tls.check_name read them on that connection
    failure = ExchangeError(text, TLS, sent=False, names=names)
    client, transport, sleeps = make_client(failure)
    with pytest.raises(NacConnectionError) as raised:
        client.list_devices()
    assert str(raised.value) == (
        "TLS verification failed for https://nac.example.com: its certificate is for another name "
        "(nac-emulator.test, 127.0.0.1), not nac.example.com. ca_path cannot fix this: set api_url "
        "to an address the certificate names, or set validate_certs to false"
    )


# -- timeout bounds the whole exchange ----------------------------------------------------------


class Dripping(http.server.BaseHTTPRequestHandler):
    """Answers with headers at once, then the body one byte every ``gap`` seconds: each read is
    quick, the whole reply is not."""

    protocol_version = "HTTP/1.1"
    body = b'[{"tag": "dot1x_status"}' + b" " * 74 + b"]"  # 100 bytes
    gap = 0.01
    received = []
    completed = []  # replies whose last byte is being sent (noted before it is sent: no race with the client)

    def _answer(self):
        self.received.append("%s %s" % (self.command, self.path))
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        try:
            for index, byte in enumerate(self.body):
                if index == len(self.body) - 1:
                    self.completed.append(self.path)
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.gap)
        except OSError:
            pass

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def dripping(local_http):
    return local_http(Dripping)


def test_timeout_bounds_the_whole_reply_not_each_read(dripping):
    # 100 bytes, one every 0.01 s: about 1 s in all, each read well within the 0.15 s timeout.
    client = NacClient(dripping, api_key=KEY, timeout=0.15, max_retries=0)
    Dripping.completed[:] = []
    with pytest.raises(NacConnectionError) as raised:
        client.list_intents()
    assert Dripping.completed == []  # given up while the reply was still coming, not after reading it whole
    assert "within 0.15s" in str(raised.value) and raised.value.outcome_unknown is True
    with pytest.raises(NacConnectionError) as raised:
        client.create_device(BODY)
    assert raised.value.outcome_unknown is True  # a write cut off by the deadline may have been committed
    slow_enough = NacClient(dripping, api_key=KEY, timeout=10, max_retries=0)
    assert slow_enough.has_intent()
    slow_enough.close()
    client.close()


def test_a_write_cut_off_by_the_deadline_is_not_resent(dripping):
    client = NacClient(dripping, api_key=KEY, timeout=0.15, max_retries=3, sleep=lambda s: None)
    Dripping.received[:] = []
    with pytest.raises(NacConnectionError):
        client.create_device(BODY)
    waited = time.monotonic() + 2  # the server's thread notes the request once it runs (a loaded machine)
    while not Dripping.received and time.monotonic() < waited:
        time.sleep(0.01)
    time.sleep(0.2)  # and would note a second one sent meanwhile
    assert Dripping.received == ["POST /api/device"]
    client.close()
