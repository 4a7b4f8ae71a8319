# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a paginated list whole or not at all (no Ansible imports): find every sign that a reply holds only part of
a list, besides the ``Link`` header and where a next page may be fetched from (links.py), and hold the records of a
list as its pages are read (``Records``, keyed as its resource declares: resources.py).

The API guide says nothing of pagination (section 4.2: "not shown"). A server that pages its lists anyway
must not make the collection act on part of a list: client.NacClient follows ``rel="next"`` links (same
origin as ``api_url`` and under its path, at most MAX_PAGES pages, never a page twice) and fails, naming
the sign, on any other sign of a partial reply (``partial_sign``). What the client does is stated in the
API guide, docs/docsite/rst/api.rst, section "Pagination and reply sizes".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from typing import Optional

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import Device

MAX_PAGES = 10000  # pages of one list, at most: a million devices at 100 a page
SHOWN_LEN = 80  # characters of a header's value that a message quotes
JSON_HEADER_LEN = 4096  # a JSON header (X-Pagination) longer than this is not read
JSON_HEADER_DEPTH = 8  # nor one nested deeper than this: no decoder recurses on a server's header

# Headers that state how many records (or pages) the whole list has, as servers commonly name them.
COUNT_HEADERS = ("X-Total-Count", "X-Pagination-Total-Count", "X-Total", "X-Total-Items", "X-Total-Results")
PAGE_COUNT_HEADERS = ("X-Pagination-Page-Count", "X-Total-Pages", "X-Pagination-Total-Pages", "X-Page-Count")
NEXT_HEADERS = ("X-Next-Page", "X-Pagination-Next-Page", "X-Next")
# Keys of a JSON object that wraps one page of a list ({"items": [...], "next": ...}).
SAME_RECORD = "the same record (%s %s, %r) was listed on two pages, the second time on page %d"  # (Shifts)
ENVELOPE_KEYS = (
    "next",
    "items",
    "results",
    "data",
    "records",
    "devices",
    "intents",
    "total",
    "count",
    "page",
    "pages",
    "links",
    "_links",
    "cursor",
    "offset",
    "limit",
    "has_more",
)
CONTENT_RANGE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s+(?:([0-9]{1,20})-([0-9]{1,20})|\*)\s*/\s*([0-9]{1,20}|\*)\s*$")


class Page(list):
    """The JSON array of one reply, with the reply's ``headers``, the ``url`` it was read from and its body's
    ``size`` in bytes (as decoded)."""

    def __init__(self, items=(), headers=None, url=None, size=0):
        super(Page, self).__init__(items)
        self.headers = headers
        self.url = url
        self.size = size


def partial_sign(headers, read: int, pages: int, noun: str = "records") -> Optional[str]:
    """Say what in the last reply's ``headers`` says that the list has more than the ``read`` records (``noun``)
    of the ``pages`` pages read, as a phrase for a message ("the server says 150 devices (X-Total-Count:
    150)"), or None. A header whose value is not a number is not taken as a sign."""
    for name in COUNT_HEADERS:
        total = _number(headers.get(name))
        if total is not None and total > read:
            return "the server says %d %s (%s: %s)" % (total, noun, name, headers.get(name).strip())
    for name in PAGE_COUNT_HEADERS:
        count = _number(headers.get(name))
        if count is not None and count > pages:
            return "the server says %d pages (%s: %s) where %d %s read" % (
                count,
                name,
                headers.get(name).strip(),
                pages,
                "was" if pages == 1 else "were",
            )
    for name in NEXT_HEADERS:
        if (headers.get(name) or "").strip():
            return "the server names a next page (%s: %s)" % (name, shown(headers.get(name).strip(), SHOWN_LEN))
    return _content_range(headers.get("Content-Range"), read, pages, noun) or _json_pagination(
        headers.get("X-Pagination"), read, noun
    )


def _number(value):
    """Read a header's value as a count: a short run of ASCII digits, else None."""
    value = (value or "").strip()
    # (isdigit alone admits "²"; a number of thousands of digits is no count, and int() refuses it)
    return int(value) if value.isdigit() and value.isascii() and len(value) <= 20 else None


