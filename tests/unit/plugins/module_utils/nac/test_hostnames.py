# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""When two hostnames are the same name (NFC, ASCII letters without case: RFC 4343), when they only look alike
(case folding, compatibility forms, surrounding whitespace), and ids that a list repeats (issue 16)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import unicodedata

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac import hostnames
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import Device
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    by_hostname,
    hostname_key,
    index_by_hostname,
    lookalike_text,
    lookalikes,
    looser_rule,
    repeated_ids,
    repeated_ids_warning,
    select,
    shown_name,
)

NFC_CAFE = unicodedata.normalize("NFC", "caf\u00e9-01")
NFD_CAFE = unicodedata.normalize("NFD", "caf\u00e9-01")
KELVIN = "\u212aiosk-01"  # KELVIN SIGN: canonically equivalent to K


@pytest.mark.parametrize(
    "one, other",
    [
        ("cam-01", "CAM-01"),
        ("Cam-01.Example.COM", "cam-01.example.com"),
        (NFC_CAFE, NFD_CAFE),
        ("Kiosk-01", KELVIN),
        ("kiosk-01", KELVIN),
        ("CAF\u00c9-01", unicodedata.normalize("NFD", "CAF\u00c9-01")),
    ],
)
def test_the_same_name(one, other):
    assert hostname_key(one) == hostname_key(other)


@pytest.mark.parametrize(
    "one, other, rule",
    [
        ("strasse-01", "stra\u00dfe-01", "Unicode case folding"),
        ("CAF\u00c9-02", "caf\u00e9-02", "Unicode case folding"),  # only ASCII letters are compared without case
        ("\uff43\uff41\uff4d-01", "cam-01", "Unicode compatibility forms, NFKC"),  # full-width letters
        ("\ufb01le-01", "file-01", "Unicode compatibility forms, NFKC"),  # the fi ligature
        ("cam-01 ", "cam-01", "surrounding whitespace"),
        (" CAM-01", "cam-01", "surrounding whitespace"),
        ("STRASSE-01 ", "stra\u00dfe-01", "surrounding whitespace and Unicode case folding"),
    ],
)
def test_names_that_only_look_alike_are_not_the_same_and_the_rule_is_named(one, other, rule):
    assert hostname_key(one) != hostname_key(other)
    assert looser_rule(one, other) == rule
    assert lookalikes([dict(id=7, hostname=one)], [other]) == {other: [dict(id=7, hostname=one)]}


def test_a_lookalike_is_never_the_same_name_and_the_same_name_never_a_lookalike():
    records = [
        dict(id=1, hostname="strasse-01"),
        dict(id=2, hostname=NFC_CAFE),
        dict(id=3, hostname="Kiosk-01"),
        dict(id=4, hostname="cam-01 "),
        dict(id=5, hostname="other"),
    ]
    found = by_hostname(records, ["stra\u00dfe-01", NFD_CAFE, KELVIN, "cam-01", "nothing"])
    assert [([r["id"] for r in same], [r["id"] for r in alike]) for same, alike in found.values()] == [
        ([], [1]),
        ([2], []),
        ([3], []),
        ([], [4]),
        ([], []),
    ]
    assert list(lookalikes(records, ["stra\u00dfe-01", NFD_CAFE, "cam-01"])) == ["stra\u00dfe-01", "cam-01"]


LISTED = ["cam-1", "CAM-1", " cam-1", "cam-10", "xcam-1", "cam-1x", "cam-1\t", "printer", "Printer ", "cam-2"]


