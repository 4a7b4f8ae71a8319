# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A compact list decoded as it arrives (device_list.ArrayReader): the same items as decode_reply wherever the chunks
end, the same errors, linear work for an item cut off again and again, and neither the body nor its text held
whole. The reader directly, and through the real client over a transport that answers by URL (no network)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import json
import math
import random
import tracemalloc

import pytest
import requests

from ansible_collections.netaccess.nac.plugins.module_utils.http.response import Reply
from ansible_collections.netaccess.nac.plugins.module_utils.nac import device_list
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacResponseError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import (
    HEAD,
    ArrayReader,
    Device,
    decode_reply,
    device_keeper,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import is_one_of
from ansible_collections.netaccess.nac.tests.unit.helpers import URL, site_client

SMALL = (
    '[{"id": 1, "hostname": "caf\\u00e9 \\"q\\" \\\\ \\ud83d\\ude00 é😀"},'
    '{"id": 22, "hostname": "b", "group": {"id": 4, "hostname": "nested"}, "macs": ["a", {"x": [1, 2.5e3]}]},'
    ' 345 , -6.5e-1, "s\\n", true, null, [], {}, [{"id": 7, "hostname": "within"}],'
    '{"hostname": "no-id", "parent": {"id": 8, "hostname": "p"}}, {"id": 9, "hostname": "last"}]'
)


def kept(value):
    """A value with each Device as a comparable tuple."""
    if isinstance(value, Device):
        return ("Device", value.id, value.hostname)
    if isinstance(value, list):
        return [kept(item) for item in value]
    if isinstance(value, dict):
        return dict((key, kept(item)) for key, item in value.items())
    return value


def today(body, encoding="utf-8", form=None):
    """What decode_reply (the body held whole) makes of ``body``."""
    response = requests.Response()
    response.status_code, response.encoding = 200, encoding
    return kept(decode_reply(Reply(response, body), form or device_keeper()))


def fed(body, sizes, encoding="utf-8", form=None):
    """The reader fed ``body`` in chunks of the given sizes (repeated), and the bytes it left to read whole."""
    reader = ArrayReader(form or device_keeper(), encoding)
    rest, pos, index = [], 0, 0
    while pos < len(body):
        size = sizes[index % len(sizes)]
        rest.append(reader.feed(body[pos : pos + size]))
        pos, index = pos + size, index + 1
    rest.append(reader.finish())
    return reader, b"".join(rest)


def split_at(body, cuts):
    """The sizes of the chunks of ``body`` cut at ``cuts``."""
    ends = sorted(set(cuts)) + [len(body)]
    return [end - start for start, end in zip([0] + ends[:-1], ends) if end > start]


# -- the same items wherever the chunks end ----------------------------------------------------------


def test_a_small_array_fed_one_byte_at_a_time_is_decoded_as_today():
    body = SMALL.encode("utf-8")
    reader, rest = fed(body, [1])
    assert reader.streaming and rest == b""
    assert kept(reader.result()) == today(body)
    assert ("Device", 1, 'café "q" \\ \U0001f600 é\U0001f600') in kept(reader.result())


def test_a_small_array_split_in_two_at_every_position_is_decoded_as_today():
    body = SMALL.encode("utf-8")
    expected = today(body)
    for cut in range(1, len(body)):
        reader, rest = fed(body, split_at(body, [cut]))
        assert (kept(reader.result()), rest) == (expected, b""), cut


def test_a_small_array_in_random_splits_is_decoded_as_today():
    body = SMALL.encode("utf-8")
    expected = today(body)
    chance = random.Random(16)
    for attempt in range(300):
        cuts = chance.sample(range(1, len(body)), chance.randint(1, 40))
        reader, rest = fed(body, split_at(body, cuts))
        assert (kept(reader.result()), rest) == (expected, b""), (attempt, cuts)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-16", "utf-8-sig"])
def test_a_body_in_another_encoding_is_guessed_as_requests_guesses_it(codec):
    body = SMALL.encode(codec)
    for sizes in ([1], [3], [7, 2], [len(body)]):
        reader, rest = fed(body, sizes, encoding=None)
        assert (kept(reader.result()), rest) == (today(body, None), b""), sizes


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        " [ ] ",
        "\r\n\t[\n]\n",
        '\n\t [\r\n {"id": 1, "hostname": "a"}\t,\n\n{"id": 2 ,"hostname":"b"}\r\n]\r\n  ',
        '[{"id":1,"hostname":"a"},{"id":2,"hostname":"b"}]',
        "[1,2,3]",
    ],
)
def test_whitespace_and_empty_arrays_byte_by_byte(text):
    body = text.encode()
    reader, rest = fed(body, [1])
    assert (kept(reader.result()), rest) == (today(body), b"")


