# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the NAC API emulator, one per rule of the API guide (docs/docsite/rst/api.rst; named after its section)
and per emulator feature."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import json
import signal
import ssl
import subprocess
import sys
import threading

import pytest
import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator, load_config
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import (
    ADMIN_KEY,
    AUDITOR_KEY,
    BASIC_PASSWORD,
    BASIC_USER,
    FIRE,
    INTEGRATION_CONFIG,
    JSON_TRUE,
    NOPRIV_KEY,
    SCRIPT,
    SECRETS,
    SERVER_ERROR_HTML,
    TENANT,
    Api,
    advance,
    by_hostname,
    config_with,
    start_cli,
)

# ---- 4.1 GET /api/intent ---------------------------------------------------------------------


def test_api_4_1_intent_list_is_array_of_records_with_tag(api):
    reply = api.get("/api/intent")
    assert reply.status_code == 200
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.json() == [
        {"tag": "dot1x_status", "name": "Check 802.1x"},
        {"tag": "ping", "name": "Ping"},
        {"tag": "who_is_logged_in", "name": "Who is logged in"},
    ]


def test_api_5_4_intent_list_shows_only_the_intents_of_the_account(api):
    assert [i["tag"] for i in Api(api.url, AUDITOR_KEY).get("/api/intent").json()] == ["ping"]
    basic = Api(api.url, key=None, basic=(BASIC_USER, BASIC_PASSWORD), tenant=TENANT)
    assert [i["tag"] for i in basic.get("/api/intent").json()] == ["dot1x_status"]


def test_api_4_1_other_intents_fire_ok_and_unknown_tag_is_404(api):
    reply = api.post("/api/intent/ping/fire", {"targetId": 1})
    assert (reply.status_code, reply.json()) == (200, {"result": "ok"})
    reply = api.post("/api/intent/no_such_intent/fire", {"targetId": 1})
    assert reply.status_code == 404 and reply.json()["error"] == "Not found"


# ---- 4.2 GET /api/device ---------------------------------------------------------------------


def test_api_4_2_device_list_items_have_integer_id_and_hostname(api):
    devices = api.devices()
    assert [d["id"] for d in devices] == [1, 2, 3, 4]
    assert all(isinstance(d["id"], int) and isinstance(d["hostname"], str) for d in devices)
    assert devices[0] == {
        "id": 1,
        "hostname": "seed-cam-01",
        "group": "Cameras",
        "profile": "Camera",
        "macs": ["02:00:00:20:00:10"],
        "ips": ["10.20.0.10"],
    }


def test_api_4_2_device_list_ids_ascending_and_includes_created_devices(api):
    created = api.create(hostname="new-cam", group="Cameras", profile="Camera").json()
    devices = api.devices()
    assert [d["id"] for d in devices] == sorted(d["id"] for d in devices)
    assert devices[-1] == created and created["id"] == 5


# ---- 4.3 POST /api/device --------------------------------------------------------------------


def test_api_4_3_rule1_no_macs_no_ips_allocates_one_ip_per_pair(api):
    reply = api.create(hostname="ws-new", group="Workstations", profile="Workstation")
    assert reply.status_code == 201, reply.text
    record = reply.json()
    # Workstation allows 2 pairs; .10 and .11 are taken by the seeded dup-host devices: lowest free first.
    assert record["macs"] == [] and record["ips"] == ["10.40.0.12", "10.40.0.13"]
    camera = api.create(hostname="cam-new", group="Cameras", profile="Camera").json()
    assert camera["macs"] == [] and camera["ips"] == ["10.20.0.11"]


def test_api_4_3_rule1_allocation_stays_in_profile_range_and_never_collides(api):
    taken = api.create(hostname="lab-fixed", group="Lab", profile="Camera", ips=["10.99.0.10"])
    assert taken.status_code == 201, taken.text
    tiny = api.create(hostname="tiny-1", group="Lab", profile="Tiny").json()
    assert tiny["ips"] == ["10.99.0.11"]  # .10 is in use, .11 is the last host of Tiny's range .10-.11
    every_ip = [ip for device in api.devices() for ip in device["ips"]]
    assert len(every_ip) == len(set(every_ip))


def test_api_4_3_rule2_ips_without_macs_creates_device_without_macs(api):
    reply = api.create(hostname="printer-new", group="Printers", profile="Printer", ips=["10.30.0.99"])
    assert reply.status_code == 201, reply.text
    assert reply.json()["macs"] == [] and reply.json()["ips"] == ["10.30.0.99"]


