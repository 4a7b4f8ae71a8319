# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device lists held compactly (device_list.py): the same list, the same errors and the same checks (pages,
partial-list signs, item shapes, repeated ids, lookalike names) as a list of whole records, in a fraction
of the memory. Through the real client over a transport that answers by URL (no network)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import json
import threading
import tracemalloc
import unicodedata

import pytest
import requests

from ansible_collections.netaccess.nac.plugins.module_utils.http.response import Reply
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacResponseError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import Device, decode_reply, device_keeper
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import is_one_of, select
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import Records
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import resolve
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    CREATED,
    EXISTING,
    FAILED,
    device_specs,
    ensure_devices,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import DEVICES, PAGE2, SIGNS, URL, paged, site_client

FIELDS = dict(group="Cameras", profile="cam", macs=["00:11:22:33:44:55"], ips=["10.0.0.1"], status="ok")


def pairs(records):
    return [(record["id"], record["hostname"]) for record in records]


def listed(body, content_type="application/json", **kwargs):
    """list_devices(**kwargs) of a one-page list whose body is ``body`` (bytes as they are, else JSON)."""
    body = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    client, site = site_client({URL + "/api/device": (200, body, {"Content-Type": content_type})})
    return client.list_devices(**kwargs)


def outcome(call):
    try:
        return "ok", call()
    except NacResponseError as error:
        return "error", str(error)


# -- the same list, the same errors ---------------------------------------------------------------

BODIES = [
    b"[]",
    b" [ ] \n",
    json.dumps([dict(FIELDS, id=n, hostname="cam-%d" % n) for n in range(5)]).encode(),
    json.dumps([dict(FIELDS, id=n, hostname="cam-%d" % n) for n in range(5)], indent=2).encode(),  # whitespace
    json.dumps([dict(FIELDS, id=n, hostname="cam-%d" % n) for n in range(3)], separators=(",", ":")).encode(),
    '[{"id": 1, "hostname": "café", "group": {"id": 4, "hostname": "nested"}}]'.encode("utf-8"),
    '[{"id": 1, "hostname": "x", "hostname": "dup-key"}]'.encode(),  # the last one wins, as in json.loads
    b'[{"id": 1, "hostname": "a", "score": NaN}]',
    # bad items, kept as they are for the same shape error, with the same place
    b'[{"hostname": "no-id"}]',
    b'[{"id": 1, "hostname": "a"}, {"id": true, "hostname": "b"}]',
    b'[{"id": 1, "hostname": "a"}, {"id": 2}]',
    b'[{"id": 1, "hostname": "a"}, {"id": 2, "hostname": 7}]',
    b'[{"id": 1.0, "hostname": "a"}]',
    b'[{"id": "1", "hostname": "a"}]',
    b"[1, 2]",
    b'[{"id": 1, "hostname": "a"}, [{"id": 2, "hostname": "b"}]]',  # a device within a bad item
    b'[{"hostname": "no-id", "parent": {"id": 2, "hostname": "b"}}]',
    b'[["id", 1]]',
    b"[null]",
    # not one JSON array: decoded whole (server_text.decode_json), for the same message
    b'{"items": [], "next": "?page=2"}',
    b'{"id": 1}',
    b'"just a string"',
    b"[1,]",
    b"[1 2]",
    b'[{"id": 1, "hostname": "a"}',
    b'[{"id": 1, "hostname": "a"}] trailing',
    b'[{"id": 1, "hostname": "a"}]]',
    b"[" * 100000 + b"]" * 100000,  # nested too deeply
    b"<html><body>Login</body></html>",
    b'\xef\xbb\xbf[{"id": 1, "hostname": "bom"}]',
    b'[{"id": 1, "hostname": "caf\xe9"}]',  # not UTF-8
]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_a_compact_list_is_the_same_list_with_the_same_errors(body):
    whole = outcome(lambda: listed(body))
    held = outcome(lambda: listed(body, compact=True))
    assert held[0] == whole[0]
    if whole[0] == "error":
        assert held[1] == whole[1]
    else:
        assert pairs(held[1]) == pairs(whole[1])
        assert all(isinstance(record, Device) for record in held[1])


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "text/plain", "application/json"])
def test_the_text_is_decoded_as_requests_decodes_it(content_type):
    body = '[{"id": 1, "hostname": "café"}]'.encode("utf-8")
    assert pairs(listed(body, content_type, compact=True)) == pairs(listed(body, content_type))