def test_items_asked_for_whole_and_devices_within_items_are_as_today():
    records = [dict(id=n, hostname="cam-%d" % n, parent=dict(id=n + 1, hostname="x")) for n in range(10)]
    body = json.dumps(records + [[records[0]], {"hostname": "no-id", "in": records[1]}]).encode()
    form = device_keeper(is_one_of(["CAM-3"], [7]))
    for sizes in ([1], [5, 11], [len(body)]):
        reader, rest = fed(body, sizes, form=form)
        assert kept(reader.result()) == today(body, form=form)
    assert kept(reader.result())[3] == records[3] and kept(reader.result())[10] == [records[0]]


# -- what is not read here: read whole ---------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"items": [{"id": 1, "hostname": "a"}]}',
        b'  "[not an array"',
        b"<html>[</html>",
        b"",
        b" \n ",
        b'\xef\xbb\xbf[{"id": 1, "hostname": "bom"}]',  # the BOM of a declared utf-8: an error, as when read whole
    ],
)
def test_a_body_that_does_not_begin_with_a_bracket_is_left_whole_to_be_read_as_before(body):
    for sizes in ([1], [len(body) or 1]):
        reader, rest = fed(body, sizes)
        assert reader.streaming is False and rest == body


@pytest.mark.parametrize("body", [b"[1,]", b"[1 2]", b'[{"id": 1}', b"[1] x", b"[1]]", b'[{"a": tru}]'])
def test_a_small_body_that_fails_here_is_left_whole_to_fail_as_before(body):
    reader, rest = fed(body, [1])
    assert reader.streaming is False and rest == body


# -- large bodies: the same errors, through the client --------------------------------------------------------


def listed(body, content_type="application/json", **kwargs):
    client, site = site_client({URL + "/api/device": (200, body, {"Content-Type": content_type})})
    return client.list_devices(**kwargs)


def outcome(call):
    try:
        return "ok", [(record["id"], record["hostname"]) for record in call()]
    except NacResponseError as error:
        return "error", str(error)


def many(count, start=0, note=40):
    return ['{"id": %d, "hostname": "dev-%06d", "note": "%s"}' % (n, n, "x" * note) for n in range(start, count)]


LARGE = [
    "[" + ", ".join(many(3000)) + ', {"id": 7, hostname: "bad"}, ' + ", ".join(many(6000, 3000)) + "]",  # bad item
    "[" + ", ".join(many(3000)),  # cut off
    "[" + ", ".join(many(3000)) + ",]",
    "[" + ", ".join(many(3000)) + "] trailing",
    "[" + ", ".join(many(3000)) + ', "\\x"]',
    "[" * 100000 + "]" * 100000,
]


@pytest.mark.parametrize("text", LARGE, ids=range(len(LARGE)))
def test_a_large_body_that_is_not_an_array_fails_with_today_s_message(text):
    body = text.encode()
    assert len(body) > HEAD
    whole, held = outcome(lambda: listed(body)), outcome(lambda: listed(body, compact=True))
    assert whole[0] == "error" and held == whole
    assert "GET /api/device: expected a JSON reply but got application/json: '[" in held[1]


def test_a_large_valid_list_is_the_same_list_through_the_client():
    body = ("[" + ", ".join(many(9000)) + "]").encode()
    assert kept(listed(body, compact=True)) == [("Device", n, "dev-%06d" % n) for n in range(9000)]


@pytest.mark.parametrize("content_type", ["application/json", "text/plain; charset=utf-8"])
def test_bytes_a_declared_charset_cannot_decode_are_replaced_as_requests_replaces_them(content_type):
    body = ("[" + ", ".join(many(3000)) + ', {"id": 1, "hostname": "caf').encode() + b'\xe9"}]'
    whole, held = outcome(lambda: listed(body, content_type)), outcome(lambda: listed(body, content_type, compact=True))
    assert held == whole and held[1][-1] == (1, "caf\ufffd")


def test_bytes_a_guessed_encoding_cannot_decode_fail_a_large_body():
    body = ("[" + ", ".join(many(3000)) + ', {"id": 1, "hostname": "caf').encode() + b'\xe9"}]'
    with pytest.raises(NacResponseError, match="expected a JSON reply but got application/vnd.nac: '\\[{"):
        listed(body, "application/vnd.nac", compact=True)