def test_api_4_3_rule3_macs_and_ips_creates_device_with_both(api):
    reply = api.create(
        hostname="ws-both",
        group="Workstations",
        profile="Workstation",
        macs=["02:AA:BB:CC:DD:01", "02:aa:bb:cc:dd:02"],
        ips=["10.40.1.1", "10.40.1.2"],
    )
    assert reply.status_code == 201, reply.text
    record = reply.json()
    assert record["macs"] == ["02:aa:bb:cc:dd:01", "02:aa:bb:cc:dd:02"]  # stored lower-case
    assert record["ips"] == ["10.40.1.1", "10.40.1.2"]
    assert by_hostname(api.devices(), "ws-both") == [record]


def test_api_4_3_not_shown_macs_without_ips_allocates_one_ip_per_mac(api):
    record = api.create(
        hostname="ws-mac", group="Workstations", profile="Workstation", macs=["02:00:00:00:00:aa"]
    ).json()
    assert record["macs"] == ["02:00:00:00:00:aa"] and record["ips"] == ["10.40.0.12"]


def test_api_4_3_not_shown_hostname_group_profile_are_required(api):
    reply = api.create()
    assert reply.status_code == 400
    assert reply.json() == {
        "error": "Validation failed",
        "fields": {"hostname": "is required", "group": "is required", "profile": "is required"},
    }
    fields = api.create(hostname="", group=" ", profile=7).json()["fields"]
    assert fields == {"hostname": "must not be empty", "group": "must not be empty", "profile": "must be a string"}


def test_api_4_3_not_shown_hostname_is_at_most_63_letters_digits_hyphens_dots(api):
    assert (
        api.create(hostname="a" * 64, group="Cameras", profile="Camera")
        .json()["fields"]["hostname"]
        .startswith("must be at most 63")
    )
    assert (
        "letters, digits"
        in api.create(hostname="bad host", group="Cameras", profile="Camera").json()["fields"]["hostname"]
    )
    assert api.create(hostname="a" * 60 + ".b-", group="Cameras", profile="Camera").status_code == 201


def test_api_4_3_not_shown_unknown_group_or_profile_names_the_known_ones(api):
    fields = api.create(hostname="x1", group="Nowhere", profile="Toaster").json()["fields"]
    assert "Nowhere" in fields["group"] and "Cameras, Lab, Printers, Workstations" in fields["group"]
    assert "Toaster" in fields["profile"] and "Camera, Intercom, Printer, Tiny, Workstation" in fields["profile"]


def test_api_4_3_not_shown_invalid_mac_is_reported_by_index(api):
    reply = api.create(
        hostname="x1", group="Cameras", profile="Camera", macs=["02:00:00:00:00:01", "02-00-00-00-00-02"]
    )
    assert reply.status_code == 400
    assert list(reply.json()["fields"]) == ["macs[1]"]
    assert api.create(hostname="x1", group="Cameras", profile="Camera", macs="02:00:00:00:00:01").json()["fields"] == {
        "macs": "must be a list of strings"
    }
    assert "macs[0]" in api.create(hostname="x1", group="Cameras", profile="Camera", macs=[1]).json()["fields"]


@pytest.mark.parametrize(
    "ip", ["10.20.0.256", "10.20.0", "10.20.0.1.2", "ten", "10.30.0.5", "10.20.0.0", "10.20.0.255"]
)
def test_api_4_3_not_shown_ips_must_be_dotted_ipv4_hosts_of_group_subnet(api, ip):
    reply = api.create(hostname="x1", group="Cameras", profile="Camera", ips=[ip])
    assert reply.status_code == 400 and list(reply.json()["fields"]) == ["ips[0]"]


def test_api_4_3_not_shown_more_pairs_than_profile_allows_is_400(api):
    reply = api.create(
        hostname="x1", group="Cameras", profile="Camera", macs=["02:00:00:00:00:01", "02:00:00:00:00:02"]
    )
    assert reply.status_code == 400
    assert "Camera" in reply.json()["fields"]["macs"] and "at most 1" in reply.json()["fields"]["macs"]
    reply = api.create(hostname="x1", group="Cameras", profile="Camera", ips=["10.20.0.50", "10.20.0.51"])
    assert "at most 1" in reply.json()["fields"]["ips"]


