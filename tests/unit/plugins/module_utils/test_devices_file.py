# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device list to a file (device_export.py): each record held as its line, as the list is decoded (streamed or
whole), the file written through a 0600 temporary file that replaces dest, CSV cells neutralised."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import json
import os
import stat

import pytest
import requests

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.http.reply import Reply
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import ArrayReader, ListDecoder
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_export import Line, line_keeper, write_lines

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
    assert write_lines(str(dest), "csv", decoded("csv")) == 3
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


def test_dest_is_replaced_whole_and_an_unwritable_one_is_named(tmp_path):
    dest = tmp_path / "devices.jsonl"
    dest.write_text("old\n")
    assert write_lines(str(dest), "jsonl", decoded("jsonl")) == 3
    assert [json.loads(line) for line in dest.read_text(encoding="utf-8").splitlines()] == RECORDS
    assert os.listdir(str(tmp_path)) == ["devices.jsonl"]  # no temporary file left
    with pytest.raises(NacConfigError, match="dest .*missing.* cannot be written"):
        write_lines(str(tmp_path / "missing" / "d.jsonl"), "jsonl", [])
    with pytest.raises(NacConfigError, match="is a directory"):
        write_lines(str(tmp_path), "jsonl", [])
