# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the emulator's server variants (README, "Server variants"): pagination, hostname rules, seeded
records (repeated ids, bulk), late commits, outages and padded replies."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import socket
import sqlite3
import time
import tracemalloc
import unicodedata

import pytest
import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import (
    PAGE_STYLES,
    Emulator,
    OutageError,
    Stream,
    hostname_key,
    load_config,
)
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import (
    ADMIN_KEY,
    INTEGRATION_CONFIG,
    Api,
    start_cli,
)

CAMERA = dict(group="Cameras", profile="Camera")
NFC_CAFE, NFD_CAFE = unicodedata.normalize("NFC", "café-01"), unicodedata.normalize("NFD", "café-01")
KELVIN_KIOSK = "\u212aiosk-01"  # KELVIN SIGN: canonically equivalent to K (its NFC form is "Kiosk-01")
# The settings of the servers that confirm nothing, off (test_nac_emulator_unconfirmed.py tests them).
UNCONFIRMED_OFF = dict(
    list_cap=0,
    list_lag=0,
    stored_hostname="as-sent",
    race_twins=0,
    creation_redirect=0,
    page_shift="none",
    page_shifts=1,
)


def admin(url, path, body=None):
    if body is None:
        return requests.get(url + path, timeout=10)
    return requests.post(url + path, json=body, timeout=10)


def links(reply):
    """{rel: URL} of a reply's Link header (RFC 8288)."""
    return dict((rel, url) for url, rel in re.findall(r'<([^>]*)>;\s*rel="([^"]+)"', reply.headers.get("Link", "")))


def wait_for(predicate, limit=5.0, what="condition"):
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, "%s not reached within %s s" % (what, limit)
        time.sleep(0.01)


@pytest.fixture
def seeded(emu, api):
    """The integration emulator with 4 more devices (8 in all: ids 1-8)."""
    emu.seed([{"hostname": "extra-%d" % n, "group": "Cameras", "profile": "Camera"} for n in range(4)])
    return api


# ---- defaults: the plain emulator ------------------------------------------------------------


def test_defaults_are_the_plain_emulator(emu, api):
    assert emu.settings() == {
        "allow_duplicate_hostnames": False,
        "hostname_match": "ascii-nocase",
        "hostname_chars": "ldh",
        "page_size": 0,
        "page_style": "link",
        "page_foreign_url": None,
        "pad_list_bytes": 0,
        "pad_list_chunked": False,
        **UNCONFIRMED_OFF,
    }
    reply = api.get("/api/device?page=2&per_page=1")  # not paginated: the query is ignored, as by the default emulator
    assert len(reply.json()) == 4 and "Link" not in reply.headers and "X-Total-Count" not in reply.headers
    assert reply.headers["Content-Length"] == str(len(reply.content))
    snapshot = emu.faults()
    assert (snapshot["only"], snapshot["limit"], snapshot["commit_delay"], snapshot["in_front"]) == (
        None,
        None,
        0.0,
        False,
    )
    assert emu.outage_state() == {"state": "none", "outages": 0, "unanswered": 0}


# ---- pagination ------------------------------------------------------------------------------


def test_link_pages_are_followed_to_the_end_with_absolute_urls(emu, seeded):
    emu.settings(page_size=3)
    seen, url = [], seeded.url + "/api/device"
    replies = []
    while url:
        reply = seeded.session.get(url, timeout=10)
        replies.append(reply)
        seen += [d["id"] for d in reply.json()]
        url = links(reply).get("next")
    assert seen == list(range(1, 9)) and len(replies) == 3
    first, last = links(replies[0]), links(replies[-1])
    assert first == {
        "first": seeded.url + "/api/device?page=1&per_page=3",
        "next": seeded.url + "/api/device?page=2&per_page=3",
        "last": seeded.url + "/api/device?page=3&per_page=3",
    }
    assert last == {
        "first": first["first"],
        "prev": seeded.url + "/api/device?page=2&per_page=3",
        "last": first["last"],
    }
    assert all(r.headers["X-Total-Count"] == "8" for r in replies)
    assert emu.request_counts() == {"GET /api/device": 3}  # the query string is not part of the counted path


