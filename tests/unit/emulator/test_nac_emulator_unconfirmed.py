# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the emulator's servers that confirm nothing (README, "Servers that confirm nothing"): a silently
capped list, a lagging read replica, a stored normalised name, a racing client's twin, a committed creation
answered with a redirect, pages that shift while they are read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import signal

import pytest
import requests

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import (
    CREATION_REDIRECTS,
    VARIANT_EVENTS,
    stored_hostname,
)
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import Api, start_cli

CAMERA = dict(group="Cameras", profile="Camera")
NONE_HAPPENED = dict((event, 0) for event in VARIANT_EVENTS)


def names(records):
    return [record["hostname"] for record in records]


def page(api, number, per_page):
    reply = api.get("/api/device?page=%d&per_page=%d" % (number, per_page))
    assert reply.status_code == 200, reply.text
    return reply


def test_off_by_default(emu, api):
    settings = emu.settings()
    assert dict((key, settings[key]) for key in ("list_cap", "list_lag", "race_twins", "creation_redirect")) == {
        "list_cap": 0,
        "list_lag": 0,
        "race_twins": 0,
        "creation_redirect": 0,
    }
    assert (settings["stored_hostname"], settings["page_shift"], settings["page_shifts"]) == ("as-sent", "none", 1)
    reply = api.create(hostname="Plain-01.lab.example", **CAMERA)
    assert reply.status_code == 201 and reply.json()["hostname"] == "Plain-01.lab.example"
    assert api.devices() == emu.records()
    assert emu.variant_counts() == NONE_HAPPENED
    assert requests.get(emu.url + "/_emulator/variants", timeout=10).json() == NONE_HAPPENED


def test_a_capped_list_shows_the_first_n_without_a_sign(emu, api):
    emu.settings(list_cap=3)
    reply = api.get("/api/device")
    assert reply.json() == emu.records()[:3] and len(emu.records()) > 3
    assert not [name for name in reply.headers if name.lower() in ("link", "x-total-count", "content-range")]
    created = api.create(hostname="capped-01", **CAMERA)
    assert created.status_code == 201 and created.json()["id"] not in [r["id"] for r in api.devices()]
    emu.settings(page_size=2)  # paged as well: the pages of the capped list, its total the cap
    assert page(api, 2, 2).headers["X-Total-Count"] == "3" and len(page(api, 2, 2).json()) == 1
    assert emu.variant_counts()["capped_lists"] == 4
    emu.reset()
    assert len(api.devices()) == len(emu.records())


def test_a_lagging_replica_lists_what_was_written_k_seconds_ago(emu, api):
    emu.settings(list_lag=10, allow_duplicate_hostnames=True)
    before = api.devices()
    first = api.create(hostname="lag-01", **CAMERA).json()
    assert api.devices() == before  # the write went to the primary, the list comes from the replica
    again = api.create(hostname="lag-01", **CAMERA)  # the primary knows it: a duplicate when they are allowed
    assert again.status_code == 201
    assert api.status(first["id"])["status"] == "UNAUTHENTICATED"  # the fire reaches the primary
    emu.advance_clock(10)
    assert names(api.devices()).count("lag-01") == 2
    assert emu.variant_counts()["lagging_lists"] == 1
    emu.settings(allow_duplicate_hostnames=False)
    assert api.create(hostname="lag-01", **CAMERA).status_code == 409


@pytest.mark.parametrize(
    "rule, stored",
    [
        ("as-sent", "Cam-77.Lab.Example"),
        ("lower", "cam-77.lab.example"),
        ("first-label", "Cam-77"),
        ("first-label-lower", "cam-77"),
    ],
)
def test_a_server_that_stores_a_normalised_name_answers_with_it(emu, api, rule, stored):
    assert stored_hostname("Cam-77.Lab.Example", rule) == stored
    emu.settings(stored_hostname=rule, allow_duplicate_hostnames=True)
    replies = [api.create(hostname="Cam-77.Lab.Example", **CAMERA) for _run in range(3)]
    assert [reply.status_code for reply in replies] == [201] * 3
    assert [reply.json()["hostname"] for reply in replies] == [stored] * 3
    assert names(api.devices()).count(stored) == 3  # three runs, three devices of the stored name
    emu.settings(allow_duplicate_hostnames=False)
    refused = api.create(hostname="Cam-77.Lab.Example", **CAMERA)
    assert refused.status_code == 409 and stored in refused.json()["message"]