@pytest.mark.parametrize(
    "fields, fragment",
    [
        (
            {"hostname": "x1", "macs": ["02:00:00:20:00:10"]},
            "MAC address 02:00:00:20:00:10 is already used by device seed-cam-01",
        ),
        ({"hostname": "x1", "macs": ["02:00:00:20:00:10".upper()]}, "MAC address 02:00:00:20:00:10"),
        (
            {"hostname": "x1", "ips": ["10.20.0.10"]},
            "IP address 10.20.0.10 is already used by device seed-cam-01 (id 1)",
        ),
        ({"hostname": "SEED-CAM-01"}, "hostname SEED-CAM-01 already exists (id 1)"),
    ],
)
def test_api_4_3_not_shown_mac_ip_or_hostname_in_use_is_conflict(api, fields, fragment):
    reply = api.create(group="Cameras", profile="Camera", **fields)
    assert reply.status_code == 409
    assert reply.json()["error"] == "Conflict" and fragment in reply.json()["message"]
    assert len(api.devices()) == 4


def test_api_4_3_not_shown_seeding_never_refuses_duplicate_hostnames(api):
    assert [d["id"] for d in by_hostname(api.devices(), "dup-host")] == [3, 4]
    assert api.create(hostname="Dup-Host", group="Workstations", profile="Workstation").status_code == 409


def test_api_4_3_not_shown_exhausted_profile_range_is_conflict(api):
    assert api.create(hostname="tiny-1", group="Lab", profile="Tiny").json()["ips"] == ["10.99.0.10"]
    assert api.create(hostname="tiny-2", group="Lab", profile="Tiny").json()["ips"] == ["10.99.0.11"]
    reply = api.create(hostname="tiny-3", group="Lab", profile="Tiny")
    assert reply.status_code == 409
    assert reply.json() == {
        "error": "Conflict",
        "message": "No free IP address left for profile Tiny in group Lab (range .10-.11)",
    }
    assert by_hostname(api.devices(), "tiny-3") == []


@pytest.mark.parametrize("body", [b"not json", b"[]", b"", b'"text"', b"\xff"])
def test_api_4_3_not_shown_body_must_be_a_json_object(api, body):
    reply = api.session.post(
        api.url + "/api/device", data=body, headers={"Content-Type": "application/json"}, timeout=10
    )
    assert reply.status_code == 400 and reply.json()["error"] == "Bad request"


@pytest.mark.parametrize("mode, expected", [("record", "record"), ("empty", ""), ("id", {"id": 5})])
def test_api_4_3_not_shown_creation_reply_body(mode, expected):
    with Emulator(config_with(creation_reply=mode)).start() as running:
        reply = Api(running.url).create(hostname="new-cam", group="Cameras", profile="Camera")
        assert reply.status_code == 201
        record = by_hostname(Api(running.url).devices(), "new-cam")[0]
        if expected == "record":
            assert reply.json() == record
        elif expected == "":
            assert reply.content == b"" and reply.headers["Content-Length"] == "0"
        else:
            assert reply.json() == expected == {"id": record["id"]}


def test_api_4_3_not_shown_invalid_creation_reply_config_is_refused():
    with pytest.raises(ValueError):
        Emulator(config_with(creation_reply="nonsense"))


# ---- 4.4 POST /api/intent/dot1x_status/fire --------------------------------------------------


def test_api_4_4_fire_dot1x_status_with_json_true_returns_status_result(api):
    reply = api.fire(1, JSON_TRUE)
    assert reply.status_code == 200 and reply.headers["Content-Type"] == "application/json"
    assert reply.json() == {
        "status": "AUTHENTICATED",
        "authMethod": "EAP-TLS",
        "username": "seed-cam-01",
        "message": None,
    }


@pytest.mark.parametrize("payload", [None, {}, {"json": False}, {"json": "true"}, {"json": 1}])
def test_api_4_4_not_shown_reply_without_json_true_is_human_readable_text(api, payload):
    reply = api.fire(1, payload)
    assert reply.status_code == 200 and reply.headers["Content-Type"].startswith("text/plain")
    assert reply.text == "Device seed-cam-01 (id 1): AUTHENTICATED via EAP-TLS as seed-cam-01\n"


def test_api_4_4_not_shown_unknown_target_id_is_404(api):
    reply = api.fire(999, JSON_TRUE)
    assert reply.status_code == 404
    assert reply.json() == {"error": "Not found", "message": "No device with id 999"}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"targetId": "1"},
        {"targetId": 1.0},
        {"targetId": True},
        {"targetId": None},
        {"targetId": 1, "additionalPayload": "json"},
    ],
)
def test_api_4_4_not_shown_target_id_must_be_an_integer(api, body):
    reply = api.post(FIRE, body)
    assert reply.status_code == 400 and reply.json()["error"] == "Validation failed"


def test_api_4_4_not_shown_fire_body_must_be_a_json_object(api):
    reply = api.session.post(api.url + FIRE, data=b"[1]", headers={"Content-Type": "application/json"}, timeout=10)
    assert reply.status_code == 400