def test_link_urls_take_the_host_the_client_used(emu, seeded):
    emu.settings(page_size=3)
    reply = seeded.get("/api/device", headers={"Host": "nac.example.test:8443"})
    assert links(reply)["next"] == "http://nac.example.test:8443/api/device?page=2&per_page=3"


def test_per_page_is_honoured_up_to_the_page_size_and_pages_past_the_end_are_empty(emu, seeded):
    emu.settings(page_size=3)
    assert [d["id"] for d in seeded.get("/api/device?per_page=2&page=2").json()] == [3, 4]
    assert len(seeded.get("/api/device?per_page=500").json()) == 3  # the page size is the server's maximum
    past = seeded.get("/api/device?page=9")
    assert past.status_code == 200 and past.json() == [] and "next" not in links(past)


@pytest.mark.parametrize(
    "query, name", [("page=0", "page"), ("page=x", "page"), ("per_page=-1", "per_page"), ("per_page=", "per_page")]
)
def test_bad_page_parameters_are_400(emu, seeded, query, name):
    emu.settings(page_size=3)
    reply = seeded.get("/api/device?" + query)
    assert reply.status_code == 400 and list(reply.json()["fields"]) == [name]


def test_link_relative_gives_relative_references(emu, seeded):
    emu.settings(page_size=3, page_style="link-relative")
    assert links(seeded.get("/api/device"))["next"] == "/api/device?page=2&per_page=3"


def test_total_only_gives_the_first_page_and_a_larger_total(emu, seeded):
    emu.settings(page_size=3, page_style="total-only")
    reply = seeded.get("/api/device")
    assert len(reply.json()) == 3 and reply.headers["X-Total-Count"] == "8" and "Link" not in reply.headers


def test_content_range_counts_the_items(emu, seeded):
    emu.settings(page_size=3, page_style="content-range")
    assert seeded.get("/api/device").headers["Content-Range"] == "items 0-2/8"
    assert seeded.get("/api/device?page=3").headers["Content-Range"] == "items 6-7/8"
    assert seeded.get("/api/device?page=4").headers["Content-Range"] == "items */8"
    assert "Link" not in seeded.get("/api/device").headers


def test_body_next_wraps_the_page_in_an_object_with_the_next_url(emu, seeded):
    emu.settings(page_size=5, page_style="body-next")
    first = seeded.get("/api/device").json()
    assert sorted(first) == ["items", "next", "total"] and len(first["items"]) == 5 and first["total"] == 8
    assert first["next"] == seeded.url + "/api/device?page=2&per_page=5"
    second = seeded.session.get(first["next"], timeout=10).json()
    assert [d["id"] for d in second["items"]] == [6, 7, 8] and second["next"] is None


def test_link_loop_points_the_last_page_back_at_the_first(emu, seeded):
    emu.settings(page_size=5, page_style="link-loop")
    assert links(seeded.get("/api/device"))["next"].endswith("?page=2&per_page=5")
    assert links(seeded.get("/api/device?page=2"))["next"] == seeded.url + "/api/device?page=1&per_page=5"


def test_link_foreign_sends_the_next_link_elsewhere(emu, seeded):
    emu.settings(page_size=5, page_style="link-foreign")
    found = links(seeded.get("/api/device"))
    assert found["next"] == "http://nac-elsewhere.invalid:%d/api/device?page=2&per_page=5" % emu.port
    assert found["last"].startswith(seeded.url)  # only the next link leaves
    no_port = seeded.get("/api/device", headers={"Host": "nac.example.test"})
    assert links(no_port)["next"] == "http://nac-elsewhere.invalid/api/device?page=2&per_page=5"
    emu.settings(page_foreign_url="http://127.0.0.2:9")
    assert links(seeded.get("/api/device"))["next"] == "http://127.0.0.2:9/api/device?page=2&per_page=5"


def test_the_intent_list_is_paginated_too(emu, api):
    emu.settings(page_size=2)
    reply = api.get("/api/intent")
    assert [i["tag"] for i in reply.json()] == ["dot1x_status", "ping"] and reply.headers["X-Total-Count"] == "3"
    assert [i["tag"] for i in api.session.get(links(reply)["next"], timeout=10).json()] == ["who_is_logged_in"]


