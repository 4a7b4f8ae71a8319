# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server variants of the NAC API emulator, for what the API guide leaves "not shown" (README, "Server
variants"): hostname rules, paginated and padded lists, seeded records."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import ipaddress
import json
import re
import unicodedata

from .common import JSON_TYPE, Stream, is_int, validation_error
from .config import BULK_GROUP, BULK_MAX, BULK_PROFILE, SETTLED_AGE

ASCII_LOWER = dict((code, code + 32) for code in range(ord("A"), ord("Z") + 1))
UNICODE_HOSTNAME_CATEGORIES = ("L", "M", "N")


def hostname_key(hostname, rule):
    """The form in which two hostnames are compared under ``rule`` (HOSTNAME_MATCHES).

    exact: as they are (code points); ascii-nocase: NFC, then ASCII letters only without case (RFC 4343);
    casefold: Python's str.casefold(), no normalisation.
    """
    if rule == "exact":
        return hostname
    if rule == "casefold":
        return hostname.casefold()
    return unicodedata.normalize("NFC", hostname).translate(ASCII_LOWER)


def unicode_hostname_ok(hostname):
    """Letters, marks and digits of any script, hyphens and dots (hostname_chars "unicode")."""
    return all(char in "-." or unicodedata.category(char)[0] in UNICODE_HOSTNAME_CATEGORIES for char in hostname)