# ---- 4.5 batch use ---------------------------------------------------------------------------


def test_api_4_5_batch_lists_devices_then_fires_once_per_device(emu, api):
    statuses = {}
    for device in api.devices():
        statuses.setdefault(device["hostname"], []).append(api.status(device["id"]).get("status", "UNKNOWN"))
    assert statuses == {
        "seed-cam-01": ["AUTHENTICATED"],
        "seed-printer-01": ["UNAUTHENTICATED"],
        "dup-host": ["AUTHENTICATED", "AUTHENTICATED"],
    }
    assert emu.request_counts() == {"GET /api/device": 1, "POST " + FIRE: 4}


# ---- 3 states and transitions (the 802.1x model) ---------------------------------------------


def test_api_3_known_state_authenticated_after_onboarding_delay(api):
    device = api.create(hostname="cam-onboard", group="Cameras", profile="Camera", macs=["02:00:00:00:01:01"]).json()
    assert api.status(device["id"]) == {
        "status": "CONNECTING",
        "authMethod": None,
        "username": None,
        "message": "Authentication in progress",
    }
    advance(api, 0.5)
    assert api.status(device["id"])["status"] == "CONNECTING"
    advance(api, 0.5)  # auth_delay of the integration config is 1.0
    assert api.status(device["id"]) == {
        "status": "AUTHENTICATED",
        "authMethod": "EAP-TLS",
        "username": "cam-onboard",
        "message": None,
    }


def test_api_3_not_shown_device_without_mac_is_unauthenticated(api):
    expected = {
        "status": "UNAUTHENTICATED",
        "authMethod": None,
        "username": None,
        "message": "No MAC address registered for this device",
    }
    assert api.status(2) == expected
    device = api.create(hostname="no-mac", group="Cameras", profile="Camera").json()
    advance(api, 3600)
    assert api.status(device["id"]) == expected


def test_api_3_not_shown_seeded_devices_are_already_settled(api):
    assert [api.status(i)["status"] for i in (1, 3, 4)] == ["AUTHENTICATED"] * 3


def test_api_3_not_shown_seed_not_authenticated_onboards_from_start():
    config = config_with(
        devices=[
            {
                "hostname": "fresh",
                "group": "Cameras",
                "profile": "Camera",
                "macs": ["02:00:00:00:00:01"],
                "authenticated": False,
            }
        ]
    )
    with Emulator(config).start() as running:
        client = Api(running.url)
        assert client.status(1)["status"] == "CONNECTING"
        running.advance_clock(1.0)
        assert client.status(1)["status"] == "AUTHENTICATED"


def test_api_3_not_shown_override_replaces_fields_also_for_later_devices(api):
    never = api.create(hostname="never-auth-01", group="Cameras", profile="Camera", macs=["02:00:00:00:02:01"]).json()
    held = api.create(
        hostname="HELD-01", group="Cameras", profile="Camera", ips=["10.20.0.77"], macs=["02:00:00:00:02:02"]
    ).json()
    advance(api, 10)
    assert api.status(never["id"]) == {
        "status": "UNAUTHENTICATED",
        "authMethod": None,
        "username": None,
        "message": "Certificate rejected",
    }
    assert api.status(held["id"]) == {"status": "HELD", "authMethod": "MAB", "username": "held-01", "message": None}


def test_api_3_override_unauthenticated_clears_method_and_user_unless_given(api):
    """A device forced to UNAUTHENTICATED (the EDA guide's curl) has no method or user, as the guides' events show."""
    device = api.create(hostname="lose-01", group="Cameras", profile="Camera", macs=["02:00:00:00:02:03"]).json()
    advance(api, 10)
    assert api.status(device["id"])["authMethod"] == "EAP-TLS"
    assert set_dot1x(api, hostname="lose-01", status="UNAUTHENTICATED").status_code == 200
    assert api.status(device["id"]) == {
        "status": "UNAUTHENTICATED",
        "authMethod": None,
        "username": None,
        "message": None,
    }
    set_dot1x(api, id=device["id"], status="UNAUTHENTICATED", authMethod="MAB")
    assert api.status(device["id"])["authMethod"] == "MAB"


def test_api_3_missing_status_reads_unknown_override_omits_status_key(api):
    device = api.create(hostname="nostatus-01", group="Cameras", profile="Camera", macs=["02:00:00:00:03:01"]).json()
    advance(api, 10)
    result = api.status(device["id"])
    assert "status" not in result and result["authMethod"] == "EAP-TLS"
    assert "status unknown" in api.fire(device["id"]).text