def test_every_page_style_covers_the_list_exactly_once(emu, seeded):
    for style in PAGE_STYLES:
        emu.settings(page_size=3, page_style=style)
        ids = []
        for page in range(1, 4):
            body = seeded.get("/api/device?page=%d" % page).json()
            ids += [d["id"] for d in (body["items"] if style == "body-next" else body)]
        assert ids == list(range(1, 9)), style


def test_pagination_settings_from_config_admin_endpoint_and_reset(api):
    reply = admin(api.url, "/_emulator/settings", {"page_size": 2, "page_style": "content-range"})
    assert reply.status_code == 200 and reply.json()["page_size"] == 2
    assert api.get("/api/device").headers["Content-Range"] == "items 0-1/4"
    admin(api.url, "/_emulator/reset", {})
    assert len(api.devices()) == 4
    config = load_config(INTEGRATION_CONFIG)
    config.update(page_size=1, page_style="total-only")
    with Emulator(config).start() as running:
        assert len(Api(running.url).devices()) == 1


@pytest.mark.parametrize(
    "body, bad",
    [
        ({"page_size": -1}, "page_size"),
        ({"page_size": 1.5}, "page_size"),
        ({"page_style": "links"}, "page_style"),
        ({"page_foreign_url": "http://x/path"}, "page_foreign_url"),
        ({"pad_list_bytes": "1"}, "pad_list_bytes"),
        ({"hostname_match": "nfkc"}, "hostname_match"),
        ({"hostname_chars": "any"}, "hostname_chars"),
        ({"pad_list_chunked": 1}, "pad_list_chunked"),
    ],
)
def test_bad_settings_are_refused_and_change_nothing(emu, api, body, bad):
    reply = admin(api.url, "/_emulator/settings", dict(body, page_size=body.get("page_size", 3)))
    assert reply.status_code == 400 and list(reply.json()["fields"]) == [bad]
    assert emu.settings()["page_size"] == 0
    with pytest.raises(ValueError, match=bad):
        Emulator(dict(load_config(INTEGRATION_CONFIG), **body))


# ---- hostname rules --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "listed, posted, exact, ascii_nocase, casefold",
    [
        ("seed-cam-01", "SEED-CAM-01", 201, 409, 409),
        ("straße-01", "strasse-01", 201, 201, 409),  # casefold turns ß into ss; RFC 4343 does not
        (NFC_CAFE, NFD_CAFE, 201, 409, 201),  # canonically equivalent: the same name after NFC
        ("CAFÉ-02", "café-02", 201, 201, 409),  # not ASCII: case matters for RFC 4343
        (KELVIN_KIOSK, "kiosk-01", 201, 409, 409),  # KELVIN SIGN: K after NFC, k after casefold
    ],
)
def test_hostname_match_decides_which_creation_duplicates_a_listed_name(
    emu, api, listed, posted, exact, ascii_nocase, casefold
):
    emu.settings(hostname_chars="unicode")
    emu.seed([{"hostname": listed, "group": "Cameras", "profile": "Camera"}])
    for rule, status in (("exact", exact), ("ascii-nocase", ascii_nocase), ("casefold", casefold)):
        emu.settings(hostname_match=rule)
        reply = api.create(hostname=posted, **CAMERA)
        assert reply.status_code == status, (rule, reply.text)
        if status == 201:
            emu.reset()
            emu.settings(hostname_chars="unicode", hostname_match=rule)
            emu.seed([{"hostname": listed, "group": "Cameras", "profile": "Camera"}])
        else:
            assert "already exists" in reply.json()["message"]


def test_hostname_key_rules():
    assert hostname_key("Straße-01", "exact") == "Straße-01"
    assert (
        hostname_key("Straße-01", "ascii-nocase") == "straße-01"
        and hostname_key("Straße-01", "casefold") == "strasse-01"
    )
    assert hostname_key(NFD_CAFE, "ascii-nocase") == NFC_CAFE and hostname_key("É", "ascii-nocase") == "É"


