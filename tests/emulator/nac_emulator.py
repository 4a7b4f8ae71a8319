# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Emulator of the NAC API described in the API guide (docs/docsite/rst/api.rst), standard library only.

Importable (``Emulator``, ``DEFAULT_CONFIG``, ``load_config``) and runnable as a script;
see tests/emulator/README.md for the CLI, the config format and the admin endpoints.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import base64
import binascii
import collections
import copy
import hmac
import ipaddress
import itertools
import json
import math
import os
import random
import re
import signal
import socket
import socketserver
import sqlite3
import ssl
import struct
import sys
import threading
import time
import traceback
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

DEFAULT_CONFIG = {
    "intents": [
        {"tag": "dot1x_status", "name": "Check 802.1x"},
        {"tag": "ping", "name": "Ping"},
        {"tag": "who_is_logged_in", "name": "Who is logged in"},
    ],
    "accounts": [
        {
            "name": "admin",
            "api_key": "nac-demo-admin-key",
            "privileges": ["public_api"],
            "intents": ["dot1x_status", "ping", "who_is_logged_in"],
        },
        {"name": "auditor", "api_key": "nac-demo-noaccess-key", "privileges": ["public_api"], "intents": ["ping"]},
        {"name": "nopriv", "api_key": "nac-demo-nopriv-key", "privileges": [], "intents": ["dot1x_status"]},
        {
            "name": "svc-ansible",
            "username": "svc-ansible",
            "password": "nac-demo-password",
            "tenant": "nac-demo-tenant",
            "privileges": ["public_api"],
            "intents": ["dot1x_status"],
        },
    ],
    "groups": [
        {"name": "Cameras", "subnet": "10.20.0.0/24"},
        {"name": "Printers", "subnet": "10.30.0.0/24"},
        {"name": "Workstations", "subnet": "10.40.0.0/22"},
    ],
    "profiles": [
        {"name": "Camera", "max_pairs": 1, "host_start": 10, "host_end": 200},
        {"name": "Intercom", "max_pairs": 2, "host_start": 10, "host_end": 60},
        {"name": "Printer", "max_pairs": 1, "host_start": 10, "host_end": 100},
        {"name": "Workstation", "max_pairs": 2, "host_start": 10, "host_end": 1000},
    ],
    "devices": [
        {
            "hostname": "cam-01",
            "group": "Cameras",
            "profile": "Camera",
            "macs": ["02:00:00:20:00:10"],
            "ips": ["10.20.0.10"],
        },
        {
            "hostname": "cam-02",
            "group": "Cameras",
            "profile": "Camera",
            "macs": ["02:00:00:20:00:11"],
            "ips": ["10.20.0.11"],
        },
        {
            "hostname": "printer-01",
            "group": "Printers",
            "profile": "Printer",
            "macs": ["02:00:00:30:00:10"],
            "ips": ["10.30.0.10"],
        },
        {
            "hostname": "ws-01",
            "group": "Workstations",
            "profile": "Workstation",
            "macs": ["02:00:00:40:00:10", "02:00:00:40:00:11"],
            "ips": ["10.40.0.10", "10.40.0.11"],
        },
        {"hostname": "ws-02", "group": "Workstations", "profile": "Workstation", "ips": ["10.40.0.12"]},
    ],
    "dot1x": {"auth_delay": 2.0, "auth_method": "EAP-TLS", "overrides": {}},
    "creation_reply": "record",
    # The server variants of the points the API guide leaves "not shown" (README, "Server variants");
    # the defaults are the emulator's behaviour before they existed.
    "allow_duplicate_hostnames": False,
    "hostname_match": "ascii-nocase",
    "hostname_chars": "ldh",
    "page_size": 0,
    "page_style": "link",
    "page_foreign_url": None,
    "pad_list_bytes": 0,
    "pad_list_chunked": False,
    "seed_devices": 0,
}

CREATION_REPLIES = ("record", "empty", "id")
# What a faulty network or load balancer in front of the service does to a request (README, "Faults").
FAULT_MODES = ("500", "502", "503", "429", "reset", "commit_drop", "commit_500", "slow")
FAULT_DEFAULTS = {
    "rate": 0.0,
    "modes": list(FAULT_MODES),
    "seed": None,
    "retry_after": 1,
    "slow": 31.0,
    "only": None,
    "limit": None,
    "commit_delay": 0.0,
}
FAULT_ONLY_RE = re.compile(r"^[A-Z]+ /\S*$")
# Server variants (README, "Server variants"): the settings of GET/POST /_emulator/settings, kept in the config.
HOSTNAME_MATCHES = ("exact", "ascii-nocase", "casefold")
HOSTNAME_CHARS = ("ldh", "unicode")
PAGE_STYLES = ("link", "link-relative", "total-only", "content-range", "body-next", "link-loop", "link-foreign")
SETTINGS = (
    "allow_duplicate_hostnames",
    "hostname_match",
    "hostname_chars",
    "page_size",
    "page_style",
    "page_foreign_url",
    "pad_list_bytes",
    "pad_list_chunked",
)
ORIGIN_RE = re.compile(r"^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")
HOST_HEADER_RE = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")
ASCII_LOWER = dict((code, code + 32) for code in range(ord("A"), ord("Z") + 1))
OUTAGE_MODES = ("refuse", "silent")
# Devices of --seed-devices / POST /_emulator/devices {"count": N}: their own group and profile, one MAC and one IP
# each.
BULK_GROUP = {"name": "Bulk", "subnet": "100.64.0.0/10"}
BULK_PROFILE = {"name": "Bulk", "max_pairs": 1, "host_start": 1, "host_end": 4194302}
BULK_MAX = 4000000
STREAM_CHUNK = 65536
GATEWAY_HTML = (
    b"<html><head><title>%d %s</title></head><body><center><h1>%d %s</h1></center>"
    b"<hr><center>nginx</center></body></html>"
)
RESULT_KEYS = ("status", "authMethod", "username", "message")
SETTLED_AGE = 10 * 365 * 86400.0  # seeded devices were "created" this long ago
MAX_BODY = 1024 * 1024
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9.-]+$")
UNICODE_HOSTNAME_CATEGORIES = ("L", "M", "N")
MAC_RE = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
IPV4_RE = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")
SERVER_ERROR_HTML = b"<html><head><title>Server error</title></head><body><h1>Server error</h1></body></html>"
JSON_TYPE = "application/json"


def complete_config(config):
    """Return a deep copy of ``config`` whose missing top-level (and dot1x) keys take DEFAULT_CONFIG's."""
    merged = copy.deepcopy(DEFAULT_CONFIG)
    merged.update(copy.deepcopy(config or {}))
    dot1x = copy.deepcopy(DEFAULT_CONFIG["dot1x"])
    dot1x.update(merged.get("dot1x") or {})
    merged["dot1x"] = dot1x
    return merged