@pytest.mark.parametrize(
    "extra",
    [
        [],  # all ASCII: the names are searched for joined (SEARCHED)
        ["cam-\n1", "cam-1\ncam-2"],  # a line break within a name: name by name
        [KELVIN, "\uff43\uff41\uff4d-1", "stra\u00dfe-01"],  # names that are not ASCII: name by name
    ],
)
@pytest.mark.parametrize("compact", [False, True])
def test_by_hostname_finds_what_comparing_every_name_finds(monkeypatch, extra, compact):
    names = LISTED + extra + LISTED[::-1]
    records = [Device(n, name) if compact else dict(id=n, hostname=name) for n, name in enumerate(names)]
    asked = ["cam-1", "CAM-10 ", "printer", "kiosk-01", "cam", "strasse-01", "nothing", "am-1"]
    found = by_hostname(records, asked)
    monkeypatch.setattr(hostnames, "SEARCHED", 0)  # every listed name's loose key made, one by one
    assert found == by_hostname(records, asked)
    assert [r["id"] for r in found["cam-1"][0]] == [0, 1, len(names) - 2, len(names) - 1]
    alike = [r["hostname"] for r in found["cam-1"][1]]
    assert [name for name in alike if name.isascii()] == [" cam-1", "cam-1\t", "cam-1\t", " cam-1"]
    assert [r["id"] for r in found["am-1"][0] + found["am-1"][1]] == []


def test_repeated_ids_of_compact_records():
    records = [Device(1, "a"), Device(2, "b"), Device(1, "c")]
    assert repeated_ids(records) == {1: [records[0], records[2]]}
    assert repeated_ids(records[:2]) == {}


def test_the_index_and_select_use_the_same_name():
    records = [dict(id=1, hostname=NFC_CAFE), dict(id=2, hostname="strasse-01"), dict(id=3, hostname="Kiosk-01")]
    index = index_by_hostname(records)
    assert [r["id"] for r in index[hostname_key(NFD_CAFE)]] == [1]
    assert hostname_key("stra\u00dfe-01") not in index
    selected, missing = select(records, ["stra\u00dfe-01", KELVIN, NFD_CAFE])
    assert [r["id"] for r in selected] == [1, 3] and missing == ["stra\u00dfe-01"]


def test_lookalike_text_names_each_with_its_id_and_rule():
    listed = [dict(id=7, hostname="strasse-01"), dict(id=9, hostname="STRASSE-01 ")]
    assert lookalike_text("stra\u00dfe-01", listed) == (
        "strasse-01 (id 7) is listed, which matches stra\u00dfe-01 only when compared loosely (Unicode case "
        "folding); 'STRASSE-01 ' (id 9) is listed, which matches stra\u00dfe-01 only when compared loosely "
        "(surrounding whitespace and Unicode case folding)"
    )


def test_a_name_with_hidden_characters_is_shown_quoted():
    assert shown_name("cam-01") == "cam-01" and shown_name("stra\u00dfe-01") == "stra\u00dfe-01"
    assert shown_name("cam-01 ") == "'cam-01 '" and shown_name("cam\u200b-01") == "'cam\\u200b-01'"


def test_repeated_ids_are_found_in_list_order_and_named_in_one_warning():
    records = [
        dict(id=500, hostname="shared-a"),
        dict(id=1, hostname="x"),
        dict(id=500, hostname="shared-b"),
        dict(id=2, hostname="y"),
        dict(id=2, hostname="y"),
    ]
    repeated = repeated_ids(records)
    assert [(ident, [r["hostname"] for r in shared]) for ident, shared in repeated.items()] == [
        (500, ["shared-a", "shared-b"]),
        (2, ["y", "y"]),
    ]
    warning = repeated_ids_warning(repeated)
    assert "shows the same id for several devices (id 500: shared-a, shared-b; id 2: y, y)" in warning
    assert repeated_ids_warning(repeated_ids(records[:2])) is None


def test_a_warning_about_many_repeated_ids_names_ten_and_counts_the_rest():
    records = [dict(id=n // 2, hostname="h%d" % n) for n in range(30)]  # 15 ids, each twice
    warning = repeated_ids_warning(repeated_ids(records))
    assert "id 9: h18, h19; and 5 more ids)" in warning and "id 10:" not in warning