def test_hostname_chars_unicode_accepts_letters_of_any_script_only(emu, api):
    assert (
        api.create(hostname="straße-01", **CAMERA)
        .json()["fields"]["hostname"]
        .startswith("may contain only letters, digits")
    )
    emu.settings(hostname_chars="unicode")
    for good in ("straße-01", NFD_CAFE, "кіоск-01", KELVIN_KIOSK):
        assert api.create(hostname=good, **CAMERA).status_code == 201, good
    for bad in ("a b", "snow☃", "tab\tname", "under_score"):
        assert api.create(hostname=bad, **CAMERA).status_code == 400, bad
    assert KELVIN_KIOSK in [d["hostname"] for d in api.devices()]  # stored as sent, not normalised


def test_changing_the_rule_at_run_time_applies_to_the_devices_already_listed(emu, api):
    emu.settings(hostname_chars="unicode")
    assert api.create(hostname="straße-01", **CAMERA).status_code == 201
    assert api.create(hostname="strasse-01", **CAMERA).status_code == 201
    emu.settings(hostname_match="casefold")
    assert (
        api.create(hostname="STRASSE-01", **CAMERA)
        .json()["message"]
        .startswith("A device with hostname STRASSE-01 already exists (id 5)")
    )


# ---- seeded records --------------------------------------------------------------------------


def test_seeded_records_are_listed_as_given_with_repeated_ids(emu, api):
    reply = admin(
        api.url,
        "/_emulator/devices",
        {
            "devices": [
                {
                    "id": 40,
                    "hostname": "shared-a",
                    "group": "Cameras",
                    "profile": "Camera",
                    "macs": ["02:00:00:00:40:01"],
                },
                {
                    "id": 40,
                    "hostname": "shared-b",
                    "group": {"name": "Cameras"},
                    "profile": "Camera",
                    "macs": ["02:00:00:00:40:02"],
                    "location": "hall",
                },
                {"hostname": "no-id", "authenticated": False, "macs": ["02:00:00:00:40:03"]},
                {"id": 3, "hostname": "also-three"},
            ]
        },
    )
    assert reply.status_code == 200 and reply.json() == {"ok": True, "ids": [40, 40, 41, 3]}
    listed = api.devices()
    assert [(d["id"], d["hostname"]) for d in listed] == [
        (1, "seed-cam-01"),
        (2, "seed-printer-01"),
        (3, "dup-host"),
        (3, "also-three"),
        (4, "dup-host"),
        (40, "shared-a"),
        (40, "shared-b"),
        (41, "no-id"),
    ]
    assert listed[6] == {
        "id": 40,
        "hostname": "shared-b",
        "group": {"name": "Cameras"},
        "profile": "Camera",
        "macs": ["02:00:00:00:40:02"],
        "location": "hall",
    }
    assert listed[7] == {"id": 41, "hostname": "no-id", "macs": ["02:00:00:00:40:03"]}  # only what was given
    assert api.status(40)["username"] == "shared-a"  # a repeated id: the first of its records answers
    assert api.status(41)["status"] == "CONNECTING"  # "authenticated": false, as in the config
    assert admin(api.url, "/_emulator/devices").json() == listed
    assert api.create(hostname="new", **CAMERA).json()["id"] == 42
    emu.reset()
    assert len(api.devices()) == 4


def test_seeded_lookalike_hostnames_are_kept_apart_byte_for_byte(emu, api):
    names = ["strasse-01", "straße-01", "Kiosk-01", KELVIN_KIOSK, NFC_CAFE, NFD_CAFE]
    emu.seed([{"hostname": name, "group": "Cameras", "profile": "Camera"} for name in names])
    assert [d["hostname"] for d in api.devices()][4:] == names
    assert json.loads(api.get("/api/device").content)[-1]["hostname"] == NFD_CAFE


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"devices": "x"},
        {"devices": [{"id": 1}]},
        {"devices": [{"hostname": 7}]},
        {"devices": [{"hostname": "x", "id": "1"}]},
        {"devices": [], "count": 1},
        {"devices": [], "x": 1},
        {"count": -1},
        {"count": 1, "prefix": 5},
        {"count": 1, "colour": "red"},
        [5],
    ],
)
def test_bad_seed_bodies_are_400_and_add_nothing(api, body):
    assert admin(api.url, "/_emulator/devices", body).status_code == 400
    assert len(api.devices()) == 4