def load_config(path):
    """Read a JSON config file; missing top-level keys take DEFAULT_CONFIG's."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict):
        raise ValueError("%s: the config must be a JSON object" % path)
    return complete_config(data)


def json_reply(status, payload, headers=()):
    return (status, JSON_TYPE, json.dumps(payload).encode("utf-8"), tuple(headers))


class ApiError(Exception):
    """An error reply; raised anywhere in request handling."""

    def __init__(self, status, payload, content_type=JSON_TYPE, headers=()):
        super(ApiError, self).__init__(status)
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        self.reply = (status, content_type, body, tuple(headers))


def error(status, title, message, headers=()):
    return ApiError(status, {"error": title, "message": message}, headers=headers)


def validation_error(fields):
    return ApiError(400, {"error": "Validation failed", "fields": fields})


def server_error():
    return ApiError(500, SERVER_ERROR_HTML, content_type="text/html")


def fault_settings(current, changes):
    """(``current`` updated with ``changes``, {key: problem}) for the fault settings of FAULT_DEFAULTS."""
    problems = dict(
        (key, "unknown setting (known: %s)" % ", ".join(FAULT_DEFAULTS)) for key in changes if key not in FAULT_DEFAULTS
    )
    settings = dict(current)
    settings.update((key, value) for key, value in changes.items() if key in FAULT_DEFAULTS)
    modes = settings["modes"]
    if not is_number(settings["rate"]) or not 0 <= settings["rate"] <= 1:
        problems["rate"] = "must be a number from 0 to 1"
    if not isinstance(modes, list) or not modes or not all(isinstance(m, str) and m in FAULT_MODES for m in modes):
        problems["modes"] = "must be a non-empty list of: %s" % ", ".join(FAULT_MODES)
    else:
        settings["modes"] = list(collections.OrderedDict.fromkeys(modes))
    if settings["seed"] is not None and not is_int(settings["seed"]):
        problems["seed"] = "must be an integer or null"
    if not is_int(settings["retry_after"]) or settings["retry_after"] < 0:
        problems["retry_after"] = "must be a whole number of seconds, 0 or more"
    if not is_number(settings["slow"]) or settings["slow"] < 0:
        problems["slow"] = "must be a number of seconds, 0 or more"
    only = settings["only"]
    if only is not None and (
        not isinstance(only, list)
        or not only
        or not all(isinstance(item, str) and FAULT_ONLY_RE.match(item) for item in only)
    ):
        problems["only"] = (
            "must be null (every /api request) or a non-empty list of 'METHOD /path' such as 'POST /api/device'"
        )
    if settings["limit"] is not None and (not is_int(settings["limit"]) or settings["limit"] < 0):
        problems["limit"] = "must be null (no limit) or a whole number of faults, 0 or more"
    if not is_number(settings["commit_delay"]) or settings["commit_delay"] < 0:
        problems["commit_delay"] = "must be a number of seconds, 0 or more"
    return settings, problems


class FaultSettingsError(ValueError):
    """Fault settings that are not usable; ``problems`` maps each bad key to what is wrong."""

    def __init__(self, problems):
        super(FaultSettingsError, self).__init__(
            "fault settings: " + "; ".join("%s %s" % item for item in sorted(problems.items()))
        )
        self.problems = problems


def settings_problems(changes):
    """{key: problem} for server-variant settings (SETTINGS) that are unknown or not usable."""
    problems = {}
    for key, value in changes.items():
        if key not in SETTINGS:
            problems[key] = "unknown setting (known: %s)" % ", ".join(SETTINGS)
        elif key in ("allow_duplicate_hostnames", "pad_list_chunked") and not isinstance(value, bool):
            problems[key] = "must be true or false"
        elif key == "hostname_match" and value not in HOSTNAME_MATCHES:
            problems[key] = "must be one of %s" % ", ".join(HOSTNAME_MATCHES)
        elif key == "hostname_chars" and value not in HOSTNAME_CHARS:
            problems[key] = "must be one of %s" % ", ".join(HOSTNAME_CHARS)
        elif key == "page_style" and value not in PAGE_STYLES:
            problems[key] = "must be one of %s" % ", ".join(PAGE_STYLES)
        elif key in ("page_size", "pad_list_bytes") and (not is_int(value) or value < 0):
            problems[key] = "must be a whole number, 0 or more (0: off)"
        elif (
            key == "page_foreign_url" and value is not None and not (isinstance(value, str) and ORIGIN_RE.match(value))
        ):
            problems[key] = "must be null or a scheme://host[:port] origin such as http://127.0.0.2:8787 (no path)"
    return problems


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


class Stream:
    """A reply body produced piece by piece (never held whole): ``segments`` are bytes, or (count, byte)
    for ``count`` repetitions of one byte. Sent with its Content-Length, or chunked."""

    def __init__(self, segments, chunked=False):
        self.segments = segments
        self.chunked = chunked
        self.length = sum(len(s) if isinstance(s, bytes) else s[0] for s in segments)

    def __len__(self):
        return self.length

    def pieces(self, size=STREAM_CHUNK):
        """The body in pieces of ``size`` bytes (the last may be shorter)."""
        buffer = bytearray()
        blocks = {}
        for segment in self.segments:
            if isinstance(segment, bytes):
                buffer += segment
                while len(buffer) >= size:
                    yield bytes(buffer[:size])
                    del buffer[:size]
                continue
            count, byte = segment
            block = blocks.setdefault(byte, byte * size)
            while count:
                take = min(count, size - len(buffer))
                buffer += block[:take]
                count -= take
                if len(buffer) >= size:
                    yield bytes(buffer)
                    buffer = bytearray()
        if buffer:
            yield bytes(buffer)

    def read(self):
        """The whole body (tests of small replies only)."""
        return b"".join(self.pieces())


def parse_object(body):
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict):
        raise error(400, "Bad request", "The request body must be a JSON object")
    return data


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class NacModel:
    """Devices, accounts and the 802.1x model; every method is thread-safe.

    Devices are kept by an internal row number, not by id: a faulty server's list may repeat an id
    (POST /_emulator/devices seeds such records); the API itself always assigns a new id.
    """

    ROUTES = (
        ("GET", re.compile(r"^/api/intent$"), "list_intents"),
        ("GET", re.compile(r"^/api/device$"), "list_devices"),
        ("POST", re.compile(r"^/api/device$"), "create_device"),
        ("POST", re.compile(r"^/api/intent/(?P<tag>[^/]+)/fire$"), "fire_intent"),
    )

    def __init__(self, config=None, state_path=None, faults=None):
        self.config = config = complete_config(config)
        self.faults = Faults(faults)
        self.lock = threading.Lock()
        self.intents = collections.OrderedDict((i["tag"], i) for i in config["intents"])
        self.groups = dict((g["name"], ipaddress.IPv4Network(g["subnet"], strict=False)) for g in config["groups"])
        self.profiles = dict((p["name"], p) for p in config["profiles"])
        self.dot1x = config["dot1x"]
        self._set_overrides()
        self.keys = dict((a["api_key"], a) for a in config["accounts"] if a.get("api_key"))
        self.users = dict((a["username"], a) for a in config["accounts"] if a.get("username"))
        self._check_config()
        if config["seed_devices"]:
            self._add_bulk_group()
        self.settings = dict((key, config[key]) for key in SETTINGS)
        self.counts = collections.Counter()
        self.fires = collections.Counter()  # dot1x_status fires per targetId
        self.advance = 0.0
        self._clear()
        self.db = None
        if state_path:
            self.db = sqlite3.connect(state_path, check_same_thread=False)
            self.db.execute("PRAGMA synchronous=OFF")  # committed on every write, but no fsync: it is an emulator
            # One row per device; ids may repeat (seeded records of a faulty server). Files of the
            # earlier schema (table device, id as primary key) are still read.
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS device_row (row INTEGER PRIMARY KEY, id INTEGER NOT NULL,"
                " hostname TEXT NOT NULL, grp TEXT, profile TEXT, macs TEXT NOT NULL, ips TEXT NOT NULL,"
                " created REAL NOT NULL, shown TEXT)"
            )
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self.db.commit()
            if self._load_state():
                return
        self.reset()

    # ---- configuration and state -------------------------------------------------------------

    def _check_config(self):
        if self.config["creation_reply"] not in CREATION_REPLIES:
            raise ValueError("creation_reply must be one of %s" % ", ".join(CREATION_REPLIES))
        problems = settings_problems(dict((key, self.config[key]) for key in SETTINGS))
        if problems:
            raise ValueError("; ".join("%s %s" % item for item in sorted(problems.items())))
        if not is_int(self.config["seed_devices"]) or not 0 <= self.config["seed_devices"] <= BULK_MAX:
            raise ValueError("seed_devices must be a whole number from 0 to %d" % BULK_MAX)
        for profile in self.profiles.values():
            if not all(is_int(profile.get(k)) for k in ("max_pairs", "host_start", "host_end")):
                raise ValueError("profile %s needs integer max_pairs, host_start and host_end" % profile.get("name"))
        for seed in self.config["devices"]:
            if seed.get("group") not in self.groups or seed.get("profile") not in self.profiles:
                raise ValueError("seeded device %s: unknown group or profile" % seed.get("hostname"))

    def _add_bulk_group(self):
        """The group and profile of bulk-seeded devices (unless the config has its own of that name)."""
        self.groups.setdefault(BULK_GROUP["name"], ipaddress.IPv4Network(BULK_GROUP["subnet"]))
        self.profiles.setdefault(BULK_PROFILE["name"], dict(BULK_PROFILE))

    @property
    def allow_duplicate_hostnames(self):
        return self.settings["allow_duplicate_hostnames"]

    def clock(self):
        """The virtual clock of the 802.1x model: monotonic time plus every advance."""
        return time.monotonic() + self.advance

    def reset(self):
        """Back to the configured devices, settings, clock, counters and faults (and rewrite the state file)."""
        self.faults.reset()
        with self.lock:
            self.counts.clear()
            self.fires.clear()
            self.advance = 0.0
            self.settings = dict((key, self.config[key]) for key in SETTINGS)
            self._clear()
            self._set_overrides()
            now = self.clock()
            seeds = self.config["devices"]
            taken = [s["id"] for s in seeds if is_int(s.get("id"))]
            if len(set(taken)) != len(taken):
                raise ValueError("seeded devices repeat an id")
            used = set(taken)
            free_ids = (i for i in itertools.count(1) if i not in used)
            for seed in seeds:
                device_id = seed["id"] if is_int(seed.get("id")) else next(free_ids)
                macs = [m.lower() for m in seed.get("macs") or []]
                ips = list(seed.get("ips") or [])
                if not ips:  # seeding never refuses: take what the profile range still has
                    profile = self.profiles[seed["profile"]]
                    ips = self._free_ips(self.groups[seed["group"]], profile, len(macs) or profile["max_pairs"])
                created = now if seed.get("authenticated") is False else now - SETTLED_AGE
                self._add(
                    dict(
                        id=device_id,
                        hostname=seed["hostname"],
                        group=seed["group"],
                        profile=seed["profile"],
                        macs=macs,
                        ips=ips,
                        created=created,
                    )
                )
            if self.config["seed_devices"]:
                self._bulk_locked(self.config["seed_devices"], "bulk-", 1, write=False)
            self._write_state()

    def _set_overrides(self):
        """The configured 802.1x overrides (by hostname); none by id (those come from POST /_emulator/dot1x)."""
        self.overrides = dict((k.lower(), dict(v)) for k, v in (self.dot1x.get("overrides") or {}).items())
        self.id_overrides = {}

    def _clear(self):
        self.devices, self.by_id, self.by_host, self.by_mac, self.by_ip = {}, {}, {}, {}, {}
        self.next_id, self.next_row, self._list_cache, self._parts = 1, 1, None, None

    def _key(self, hostname):
        return hostname_key(hostname, self.settings["hostname_match"])

    def _add(self, device):
        """Index a new device (call with the lock held); ``row`` is assigned unless given (loading state)."""
        row = device.setdefault("row", self.next_row)
        self.next_row = max(self.next_row, row + 1)
        self.devices[row] = device
        self.by_id.setdefault(device["id"], []).append(row)
        self.by_host.setdefault(self._key(device["hostname"]), set()).add(row)
        self.by_mac.update((mac, row) for mac in device["macs"])
        self.by_ip.update((ip, row) for ip in device["ips"])
        self.next_id = max(self.next_id, device["id"] + 1)
        self._list_cache = self._parts = None

    def _reindex_hostnames(self):
        self.by_host = {}
        for row, device in self.devices.items():
            self.by_host.setdefault(self._key(device["hostname"]), set()).add(row)

    def _load_state(self):
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        if "next_id" not in meta:
            return False
        self.advance = float(meta.get("advance", 0.0))
        offset = time.time() - time.monotonic()  # created is stored as wall time, held as clock time
        rows = list(
            self.db.execute(
                "SELECT row, id, hostname, grp, profile, macs, ips, created, shown FROM device_row ORDER BY row"
            )
        )
        legacy = self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'device'").fetchone()
        if not rows and legacy:
            rows = [
                (None,) + row + (None,)
                for row in self.db.execute(
                    "SELECT id, hostname, grp, profile, macs, ips, created FROM device ORDER BY id"
                )
            ]
        for row in rows:
            device = dict(
                id=row[1],
                hostname=row[2],
                group=row[3],
                profile=row[4],
                macs=json.loads(row[5]),
                ips=json.loads(row[6]),
                created=row[7] - offset,
            )
            if row[0] is not None:
                device["row"] = row[0]
            if row[8] is not None:
                device["shown"] = json.loads(row[8])
            self._add(device)
        self.next_id = max(self.next_id, int(meta["next_id"]))
        if legacy:
            self._write_state()
            self.db.execute("DROP TABLE device")
            self.db.commit()
        return True

    def _write_state(self, devices=None):
        """Persist new devices (a list), or (devices None) the whole table; call with the lock held."""
        if self.db is None:
            return
        offset = time.time() - time.monotonic()
        if devices is None:
            self.db.execute("DELETE FROM device_row")
            devices = list(self.devices.values())
        self.db.executemany(
            "INSERT INTO device_row VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    d["row"],
                    d["id"],
                    d["hostname"],
                    d["group"],
                    d["profile"],
                    json.dumps(d["macs"]),
                    json.dumps(d["ips"]),
                    d["created"] + offset,
                    json.dumps(d["shown"]) if d.get("shown") is not None else None,
                )
                for d in devices
            ],
        )
        self.db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [("next_id", str(self.next_id)), ("advance", repr(self.advance))],
        )
        self.db.commit()

    def advance_clock(self, seconds):
        with self.lock:
            self.advance += seconds
            if self.db is not None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('advance', ?)", (repr(self.advance),))
                self.db.commit()
            return self.advance

    def close(self):
        with self.lock:
            if self.db is not None:
                self.db.close()
                self.db = None

    def count(self, method, path):
        with self.lock:
            self.counts["%s %s" % (method, path)] += 1

    def request_counts(self):
        with self.lock:
            return dict(self.counts)

    def total_requests(self):
        with self.lock:
            return sum(self.counts.values())

    # ---- server variants (README, "Server variants") ------------------------------------------

    def configure(self, changes):
        """Change some settings (SETTINGS); ValueError-free: returns {key: problem}, and changes nothing on a
        problem."""
        problems = settings_problems(changes)
        if problems:
            return problems
        with self.lock:
            rematch = changes.get("hostname_match", self.settings["hostname_match"]) != self.settings["hostname_match"]
            self.settings.update(changes)
            if rematch:
                self._reindex_hostnames()
        return {}

    def settings_snapshot(self):
        with self.lock:
            return dict((key, self.settings[key]) for key in SETTINGS)

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

    def records(self):
        """Every device as GET /api/device lists it when it is not paginated nor padded (a copy)."""
        return json.loads(self._list_body())

    def _sorted_records(self):
        """The listed records in list order: ids ascending, repeated ids in insertion order; lock held."""
        return [self._record(d) for d in sorted(self.devices.values(), key=lambda d: (d["id"], d["row"]))]

    def _list_parts(self):
        """The JSON of each listed record, in list order (for pages and padding); lock held."""
        if self._parts is None:
            self._parts = [json.dumps(record).encode("utf-8") for record in self._sorted_records()]
        return self._parts

    def _list_body(self):
        """The whole list as JSON (json.dumps of the records: the same bytes as the parts joined)."""
        with self.lock:
            if self._list_cache is None:
                self._list_cache = json.dumps(self._sorted_records()).encode("utf-8")
            return self._list_cache

    def _paged_reply(self, parts, params, path, pad=0):
        """The reply of a list endpoint: the whole list, or one page of it as the settings say
        (README, "Pagination"); ``pad`` bytes of padding spread over the listed records."""
        settings = self.settings
        size, style = settings["page_size"], settings["page_style"]
        total = len(parts)
        if size <= 0:
            return (200, JSON_TYPE, self._json_array(parts, pad), ())
        query = params.get("query") or {}
        page, per_page = self._query_int(query, "page", 1), min(self._query_int(query, "per_page", size), size)
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
            body = self._json_array(here, pad, prefix=b'{"items": ', suffix=tail.encode("ascii"))
        else:
            body = self._json_array(here, pad)
        return (200, JSON_TYPE, body, tuple(headers))

    def _json_array(self, parts, pad, prefix=b"", suffix=b""):
        """``prefix`` + the JSON array of ``parts`` + ``suffix``; with ``pad``, a Stream whose records carry a
        ``notes`` field of "x" characters, ``pad`` of them in all (an empty array: ``pad`` spaces inside it)."""
        if not pad:
            return prefix + b"[" + b", ".join(parts) + b"]" + suffix
        segments = [prefix + b"["]
        if not parts:
            segments += [(pad, b" "), b"]" + suffix]
            return Stream(segments, self.settings["pad_list_chunked"])
        share, extra = divmod(pad, len(parts))
        for index, part in enumerate(parts):
            segments.append((b", " if index else b"") + part[:-1] + b', "notes": "')
            segments.append((share + (1 if index < extra else 0), b"x"))
            segments.append(b'"}')
        segments.append(b"]" + suffix)
        return Stream(segments, self.settings["pad_list_chunked"])

    @staticmethod
    def _query_int(query, name, default):
        values = query.get(name)
        if not values:
            return default
        if not re.match(r"^[0-9]{1,9}$", values[0]) or int(values[0]) < 1:
            raise validation_error({name: "must be a whole number from 1, got %r" % values[0][:40]})
        return int(values[0])

    # ---- authentication and routing ---------------------------------------------------------

    def authenticate(self, headers):
        """The account of the request; 500 (HTML) for bad credentials, 403 without public_api."""
        scheme, _sep, credentials = (headers.get("Authorization") or "").strip().partition(" ")
        credentials = credentials.strip()
        account = None
        if scheme.lower() == "bearer":
            account = self.keys.get(credentials)
        elif scheme.lower() == "basic":
            try:
                user, _sep, password = base64.b64decode(credentials, validate=True).decode("utf-8").partition(":")
            except (binascii.Error, ValueError):
                user, password = None, ""
            account = self.users.get(user)
            if account is not None and not hmac.compare_digest(
                password.encode(), str(account.get("password")).encode()
            ):
                account = None
        if account is None:
            raise server_error()
        tenant = account.get("tenant")
        if tenant and not hmac.compare_digest((headers.get("X-Tenant") or "").encode(), str(tenant).encode()):
            raise server_error()
        if "public_api" not in (account.get("privileges") or ()):
            raise error(403, "Forbidden", "The account lacks the privilege public_api")
        return account

    def handle_api(self, method, path, headers, body, query=None, base=None):
        """The reply to one /api request; ``query`` is its query string, ``base`` its scheme://host[:port]
        (for the links of a paginated list)."""
        account = self.authenticate(headers)
        allowed = []
        for route_method, pattern, name in self.ROUTES:
            match = pattern.match(path)
            if match and route_method == method:
                params = match.groupdict()
                params.update(query=parse_qs(query or "", keep_blank_values=True), base=base, path=path)
                return getattr(self, name)(account, params, body)
            if match:
                allowed.append(route_method)
        if allowed:
            raise error(
                405,
                "Method not allowed",
                "%s is not allowed on %s (allowed: %s)" % (method, path, ", ".join(allowed)),
                headers=[("Allow", ", ".join(allowed))],
            )
        raise error(404, "Not found", "No endpoint %s %s" % (method, path))

    def account_intents(self, account):
        return [tag for tag in self.intents if tag in (account.get("intents") or ())]

    # ---- endpoints --------------------------------------------------------------------------

    def list_intents(self, account, params, _body):
        parts = [
            json.dumps({"tag": tag, "name": self.intents[tag].get("name", tag)}).encode("utf-8")
            for tag in self.account_intents(account)
        ]
        with self.lock:
            return self._paged_reply(parts, params or {}, "/api/intent")

    def list_devices(self, _account, params, _body):
        params = params or {}
        with self.lock:
            settings = self.settings
            if settings["page_size"] <= 0 and not settings["pad_list_bytes"]:
                if self._list_cache is None:
                    self._list_cache = json.dumps(self._sorted_records()).encode("utf-8")
                return (200, JSON_TYPE, self._list_cache, ())
            return self._paged_reply(self._list_parts(), params, "/api/device", pad=settings["pad_list_bytes"])

    @staticmethod
    def _record(device):
        shown = device.get("shown")
        if shown is not None:
            record = collections.OrderedDict((("id", device["id"]), ("hostname", device["hostname"])))
            record.update(shown)
            return record
        return dict((k, device[k]) for k in ("id", "hostname", "group", "profile", "macs", "ips"))

    def create_device(self, _account, _params, body):
        data = parse_object(body)
        fields = {}
        hostname = self._required_string(data, "hostname", fields)
        unicode_names = self.settings["hostname_chars"] == "unicode"
        if hostname and len(hostname) > 63:
            fields["hostname"] = "must be at most 63 characters long"
        elif hostname and not (unicode_hostname_ok(hostname) if unicode_names else HOSTNAME_RE.match(hostname)):
            fields["hostname"] = "may contain only letters, %sdigits, hyphens and dots" % (
                "marks, " if unicode_names else ""
            )
        group = self._known_name(data, "group", self.groups, fields)
        profile = self._known_name(data, "profile", self.profiles, fields)
        network = self.groups.get(group)
        macs = self._string_list(data, "macs", fields, self._normal_mac)
        ips = self._string_list(data, "ips", fields, lambda ip: self._normal_ip(ip, group, network))
        if profile in self.profiles:
            most = self.profiles[profile]["max_pairs"]
            for key, values in (("macs", macs), ("ips", ips)):
                if len(values) > most:
                    fields[key] = "profile %s allows at most %d IP/MAC pair(s), got %d" % (profile, most, len(values))
        if fields:
            raise validation_error(fields)
        with self.lock:
            device = self._create_locked(hostname, group, self.profiles[profile], macs, ips)
        mode = self.config["creation_reply"]
        if mode == "empty":
            return (201, JSON_TYPE, b"", ())
        return json_reply(201, {"id": device["id"]} if mode == "id" else self._record(device))

    def _create_locked(self, hostname, group, profile, macs, ips):
        clash = self.by_host.get(self._key(hostname))
        if clash and not self.settings["allow_duplicate_hostnames"]:
            owner = min((self.devices[row] for row in clash), key=lambda d: (d["id"], d["row"]))
            listed = "" if owner["hostname"] == hostname else "; it is listed as %s" % owner["hostname"]
            raise error(
                409, "Conflict", "A device with hostname %s already exists (id %d)%s" % (hostname, owner["id"], listed)
            )
        for kind, values, index in (("MAC address", macs, self.by_mac), ("IP address", ips, self.by_ip)):
            for value in values:
                if value in index:
                    owner = self.devices[index[value]]
                    raise error(
                        409,
                        "Conflict",
                        "%s %s is already used by device %s (id %d)" % (kind, value, owner["hostname"], owner["id"]),
                    )
        if not ips:  # rule 1 (no MACs: every pair the profile allows) and "not shown" (one IP per given MAC)
            needed = len(macs) or profile["max_pairs"]
            ips = self._free_ips(self.groups[group], profile, needed)
            if len(ips) < needed:
                span = "range .%d-.%d" % (profile["host_start"], profile["host_end"])
                what = "No free IP address" if not ips else "Not enough free IP addresses (%d needed)" % needed
                raise error(
                    409, "Conflict", "%s left for profile %s in group %s (%s)" % (what, profile["name"], group, span)
                )
        device = dict(
            id=self.next_id,
            hostname=hostname,
            group=group,
            profile=profile["name"],
            macs=macs,
            ips=ips,
            created=self.clock(),
        )
        self._add(device)
        self._write_state([device])
        return device

    def _free_ips(self, network, profile, count):
        """Lowest free addresses of the profile's host range within the group's subnet."""
        free = []
        last = min(profile["host_end"], network.num_addresses - 2)
        for offset in range(max(profile["host_start"], 1), last + 1):
            address = str(network.network_address + offset)
            if address not in self.by_ip:
                free.append(address)
                if len(free) >= count:
                    break
        return free

    @staticmethod
    def _required_string(data, key, fields):
        value = data.get(key)
        if value is None:
            fields[key] = "is required"
        elif not isinstance(value, str):
            fields[key] = "must be a string"
        elif not value.strip():
            fields[key] = "must not be empty"
        else:
            return value
        return None

    def _known_name(self, data, key, known, fields):
        value = self._required_string(data, key, fields)
        if value is not None and value not in known:
            fields[key] = "unknown %s %s; known %ss: %s" % (key, value, key, ", ".join(sorted(known)))
        return value

    @staticmethod
    def _string_list(data, key, fields, normalise):
        """Validate an optional list; null and [] count as omitted. normalise returns (value, problem)."""
        values = data.get(key)
        if values is None:
            return []
        if not isinstance(values, list):
            fields[key] = "must be a list of strings"
            return []
        result = []
        for index, item in enumerate(values):
            value, problem = normalise(item) if isinstance(item, str) else (None, "must be a string")
            if problem is None and value in result:
                problem = "duplicate value %s" % value
            if problem:
                fields["%s[%d]" % (key, index)] = problem
            else:
                result.append(value)
        return result

    @staticmethod
    def _normal_mac(mac):
        if MAC_RE.match(mac):
            return mac.lower(), None
        return None, "%s is not a MAC address (expected six colon-separated hex pairs, xx:xx:xx:xx:xx:xx)" % mac

    @staticmethod
    def _normal_ip(ip, group, network):
        try:
            address = ipaddress.IPv4Address(ip) if IPV4_RE.match(ip) else None
        except ValueError:
            address = None
        if address is None:
            return None, "%s is not an IPv4 address in dotted notation" % ip
        if network is not None and (
            address not in network or address in (network.network_address, network.broadcast_address)
        ):
            return None, "%s is not a host address of subnet %s of group %s" % (ip, network, group)
        return str(address), None

    def fire_intent(self, account, params, body):
        tag = params["tag"]
        if tag not in self.intents:
            raise error(404, "Not found", "No intent with tag %s" % tag)
        if tag not in self.account_intents(account):
            raise error(403, "Forbidden", "No access to intent %s (%s)" % (tag, self.intents[tag].get("name", tag)))
        data = parse_object(body)
        target, payload = data.get("targetId"), data.get("additionalPayload")
        fields = {}
        if not is_int(target):
            fields["targetId"] = "is required" if target is None else "must be an integer"
        if payload is not None and not isinstance(payload, dict):
            fields["additionalPayload"] = "must be an object"
        if fields:
            raise validation_error(fields)
        if tag != "dot1x_status":
            return json_reply(200, {"result": "ok"})
        with self.lock:
            self.fires[target] += 1
            rows = self.by_id.get(target)
            if not rows:
                raise error(404, "Not found", "No device with id %d" % target)
            device = self.devices[rows[0]]  # ids repeated by a faulty list: the first of them answers
            result = self.dot1x_result(device)
        if (payload or {}).get("json") is True:
            return json_reply(200, result)
        text = "Device %s (id %d): %s" % (device["hostname"], device["id"], result.get("status", "status unknown"))
        for prefix, key in ((" via ", "authMethod"), (" as ", "username"), (" - ", "message")):
            if result.get(key):
                text += prefix + str(result[key])
        return (200, "text/plain; charset=utf-8", (text + "\n").encode("utf-8"), ())

    def dot1x_result(self, device):
        if not device["macs"]:
            result = {
                "status": "UNAUTHENTICATED",
                "authMethod": None,
                "username": None,
                "message": "No MAC address registered for this device",
            }
        elif self.clock() - device["created"] >= float(self.dot1x["auth_delay"]):
            result = {
                "status": "AUTHENTICATED",
                "authMethod": self.dot1x["auth_method"],
                "username": device["hostname"].lower(),
                "message": None,
            }
        else:
            result = {
                "status": "CONNECTING",
                "authMethod": None,
                "username": None,
                "message": "Authentication in progress",
            }
        override = dict(self.overrides.get(device["hostname"].lower()) or {})
        override.update(self.id_overrides.get(device["id"]) or {})
        result.update((key, override[key]) for key in RESULT_KEYS if key in override)
        if override.get("omit_status"):
            result.pop("status", None)
        return result

    # ---- admin endpoints (no auth, not counted, no latency) ----------------------------------

    ADMIN_ROUTES = {
        "/_emulator/health": {"GET": "admin_health"},
        "/_emulator/requests": {"GET": "admin_requests"},
        "/_emulator/reset": {"POST": "admin_reset"},
        "/_emulator/clock": {"POST": "admin_clock"},
        "/_emulator/faults": {"GET": "admin_faults", "POST": "admin_set_faults"},
        "/_emulator/settings": {"GET": "admin_settings", "POST": "admin_set_settings"},
        "/_emulator/dot1x": {"POST": "admin_dot1x"},
        "/_emulator/fires": {"GET": "admin_fires"},
        "/_emulator/devices": {"GET": "admin_devices", "POST": "admin_seed_devices"},
    }

    def handle_admin(self, method, path, body):
        methods = self.ADMIN_ROUTES.get(path)
        if methods is None:
            raise error(404, "Not found", "No emulator endpoint %s" % path)
        if method not in methods:
            allowed = ", ".join(sorted(methods))
            raise error(
                405, "Method not allowed", "%s is not allowed on %s" % (method, path), headers=[("Allow", allowed)]
            )
        return json_reply(200, getattr(self, methods[method])(body))

    def admin_health(self, _body):
        return {"ok": True}

    def admin_requests(self, _body):
        return self.request_counts()

    def admin_fires(self, _body):
        with self.lock:
            return dict((str(target), count) for target, count in sorted(self.fires.items()))

    def admin_reset(self, _body):
        self.reset()
        return {"ok": True}

    def admin_clock(self, body):
        seconds = parse_object(body).get("advance")
        if not is_number(seconds) or seconds < 0:
            raise validation_error({"advance": "must be a non-negative number of seconds"})
        return {"ok": True, "advance": self.advance_clock(seconds)}

    def admin_dot1x(self, body):
        """Set (or with ``clear``, drop) the 802.1x override of one device, by ``id`` or ``hostname``."""
        data = parse_object(body)
        unknown = sorted(set(data) - set(RESULT_KEYS) - {"id", "hostname", "omit_status", "clear"})
        if unknown or ("id" in data) == ("hostname" in data):
            raise validation_error(
                {
                    "body": "give id or hostname, and any of %s, omit_status, clear%s"
                    % (", ".join(RESULT_KEYS), "; unknown: " + ", ".join(unknown) if unknown else "")
                }
            )
        override = dict((key, data[key]) for key in RESULT_KEYS + ("omit_status",) if key in data)
        with self.lock:
            if "id" in data:
                if not is_int(data["id"]) or not self.by_id.get(data["id"]):
                    raise error(404, "Not found", "No device with id %r" % (data["id"],))
                table, key = self.id_overrides, data["id"]
            elif isinstance(data["hostname"], str) and data["hostname"]:
                table, key = self.overrides, data["hostname"].lower()
            else:
                raise validation_error({"hostname": "must be a non-empty string"})
            if data.get("clear"):
                table.pop(key, None)
            else:
                table.setdefault(key, {}).update(override)
            return {"ok": True, "override": table.get(key)}

    def admin_faults(self, _body):
        return self.faults.snapshot()

    def admin_set_faults(self, body):
        try:
            self.faults.configure(parse_object(body))
        except FaultSettingsError as exc:
            raise validation_error(exc.problems) from None
        return self.faults.snapshot()

    def admin_settings(self, _body):
        return self.settings_snapshot()

    def admin_set_settings(self, body):
        problems = self.configure(parse_object(body))
        if problems:
            raise validation_error(problems)
        return self.settings_snapshot()

    def admin_devices(self, _body):
        """Every record, whole (never paginated nor padded): what a test reads as the truth."""
        return self.records()

    def admin_seed_devices(self, body):
        """{"devices": [records]} inserts raw records as given; {"count": N, "prefix": "bulk-", "start": 1}
        adds N bulk devices (README, "Seeding records")."""
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            data = None
        if isinstance(data, list):
            data = {"devices": data}
        if not isinstance(data, dict) or ("devices" in data) == ("count" in data):
            raise validation_error(
                {
                    "body": (
                        'give {"devices": [records]} (or the list itself),'
                        ' or {"count": N, "prefix": "bulk-", "start": 1}'
                    )
                }
            )
        if "devices" in data:
            unknown = sorted(set(data) - {"devices"})
            if unknown:
                raise validation_error(dict((key, "unknown key") for key in unknown))
            ids = self.seed_records(data["devices"])
            return {"ok": True, "ids": ids}
        count, prefix, start = data["count"], data.get("prefix", "bulk-"), data.get("start", 1)
        problems = dict((key, "unknown key") for key in sorted(set(data) - {"count", "prefix", "start"}))
        if not is_int(count) or not 0 <= count <= BULK_MAX:
            problems["count"] = "must be a whole number from 0 to %d" % BULK_MAX
        if not isinstance(prefix, str) or len(prefix) > 50:
            problems["prefix"] = "must be a string of at most 50 characters"
        if not is_int(start) or start < 0:
            problems["start"] = "must be a whole number, 0 or more"
        if problems:
            raise validation_error(problems)
        first, last = self.seed_bulk(count, prefix, start)
        return {"ok": True, "count": count, "first_id": first, "last_id": last}


class Faults:
    """Fault injection in front of the API (README, "Faults"); thread-safe.

    Each /api request (of ``only``, when given) draws once from a seeded generator: with probability
    ``rate`` it gets one of ``modes``, evenly chosen, until ``limit`` faults were injected.
    reset() returns to the settings given at construction.
    """

    def __init__(self, settings=None):
        self.initial, problems = fault_settings(FAULT_DEFAULTS, settings or {})
        if problems:
            raise FaultSettingsError(problems)
        self.lock = threading.Lock()
        self.generation = 0  # bumped by reset(): a late commit of an earlier generation is dropped
        self.reset()

    def reset(self):
        with self.lock:
            self._apply(self.initial, reseed=True)
            self.injected = collections.Counter()
            self.holding = 0
            self.generation += 1

    def _apply(self, settings, reseed):
        """Call with the lock held. A null seed is replaced by a random one, shown by snapshot()."""
        self.settings = dict(settings)
        if reseed:
            if self.settings["seed"] is None:
                self.settings["seed"] = random.SystemRandom().randrange(2**32)
            self.random = random.Random(self.settings["seed"])

    def configure(self, changes):
        """Change some settings (keys of FAULT_DEFAULTS); a given seed restarts the generator."""
        with self.lock:
            settings, problems = fault_settings(self.settings, changes)
            if problems:
                raise FaultSettingsError(problems)
            self._apply(settings, reseed="seed" in changes)

    def draw(self, method=None, path=None):
        """The fault mode for the next /api request (``method`` ``path``, query stripped), or None."""
        with self.lock:
            rate, only, limit = self.settings["rate"], self.settings["only"], self.settings["limit"]
            if rate <= 0:
                return None
            if only and "%s %s" % (method, path) not in only:
                return None
            if limit is not None and sum(self.injected.values()) >= limit:
                return None
            if self.random.random() >= rate:
                return None
            mode = self.random.choice(self.settings["modes"])
            self.injected[mode] += 1
            return mode

    def reply(self, mode):
        """The reply of a fault answered in front of the service (500, 502, 503, 429)."""
        if mode == "500":
            return server_error().reply
        if mode == "429":
            seconds = self.settings["retry_after"]
            return json_reply(
                429,
                {"error": "Too many requests", "message": "Rate limit exceeded, retry in %d s" % seconds},
                headers=[("Retry-After", str(seconds))],
            )
        status = int(mode)
        reason = BaseHTTPRequestHandler.responses[status][0]
        return (status, "text/html", GATEWAY_HTML % (status, reason.encode(), status, reason.encode()), ())

    def hold(self):
        """Hold a slow request for ``slow`` seconds (never under the lock)."""
        with self.lock:
            seconds = self.settings["slow"]
            self.holding += 1
            generation = self.generation
        try:
            time.sleep(seconds)
        finally:
            with self.lock:
                if generation == self.generation:
                    self.holding -= 1

    def commit_delay(self):
        with self.lock:
            return self.settings["commit_delay"]

    def later(self, action):
        """Run ``action`` (a late commit) ``commit_delay`` seconds from now in its own thread; counted in
        ``holding`` until it has run. Dropped when reset() comes first."""
        with self.lock:
            seconds = self.settings["commit_delay"]
            self.holding += 1
            generation = self.generation

        def run():
            time.sleep(seconds)
            with self.lock:
                current = generation == self.generation
            try:
                if current:
                    action()
            except ApiError:
                pass  # processed late and refused (a conflict, say): nobody hears of it, as with any lost reply
            except Exception:  # pylint: disable=broad-except
                traceback.print_exc()
            finally:
                with self.lock:
                    if generation == self.generation:
                        self.holding -= 1

        threading.Thread(target=run, name="nac-emulator-late-commit", daemon=True).start()

    def snapshot(self):
        """The settings, the faults injected by mode since start/reset, and the requests held now (slow, late
        commits)."""
        with self.lock:
            injected = dict((mode, self.injected[mode]) for mode in FAULT_MODES)
            settings = dict(self.settings, modes=list(self.settings["modes"]))
            if settings["only"] is not None:
                settings["only"] = list(settings["only"])
            return dict(settings, injected=injected, total=sum(injected.values()), holding=self.holding)


def outage_problems(seconds, mode, delay, after_requests):
    problems = {}
    if not is_number(seconds) or not 0 < seconds <= 3600:
        problems["seconds"] = "must be a number of seconds, above 0 and at most 3600"
    if mode not in OUTAGE_MODES:
        problems["mode"] = "must be one of %s" % ", ".join(OUTAGE_MODES)
    if not is_number(delay) or delay < 0:
        problems["delay"] = "must be a number of seconds, 0 or more"
    if after_requests is not None and (not is_int(after_requests) or after_requests < 1):
        problems["after_requests"] = "must be null or a whole number of /api requests, 1 or more"
    if after_requests is not None and is_number(delay) and delay > 0:
        problems["after_requests"] = "give delay or after_requests, not both"
    return problems


class OutageError(ValueError):
    """An outage that cannot be scheduled; ``problems`` maps each bad key to what is wrong."""

    def __init__(self, problems):
        super(OutageError, self).__init__("outage: " + "; ".join("%s %s" % item for item in sorted(problems.items())))
        self.problems = problems


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, address, emulator):
        self.emulator = emulator
        self.connections = set()
        self.connections_lock = threading.Lock()
        # What tests check instead of timings: connections accepted, /api requests delayed by the latency,
        # and the most of them delayed at the same moment. Kept by the emulator: they outlive a restart.
        self.stats, self.stats_lock = emulator._stats, emulator._stats_lock
        ThreadingHTTPServer.__init__(self, address, _Handler)

    def server_bind(self):
        # HTTPServer.server_bind would resolve the host name (getfqdn), which can stall.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def close_connections(self):
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "NAC-Emulator/1.0"
    sys_version = ""
    timeout = 300

    def setup(self):
        BaseHTTPRequestHandler.setup(self)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)
        with self.server.stats_lock:
            self.server.stats["connections"] += 1

    def finish(self):
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        BaseHTTPRequestHandler.finish(self)

    def dispatch(self):
        emulator = self.server.emulator
        if emulator.refusing():  # a restart under way: this connection dies with the old process
            self._abort()
            return
        path, _sep, query = self.path.partition("?")
        after = None
        try:
            body = self._read_body()
            if path == "/_emulator/outage":
                reply, after = emulator.admin_outage(self.command, body)
            elif path.startswith("/_emulator/"):
                reply = emulator.model.handle_admin(self.command, path, body)
            elif path == "/api" or path.startswith("/api/"):
                if emulator.silenced():  # accepted, never answered: dropped when the outage ends
                    emulator.wait_silence()
                    self.close_connection = True
                    return
                emulator.model.count(self.command, path)
                after = emulator.api_request_counted()
                fault = emulator.model.faults.draw(self.command, path)
                if emulator.latency > 0:
                    self._delay(emulator.latency)
                reply = self._api(fault, path, query, body)
            else:
                raise error(404, "Not found", "No such path %s" % path)
        except ApiError as exc:
            reply = exc.reply
        except Exception as exc:  # pylint: disable=broad-except
            traceback.print_exc()
            reply = json_reply(500, {"error": "Internal error", "message": str(exc)})
        if reply is not None:
            self._send(reply)
        if after is not None:
            after()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = dispatch

    def _abort(self):
        """Close the connection with a TCP RST (SO_LINGER 0), no reply."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def _base(self):
        """scheme://host[:port] of this request, for the absolute links of a paginated list."""
        emulator = self.server.emulator
        host = (self.headers.get("Host") or "").strip()
        if not HOST_HEADER_RE.match(host):
            host = "%s:%d" % (emulator.host, emulator.port)
        return "%s://%s" % ("https" if emulator.tls else "http", host)

    def _api(self, fault, path, query, body):
        """The reply to an /api request under ``fault`` (README, "Faults"); None: no reply at all."""
        model = self.server.emulator.model
        if fault in ("500", "502", "503", "429"):  # answered in front of the service: nothing processed
            return model.faults.reply(fault)
        if fault == "reset":  # aborted before processing: a TCP RST (SO_LINGER 0), no reply
            self._abort()
            return None
        method, headers, base = self.command, self.headers, self._base()

        def process():
            return model.handle_api(method, path, headers, body, query=query, base=base)

        if fault in ("commit_drop", "commit_500") and model.faults.commit_delay() > 0:
            model.faults.later(process)  # the reply is lost now; the commit lands commit_delay seconds later
            if fault == "commit_drop":
                self.close_connection = True
                return None
            return server_error().reply
        if fault == "slow":  # held past the client's timeout, processed (committed) only then
            model.faults.hold()
        try:
            reply = process()
        except ApiError as exc:
            reply = exc.reply
        if fault == "commit_drop":  # processed, then the connection is closed without a reply
            self.close_connection = True
            return None
        return server_error().reply if fault == "commit_500" else reply

    def _delay(self, seconds):
        """Sleep never under a lock, so that latency does not serialise requests."""
        stats, lock = self.server.stats, self.server.stats_lock
        with lock:
            stats["delayed"] += 1
            stats["delaying"] += 1
            stats["most_delaying"] = max(stats["most_delaying"], stats["delaying"])
        try:
            time.sleep(seconds)
        finally:
            with lock:
                stats["delaying"] -= 1

    def _read_body(self):
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise error(411, "Length required", "Send the body with a Content-Length, not chunked")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            raise error(413 if length > MAX_BODY else 400, "Bad request", "Invalid or too large Content-Length")
        return self.rfile.read(length) if length else b""

    def _send(self, reply):
        status, content_type, body, headers = reply
        stream = body if isinstance(body, Stream) else None
        framing = "Transfer-Encoding: chunked" if stream and stream.chunked else "Content-Length: %d" % len(body)
        lines = [
            "%s %d %s" % (self.protocol_version, status, self.responses.get(status, ("",))[0]),
            "Server: " + self.server_version,
            "Date: " + self.date_time_string(),
            "Content-Type: " + content_type,
            framing,
        ]
        lines.extend("%s: %s" % header for header in headers)
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            if stream is None:
                self.wfile.write(head + body)  # one send per reply
            else:  # piece by piece: the emulator never holds a padded reply whole
                self.wfile.write(head)
                for piece in stream.pieces():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if stream.chunked else piece)
                if stream.chunked:
                    self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client is gone (it gave up on a slow or large reply, for one)
            self.close_connection = True
            return
        self.log_request(status, len(body))

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        if self.server.emulator.verbose:  # the request line only; headers (Authorization) are never logged
            BaseHTTPRequestHandler.log_message(self, format, *args)