def test_records_asked_for_are_kept_whole_and_equal():
    records = [dict(FIELDS, id=n, hostname="cam-%d" % n, parent=dict(id=n + 1, hostname="x")) for n in range(10)]
    held = listed(records, compact=True, keep_whole=is_one_of(["CAM-3"], [7]))
    assert held[3] == records[3] and held[7] == records[7]
    assert isinstance(held[3], dict) and isinstance(held[7], dict)
    assert [type(record) for record in held].count(Device) == 8
    assert pairs(held) == pairs(records)


def test_a_device_reads_as_a_record_and_nothing_else():
    device = Device(7, "cam-7")
    assert (device["id"], device["hostname"], device.get("hostname")) == (7, "cam-7", "cam-7")
    assert device.get("group", "-") == "-"
    with pytest.raises(KeyError):
        device["group"]  # pylint: disable=pointless-statement
    assert repr(device) == "Device(id=7, hostname='cam-7')"
    assert device_keeper()({"id": True, "hostname": "x"}) == {"id": True, "hostname": "x"}


def test_only_a_well_formed_record_becomes_a_device_so_a_list_of_devices_needs_no_shape_check():
    keep = device_keeper()
    assert isinstance(keep({"id": 1, "hostname": "h" * 253}), Device)
    assert keep({"id": 2, "hostname": "h" * 254}) == {"id": 2, "hostname": "h" * 254}  # named by the client
    records = Records("id")
    records.add([Device(1, "a"), Device(2, "b")], 1, {}, True)
    assert list(records.indexed()) == []  # every record a Device: nothing to check
    records.add([{"id": 3, "hostname": "c"}], 2, {}, True)
    assert [index for index, _record in records.indexed()] == [0, 1, 2]


# -- pages, partial lists, the place of a bad item --------------------------------------------------


@pytest.mark.parametrize("relative", [False, True])
def test_the_pages_of_a_compact_list_are_read_in_order_and_joined(relative):
    client, site = site_client(paged(relative=relative, headers={"X-Total-Count": "150"}))
    assert pairs(client.list_devices(compact=True)) == pairs(DEVICES)
    assert site.urls() == [URL + "/api/device", URL + "/api/device?page=2"]


@pytest.mark.parametrize("headers, fragment", SIGNS)
def test_each_sign_of_a_partial_list_fails_the_same_when_compact(headers, fragment):
    messages = []
    for kwargs in (dict(), dict(compact=True)):
        client, site = site_client({URL + "/api/device": (200, DEVICES[:100], headers)})
        with pytest.raises(NacResponseError) as raised:
            client.list_devices(**kwargs)
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and fragment in messages[1]


def test_a_bad_record_on_a_later_page_is_named_with_its_place_in_the_whole_compact_list():
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, PAGE2[:3] + [{"hostname": "no-id"}], {})
    client, site = site_client(routes)
    with pytest.raises(NacResponseError, match="item 103 has no int 'id'"):
        client.list_devices(compact=True)


def test_a_loop_of_pages_fails_the_same_when_compact():
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, PAGE2, {"Link": '<%s/api/device>; rel="next"' % URL})
    client, site = site_client(routes)
    with pytest.raises(NacResponseError, match="a page already read"):
        client.list_devices(compact=True)


# -- repeated ids and lookalike names ---------------------------------------------------------------

LOOKS = [
    dict(FIELDS, id=1, hostname="strasse-01"),
    dict(FIELDS, id=2, hostname="Kiosk-01"),
    dict(FIELDS, id=3, hostname=unicodedata.normalize("NFD", "café")),
    dict(FIELDS, id=3, hostname="cam-03"),  # a repeated id
    dict(FIELDS, id=5, hostname="ｃａｍ-05"),
]


