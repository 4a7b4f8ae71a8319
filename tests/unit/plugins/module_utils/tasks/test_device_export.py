# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device list to a file (device_export.py): each record written as its line as the list is decoded (streamed or
whole), never held; the list's checks (shapes, shifted pages, repeated ids) still decide, through the real client
over pages; the file written through a 0600 temporary file that replaces dest only when the list is whole, CSV
cells neutralised."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import json
import os
import stat

import pytest
import requests

from ansible_collections.netaccess.nac.plugins.module_utils.common.csv_cells import csv_cell
from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.http.response import Reply
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacResponseError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import ArrayReader, ListDecoder
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import repeated_ids_warning
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_export import (
    DeviceFile,
    IdSet,
    Line,
    PageSink,
    line_keeper,
    write_file,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import DEVICES, PAGE1, PAGE2, URL, paged, site_client

RECORDS = [
    dict(id=1, hostname="cam-01", group=dict(id=3, name="Cameras"), profile="Camera", macs=["02:00"], ips=[]),
    dict(id=2, hostname="=cmd|' /C calc'!A0", group="G,1", profile=None, macs=[], ips=["10.0.0.1", "10.0.0.2"]),
    dict(id=3, hostname="esc\x1b[31m\u202e", tags=[dict(id=9, hostname="nested")]),
]


def decoded(form, size=7):
    body = json.dumps(RECORDS).encode()
    reader = ArrayReader(line_keeper(form), "utf-8")
    for pos in range(0, len(body), size):
        assert reader.feed(body[pos : pos + size]) == b""
    assert reader.finish() == b""
    return reader.result()


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_each_record_is_held_as_its_json_line_wherever_the_chunks_end(size):
    lines = decoded("jsonl", size)
    assert all(isinstance(line, Line) for line in lines)
    assert [json.loads(line.text) for line in lines] == RECORDS  # the nested device-like object too
    assert [(line["id"], line.get("hostname")) for line in lines] == [
        (1, "cam-01"),
        (2, RECORDS[1]["hostname"]),
        (3, RECORDS[2]["hostname"]),
    ]


def test_an_item_that_is_no_record_is_kept_for_the_shape_checks():
    keep = line_keeper("jsonl")
    assert keep(dict(hostname="no-id")) == dict(hostname="no-id") and keep(5) == 5


def test_the_csv_is_read_back_with_formulas_and_control_characters_neutralised(tmp_path):
    dest = tmp_path / "devices.csv"
    assert write_file(str(dest), "csv", RECORDS) == 3
    assert stat.S_IMODE(os.stat(str(dest)).st_mode) == 0o600
    with open(str(dest), newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["id", "hostname", "group", "profile", "macs", "ips"]
    assert rows[1] == ["1", "cam-01", "Cameras", "Camera", "02:00", ""]
    assert rows[2] == ["2", "'=cmd|' /C calc'!A0", "G,1", "", "", "10.0.0.1 10.0.0.2"]
    assert rows[3][1] == "esc\\x1b[31m\\u202e" and "\x1b" not in dest.read_text(encoding="utf-8")


def test_a_whole_reply_decoded_at_once_gives_the_same_lines():
    response = requests.Response()
    response.status_code, response.encoding = 200, "utf-8"
    lines = ListDecoder(line_keeper("jsonl")).decode(Reply(response, json.dumps(RECORDS).encode()))
    assert [json.loads(line.text) for line in lines] == RECORDS


def export(tmp_path, routes, form="jsonl", old="old\n"):
    """The list of ``routes`` exported to dest (which held ``old``), as nac_device_info does: (dest, the warning of
    repeated ids, the number written), or (dest, None, the error raised)."""
    dest = tmp_path / ("devices." + form)
    dest.write_text(old)
    client, _site = site_client(routes)
    try:
        with DeviceFile(str(dest), form) as into:
            assert client.list_devices(into=into) is into
            warning = repeated_ids_warning(into.repeated_ids())
            return dest, warning, into.commit()
    except NacResponseError as error:
        return dest, None, error


def records_of(dest):
    return [json.loads(line) for line in dest.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_every_page_is_written_and_dest_replaced_whole_with_mode_0600(tmp_path, form):
    dest, warning, written = export(tmp_path, paged(headers={"X-Total-Count": "150"}), form)
    assert written == 150 and warning is None
    if form == "jsonl":
        assert records_of(dest) == DEVICES
    else:
        with open(str(dest), newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert rows[1:] == [[str(d["id"]), d["hostname"], "", "", "", ""] for d in DEVICES]
    assert stat.S_IMODE(os.stat(str(dest)).st_mode) == 0o600
    assert os.listdir(str(tmp_path)) == [dest.name]  # no temporary file left


def test_a_record_is_written_as_soon_as_it_is_decoded_and_never_held(tmp_path):
    body = json.dumps(DEVICES).encode()
    with DeviceFile(str(tmp_path / "d.jsonl"), "jsonl") as into:
        page = PageSink(into)
        reader = ArrayReader(into.keep, "utf-8", page)
        reader.feed(body[: len(body) // 2])
        into.flushed()
        with open(into.temporary, encoding="utf-8") as handle:
            written = [json.loads(line) for line in handle]
        assert 50 < len(written) < 150 and written == DEVICES[: len(written)]
        assert reader.feed(body[len(body) // 2 :]) == b"" and reader.finish() == b"" and reader.result() is page
        assert len(page) == 150 and list.__len__(page) == 0  # counted, not held
        assert into.add(page, 1, {}, True) is None and into.commit() == 150
    assert records_of(tmp_path / "d.jsonl") == DEVICES


def test_a_page_read_again_replaces_what_its_first_reading_wrote(tmp_path):
    with DeviceFile(str(tmp_path / "d.jsonl"), "jsonl") as into:
        first = PageSink(into)
        first.extend(into.keep(dict(d)) for d in PAGE1)
        into.add(first, 1, {}, False)
        broken = PageSink(into)  # a reading of page 2 that broke off (a retry follows)
        broken.extend(into.keep(dict(d)) for d in PAGE2[:10])
        again = PageSink(into)
        again.extend(into.keep(dict(d)) for d in PAGE2)
        into.add(again, 2, {}, True)
        assert into.commit() == 150
    assert records_of(tmp_path / "d.jsonl") == DEVICES


def test_pages_that_shifted_are_read_again_and_the_file_holds_the_second_reading(tmp_path):
    routes = paged()
    shifted = [PAGE1[-1]] + PAGE2  # the last device of page 1 again on page 2: read again
    routes[URL + "/api/device?page=2"] = (200, shifted, [])
    calls = []

    class Once(dict):
        def get(self, url, default=None):
            calls.append(url)
            if url.endswith("page=2") and calls.count(url) > 1:
                return (200, PAGE2, [])
            return dict.get(self, url, default)

    dest, _warning, written = export(tmp_path, Once(routes))
    assert written == 150 and records_of(dest) == DEVICES and len(calls) == 4


def test_pages_that_shift_twice_fail_and_leave_dest_as_it_was(tmp_path):
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, [PAGE1[0]] + PAGE2, [])
    dest, _warning, error = export(tmp_path, routes)
    assert "the same record (id 1, 'dev-001') was listed on two pages" in str(error)
    assert dest.read_text() == "old\n" and os.listdir(str(tmp_path)) == [dest.name]


def test_a_repeated_id_with_other_data_is_no_shift_and_is_named_with_both_hostnames(tmp_path):
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, PAGE2 + [{"id": 7, "hostname": "other"}], [])
    dest, warning, written = export(tmp_path, routes, "csv")
    assert written == 151 and "(id 7: dev-007, other)" in warning


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"hostname": "no-id"}, "item 120 has no int 'id'"),
        ({"id": 9999, "hostname": "x" * 300}, "item 120 (id 9999) has a hostname of 300 characters"),
    ],
)
def test_a_bad_record_fails_the_list_naming_its_place_and_dest_is_left_as_it_was(tmp_path, bad, message):
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, PAGE2[:20] + [bad] + PAGE2[20:], [])
    dest, _warning, error = export(tmp_path, routes)
    assert message in str(error)
    assert dest.read_text() == "old\n" and os.listdir(str(tmp_path)) == [dest.name]


def test_a_page_that_is_not_a_list_leaves_dest_as_it_was(tmp_path):
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, {"items": PAGE2}, [])
    dest, _warning, error = export(tmp_path, routes)
    assert "expected a JSON array, got an object with 'items'" in str(error)
    assert dest.read_text() == "old\n" and os.listdir(str(tmp_path)) == [dest.name]