def test_a_racing_client_creates_a_twin_before_the_first_post_of_a_name(emu, api):
    emu.settings(race_twins=2, allow_duplicate_hostnames=True)
    assert api.devices() == emu.records()  # our list: no race-01 yet
    first = api.create(hostname="race-01", macs=["02:00:00:20:00:99"], **CAMERA)
    assert first.status_code == 201
    twins = [r for r in emu.records() if r["hostname"] == "race-01"]
    assert [r["id"] for r in twins] == [first.json()["id"] - 1, first.json()["id"]] and twins[0]["macs"] == []
    api.create(hostname="race-01", **CAMERA)  # a name is raced once
    assert names(emu.records()).count("race-01") == 3
    emu.settings(allow_duplicate_hostnames=False)
    refused = api.create(hostname="race-02", **CAMERA)  # the twin won: ours is a conflict
    assert refused.status_code == 409 and "race-02 already exists" in refused.json()["message"]
    assert api.create(hostname="race-03", **CAMERA).status_code == 201  # only the first 2 names are raced
    assert emu.variant_counts()["twins"] == 2 and names(emu.records()).count("race-03") == 1


@pytest.mark.parametrize("status", [code for code in CREATION_REDIRECTS if code])
def test_a_committed_creation_answered_with_a_redirect(emu, api, status):
    emu.settings(creation_redirect=status)
    reply = api.post("/api/device", dict(hostname="moved-01", **CAMERA), allow_redirects=False)
    assert reply.status_code == status and reply.content == b""
    created = [r for r in emu.records() if r["hostname"] == "moved-01"]
    assert len(created) == 1 and reply.headers["Location"] == "%s/api/device/%d" % (emu.url, created[0]["id"])
    assert api.post("/api/device", dict(hostname="moved-01", **CAMERA)).status_code == 409  # it committed
    assert emu.variant_counts()["redirects"] == 1


def test_a_device_inserted_at_the_front_while_the_pages_are_read(emu, api):
    emu.settings(page_size=2, page_shift="insert-front")
    first = page(api, 1, 2)
    second = page(api, 2, 2)  # the insertion pushes every record one place down
    assert second.json()[0] == first.json()[1]  # the same record on two pages
    assert (first.headers["X-Total-Count"], second.headers["X-Total-Count"]) == ("4", "5")
    assert emu.records()[0]["hostname"] == "shifted-000001" and api.devices()[0]["hostname"] == "shifted-000001"
    assert page(api, 2, 2).json() == emu.records()[2:4]  # one shift only (page_shifts 1)
    emu.settings(page_shifts=2)  # counted again from a change
    page(api, 2, 2)
    page(api, 3, 2)
    assert names(emu.records())[:2] == ["shifted-000003", "shifted-000002"]  # newest first
    assert emu.variant_counts()["shifts"] == 3


def test_the_first_device_deleted_while_the_pages_are_read(emu, api):
    emu.settings(page_size=2, page_shift="delete-front")
    listed = emu.records()
    first = page(api, 1, 2)
    second = page(api, 2, 2)
    assert second.json() == listed[3:5]  # listed[2] moved to page 1: never read
    assert (first.headers["X-Total-Count"], second.headers["X-Total-Count"]) == ("4", "3")
    assert emu.records() == listed[1:]
    emu.settings(page_style="link", page_shift="delete-front", page_shifts=0)
    page(api, 2, 2)
    assert emu.records() == listed[1:]


def test_bad_settings_are_refused_naming_each(emu, api):
    reply = requests.post(
        emu.url + "/_emulator/settings",
        json=dict(
            list_cap=-1,
            list_lag="10",
            stored_hostname="fqdn",
            race_twins=True,
            creation_redirect=304,
            page_shift="sideways",
            page_shifts=1.5,
        ),
        timeout=10,
    )
    assert reply.status_code == 400
    assert sorted(reply.json()["fields"]) == [
        "creation_redirect",
        "list_cap",
        "list_lag",
        "page_shift",
        "page_shifts",
        "race_twins",
        "stored_hostname",
    ]
    assert emu.settings()["list_cap"] == 0


def test_cli_flags(tmp_path):
    process, port = start_cli(
        tmp_path,
        "--quiet",
        "--list-cap",
        "2",
        "--list-lag",
        "3",
        "--stored-hostname",
        "first-label",
        "--race-twins",
        "4",
        "--creation-redirect",
        "303",
        "--page-shift",
        "delete-front",
        "--page-shifts",
        "5",
    )
    try:
        url = "http://127.0.0.1:%d" % port
        settings = requests.get(url + "/_emulator/settings", timeout=10).json()
        listed = Api(url).get("/api/device").json()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert len(listed) == 2
    assert dict((key, settings[key]) for key in ("list_cap", "list_lag", "stored_hostname", "race_twins")) == {
        "list_cap": 2,
        "list_lag": 3.0,
        "stored_hostname": "first-label",
        "race_twins": 4,
    }
    assert (settings["creation_redirect"], settings["page_shift"], settings["page_shifts"]) == (303, "delete-front", 5)