def _content_range(value, read, pages, noun):
    """Say what a ``Content-Range`` header shows of a partial list (a range of a larger whole), or None."""
    if not value:
        return None
    found = CONTENT_RANGE.match(value)
    quoted = "Content-Range: %s" % shown(value.strip(), SHOWN_LEN)
    if not found:
        return "the reply is a range of a larger whole, in a form the collection does not read (%s)" % quoted
    unit, first, last, whole = found.groups()
    if whole == "*":
        # Of unknown length: only the end of a chain of next links can say the list is complete.
        return None if pages > 1 else "the reply is a range of a list of unknown length (%s)" % quoted
    if unit.lower() == "bytes":
        if first is None or int(first) > 0 or int(last) + 1 < int(whole):
            return "the reply is a part of a larger body (%s)" % quoted
        return None
    if int(whole) > read:
        return "the server says %d %s (%s)" % (int(whole), noun, quoted)
    return None


def _json_pagination(value, read, noun):
    """Say what an ``X-Pagination`` header holding a JSON object ({"TotalCount": 150, "HasNext": true, ...}) shows
    of a partial list. One that is longer than JSON_HEADER_LEN or nested deeper than JSON_HEADER_DEPTH is not
    decoded (``nesting``): what cannot be read is no sign, as any value that is not JSON."""
    if not value or len(value) > JSON_HEADER_LEN or nesting(value) > JSON_HEADER_DEPTH:
        return None
    try:
        meta = json.loads(value)
    except (ValueError, RecursionError):
        return None
    if not isinstance(meta, dict):
        return None
    keys = dict((str(key).replace("_", "").lower(), item) for key, item in meta.items())
    quoted = "X-Pagination: %s" % shown(value.strip(), SHOWN_LEN)
    total = keys.get("totalcount", keys.get("total"))
    if isinstance(total, int) and not isinstance(total, bool) and total > read:
        return "the server says %d %s (%s)" % (total, noun, quoted)
    if keys.get("hasnext") is True or keys.get("nextpagelink") or keys.get("next"):
        return "the server names a next page (%s)" % quoted
    return None


def nesting(text: str) -> int:
    """Measure how deeply the arrays and objects of a JSON text nest (brackets within strings not counted), in one
    pass without recursion; a text that is not JSON gives some number, and is not decoded anyway."""
    depth = deepest = 0
    quoted = escaped = False
    for char in text:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def envelope_keys(body: object) -> list:
    """Return the keys of a JSON object reply that make it look like one page of a list, in the order listed."""
    return [key for key in ENVELOPE_KEYS if key in body] if isinstance(body, dict) else []


class Shifts:
    """Signs that a paginated list shifted while its pages were read (another client created or deleted a record
    meanwhile, so that a record moved from one page to the next, or never came): a record of an earlier page
    again, the same (``key`` and all) on a later one; a count header (COUNT_HEADERS, PAGE_COUNT_HEADERS, the
    whole of a Content-Range) that changed from one page to another; fewer records counted on the last page
    than were read. A record whose ``key`` repeats with other data is not a sign: a server may list an id twice.
    What no client can detect is said in the API guide ("Pagination and reply sizes"). ``name``: the field that
    names a record to a person (resources.Resource.name_field), quoted in messages and compared too."""

    def __init__(self, key: str, name: str = "hostname"):
        self.key, self.name = key, name
        self.keys = None  # the keys of the pages before the one read last (only once a next page is named)
        self.counts = None

    def page(self, records, start: int, number: int, headers, last: bool) -> Optional[str]:
        """Say what shows, after page ``number`` (``records[start:]``; ``last``: no next page) was read, that the
        pages shifted, as a phrase for a message; None when nothing does."""
        key = self.key
        keys = _keys(records, start, key) if self.keys is not None or not last else None  # one page: none kept
        if self.keys is not None and not self.keys.isdisjoint(keys):
            for record in records[start:]:
                value = record.get(key) if isinstance(record, (dict, Device)) else None
                if (
                    type(value) in (int, str)
                    and value in self.keys
                    and any(_same(record, other, key, self.name) for other in records[:start])
                ):
                    return SAME_RECORD % (key, value, record.get(self.name, ""), number)
        shift = self.counted(headers, number, last, len(records))
        if shift or last:
            return shift
        if self.keys is None:
            self.keys = keys
        else:
            self.keys.update(keys)
        return None

    def counted(self, headers, number: int, last: bool, read: int) -> Optional[str]:
        """Say what shows, from the count headers of page ``number`` (``last``: no next page; ``read``: the records
        read so far), that the pages shifted, as a phrase for a message; None."""
        counts = _counts(headers)
        if self.counts is None:
            self.counts = counts
        elif counts != self.counts:
            before = ", ".join("%s: %s" % pair for pair in self.counts) or "none"
            now = ", ".join("%s: %s" % pair for pair in counts) or "none"
            return "the count changed from page 1 (%s) to page %d (%s)" % (before, number, now)
        for name, value in counts if last and number > 1 else ():
            total = _number(value.rsplit("/", 1)[-1])
            if name in COUNT_HEADERS + ("Content-Range",) and total is not None and total < read:
                return "the last page counts %d records (%s: %s), %d were read" % (total, name, value, read)
        return None