def test_the_id_set_finds_repeats_among_any_integers_in_a_bit_each():
    ids = IdSet()
    assert ids.add([5, 1, 2**70, -3]) == []
    assert ids.add([1, 2**70, -3, 6, 6, 1 << 40]) == [1, 2**70, -3, 6]
    assert len(ids.bits) == 1 and ids.others == {2**70, -3, 1 << 40}  # 0-7: one byte
    ids.add(range(1000000))
    assert len(ids.bits) <= 2 * 1000000 // 8 and ids.size() < 300000


def test_an_unwritable_or_directory_dest_is_named_before_any_request(tmp_path):
    with pytest.raises(NacConfigError, match="dest .*missing.* cannot be written"):
        DeviceFile(str(tmp_path / "missing" / "d.jsonl"), "jsonl")
    with pytest.raises(NacConfigError, match="is a directory"):
        DeviceFile(str(tmp_path), "jsonl")


@pytest.mark.parametrize(
    "value, cell",
    [
        ("cam-01", "cam-01"),  # the usual cell, as it is
        ("", ""),
        (None, ""),
        ("-cmd", "'-cmd"),
        ("\u3000=1+1", "'\u3000=1+1"),  # a formula after Unicode whitespace
        ("a\u2028b", "a\\u2028b"),  # a line separator escaped
        ("a\x1cb", "a\\x1cb"),
        ("a,b", '"a,b"'),
        ('say "x"', '"say ""x"""'),
        ("two\nlines", '"two\nlines"'),
        (b"\xff=", "\ufffd="),
    ],
)
def test_a_cell_is_written_by_the_one_rule_whether_it_needs_changing_or_not(value, cell):
    assert csv_cell(value) == cell