def test_bulk_seed_makes_distinct_settled_devices_fast_path(emu, api):
    reply = admin(api.url, "/_emulator/devices", {"count": 2000, "prefix": "blk-"})
    assert reply.json() == {"ok": True, "count": 2000, "first_id": 5, "last_id": 2004}
    listed = api.devices()[4:]
    assert len(listed) == 2000 and listed[0]["hostname"] == "blk-000001" and listed[-1]["hostname"] == "blk-002000"
    for key in ("hostname", "macs", "ips"):
        assert len(set(str(d[key]) for d in listed)) == 2000
    assert listed[0]["group"] == "Bulk" and listed[0]["ips"] == ["100.64.0.5"]
    assert api.status(2004)["status"] == "AUTHENTICATED"
    assert api.create(hostname="BLK-000007", **CAMERA).status_code == 409
    assert api.create(hostname="x", group="Bulk", profile="Bulk").json()["id"] == 2005


def test_seed_devices_config_seeds_at_start_and_at_each_reset():
    config = dict(load_config(INTEGRATION_CONFIG), seed_devices=3000)
    with Emulator(config).start() as running:
        client = Api(running.url)
        assert len(client.devices()) == 3004
        client.create(hostname="more", **CAMERA)
        running.reset()
        devices = client.devices()
        assert len(devices) == 3004 and devices[-1]["hostname"] == "bulk-003000"
    with pytest.raises(ValueError, match="seed_devices"):
        Emulator(dict(config, seed_devices=-1))


def test_seeded_records_with_repeated_ids_survive_a_restart(tmp_path):
    state = str(tmp_path / "state.sqlite")
    with Emulator(load_config(INTEGRATION_CONFIG), state_path=state).start() as first:
        first.seed([{"id": 9, "hostname": "a", "extra": [1]}, {"id": 9, "hostname": "b"}])
        first.seed_bulk(10)
        listed = Api(first.url).devices()
    with Emulator(load_config(INTEGRATION_CONFIG), state_path=state).start() as second:
        assert Api(second.url).devices() == listed


def test_a_state_file_of_the_earlier_schema_is_still_read(tmp_path):
    state = str(tmp_path / "old.sqlite")
    db = sqlite3.connect(state)
    db.execute(
        "CREATE TABLE device (id INTEGER PRIMARY KEY, hostname TEXT NOT NULL, grp TEXT NOT NULL, profile TEXT NOT NULL,"
        " macs TEXT NOT NULL, ips TEXT NOT NULL, created REAL NOT NULL)"
    )
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO device VALUES (7, 'old-cam', 'Cameras', 'Camera', '[]', '[\"10.20.0.50\"]', 0)")
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("next_id", "8"), ("advance", "0.0")])
    db.commit()
    db.close()
    with Emulator(load_config(INTEGRATION_CONFIG), state_path=state).start() as running:
        client = Api(running.url)
        assert [(d["id"], d["hostname"]) for d in client.devices()] == [(7, "old-cam")]
        assert client.create(hostname="next", **CAMERA).json()["id"] == 8


# ---- late commits and fault scope ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["commit_500", "commit_drop"])
def test_late_commit_loses_the_reply_now_and_commits_later(emu, api, mode):
    emu.faults(rate=1, modes=[mode], only=["POST /api/device"], commit_delay=0.6)
    started = time.monotonic()
    if mode == "commit_500":
        assert api.create(hostname="late-01", **CAMERA).status_code == 500
    else:
        with pytest.raises(requests.ConnectionError):
            api.create(hostname="late-01", **CAMERA)
    assert time.monotonic() - started < 0.6, "the reply was not lost before the commit"
    assert api.get("/api/device").status_code == 200  # only POST /api/device gets faults
    if time.monotonic() - started < 0.5:  # normally so; a machine stalled that long may have committed it already
        assert "late-01" not in [d["hostname"] for d in api.devices()] and emu.faults()["holding"] == 1
    wait_for(lambda: emu.faults()["holding"] == 0, what="the late commit")
    assert time.monotonic() - started >= 0.6
    assert [d["hostname"] for d in api.devices()].count("late-01") == 1