# ---- 5 authentication and 7 errors -----------------------------------------------------------


def test_api_5_1_bearer_api_key_authenticates(api):
    assert api.get("/api/device").status_code == 200


def test_api_5_2_account_without_public_api_privilege_is_forbidden(api):
    nopriv = Api(api.url, NOPRIV_KEY)
    for reply in (nopriv.get("/api/intent"), nopriv.get("/api/device"), nopriv.fire(1, JSON_TRUE)):
        assert reply.status_code == 403
        assert reply.json() == {"error": "Forbidden", "message": "The account lacks the privilege public_api"}


def test_api_5_3_fire_dot1x_status_without_intent_access_is_forbidden(api):
    auditor = Api(api.url, AUDITOR_KEY)
    reply = auditor.fire(1, JSON_TRUE)
    assert reply.status_code == 403
    assert reply.json() == {"error": "Forbidden", "message": "No access to intent dot1x_status (Check 802.1x)"}
    assert auditor.post("/api/intent/who_is_logged_in/fire", {"targetId": 1}).status_code == 403
    assert auditor.post("/api/intent/ping/fire", {"targetId": 1}).json() == {"result": "ok"}


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer wrong-key",
        "Bearer ",
        "Bearer nac-demo-admin-key-x",
        "Token nac-demo-admin-key",
        "Basic !!!",
        "nac-demo-admin-key",
        None,
    ],
)
def test_api_5_5_invalid_key_is_server_error(api, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    reply = requests.get(api.url + "/api/device", headers=headers, timeout=10)
    assert reply.status_code == 500
    assert reply.headers["Content-Type"] == "text/html" and reply.text == SERVER_ERROR_HTML


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/api/intent"),
        ("GET", "/api/device"),
        ("POST", "/api/device"),
        ("POST", FIRE),
        ("GET", "/api/unknown"),
        ("DELETE", "/api/device"),
    ],
)
def test_api_7_invalid_key_is_server_error_on_every_endpoint(api, method, path):
    reply = Api(api.url, "invalid").request(method, path, json={"targetId": 1})
    assert reply.status_code == 500 and reply.text == SERVER_ERROR_HTML


def test_facts_basic_auth_with_x_tenant_authenticates(api):
    basic = Api(api.url, key=None, basic=(BASIC_USER, BASIC_PASSWORD), tenant=TENANT)
    assert basic.get("/api/device").status_code == 200
    assert basic.status(1)["status"] == "AUTHENTICATED"


@pytest.mark.parametrize(
    "user, password, tenant",
    [
        (BASIC_USER, BASIC_PASSWORD, None),
        (BASIC_USER, BASIC_PASSWORD, "other-tenant"),
        (BASIC_USER, "wrong", TENANT),
        ("nobody", BASIC_PASSWORD, TENANT),
    ],
)
def test_facts_basic_auth_wrong_password_or_tenant_is_server_error(api, user, password, tenant):
    reply = Api(api.url, key=None, basic=(user, password), tenant=tenant).get("/api/device")
    assert reply.status_code == 500 and reply.text == SERVER_ERROR_HTML


def test_facts_bearer_account_with_tenant_requires_matching_x_tenant():
    accounts = [
        {"name": "site", "api_key": "site-key", "tenant": "site-a", "privileges": ["public_api"], "intents": []}
    ]
    with Emulator(config_with(accounts=accounts)).start() as running:
        assert Api(running.url, "site-key", tenant="site-a").get("/api/device").status_code == 200
        assert Api(running.url, "site-key", tenant="site-b").get("/api/device").status_code == 500
        assert Api(running.url, "site-key").get("/api/device").status_code == 500


def test_facts_basic_header_built_by_hand_is_accepted(api):
    token = base64.b64encode(("%s:%s" % (BASIC_USER, BASIC_PASSWORD)).encode()).decode()
    reply = requests.get(
        api.url + "/api/intent", headers={"Authorization": "Basic " + token, "X-Tenant": TENANT}, timeout=10
    )
    assert reply.status_code == 200


# ---- 9 paths and methods ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api", "/api/devices", "/api/v1/device", "/api/intent/dot1x_status"])
def test_api_9_unknown_api_path_is_404_json(api, path):
    reply = api.get(path)
    assert reply.status_code == 404 and reply.json()["error"] == "Not found"


@pytest.mark.parametrize(
    "method, path, allow",
    [
        ("PUT", "/api/device", "GET, POST"),
        ("DELETE", "/api/intent", "GET"),
        ("GET", FIRE, "POST"),
        ("PATCH", "/api/device", "GET, POST"),
    ],
)
def test_api_9_wrong_method_is_405_json(api, method, path, allow):
    reply = api.request(method, path)
    assert reply.status_code == 405 and reply.json()["error"] == "Method not allowed"
    assert reply.headers["Allow"] == allow