@pytest.mark.parametrize(
    "choice",
    [
        dict(hostnames=["straße-01", "\u212aiosk-01", "café", "cam-05", "cam-03"]),
        dict(device_ids=[3, 5, 9]),
        dict(all_devices=True),
    ],
)
def test_a_status_query_resolves_a_compact_list_as_a_whole_one(choice):
    whole = resolve(listed(LOOKS), **choice)
    held = resolve(listed(LOOKS, compact=True), **choice)
    assert held == whole
    repeated = "same id for several devices (id 3: %s, cam-03)" % LOOKS[2]["hostname"]
    assert any(repeated in warning for warning in held[1])


def test_nac_device_info_selects_whole_records_from_a_compact_list():
    hostnames, ids = ["cam-05", "cafe\u0301"], [1]
    records = listed(LOOKS, compact=True, keep_whole=is_one_of(hostnames, ids))
    devices, missing = select(records, hostnames, ids)
    assert devices == [LOOKS[0], LOOKS[2]] and missing == ["cam-05"]


def test_ensure_keeps_whole_only_what_looks_like_a_spec_and_decides_the_same():
    specs = device_specs(
        [
            dict(hostname="STRASSE-01", group="Cameras", profile="other"),  # exists, differs
            dict(hostname="straße-01", group="g", profile="p"),  # a lookalike: not created
            dict(hostname="cam-05", group="g", profile="p"),  # a lookalike (NFKC): not created
            dict(hostname="new-01", group="g", profile="p"),
        ]
    )
    warned = []
    keep_whole = is_one_of([spec["hostname"] for spec in specs], loosely=True)
    kept = []

    def list_devices():
        kept.append(listed(LOOKS, compact=True, keep_whole=keep_whole))
        return kept[-1]

    outcomes = ensure_devices(specs, list_devices, lambda body: None, check_mode=True, warn=warned.append)
    assert [o.state for o in outcomes] == [EXISTING, FAILED, FAILED, CREATED]
    assert outcomes[0].record == LOOKS[0] and "differs from the request: profile" in outcomes[0].warnings[0]
    assert "strasse-01 (id 1) is listed" in outcomes[1].error and "ｃａｍ-05 (id 5)" in outcomes[2].error
    assert [type(record) for record in kept[0]] == [dict, Device, Device, Device, dict]
    assert "id 3:" in warned[0]


# -- memory ---------------------------------------------------------------------------------------


def test_the_reply_is_dropped_once_decoded_and_kept_for_a_message_otherwise():
    response = requests.Response()
    response.status_code = 200
    reply = Reply(response, json.dumps([dict(FIELDS, id=1, hostname="a")]).encode())
    assert pairs(decode_reply(reply, device_keeper())) == [(1, "a")]
    assert reply.content is None
    reply.content = b"[1] x"
    with pytest.raises(ValueError):
        decode_reply(reply, device_keeper())
    assert reply.content == b"[1] x" and reply.text == "[1] x"


def test_a_compact_list_takes_a_fraction_of_the_memory_of_whole_records():
    body = json.dumps([dict(FIELDS, id=10000 + n, hostname="device-%06d" % n) for n in range(20000)]).encode()
    peaks = []
    for kwargs in (dict(), dict(compact=True)):
        gc.collect()
        tracemalloc.start()
        records = listed(body, **kwargs)
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        peaks.append(held)
        assert len(records) == 20000
        del records
    assert peaks[1] < peaks[0] / 3, peaks


def test_how_a_list_is_decoded_is_the_calls_own_even_while_another_thread_reads_it_whole():
    body = json.dumps([dict(FIELDS, id=n, hostname="d-%d" % n) for n in range(50)]).encode()
    client, site = site_client({URL + "/api/device": (200, body, {"Content-Type": "application/json"})})
    kinds = {}

    def read(compactly):
        kinds[compactly] = set(type(r) for dummy in range(20) for r in client.list_devices(compact=compactly))

    threads = [threading.Thread(target=read, args=(flag,)) for flag in (True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert kinds == {True: {Device}, False: {dict}}