class Emulator:
    """The NAC API emulator: ``Emulator(config, latency, state_path).start()``; see the README."""

    def __init__(
        self,
        config=None,
        latency=0.0,
        state_path=None,
        verbose=False,
        tls_cert=None,
        tls_key=None,
        faults=None,
        outage=None,
    ):
        self.model = NacModel(config, state_path, faults)
        self.latency = float(latency)
        self.verbose = verbose
        self.tls = None
        if tls_cert:  # HTTPS with this PEM certificate (and key, unless the certificate file holds it)
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(tls_cert, tls_key)
        if outage:  # scheduled at start: {"seconds", "mode", "delay", "after_requests"} (README, "Outages")
            outage = dict(dict(mode="refuse", delay=0.0, after_requests=None), **outage)
            problems = outage_problems(outage.get("seconds"), outage["mode"], outage["delay"], outage["after_requests"])
            problems.update(
                (key, "unknown key") for key in set(outage) - {"seconds", "mode", "delay", "after_requests"}
            )
            if problems:
                raise OutageError(problems)
        self._start_outage = outage
        self.host = None
        self._port = None
        self._server = None
        self._thread = None
        self._running = False
        self._stats = dict(connections=0, delayed=0, delaying=0, most_delaying=0)
        self._stats_lock = threading.Lock()
        self._lock = threading.RLock()  # the listening server and the outage
        self._outage = dict(state="none")
        self._outage_token = 0
        self._outage_timers = []
        self._outages = 0
        self._unanswered = 0
        self._silence_over = threading.Event()
        self._silence_over.set()

    def start(self, host="127.0.0.1", port=0):
        with self._lock:
            if self._running:
                raise RuntimeError("the emulator is already running")
            self._listen(host, port)
            self.host, self._port, self._running = host, self._server.server_address[1], True
        if self._start_outage:
            self.outage(**self._start_outage)
        return self

    def _listen(self, host, port):
        """Bind, listen and serve in a thread (call with the lock held)."""
        server = _Server((host, port), self)
        if self.tls:
            # The handshake happens in the connection's own thread, on its first read.
            server.socket = self.tls.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="nac-emulator", daemon=True
        )
        thread.start()
        self._server, self._thread = server, thread

    @property
    def port(self):
        return self._port if self._running else None

    @property
    def url(self):
        return "%s://%s:%s" % ("https" if self.tls else "http", self.host, self._port) if self._running else None

    def request_counts(self):
        return self.model.request_counts()

    def server_stats(self):
        """{connections: accepted so far, delayed: /api requests delayed by the latency,
        most_delaying: the most of them delayed at the same moment} (since start, across restarts)."""
        with self._stats_lock:
            stats = dict(self._stats)
        del stats["delaying"]
        return stats

    def reset(self):
        self.model.reset()

    def faults(self, **changes):
        """Change the fault settings (as POST /_emulator/faults) and return the snapshot (as its GET)."""
        if changes:
            self.model.faults.configure(changes)
        return self.model.faults.snapshot()

    def settings(self, **changes):
        """Change server-variant settings (as POST /_emulator/settings) and return them all (as its GET)."""
        problems = self.model.configure(changes)
        if problems:
            raise ValueError("settings: " + "; ".join("%s %s" % item for item in sorted(problems.items())))
        return self.model.settings_snapshot()

    def seed(self, records):
        """Insert raw records as given (as POST /_emulator/devices); returns their ids."""
        try:
            return self.model.seed_records(records)
        except ApiError as exc:
            raise ValueError("seed: %s" % exc.reply[2].decode("utf-8")) from None

    def seed_bulk(self, count, prefix="bulk-", start=1):
        """Add ``count`` bulk devices (as POST /_emulator/devices {"count": N}); returns (first id, last id)."""
        return self.model.seed_bulk(count, prefix, start)

    def records(self):
        """Every device record, whole (never paginated nor padded)."""
        return self.model.records()

    def advance_clock(self, seconds):
        return self.model.advance_clock(seconds)

    # ---- outages (README, "Outages") ----------------------------------------------------------

    def outage(self, seconds, mode="refuse", delay=0.0, after_requests=None):
        """Schedule an outage of ``seconds`` (refused connections, or silence) to begin after ``delay`` seconds,
        or once ``after_requests`` more /api requests were counted, or now; returns outage_state()."""
        token, now = self._schedule_outage(seconds, mode, delay, after_requests)
        if now:
            self._begin_outage(token)
        return self.outage_state()

    def _schedule_outage(self, seconds, mode, delay, after_requests):
        """(token, now): ``now`` when the outage is to begin at once (the caller begins it)."""
        problems = outage_problems(seconds, mode, delay, after_requests)
        with self._lock:
            if not self._running:
                problems["state"] = "the emulator is not running"
            elif self._outage["state"] in ("scheduled", "active"):
                problems["state"] = "an outage is already %s" % self._outage["state"]
            if problems:
                raise OutageError(problems)
            self._outage_token += 1
            token = self._outage_token
            threshold = self.model.total_requests() + after_requests if after_requests else None
            self._outage = dict(
                state="scheduled",
                mode=mode,
                seconds=seconds,
                delay=delay,
                after_requests=after_requests,
                threshold=threshold,
                ends=None,
            )
            if delay > 0:
                self._timer(delay, self._begin_outage, token)
            return token, delay <= 0 and threshold is None

    def _timer(self, seconds, function, *args):
        timer = threading.Timer(seconds, function, args)
        timer.daemon = True
        self._outage_timers = [t for t in self._outage_timers if t.is_alive()] + [timer]
        timer.start()

    def api_request_counted(self):
        """Called once each /api request is counted: an outage scheduled after that many requests becomes
        active now (later requests are refused or held); returns what to run once this request's reply is
        sent (closing the listener), or None."""
        with self._lock:
            outage = self._outage
            if outage["state"] != "scheduled" or outage.get("threshold") is None:
                return None
            if self.model.total_requests() < outage["threshold"]:
                return None
            return self._activate(self._outage_token)

    def _begin_outage(self, token):
        cut = self._activate(token)
        if cut is not None:
            cut()

    def _activate(self, token):
        """Mark the outage active (requests from now on are refused or held); returns the callable that
        closes the listening socket and cuts the open connections (refuse mode), or None."""
        with self._lock:
            outage = self._outage
            if token != self._outage_token or outage["state"] != "scheduled" or not self._running:
                return None
            outage.update(state="active", ends=time.monotonic() + outage["seconds"])
            self._silence_over.clear()
            server, thread = (self._server, self._thread) if outage["mode"] == "refuse" else (None, None)
            if server is not None:
                self._server = self._thread = None
            self._timer(outage["seconds"], self._end_outage, token)
        if server is None:
            return None

        def cut():
            server.shutdown()
            server.close_connections()
            server.server_close()
            thread.join(5)

        return cut

    def _end_outage(self, token):
        with self._lock:
            outage = self._outage
            if token != self._outage_token or outage["state"] != "active":
                return
            silent_server = None
            if self._running and outage["mode"] == "refuse":
                deadline = time.monotonic() + 10
                while True:  # the same port again (SO_REUSEADDR); another process may hold it a moment
                    try:
                        self._listen(self.host, self._port)
                        break
                    except OSError as exc:
                        if time.monotonic() > deadline:
                            sys.stderr.write(
                                "nac_emulator: cannot listen on port %s again after the outage: %s\n"
                                % (self._port, exc)
                            )
                            self._running = False
                            break
                        time.sleep(0.1)
            elif outage["mode"] == "silent":
                silent_server = self._server
            outage.update(state="over", ends=None)
            self._outages += 1
            self._silence_over.set()
        if silent_server is not None:  # what was held unanswered is dropped, as by a restart
            silent_server.close_connections()

    def cancel_outage(self):
        """Drop a scheduled outage, or end an active one now; returns outage_state()."""
        with self._lock:
            state, token = self._outage["state"], self._outage_token
            if state == "scheduled":
                self._outage_token += 1
                self._outage = dict(state="none")
        if state == "active":
            self._end_outage(token)
        return self.outage_state()

    def refusing(self):
        outage = self._outage
        return outage["state"] == "active" and outage["mode"] == "refuse"

    def silenced(self):
        outage = self._outage
        return outage["state"] == "active" and outage["mode"] == "silent"

    def wait_silence(self):
        """Hold an /api request unanswered until the silent outage ends (or the emulator stops)."""
        with self._lock:
            self._unanswered += 1
        self._silence_over.wait()

    def outage_state(self):
        """{"state": none|scheduled|active|over, "mode", "seconds", "delay", "after_requests", "remaining",
        "outages": outages ended since start, "unanswered": /api requests held unanswered by silent outages}."""
        with self._lock:
            outage = dict(self._outage)
            outage.pop("threshold", None)
            ends = outage.pop("ends", None)
            if outage["state"] == "active" and ends is not None:
                outage["remaining"] = round(max(ends - time.monotonic(), 0.0), 3)
            outage.update(outages=self._outages, unanswered=self._unanswered)
            return outage

    def admin_outage(self, method, body):
        """GET / POST /_emulator/outage: (reply, callable to run once the reply is sent)."""
        if method == "GET":
            return json_reply(200, self.outage_state()), None
        if method != "POST":
            raise error(
                405,
                "Method not allowed",
                "%s is not allowed on /_emulator/outage" % method,
                headers=[("Allow", "GET, POST")],
            )
        data = parse_object(body)
        if data.get("cancel") is True and set(data) == {"cancel"}:
            return json_reply(200, self.cancel_outage()), None
        unknown = sorted(set(data) - {"seconds", "mode", "delay", "after_requests"})
        if unknown:
            raise validation_error(
                dict(
                    (key, "unknown key (known: seconds, mode, delay, after_requests; or cancel alone)")
                    for key in unknown
                )
            )
        try:
            token, now = self._schedule_outage(
                data.get("seconds"), data.get("mode", "refuse"), data.get("delay", 0.0), data.get("after_requests")
            )
        except OutageError as exc:
            raise validation_error(exc.problems) from None
        cut = self._activate(token) if now else None  # active before this reply; the listener closes after it
        return json_reply(200, self.outage_state()), cut

    def stop(self):
        with self._lock:
            self._running = False
            self._outage_token += 1  # whatever outage was scheduled or under way ends here
            if self._outage["state"] in ("scheduled", "active"):
                self._outage = dict(self._outage, state="over", ends=None)
            for timer in self._outage_timers:
                timer.cancel()
            self._outage_timers = []
            self._silence_over.set()
            server, thread, self._server, self._thread = self._server, self._thread, None, None
        if server is not None:
            server.shutdown()
            server.close_connections()
            server.server_close()
            thread.join(5)
        self.model.close()

    def __enter__(self):
        if not self._running:
            self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Emulator of the NAC API (see the API guide, docs/docsite/rst/api.rst)."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8787, help="port to listen on, 0 for a free one (default 8787)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds of delay added to every /api request")
    parser.add_argument("--config", help="JSON config file (default: the built-in config)")
    parser.add_argument("--state", help="SQLite file keeping the devices across restarts")
    parser.add_argument("--port-file", help="write the bound port to this file once listening")
    parser.add_argument("--quiet", action="store_true", help="do not print the listening line")
    parser.add_argument("--verbose", action="store_true", help="log every request line to stderr")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert (if not in the certificate file)")
    parser.add_argument(
        "--allow-duplicate-hostnames",
        action="store_true",
        help="create a device whose hostname is in use (MAC and IP conflicts still apply)",
    )
    variants = parser.add_argument_group(
        "server variants (README, Server variants); the defaults are the plain emulator"
    )
    variants.add_argument(
        "--hostname-match",
        choices=HOSTNAME_MATCHES,
        help="when a POSTed hostname duplicates a listed one (duplicates refused): exact code points, ASCII "
        "letters without case after NFC (RFC 4343), or str.casefold() (default ascii-nocase)",
    )
    variants.add_argument(
        "--hostname-chars",
        choices=HOSTNAME_CHARS,
        help="hostnames a creation accepts: ldh (ASCII letters, digits, hyphens, dots; default) or unicode "
        "(letters, marks and digits of any script, hyphens, dots)",
    )
    variants.add_argument(
        "--page-size", type=int, metavar="N", help="paginate GET /api/device and /api/intent, N records a page (0: off)"
    )
    variants.add_argument("--page-style", choices=PAGE_STYLES, help="how a page says there is more (default link)")
    variants.add_argument(
        "--page-foreign-url",
        metavar="ORIGIN",
        help="scheme://host[:port] of the next link of --page-style link-foreign (default http://nac-elsewhere.invalid:PORT)",
    )
    variants.add_argument(
        "--pad-list-bytes", type=int, metavar="N", help="make every GET /api/device reply N bytes larger (streamed)"
    )
    variants.add_argument(
        "--pad-list-chunked", action="store_true", help="send a padded list chunked instead of with a Content-Length"
    )
    variants.add_argument(
        "--seed-devices",
        type=int,
        metavar="N",
        help="also seed N bulk devices (bulk-000001, ...; group and profile Bulk)",
    )
    faults = parser.add_argument_group("fault injection (README, Faults); off unless --faults is above 0")
    faults.add_argument(
        "--faults", type=float, default=0.0, metavar="RATE", help="share of /api requests that get a fault, 0 to 1"
    )
    faults.add_argument(
        "--fault-modes",
        default=",".join(FAULT_MODES),
        metavar="LIST",
        help="comma-separated fault modes to choose from (default all: %(default)s)",
    )
    faults.add_argument(
        "--fault-seed", type=int, help="seed of the fault generator (default: random, shown by GET /_emulator/faults)"
    )
    faults.add_argument(
        "--fault-retry-after",
        type=int,
        default=FAULT_DEFAULTS["retry_after"],
        metavar="SECONDS",
        help="Retry-After of a 429 fault (default %(default)s)",
    )
    faults.add_argument(
        "--fault-slow",
        type=float,
        default=FAULT_DEFAULTS["slow"],
        metavar="SECONDS",
        help="how long a slow request is held before it is processed (default %(default)s)",
    )
    faults.add_argument(
        "--fault-only",
        metavar="LIST",
        help="comma-separated 'METHOD /path' that may get faults, e.g. 'POST /api/device' (default every /api request)",
    )
    faults.add_argument(
        "--fault-limit", type=int, metavar="N", help="inject at most N faults in all (default no limit)"
    )
    faults.add_argument(
        "--commit-delay",
        type=float,
        default=FAULT_DEFAULTS["commit_delay"],
        metavar="SECONDS",
        help="commit_drop and commit_500 lose the reply at once and commit SECONDS later (default 0: at once)",
    )
    outage = parser.add_argument_group("an outage, scheduled at start (README, Outages)")
    outage.add_argument(
        "--outage",
        type=float,
        metavar="SECONDS",
        help="be unreachable for SECONDS, then come back with the state intact",
    )
    outage.add_argument(
        "--outage-mode",
        choices=OUTAGE_MODES,
        default="refuse",
        help=(
            "refuse: connections refused (listening socket closed, open connections cut);"
            " silent: accepted, never answered"
        ),
    )
    outage.add_argument(
        "--outage-delay", type=float, default=0.0, metavar="SECONDS", help="begin SECONDS after start (default 0)"
    )
    outage.add_argument(
        "--outage-after-requests", type=int, metavar="N", help="begin once N /api requests were counted"
    )
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config) if args.config else complete_config(None)
        if args.allow_duplicate_hostnames:
            config["allow_duplicate_hostnames"] = True
        for key in (
            "hostname_match",
            "hostname_chars",
            "page_size",
            "page_style",
            "page_foreign_url",
            "pad_list_bytes",
            "seed_devices",
        ):
            if getattr(args, key) is not None:
                config[key] = getattr(args, key)
        if args.pad_list_chunked:
            config["pad_list_chunked"] = True
        fault_config = dict(
            rate=args.faults,
            modes=[m.strip() for m in args.fault_modes.split(",") if m.strip()],
            seed=args.fault_seed,
            retry_after=args.fault_retry_after,
            slow=args.fault_slow,
            only=[m.strip() for m in args.fault_only.split(",") if m.strip()] if args.fault_only else None,
            limit=args.fault_limit,
            commit_delay=args.commit_delay,
        )
        scheduled = None
        if args.outage is not None:
            scheduled = dict(
                seconds=args.outage,
                mode=args.outage_mode,
                delay=args.outage_delay,
                after_requests=args.outage_after_requests,
            )
        emulator = Emulator(
            config,
            latency=args.latency,
            state_path=args.state,
            verbose=args.verbose,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
            faults=fault_config,
            outage=scheduled,
        ).start(args.host, args.port)
    except (OSError, ValueError, KeyError, sqlite3.Error) as exc:
        sys.stderr.write("nac_emulator: cannot start: %s\n" % exc)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    if not args.quiet:
        print("NAC emulator listening on %s" % emulator.url, flush=True)
    if args.port_file:
        temporary = "%s.%d.tmp" % (args.port_file, os.getpid())
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write("%d\n" % emulator.port)
        os.replace(temporary, args.port_file)
    while not stop.wait(0.5):
        pass
    emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