# ---- the emulator itself ---------------------------------------------------------------------


def test_emulator_latency_does_not_serialise_concurrent_requests():
    with Emulator(latency=0.3).start() as running:
        barrier = threading.Barrier(32, timeout=10)
        results = []

        def worker():
            barrier.wait()
            results.append(
                requests.get(
                    running.url + "/api/device", headers={"Authorization": "Bearer " + ADMIN_KEY}, timeout=10
                ).status_code
            )

        threads = [threading.Thread(target=worker) for _index in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [200] * 32
        stats = running.server_stats()
        assert stats["delayed"] == 32
        assert stats["most_delaying"] > 1, "the latency of one request held up the others: %r" % stats
        requests.get(running.url + "/_emulator/health", timeout=10)
        requests.get(running.url + "/_emulator/requests", timeout=10)
        assert running.server_stats()["delayed"] == 32  # admin endpoints are not delayed


def test_emulator_keeps_connections_alive_and_answers_without_nagle_stalls(emu):
    # The speed itself is measured by benchmarks/bench_dot1x_status.py; here, what makes it possible.
    from ansible_collections.netaccess.nac.tests.emulator import nac_emulator

    assert nac_emulator._Handler.protocol_version == "HTTP/1.1"
    assert nac_emulator._Handler.disable_nagle_algorithm is True
    before = emu.server_stats()["connections"]
    with requests.Session() as session:
        session.headers["Authorization"] = "Bearer " + ADMIN_KEY
        for _index in range(50):
            assert session.get(emu.url + "/api/intent", timeout=10).status_code == 200
    assert emu.server_stats()["connections"] - before == 1


def test_emulator_request_counter_counts_every_api_request(emu, api):
    api.get("/api/device?page=2")
    api.get("/api/device")
    Api(api.url, "bad-key").get("/api/device")
    Api(api.url, NOPRIV_KEY).get("/api/intent")
    api.fire(999, JSON_TRUE)
    api.get("/api/nothing")
    requests.get(api.url + "/_emulator/health", timeout=10)
    requests.get(api.url + "/_emulator/requests", timeout=10)
    expected = {"GET /api/device": 3, "GET /api/intent": 1, "POST " + FIRE: 1, "GET /api/nothing": 1}
    assert emu.request_counts() == expected
    assert requests.get(api.url + "/_emulator/requests", timeout=10).json() == expected


def test_emulator_reset_restores_devices_clock_and_counters(emu, api):
    api.create(hostname="temp", group="Cameras", profile="Camera")
    advance(api, 100)
    emu.reset()
    assert emu.request_counts() == {}
    assert by_hostname(api.devices(), "temp") == []
    assert advance(api, 0)["advance"] == 0
    assert api.create(hostname="temp", group="Cameras", profile="Camera").json()["id"] == 5


def test_emulator_admin_reset_endpoint(api):
    api.create(hostname="temp", group="Cameras", profile="Camera")
    reply = requests.post(api.url + "/_emulator/reset", timeout=10)
    assert reply.json() == {"ok": True}
    assert [d["id"] for d in api.devices()] == [1, 2, 3, 4]


@pytest.mark.parametrize("body", [{"advance": -1}, {"advance": "5"}, {"advance": True}, {}, [5]])
def test_emulator_clock_advance_rejects_bad_values(api, body):
    assert requests.post(api.url + "/_emulator/clock", json=body, timeout=10).status_code == 400


def set_dot1x(api, **body):
    return requests.post(api.url + "/_emulator/dot1x", json=body, timeout=10)


def test_emulator_admin_dot1x_sets_and_clears_a_status_by_id_or_hostname(emu, api):
    assert api.status(1)["status"] == "AUTHENTICATED" and api.status(3)["status"] == "AUTHENTICATED"
    reply = set_dot1x(api, id=1, status="UNAUTHENTICATED", message="Certificate revoked")
    assert reply.json() == {"ok": True, "override": {"status": "UNAUTHENTICATED", "message": "Certificate revoked"}}
    assert api.status(1) == {
        "status": "UNAUTHENTICATED",
        "authMethod": None,
        "username": None,
        "message": "Certificate revoked",
    }
    assert api.status(3)["status"] == "AUTHENTICATED"  # only that device
    assert set_dot1x(api, hostname="SEED-CAM-01", status="HELD").status_code == 200
    assert api.status(1)["status"] == "UNAUTHENTICATED"  # the id's override wins over the hostname's
    set_dot1x(api, id=1, clear=True)
    assert api.status(1)["status"] == "HELD"
    set_dot1x(api, hostname="seed-cam-01", clear=True)
    assert api.status(1)["status"] == "AUTHENTICATED"
    set_dot1x(api, id=1, status="HELD")
    emu.reset()  # back to the configured overrides only
    assert api.status(1)["status"] == "AUTHENTICATED"
    assert emu.request_counts() == {"POST " + FIRE: 1}  # since the reset; admin calls are never counted


@pytest.mark.parametrize(
    "body, status",
    [
        ({"status": "HELD"}, 400),
        ({"id": 1, "hostname": "x", "status": "HELD"}, 400),
        ({"id": 1, "colour": "red"}, 400),
        ({"hostname": "", "status": "HELD"}, 400),
        ({"id": 999, "status": "HELD"}, 404),
        ({"id": "1", "status": "HELD"}, 404),
    ],
)
def test_emulator_admin_dot1x_rejects_bad_bodies(api, body, status):
    assert set_dot1x(api, **body).status_code == status
    assert api.status(1)["status"] == "AUTHENTICATED"


def test_emulator_admin_endpoints_need_no_auth(api):
    assert requests.get(api.url + "/_emulator/health", timeout=10).json() == {"ok": True}
    assert requests.get(api.url + "/_emulator/nothing", timeout=10).status_code == 404
    assert requests.post(api.url + "/_emulator/health", timeout=10).status_code == 405


def test_emulator_concurrent_creations_get_unique_ids_and_ips(api):
    replies = []

    def create(index):
        replies.append(Api(api.url).create(hostname="ws-c%02d" % index, group="Workstations", profile="Workstation"))

    threads = [threading.Thread(target=create, args=(index,)) for index in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.status_code for r in replies] == [201] * 20
    ids = [r.json()["id"] for r in replies]
    ips = [ip for r in replies for ip in r.json()["ips"]]
    assert sorted(ids) == list(range(5, 25)) and len(ips) == 40 == len(set(ips))


def test_emulator_handles_a_thousand_devices():
    config = config_with(
        groups=[{"name": "Big", "subnet": "10.0.0.0/16"}],
        profiles=[{"name": "Host", "max_pairs": 1, "host_start": 1, "host_end": 65000}],
        devices=[
            {
                "hostname": "host-%04d" % i,
                "group": "Big",
                "profile": "Host",
                "macs": ["02:00:00:00:%02x:%02x" % divmod(i, 256)],
                "ips": ["10.0.%d.%d" % divmod(i + 1, 256)],
            }
            for i in range(1000)
        ],
    )
    with Emulator(config).start() as running:
        client = Api(running.url)
        devices = client.devices()
        assert len(devices) == 1000 and devices[-1]["id"] == 1000
        assert [client.status(d["id"])["status"] for d in devices[::10]] == ["AUTHENTICATED"] * 100
        created = client.create(hostname="HOST-0001x", group="Big", profile="Host").json()
        assert created["ips"] == ["10.0.3.233"]  # hosts 1..1000 are taken
        assert client.create(hostname="Host-0001", group="Big", profile="Host").status_code == 409


def test_emulator_default_config_fresh_start_lists_devices():
    with Emulator() as running:
        client = Api(running.url)
        devices = client.devices()
        assert [d["hostname"] for d in devices] == ["cam-01", "cam-02", "printer-01", "ws-01", "ws-02"]
        assert client.status(1)["status"] == "AUTHENTICATED" and client.status(5)["status"] == "UNAUTHENTICATED"
        basic = Api(running.url, key=None, basic=(BASIC_USER, BASIC_PASSWORD), tenant=TENANT)
        assert basic.get("/api/intent").json() == [{"tag": "dot1x_status", "name": "Check 802.1x"}]
        assert running.model.dot1x["auth_delay"] == 2.0


def test_emulator_load_config_missing_top_level_keys_take_defaults(tmp_path):
    path = tmp_path / "partial.json"
    path.write_text(json.dumps({"creation_reply": "id", "dot1x": {"auth_delay": 5}}))
    config = load_config(str(path))
    assert config["creation_reply"] == "id" and config["accounts"] == DEFAULT_CONFIG["accounts"]
    assert config["dot1x"] == {"auth_delay": 5, "auth_method": "EAP-TLS", "overrides": {}}
    config["accounts"].append({})
    assert len(DEFAULT_CONFIG["accounts"]) == 4  # a deep copy


def test_emulator_stop_is_idempotent_and_closes_keep_alive_connections():
    running = Emulator().start()
    client = Api(running.url)
    assert client.get("/api/intent").status_code == 200
    running.stop()
    running.stop()
    with pytest.raises(requests.ConnectionError):
        client.get("/api/intent")


def test_emulator_persistence_round_trip_via_sqlite(tmp_path):
    state = str(tmp_path / "state.sqlite")
    config = load_config(INTEGRATION_CONFIG)
    with Emulator(config, state_path=state).start() as first:
        created = (
            Api(first.url).create(hostname="kept", group="Cameras", profile="Camera", macs=["02:00:00:00:09:01"]).json()
        )
        assert Api(first.url).status(created["id"])["status"] == "CONNECTING"
        first.advance_clock(5)
    changed = copy.deepcopy(config)
    changed["devices"] = []  # a file that holds state wins over the config devices
    with Emulator(changed, state_path=state).start() as second:
        client = Api(second.url)
        assert [d["hostname"] for d in client.devices()] == [
            "seed-cam-01",
            "seed-printer-01",
            "dup-host",
            "dup-host",
            "kept",
        ]
        assert client.status(created["id"])["status"] == "AUTHENTICATED"
        assert client.create(hostname="next", group="Cameras", profile="Camera").json()["id"] == 6
        second.reset()  # back to the (changed) config, and the file is rewritten
    with Emulator(config, state_path=state).start() as third:
        assert Api(third.url).devices() == []


# ---- command line ----------------------------------------------------------------------------


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cli_start_stop_with_port_file_and_no_secret_in_output(tmp_path, stop_signal):
    process, port = start_cli(tmp_path, "--config", INTEGRATION_CONFIG, "--verbose")
    try:
        url = "http://127.0.0.1:%d" % port
        assert requests.get(url + "/_emulator/health", timeout=10).json() == {"ok": True}
        assert Api(url).get("/api/device").status_code == 200
        assert (
            Api(url, key=None, basic=(BASIC_USER, BASIC_PASSWORD), tenant=TENANT).get("/api/intent").status_code == 200
        )
    finally:
        process.send_signal(stop_signal)
        stdout, stderr = process.communicate(timeout=10)
    assert process.returncode == 0, stderr
    assert stdout == "NAC emulator listening on http://127.0.0.1:%d\n" % port
    assert "GET /api/device" in stderr  # --verbose logs request lines ...
    assert not [
        secret
        for secret in SECRETS + (base64.b64encode(b"svc-ansible:nac-demo-password").decode(),)
        if secret in stdout + stderr
    ]  # ... and never credentials


def test_cli_quiet_with_state_and_latency(tmp_path):
    process, port = start_cli(tmp_path, "--quiet", "--latency", "0.01", "--state", str(tmp_path / "s.sqlite"))
    try:
        assert (
            Api("http://127.0.0.1:%d" % port).create(hostname="cli-dev", group="Cameras", profile="Camera").status_code
            == 201
        )
    finally:
        process.terminate()
        stdout, stderr = process.communicate(timeout=10)
    assert (process.returncode, stdout, stderr) == (0, "", "")
    assert (tmp_path / "s.sqlite").exists()


def test_cli_bad_config_exits_with_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    result = subprocess.run(
        [sys.executable, SCRIPT, "--config", str(bad), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=10,
        check=False,
    )
    assert result.returncode == 2 and "cannot start" in result.stderr


@pytest.mark.parametrize(
    "exc, said",
    [
        (ConnectionResetError(104, "Connection reset by peer"), "Connection reset by peer"),
        (BrokenPipeError(32, "Broken pipe"), "Broken pipe"),
        (ssl.SSLError(1, "[SSL: TLSV1_ALERT_UNKNOWN_CA] tlsv1 alert unknown ca"), "TLSV1_ALERT_UNKNOWN_CA"),
    ],
)
def test_emulator_says_a_connection_the_client_ended_in_one_line(capsys, exc, said):
    from ansible_collections.netaccess.nac.tests.emulator.nac_emu.server import _Server

    server = _Server.__new__(_Server)  # handle_error reads nothing of the server's state
    try:
        raise exc
    except OSError:
        server.handle_error(None, ("127.0.0.1", 40000))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("nac-emulator: connection from 127.0.0.1:40000 ended: ") and said in err


def test_emulator_fault_of_its_own_keeps_its_traceback(capsys):
    from ansible_collections.netaccess.nac.tests.emulator.nac_emu.server import _Server

    server = _Server.__new__(_Server)
    try:
        raise ValueError("a bug in the emulator")
    except ValueError:
        server.handle_error(None, ("127.0.0.1", 40000))
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: a bug in the emulator" in err