class Records:
    """The records of a list as its pages are read (listing.ListReader._read_pages): every page's items in one list
    (``result``), and the signs that the pages shifted (Shifts). device_export.DeviceFile is the other kind, which
    writes the records to a file instead of holding them. ``key`` and ``name``: as the resource declares them."""

    def __init__(self, key: str, name: str = "hostname"):
        self.key, self.name = key, name
        self.items, self.shifts = [], Shifts(key, name)

    def restart(self):
        """Drop what was read: the list is read again from its first page."""
        self.items, self.shifts = [], Shifts(self.key, self.name)

    def __len__(self):
        return len(self.items)

    def add(self, page, number: int, headers, last: bool) -> Optional[str]:
        """Take page ``number`` (``last``: no next page) and say what shows that the pages shifted (Shifts.page), or
        None."""
        start = len(self.items)
        self.items.extend(page)
        return self.shifts.page(self.items, start, number, headers, last)

    def result(self) -> list:
        """Return the list read: its records, in order."""
        return self.items

    def indexed(self):
        """Return the (index, record) of the records for the client's shape checks: none when every record is a
        Device (made only of a well-formed record: device_list.device_keeper), found at C speed; else every record."""
        if set(map(type, self.items)) == {Device}:
            return iter(())
        return enumerate(self.items)


def _keys(records, start, key):
    """The set of the ``key`` of ``records[start:]`` that can identify a record (integers and strings): one tight
    pass, as every page of a list of hundreds of thousands of devices goes through it."""
    found = set()
    add = found.add
    for index in range(start, len(records)):
        record = records[index]
        kind = type(record)
        if kind is Device:
            value = record.id if key == "id" else None
        elif kind is dict:
            value = record.get(key)
        else:
            continue
        # (exactly int or str: a bool is no key)
        if type(value) is int or type(value) is str:  # pylint: disable=unidiomatic-typecheck
            add(value)
    return found


def _counts(headers):
    """The (name, value) of every header of a reply that counts the whole list (for Content-Range, its whole)."""
    found = [(name, headers.get(name).strip()) for name in COUNT_HEADERS + PAGE_COUNT_HEADERS if headers.get(name)]
    whole = (headers.get("Content-Range") or "").rsplit("/", 1)
    if len(whole) == 2:
        found.append(("Content-Range", "/" + whole[1].strip()))
    return tuple(found)


def _same(record, other, key, name="hostname"):
    """Tell whether two records of a list are the same record: equal, or, kept compactly, the same key and name."""
    if isinstance(record, dict) and isinstance(other, dict):
        return record == other
    if not (hasattr(record, "get") and hasattr(other, "get")):
        return False
    return record.get(key) == other.get(key) and record.get(name) == other.get(name)