def test_a_late_commit_still_obeys_the_rules_when_it_lands(emu, api):
    emu.faults(rate=1, modes=["commit_500"], only=["POST /api/device"], commit_delay=0.3, limit=1)
    assert api.create(hostname="late-02", **CAMERA).status_code == 500
    assert api.create(hostname="late-02", **CAMERA).status_code == 201  # the re-send: no fault left (limit 1)
    wait_for(lambda: emu.faults()["holding"] == 0, what="the late commit")
    assert [d["hostname"] for d in api.devices()].count("late-02") == 1  # the late one met a 409: nobody hears of it
    emu.settings(allow_duplicate_hostnames=True)
    emu.faults(limit=2)
    assert api.create(hostname="late-03", **CAMERA).status_code == 500
    assert api.create(hostname="late-03", **CAMERA).status_code == 201
    wait_for(lambda: emu.faults()["holding"] == 0, what="the late commit")
    assert [d["hostname"] for d in api.devices()].count(
        "late-03"
    ) == 2  # duplicates allowed: the late one is a second device


def test_reset_drops_a_late_commit_still_held(emu, api):
    emu.faults(rate=1, modes=["commit_500"], commit_delay=0.3)
    api.create(hostname="late-04", **CAMERA)
    emu.reset()
    assert emu.faults()["holding"] == 0
    time.sleep(0.45)
    assert "late-04" not in [d["hostname"] for d in api.devices()] and emu.faults()["holding"] == 0


def test_fault_limit_stops_injecting(emu, api):
    emu.faults(rate=1, modes=["503"], limit=2)
    assert [api.get("/api/intent").status_code for _index in range(4)] == [503, 503, 200, 200]
    assert emu.faults()["total"] == 2


@pytest.mark.parametrize(
    "body, bad",
    [
        ({"only": []}, "only"),
        ({"only": ["/api/device"]}, "only"),
        ({"only": "POST /api/device"}, "only"),
        ({"limit": -1}, "limit"),
        ({"limit": 1.0}, "limit"),
        ({"commit_delay": -1}, "commit_delay"),
        ({"commit_delay": "1"}, "commit_delay"),
        ({"in_front": 1}, "in_front"),
        ({"in_front": "yes"}, "in_front"),
    ],
)
def test_bad_fault_scope_settings_are_refused(emu, api, body, bad):
    reply = admin(api.url, "/_emulator/faults", body)
    assert reply.status_code == 400 and list(reply.json()["fields"]) == [bad]


# ---- outages ---------------------------------------------------------------------------------


def test_refuse_outage_closes_the_port_cuts_connections_and_comes_back_with_the_state(emu, api):
    created = api.create(hostname="before-outage", **CAMERA).json()
    port, before = emu.port, emu.server_stats()["connections"]
    assert emu.outage(1.0)["state"] == "active"
    with pytest.raises(requests.ConnectionError):  # the kept-alive connection was cut ...
        api.get("/api/intent")
    with pytest.raises(ConnectionRefusedError):  # ... and new ones are refused
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    wait_for(lambda: emu.outage_state()["state"] == "over", what="the end of the outage")
    assert emu.port == port and emu.url == api.url
    assert created in Api(api.url).devices()
    state = emu.outage_state()
    assert (state["outages"], state["mode"], state["seconds"]) == (1, "refuse", 1.0)
    assert emu.server_stats()["connections"] > before  # kept across the restart


def test_silent_outage_accepts_and_never_answers_then_drops_what_it_held(emu, api):
    assert api.get("/api/intent").status_code == 200
    emu.outage(0.6, mode="silent")
    started = time.monotonic()
    with pytest.raises(requests.ReadTimeout):
        api.session.get(api.url + "/api/intent", timeout=0.2)
    assert admin(api.url, "/_emulator/outage").json()["state"] == "active"  # the admin endpoints still answer
    held = requests.Session()
    with pytest.raises(requests.ConnectionError):  # held unanswered, then dropped when the service comes back
        held.get(api.url + "/api/intent", headers={"Authorization": "Bearer " + ADMIN_KEY}, timeout=5)
    assert time.monotonic() - started >= 0.5
    assert Api(api.url).get("/api/intent").status_code == 200
    assert emu.outage_state()["unanswered"] == 2 and emu.request_counts() == {
        "GET /api/intent": 2
    }  # never reached the service