def test_a_list_in_utf_16_is_the_same_list_through_the_client():
    body = ("[" + ", ".join(many(3000)) + "]").encode("utf-16-le")
    assert outcome(lambda: listed(body, "application/vnd.nac", compact=True)) == outcome(
        lambda: listed(body, "application/vnd.nac")
    )


# -- linear work, bounded memory ---------------------------------------------------------------------


def test_an_item_cut_off_again_and_again_is_decoded_a_logarithmic_number_of_times():
    body = ('[{"id": 1, "hostname": "a"}, {"id": 2, "hostname": "%s"}, 3]' % ("y" * 4000000)).encode()
    chunks = int(math.ceil(len(body) / 4096.0))
    reader = ArrayReader(device_keeper(), "utf-8")
    calls = []
    decode = reader._hooked.raw_decode
    reader._hooked.raw_decode = lambda text, idx=0: calls.append(len(text) - idx) or decode(text, idx)
    for pos in range(0, len(body), 4096):
        reader.feed(body[pos : pos + 4096])
    reader.finish()
    # (a name longer than a hostname may be is kept whole, for the client's shape check to name it)
    assert kept(reader.result()) == [("Device", 1, "a"), {"id": 2, "hostname": "y" * 4000000}, 3]
    assert chunks > 900 and len(calls) <= 2 * math.log2(chunks) + 4, len(calls)
    assert sum(calls) <= 4 * len(body)  # each attempt at least doubles the text: linear in all


def test_neither_the_body_nor_its_text_is_held_whole():
    note = "n" * 2000
    body = json.dumps([dict(id=n, hostname="dev-%06d" % n, note=note) for n in range(10000)]).encode()
    assert len(body) > 20000000
    gc.collect()
    tracemalloc.start()
    reader = ArrayReader(device_keeper(), "utf-8")
    for pos in range(0, len(body), 65536):
        reader.feed(body[pos : pos + 65536])
    reader.finish()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(reader.result()) == 10000 and peak < len(body) / 8, peak


def test_a_list_read_by_the_client_holds_neither_its_body_nor_its_text(monkeypatch):
    body = ("[" + ", ".join(many(20000, note=400)) + "]").encode()
    readers = []
    monkeypatch.setattr(device_list, "ArrayReader", lambda *args: readers.append(ArrayReader(*args)) or readers[-1])
    client, site = site_client({URL + "/api/device": (200, body, {"Content-Type": "application/json"})})
    gc.collect()
    tracemalloc.start()
    records = client.list_devices(compact=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(records) == 20000 and readers and readers[0].streaming
    assert peak < len(body) * 0.6, (peak, len(body))  # (the devices themselves are a third of the body here)


# -- whole runs of records decoded at once -------------------------------------------------------------


def runs_of(body, size, form=None):
    """The reader fed ``body`` in chunks of ``size``, and how its decodings of runs of records went."""
    reader = ArrayReader(form or device_keeper(), "utf-8")
    runs = {"ok": 0, "failed": 0}
    decode = reader._hooked.decode

    def counted(text):
        try:
            value = decode(text)
        except ValueError:
            runs["failed"] += 1
            raise
        runs["ok"] += 1
        return value

    reader._hooked.decode = counted
    for pos in range(0, len(body), size):
        assert reader.feed(body[pos : pos + size]) == b""
    assert reader.finish() == b""
    return reader, runs


@pytest.mark.parametrize("size", [4096, 65536, 65537])
def test_records_with_objects_within_are_split_where_one_record_ends_and_the_next_begins(size):
    records = [
        dict(id=n, hostname="bulk-%06d" % n, group=dict(id=7, name="Bulk"), profile=dict(name="P", vlan=n % 9))
        for n in range(20000)
    ]
    body = json.dumps(records).encode()
    reader, runs = runs_of(body, size)
    assert kept(reader.result()) == [("Device", n, "bulk-%06d" % n) for n in range(20000)]
    # Every chunk but the last few is decoded as one run: no run fails on an object cut off within a record.
    assert runs["failed"] == 0 and runs["ok"] >= len(body) // size - 2, runs


def test_records_holding_objects_that_open_as_records_do_are_still_decoded_as_today():
    records = [dict(id=n, hostname="h%d" % n, tags=[dict(id=n, k="a"), dict(id=n + 1, k="b")]) for n in range(5000)]
    records[77]["tags"].append(dict(id=1, hostname="nested-like-a-device"))
    body = json.dumps(records).encode()
    reader, runs = runs_of(body, 4096)
    assert kept(reader.result()) == today(body)
    assert runs["ok"] >= len(body) // 4096 // 2, runs  # a run cut off within a record's tags: the one before it