def paged_reply(parts, params, path, settings, pad=0):
    """The reply of a list endpoint: the whole list, or one page of it as the ``settings`` say
    (README, "Pagination"); ``parts`` are the JSON of its records, ``pad`` bytes of padding are spread over them."""
    size, style, chunked = settings["page_size"], settings["page_style"], settings["pad_list_chunked"]
    total = len(parts)
    if size <= 0:
        return (200, JSON_TYPE, json_array(parts, pad, chunked), ())
    query = params.get("query") or {}
    page, per_page = query_int(query, "page", 1), min(query_int(query, "per_page", size), size)
    last = max(1, -(-total // per_page))
    start = min((page - 1) * per_page, total)
    stop = min(start + per_page, total)
    here = parts[start:stop]
    base = params.get("base") or ""
    next_page = page + 1 if page < last else (1 if style == "link-loop" else None)

    def url(number, origin=base):
        return "%s%s?page=%d&per_page=%d" % (origin, path, number, per_page)

    headers = []
    if style.startswith("link"):
        origin = "" if style == "link-relative" else base
        rels = [("first", 1)] + ([("prev", min(page - 1, last))] if page > 1 else [])
        rels += [("next", next_page)] if next_page else []
        rels.append(("last", last))
        scheme, _sep, netloc = base.partition("://")
        port = netloc.rsplit(":", 1)[1] if ":" in netloc and not netloc.endswith("]") else None
        foreign = settings["page_foreign_url"] or "%s://nac-elsewhere.invalid%s" % (
            scheme or "http",
            ":" + port if port else "",
        )
        headers.append(
            (
                "Link",
                ", ".join(
                    '<%s>; rel="%s"'
                    % (url(number, foreign if style == "link-foreign" and rel == "next" else origin), rel)
                    for rel, number in rels
                ),
            )
        )
        headers.append(("X-Total-Count", str(total)))
    elif style == "total-only":
        headers.append(("X-Total-Count", str(total)))
    elif style == "content-range":
        headers.append(
            ("Content-Range", "items %d-%d/%d" % (start, stop - 1, total) if stop > start else "items */%d" % total)
        )
    if style == "body-next":
        tail = ', "next": %s, "total": %d}' % (json.dumps(url(next_page) if next_page else None), total)
        body = json_array(here, pad, chunked, prefix=b'{"items": ', suffix=tail.encode("ascii"))
    else:
        body = json_array(here, pad, chunked)
    return (200, JSON_TYPE, body, tuple(headers))


def json_array(parts, pad, chunked, prefix=b"", suffix=b""):
    """``prefix`` + the JSON array of ``parts`` + ``suffix``; with ``pad``, a Stream (``chunked`` or not) whose
    records carry a ``notes`` field of "x" characters, ``pad`` of them in all (an empty array: ``pad`` spaces inside
    it)."""
    if not pad:
        return prefix + b"[" + b", ".join(parts) + b"]" + suffix
    segments = [prefix + b"["]
    if not parts:
        segments += [(pad, b" "), b"]" + suffix]
        return Stream(segments, chunked)
    share, extra = divmod(pad, len(parts))
    for index, part in enumerate(parts):
        segments.append((b", " if index else b"") + part[:-1] + b', "notes": "')
        segments.append((share + (1 if index < extra else 0), b"x"))
        segments.append(b'"}')
    segments.append(b"]" + suffix)
    return Stream(segments, chunked)


def query_int(query, name, default):
    values = query.get(name)
    if not values:
        return default
    if not re.match(r"^[0-9]{1,9}$", values[0]) or int(values[0]) < 1:
        raise validation_error({name: "must be a whole number from 1, got %r" % values[0][:40]})
    return int(values[0])


class SeedingMixin:
    """Seeded records of NacModel (README, "Seeding records"): raw records as given, and bulk devices."""

    def seed_records(self, records):
        """Insert raw records as given (README, "Seeding records"); returns their ids. Never refuses a
        hostname, MAC, IP or id already in use: a list with repeated ids is how a faulty server looks."""
        problems = {}
        if not isinstance(records, list):
            raise validation_error({"devices": "must be a list of device records"})
        for index, record in enumerate(records):
            where = "devices[%d]" % index
            if not isinstance(record, dict):
                problems[where] = "must be an object"
            elif not isinstance(record.get("hostname"), str):
                problems[where + ".hostname"] = "is required, a string"
            elif "id" in record and not is_int(record["id"]):
                problems[where + ".id"] = "must be an integer (or omitted: the next free id)"
        if problems:
            raise validation_error(problems)
        with self.lock:
            now = self.clock()
            added = []
            for record in records:
                device_id = record["id"] if "id" in record else self.next_id
                shown = collections.OrderedDict(
                    (k, v) for k, v in record.items() if k not in ("id", "hostname", "authenticated")
                )
                device = dict(
                    id=device_id,
                    hostname=record["hostname"],
                    created=now if record.get("authenticated") is False else now - SETTLED_AGE,
                    group=record["group"] if isinstance(record.get("group"), str) else None,
                    profile=record["profile"] if isinstance(record.get("profile"), str) else None,
                    macs=self._strings(record.get("macs"), str.lower),
                    ips=self._strings(record.get("ips")),
                    shown=shown,
                )
                self._add(device)
                added.append(device)
            self._write_state(added)
            return [device["id"] for device in added]

    @staticmethod
    def _strings(values, normalise=None):
        if not isinstance(values, list):
            return []
        return [normalise(v) if normalise else v for v in values if isinstance(v, str)]

    def seed_bulk(self, count, prefix="bulk-", start=1):
        """Add ``count`` settled devices fast (group and profile Bulk, one MAC and one IP each); returns (first id,
        last id)."""
        with self.lock:
            return self._bulk_locked(count, prefix, start)

    def _bulk_locked(self, count, prefix, start, write=True):
        if not count:
            return None, None
        if self.next_id + count > BULK_MAX:
            raise validation_error({"count": "too many: ids would pass %d (the Bulk subnet's size)" % BULK_MAX})
        self._add_bulk_group()
        network = int(ipaddress.IPv4Network(BULK_GROUP["subnet"]).network_address)
        # prefix + digits: when the prefix is its own key (ASCII, no upper case), so is every hostname
        key = (
            (lambda name: name)
            if prefix.isascii() and hostname_key(prefix, self.settings["hostname_match"]) == prefix
            else None
        )
        created = self.clock() - SETTLED_AGE
        first = self.next_id
        devices, by_id, by_host, by_mac, by_ip = self.devices, self.by_id, self.by_host, self.by_mac, self.by_ip
        rule, row, added = self.settings["hostname_match"], self.next_row, []
        group, profile = BULK_GROUP["name"], BULK_PROFILE["name"]
        for offset in range(count):
            device_id = first + offset
            hostname = "%s%06d" % (prefix, start + offset)
            mac = "02:b0:%02x:%02x:%02x:%02x" % (
                device_id >> 24 & 255,
                device_id >> 16 & 255,
                device_id >> 8 & 255,
                device_id & 255,
            )
            address = network + device_id
            ip = "%d.%d.%d.%d" % (address >> 24, address >> 16 & 255, address >> 8 & 255, address & 255)
            device = dict(
                row=row,
                id=device_id,
                hostname=hostname,
                group=group,
                profile=profile,
                macs=[mac],
                ips=[ip],
                created=created,
            )
            devices[row] = device
            by_id.setdefault(device_id, []).append(row)
            by_host.setdefault(key(hostname) if key else hostname_key(hostname, rule), set()).add(row)
            by_mac[mac] = by_ip[ip] = row
            added.append(device)
            row += 1
        self.next_row, self.next_id = row, first + count
        self._list_cache = self._parts = None
        if write:
            self._write_state(added)
        return first, first + count - 1

    def _add_bulk_group(self):
        """The group and profile of bulk-seeded devices (unless the config has its own of that name)."""
        self.groups.setdefault(BULK_GROUP["name"], ipaddress.IPv4Network(BULK_GROUP["subnet"]))
        self.profiles.setdefault(BULK_PROFILE["name"], dict(BULK_PROFILE))