def test_outage_after_a_number_of_requests_lets_those_through_first(emu, api):
    emu.outage(30, after_requests=3)
    assert [Api(api.url).get("/api/intent").status_code for _index in range(3)] == [200] * 3
    assert emu.outage_state()["state"] == "active"  # active once the third was counted, before its reply
    with pytest.raises(requests.ConnectionError):
        Api(api.url).get("/api/intent")
    assert emu.cancel_outage()["state"] == "over"  # ended early: the listener is back
    assert Api(api.url).get("/api/intent").status_code == 200


def test_outage_over_http_with_a_delay_then_cancelled_early(emu, api):
    reply = admin(api.url, "/_emulator/outage", {"seconds": 30, "mode": "refuse", "delay": 0.2})
    assert reply.json()["state"] == "scheduled"
    wait_for(lambda: emu.outage_state()["state"] == "active", what="the outage")
    with pytest.raises(requests.ConnectionError):
        admin(api.url, "/_emulator/health")  # nothing answers while refusing, not even the admin endpoints
    assert emu.cancel_outage()["state"] == "over"
    assert admin(api.url, "/_emulator/health").json() == {"ok": True}


def test_outage_over_http_begins_once_its_reply_is_sent(emu, api):
    reply = admin(api.url, "/_emulator/outage", {"seconds": 30})
    assert reply.status_code == 200 and reply.json()["state"] == "active"
    with pytest.raises(requests.ConnectionError):
        Api(api.url).get("/api/intent")
    emu.cancel_outage()
    assert admin(api.url, "/_emulator/outage", {"cancel": True}).json()["state"] == "over"  # nothing left to cancel


@pytest.mark.parametrize(
    "body, bad",
    [
        ({"seconds": 0}, "seconds"),
        ({"seconds": "5"}, "seconds"),
        ({"seconds": 1, "mode": "crash"}, "mode"),
        ({"seconds": 1, "delay": -1}, "delay"),
        ({"seconds": 1, "after_requests": 0}, "after_requests"),
        ({"seconds": 1, "delay": 1, "after_requests": 2}, "after_requests"),
        ({"seconds": 1, "x": 1}, "x"),
    ],
)
def test_bad_outage_requests_are_400(emu, api, body, bad):
    before = emu.outage_state()
    reply = admin(api.url, "/_emulator/outage", body)
    assert reply.status_code == 400 and list(reply.json()["fields"]) == [bad]
    assert emu.outage_state() == before and before["state"] in ("none", "over")


def test_one_outage_at_a_time_and_stop_ends_it(api):
    with Emulator().start() as running:
        running.outage(30, delay=30)
        with pytest.raises(OutageError, match="already scheduled"):
            running.outage(1)
        running.cancel_outage()
        running.outage(30)
        started = time.monotonic()
    assert time.monotonic() - started < 5 and running.outage_state()["state"] == "over"


def test_cli_schedules_an_outage(tmp_path):
    process, port = start_cli(tmp_path, "--quiet", "--outage", "0.5", "--outage-delay", "0.5")
    try:
        url = "http://127.0.0.1:%d" % port

        def answers():
            try:
                return requests.get(url + "/_emulator/outage", timeout=2).json()
            except requests.ConnectionError:
                return None

        assert answers()["state"] in ("scheduled", "over")  # scheduled, unless this machine stalled for a second
        wait_for(lambda: answers() is None, what="the refused connections")
        wait_for(lambda: answers() is not None, what="the end of the outage")
        assert answers() == {
            "state": "over",
            "mode": "refuse",
            "seconds": 0.5,
            "delay": 0.5,
            "after_requests": None,
            "outages": 1,
            "unanswered": 0,
        }
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert process.returncode == 0


# ---- padded (huge) replies -------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_padding_makes_the_list_larger_by_exactly_that_many_notes(emu, api, chunked):
    plain = api.get("/api/device")
    emu.settings(pad_list_bytes=1001, pad_list_chunked=chunked)
    reply = api.get("/api/device")
    records = reply.json()
    assert [len(d.pop("notes")) for d in records] == [251, 250, 250, 250] and records == plain.json()
    assert len(reply.content) == len(plain.content) + 1001 + 4 * len(', "notes": ""')
    if chunked:
        assert reply.headers["Transfer-Encoding"] == "chunked" and "Content-Length" not in reply.headers
    else:
        assert reply.headers["Content-Length"] == str(len(reply.content))
    assert api.get("/api/intent").content == api.get("/api/intent").content  # only the device list is padded


def test_padding_an_empty_list_pads_it_with_spaces_and_combines_with_pages(emu, api):
    with Emulator(dict(load_config(INTEGRATION_CONFIG), devices=[], pad_list_bytes=10)).start() as running:
        assert Api(running.url).get("/api/device").content == b"[" + b" " * 10 + b"]"
    emu.settings(page_size=3, pad_list_bytes=30)
    page = api.get("/api/device")
    assert [len(d["notes"]) for d in page.json()] == [10, 10, 10] and page.headers["X-Total-Count"] == "4"


def test_a_huge_padded_reply_is_streamed_never_held_whole(emu, api):
    size = 32 * 1024 * 1024
    emu.settings(pad_list_bytes=size)
    tracemalloc.start()
    try:
        received = 0
        with api.session.get(api.url + "/api/device", stream=True, timeout=30) as reply:
            assert int(reply.headers["Content-Length"]) > size
            for chunk in reply.iter_content(65536):
                received += len(chunk)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert received > size
    assert peak < 4 * 1024 * 1024, "the emulator (or the test) held %d bytes at once" % peak


def test_a_client_that_gives_up_on_a_huge_reply_leaves_the_emulator_serving(emu, api):
    emu.settings(pad_list_bytes=64 * 1024 * 1024)
    with requests.get(
        api.url + "/api/device", headers={"Authorization": "Bearer " + ADMIN_KEY}, stream=True, timeout=10
    ) as reply:
        next(reply.iter_content(65536))
    emu.settings(pad_list_bytes=0)
    assert len(Api(api.url).devices()) == 4


def test_stream_pieces_are_bounded_and_exact():
    stream = Stream([b"[", (100000, b"x"), b"ab" * 40000, (3, b" "), b"]"])
    pieces = list(stream.pieces(size=4096))
    assert all(len(piece) == 4096 for piece in pieces[:-1]) and 0 < len(pieces[-1]) <= 4096
    assert b"".join(pieces) == b"[" + b"x" * 100000 + b"ab" * 40000 + b"   ]" and len(stream) == 180005


def test_cli_variant_flags(tmp_path):
    process, port = start_cli(
        tmp_path,
        "--quiet",
        "--page-size",
        "2",
        "--page-style",
        "content-range",
        "--hostname-match",
        "exact",
        "--hostname-chars",
        "unicode",
        "--pad-list-bytes",
        "10",
        "--pad-list-chunked",
        "--seed-devices",
        "3",
        "--commit-delay",
        "0.5",
        "--fault-only",
        "POST /api/device",
        "--fault-limit",
        "4",
        "--fault-in-front",
        "--page-foreign-url",
        "http://127.0.0.2:1",
    )
    try:
        url = "http://127.0.0.1:%d" % port
        assert requests.get(url + "/_emulator/settings", timeout=5).json() == {
            "allow_duplicate_hostnames": False,
            "hostname_match": "exact",
            "hostname_chars": "unicode",
            "page_size": 2,
            "page_style": "content-range",
            "page_foreign_url": "http://127.0.0.2:1",
            "pad_list_bytes": 10,
            "pad_list_chunked": True,
            **UNCONFIRMED_OFF,
        }
        faults = requests.get(url + "/_emulator/faults", timeout=5).json()
        assert (faults["only"], faults["limit"], faults["commit_delay"], faults["in_front"]) == (
            ["POST /api/device"],
            4,
            0.5,
            True,
        )
        assert Api(url).get("/api/device").headers["Content-Range"] == "items 0-1/8"
    finally:
        process.terminate()
        process.communicate(timeout=10)


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--page-size", "-2"], "page_size"),
        (["--outage", "0"], "seconds"),
        (["--fault-only", "device"], "only"),
        (["--seed-devices", "-1"], "seed_devices"),
    ],
)
def test_cli_bad_variant_flags_exit_with_message(flags, named):
    import subprocess
    import sys

    from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import SCRIPT

    result = subprocess.run(
        [sys.executable, SCRIPT, "--port", "0"] + flags,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=10,
        check=False,
    )
    assert result.returncode == 2 and "cannot start" in result.stderr and named in result.stderr
