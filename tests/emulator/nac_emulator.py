# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Emulator of the NAC API described in the API guide (docs/docsite/rst/api.rst), standard library only.

Importable (``Emulator``, ``DEFAULT_CONFIG``, ``load_config``) and runnable as a script;
see tests/emulator/README.md for the CLI, the config format and the admin endpoints.
"""

from __future__ import (absolute_import, division, print_function)
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
import ssl
import sqlite3
import struct
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_CONFIG = {
    "intents": [
        {"tag": "dot1x_status", "name": "Check 802.1x"},
        {"tag": "ping", "name": "Ping"},
        {"tag": "who_is_logged_in", "name": "Who is logged in"},
    ],
    "accounts": [
        {"name": "admin", "api_key": "nac-demo-admin-key", "privileges": ["public_api"],
         "intents": ["dot1x_status", "ping", "who_is_logged_in"]},
        {"name": "auditor", "api_key": "nac-demo-noaccess-key", "privileges": ["public_api"], "intents": ["ping"]},
        {"name": "nopriv", "api_key": "nac-demo-nopriv-key", "privileges": [], "intents": ["dot1x_status"]},
        {"name": "svc-ansible", "username": "svc-ansible", "password": "nac-demo-password", "tenant": "nac-demo-tenant",
         "privileges": ["public_api"], "intents": ["dot1x_status"]},
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
        {"hostname": "cam-01", "group": "Cameras", "profile": "Camera", "macs": ["02:00:00:20:00:10"], "ips": ["10.20.0.10"]},
        {"hostname": "cam-02", "group": "Cameras", "profile": "Camera", "macs": ["02:00:00:20:00:11"], "ips": ["10.20.0.11"]},
        {"hostname": "printer-01", "group": "Printers", "profile": "Printer", "macs": ["02:00:00:30:00:10"], "ips": ["10.30.0.10"]},
        {"hostname": "ws-01", "group": "Workstations", "profile": "Workstation",
         "macs": ["02:00:00:40:00:10", "02:00:00:40:00:11"], "ips": ["10.40.0.10", "10.40.0.11"]},
        {"hostname": "ws-02", "group": "Workstations", "profile": "Workstation", "ips": ["10.40.0.12"]},
    ],
    "dot1x": {"auth_delay": 2.0, "auth_method": "EAP-TLS", "overrides": {}},
    "creation_reply": "record",
    "allow_duplicate_hostnames": False,
}

CREATION_REPLIES = ("record", "empty", "id")
# What a faulty network or load balancer in front of the service does to a request (README, "Faults").
FAULT_MODES = ("500", "502", "503", "429", "reset", "commit_drop", "commit_500", "slow")
FAULT_DEFAULTS = {"rate": 0.0, "modes": list(FAULT_MODES), "seed": None, "retry_after": 1, "slow": 31.0}
GATEWAY_HTML = b"<html><head><title>%d %s</title></head><body><center><h1>%d %s</h1></center><hr><center>nginx</center></body></html>"
RESULT_KEYS = ("status", "authMethod", "username", "message")
SETTLED_AGE = 10 * 365 * 86400.0  # seeded devices were "created" this long ago
MAX_BODY = 1024 * 1024
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9.-]+$")
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
    problems = dict((key, "unknown setting (known: %s)" % ", ".join(FAULT_DEFAULTS)) for key in changes if key not in FAULT_DEFAULTS)
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
    return settings, problems


class FaultSettingsError(ValueError):
    """Fault settings that are not usable; ``problems`` maps each bad key to what is wrong."""

    def __init__(self, problems):
        super(FaultSettingsError, self).__init__("fault settings: " + "; ".join("%s %s" % item for item in sorted(problems.items())))
        self.problems = problems


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
    """Devices, accounts and the 802.1x model; every method is thread-safe."""

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
        self.allow_duplicate_hostnames = bool(config["allow_duplicate_hostnames"])
        self.counts = collections.Counter()
        self.fires = collections.Counter()  # dot1x_status fires per targetId
        self.advance = 0.0
        self._clear()
        self.db = None
        if state_path:
            self.db = sqlite3.connect(state_path, check_same_thread=False)
            self.db.execute("PRAGMA synchronous=OFF")  # committed on every write, but no fsync: it is an emulator
            self.db.execute("CREATE TABLE IF NOT EXISTS device (id INTEGER PRIMARY KEY, hostname TEXT NOT NULL, grp TEXT NOT NULL,"
                            " profile TEXT NOT NULL, macs TEXT NOT NULL, ips TEXT NOT NULL, created REAL NOT NULL)")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self.db.commit()
            if self._load_state():
                return
        self.reset()

    # ---- configuration and state -------------------------------------------------------------

    def _check_config(self):
        if self.config["creation_reply"] not in CREATION_REPLIES:
            raise ValueError("creation_reply must be one of %s" % ", ".join(CREATION_REPLIES))
        if not isinstance(self.config["allow_duplicate_hostnames"], bool):
            raise ValueError("allow_duplicate_hostnames must be true or false")
        for profile in self.profiles.values():
            if not all(is_int(profile.get(k)) for k in ("max_pairs", "host_start", "host_end")):
                raise ValueError("profile %s needs integer max_pairs, host_start and host_end" % profile.get("name"))
        for seed in self.config["devices"]:
            if seed.get("group") not in self.groups or seed.get("profile") not in self.profiles:
                raise ValueError("seeded device %s: unknown group or profile" % seed.get("hostname"))

    def clock(self):
        """The virtual clock of the 802.1x model: monotonic time plus every advance."""
        return time.monotonic() + self.advance

    def reset(self):
        """Back to the configured devices, clock, counters and faults (and rewrite the state file)."""
        self.faults.reset()
        with self.lock:
            self.counts.clear()
            self.fires.clear()
            self.advance = 0.0
            self.allow_duplicate_hostnames = bool(self.config["allow_duplicate_hostnames"])
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
                self._add(dict(id=device_id, hostname=seed["hostname"], group=seed["group"], profile=seed["profile"],
                               macs=macs, ips=ips, created=created))
            self._write_state()

    def _set_overrides(self):
        """The configured 802.1x overrides (by hostname); none by id (those come from POST /_emulator/dot1x)."""
        self.overrides = dict((k.lower(), dict(v)) for k, v in (self.dot1x.get("overrides") or {}).items())
        self.id_overrides = {}

    def _clear(self):
        self.devices, self.by_host, self.by_mac, self.by_ip = {}, {}, {}, {}
        self.next_id, self._list_cache = 1, None

    def _add(self, device):
        self.devices[device["id"]] = device
        self.by_host.setdefault(device["hostname"].lower(), set()).add(device["id"])
        self.by_mac.update((mac, device["id"]) for mac in device["macs"])
        self.by_ip.update((ip, device["id"]) for ip in device["ips"])
        self.next_id = max(self.next_id, device["id"] + 1)
        self._list_cache = None

    def _load_state(self):
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        if "next_id" not in meta:
            return False
        self.advance = float(meta.get("advance", 0.0))
        offset = time.time() - time.monotonic()  # created is stored as wall time, held as clock time
        for row in self.db.execute("SELECT id, hostname, grp, profile, macs, ips, created FROM device ORDER BY id"):
            self._add(dict(id=row[0], hostname=row[1], group=row[2], profile=row[3], macs=json.loads(row[4]),
                           ips=json.loads(row[5]), created=row[6] - offset))
        self.next_id = max(self.next_id, int(meta["next_id"]))
        return True

    def _write_state(self, device=None):
        """Persist one new device, or (device None) the whole table; call with the lock held."""
        if self.db is None:
            return
        offset = time.time() - time.monotonic()
        rows = [device] if device else list(self.devices.values())
        if device is None:
            self.db.execute("DELETE FROM device")
        self.db.executemany("INSERT INTO device VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [(d["id"], d["hostname"], d["group"], d["profile"], json.dumps(d["macs"]), json.dumps(d["ips"]),
                              d["created"] + offset) for d in rows])
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            [("next_id", str(self.next_id)), ("advance", repr(self.advance))])
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
            if account is not None and not hmac.compare_digest(password.encode(), str(account.get("password")).encode()):
                account = None
        if account is None:
            raise server_error()
        tenant = account.get("tenant")
        if tenant and not hmac.compare_digest((headers.get("X-Tenant") or "").encode(), str(tenant).encode()):
            raise server_error()
        if "public_api" not in (account.get("privileges") or ()):
            raise error(403, "Forbidden", "The account lacks the privilege public_api")
        return account

    def handle_api(self, method, path, headers, body):
        account = self.authenticate(headers)
        allowed = []
        for route_method, pattern, name in self.ROUTES:
            match = pattern.match(path)
            if match and route_method == method:
                return getattr(self, name)(account, match.groupdict(), body)
            if match:
                allowed.append(route_method)
        if allowed:
            raise error(405, "Method not allowed", "%s is not allowed on %s (allowed: %s)" % (method, path, ", ".join(allowed)),
                        headers=[("Allow", ", ".join(allowed))])
        raise error(404, "Not found", "No endpoint %s %s" % (method, path))

    def account_intents(self, account):
        return [tag for tag in self.intents if tag in (account.get("intents") or ())]

    # ---- endpoints --------------------------------------------------------------------------

    def list_intents(self, account, _params, _body):
        return json_reply(200, [{"tag": tag, "name": self.intents[tag].get("name", tag)} for tag in self.account_intents(account)])

    def list_devices(self, _account, _params, _body):
        with self.lock:
            if self._list_cache is None:
                records = [self._record(self.devices[i]) for i in sorted(self.devices)]
                self._list_cache = json.dumps(records).encode("utf-8")
            return (200, JSON_TYPE, self._list_cache, ())

    @staticmethod
    def _record(device):
        return dict((k, device[k]) for k in ("id", "hostname", "group", "profile", "macs", "ips"))

    def create_device(self, _account, _params, body):
        data = parse_object(body)
        fields = {}
        hostname = self._required_string(data, "hostname", fields)
        if hostname and len(hostname) > 63:
            fields["hostname"] = "must be at most 63 characters long"
        elif hostname and not HOSTNAME_RE.match(hostname):
            fields["hostname"] = "may contain only letters, digits, hyphens and dots"
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
        clash = self.by_host.get(hostname.lower())
        if clash and not self.allow_duplicate_hostnames:
            raise error(409, "Conflict", "A device with hostname %s already exists (id %d)" % (hostname, min(clash)))
        for kind, values, index in (("MAC address", macs, self.by_mac), ("IP address", ips, self.by_ip)):
            for value in values:
                if value in index:
                    owner = self.devices[index[value]]
                    raise error(409, "Conflict", "%s %s is already used by device %s (id %d)" % (kind, value, owner["hostname"], owner["id"]))
        if not ips:  # rule 1 (no MACs: every pair the profile allows) and "not shown" (one IP per given MAC)
            needed = len(macs) or profile["max_pairs"]
            ips = self._free_ips(self.groups[group], profile, needed)
            if len(ips) < needed:
                span = "range .%d-.%d" % (profile["host_start"], profile["host_end"])
                what = "No free IP address" if not ips else "Not enough free IP addresses (%d needed)" % needed
                raise error(409, "Conflict", "%s left for profile %s in group %s (%s)" % (what, profile["name"], group, span))
        device = dict(id=self.next_id, hostname=hostname, group=group, profile=profile["name"], macs=macs, ips=ips, created=self.clock())
        self._add(device)
        self._write_state(device)
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
        if network is not None and (address not in network or address in (network.network_address, network.broadcast_address)):
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
            device = self.devices.get(target)
            if device is None:
                raise error(404, "Not found", "No device with id %d" % target)
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
            result = {"status": "UNAUTHENTICATED", "authMethod": None, "username": None, "message": "No MAC address registered for this device"}
        elif self.clock() - device["created"] >= float(self.dot1x["auth_delay"]):
            result = {"status": "AUTHENTICATED", "authMethod": self.dot1x["auth_method"], "username": device["hostname"].lower(), "message": None}
        else:
            result = {"status": "CONNECTING", "authMethod": None, "username": None, "message": "Authentication in progress"}
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
    }

    def handle_admin(self, method, path, body):
        methods = self.ADMIN_ROUTES.get(path)
        if methods is None:
            raise error(404, "Not found", "No emulator endpoint %s" % path)
        if method not in methods:
            allowed = ", ".join(sorted(methods))
            raise error(405, "Method not allowed", "%s is not allowed on %s" % (method, path), headers=[("Allow", allowed)])
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
            raise validation_error({"body": "give id or hostname, and any of %s, omit_status, clear%s" % (
                ", ".join(RESULT_KEYS), "; unknown: " + ", ".join(unknown) if unknown else "")})
        override = dict((key, data[key]) for key in RESULT_KEYS + ("omit_status",) if key in data)
        with self.lock:
            if "id" in data:
                if not is_int(data["id"]) or data["id"] not in self.devices:
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
            raise validation_error(exc.problems)
        return self.faults.snapshot()

    def admin_settings(self, _body):
        return {"allow_duplicate_hostnames": self.allow_duplicate_hostnames}

    def admin_set_settings(self, body):
        data = parse_object(body)
        problems = dict((key, "unknown setting (known: allow_duplicate_hostnames)") for key in data if key != "allow_duplicate_hostnames")
        if not isinstance(data.get("allow_duplicate_hostnames", False), bool):
            problems["allow_duplicate_hostnames"] = "must be true or false"
        if problems:
            raise validation_error(problems)
        with self.lock:
            self.allow_duplicate_hostnames = data.get("allow_duplicate_hostnames", self.allow_duplicate_hostnames)
        return self.admin_settings(None)


class Faults:
    """Fault injection in front of the API (README, "Faults"); thread-safe.

    Each /api request draws once from a seeded generator: with probability ``rate`` it gets one of
    ``modes``, evenly chosen. reset() returns to the settings given at construction.
    """

    def __init__(self, settings=None):
        self.initial, problems = fault_settings(FAULT_DEFAULTS, settings or {})
        if problems:
            raise FaultSettingsError(problems)
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self._apply(self.initial, reseed=True)
            self.injected = collections.Counter()
            self.holding = 0

    def _apply(self, settings, reseed):
        """Call with the lock held. A null seed is replaced by a random one, shown by snapshot()."""
        self.settings = dict(settings)
        if reseed:
            if self.settings["seed"] is None:
                self.settings["seed"] = random.SystemRandom().randrange(2 ** 32)
            self.random = random.Random(self.settings["seed"])

    def configure(self, changes):
        """Change some settings (keys of FAULT_DEFAULTS); a given seed restarts the generator."""
        with self.lock:
            settings, problems = fault_settings(self.settings, changes)
            if problems:
                raise FaultSettingsError(problems)
            self._apply(settings, reseed="seed" in changes)

    def draw(self):
        """The fault mode for the next /api request, or None."""
        with self.lock:
            rate = self.settings["rate"]
            if rate <= 0 or self.random.random() >= rate:
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
            return json_reply(429, {"error": "Too many requests", "message": "Rate limit exceeded, retry in %d s" % seconds},
                              headers=[("Retry-After", str(seconds))])
        status = int(mode)
        reason = BaseHTTPRequestHandler.responses[status][0]
        return (status, "text/html", GATEWAY_HTML % (status, reason.encode(), status, reason.encode()), ())

    def hold(self):
        """Hold a slow request for ``slow`` seconds (never under the lock)."""
        with self.lock:
            seconds = self.settings["slow"]
            self.holding += 1
        try:
            time.sleep(seconds)
        finally:
            with self.lock:
                self.holding -= 1

    def snapshot(self):
        """The settings, the faults injected by mode since start/reset, and the slow requests held now."""
        with self.lock:
            injected = dict((mode, self.injected[mode]) for mode in FAULT_MODES)
            return dict(self.settings, injected=injected, total=sum(injected.values()), holding=self.holding)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, address, emulator):
        self.emulator = emulator
        self.connections = set()
        self.connections_lock = threading.Lock()
        # What tests check instead of timings: connections accepted, /api requests delayed by the latency,
        # and the most of them delayed at the same moment.
        self.stats = dict(connections=0, delayed=0, delaying=0, most_delaying=0)
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
            self.server.stats["connections"] += 1

    def finish(self):
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        BaseHTTPRequestHandler.finish(self)

    def dispatch(self):
        emulator = self.server.emulator
        path = self.path.split("?", 1)[0]
        try:
            body = self._read_body()
            if path.startswith("/_emulator/"):
                reply = emulator.model.handle_admin(self.command, path, body)
            elif path == "/api" or path.startswith("/api/"):
                emulator.model.count(self.command, path)
                fault = emulator.model.faults.draw()
                if emulator.latency > 0:
                    self._delay(emulator.latency)
                reply = self._api(fault, path, body)
            else:
                raise error(404, "Not found", "No such path %s" % path)
        except ApiError as exc:
            reply = exc.reply
        except Exception as exc:  # pylint: disable=broad-except
            traceback.print_exc()
            reply = json_reply(500, {"error": "Internal error", "message": str(exc)})
        if reply is not None:
            self._send(reply)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = dispatch

    def _api(self, fault, path, body):
        """The reply to an /api request under ``fault`` (README, "Faults"); None: no reply at all."""
        model = self.server.emulator.model
        if fault in ("500", "502", "503", "429"):  # answered in front of the service: nothing processed
            return model.faults.reply(fault)
        if fault == "reset":  # aborted before processing: a TCP RST (SO_LINGER 0), no reply
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return None
        if fault == "slow":  # held past the client's timeout, processed (committed) only then
            model.faults.hold()
        try:
            reply = model.handle_api(self.command, path, self.headers, body)
        except ApiError as exc:
            reply = exc.reply
        if fault == "commit_drop":  # processed, then the connection is closed without a reply
            self.close_connection = True
            return None
        return server_error().reply if fault == "commit_500" else reply

    def _delay(self, seconds):
        """Sleep never under a lock, so that latency does not serialise requests."""
        stats, lock = self.server.stats, self.server.connections_lock
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
        lines = ["%s %d %s" % (self.protocol_version, status, self.responses.get(status, ("",))[0]),
                 "Server: " + self.server_version, "Date: " + self.date_time_string(),
                 "Content-Type: " + content_type, "Content-Length: %d" % len(body)]
        lines.extend("%s: %s" % header for header in headers)
        if self.close_connection:
            lines.append("Connection: close")
        try:
            self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)  # one send per reply
        except OSError:  # the client is gone (it gave up on a slow reply, for one)
            self.close_connection = True
            return
        self.log_request(status, len(body))

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        if self.server.emulator.verbose:  # the request line only; headers (Authorization) are never logged
            BaseHTTPRequestHandler.log_message(self, format, *args)


class Emulator:
    """The NAC API emulator: ``Emulator(config, latency, state_path).start()``; see the README."""

    def __init__(self, config=None, latency=0.0, state_path=None, verbose=False, tls_cert=None, tls_key=None, faults=None):
        self.model = NacModel(config, state_path, faults)
        self.latency = float(latency)
        self.verbose = verbose
        self.tls = None
        if tls_cert:  # HTTPS with this PEM certificate (and key, unless the certificate file holds it)
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(tls_cert, tls_key)
        self.host = None
        self._server = None
        self._thread = None

    def start(self, host="127.0.0.1", port=0):
        if self._server is not None:
            raise RuntimeError("the emulator is already running")
        self._server = _Server((host, port), self)
        if self.tls:
            # The handshake happens in the connection's own thread, on its first read.
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True, do_handshake_on_connect=False)
        self.host = host
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="nac-emulator", daemon=True)
        self._thread.start()
        return self

    @property
    def port(self):
        return self._server.server_address[1] if self._server else None

    @property
    def url(self):
        return "%s://%s:%s" % ("https" if self.tls else "http", self.host, self.port) if self._server else None

    def request_counts(self):
        return self.model.request_counts()

    def server_stats(self):
        """{connections: accepted so far, delayed: /api requests delayed by the latency,
        most_delaying: the most of them delayed at the same moment} (since start)."""
        with self._server.connections_lock:
            stats = dict(self._server.stats)
        del stats["delaying"]
        return stats

    def reset(self):
        self.model.reset()

    def faults(self, **changes):
        """Change the fault settings (as POST /_emulator/faults) and return the snapshot (as its GET)."""
        if changes:
            self.model.faults.configure(changes)
        return self.model.faults.snapshot()

    def advance_clock(self, seconds):
        return self.model.advance_clock(seconds)

    def stop(self):
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.close_connections()
            server.server_close()
            self._thread.join(5)
        self.model.close()

    def __enter__(self):
        if self._server is None:
            self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description="Emulator of the NAC API (see the API guide, docs/docsite/rst/api.rst).")
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
    parser.add_argument("--allow-duplicate-hostnames", action="store_true",
                        help="create a device whose hostname is in use (MAC and IP conflicts still apply)")
    faults = parser.add_argument_group("fault injection (README, Faults); off unless --faults is above 0")
    faults.add_argument("--faults", type=float, default=0.0, metavar="RATE", help="share of /api requests that get a fault, 0 to 1")
    faults.add_argument("--fault-modes", default=",".join(FAULT_MODES), metavar="LIST",
                        help="comma-separated fault modes to choose from (default all: %(default)s)")
    faults.add_argument("--fault-seed", type=int, help="seed of the fault generator (default: random, shown by GET /_emulator/faults)")
    faults.add_argument("--fault-retry-after", type=int, default=FAULT_DEFAULTS["retry_after"], metavar="SECONDS",
                        help="Retry-After of a 429 fault (default %(default)s)")
    faults.add_argument("--fault-slow", type=float, default=FAULT_DEFAULTS["slow"], metavar="SECONDS",
                        help="how long a slow request is held before it is processed (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config) if args.config else complete_config(None)
        if args.allow_duplicate_hostnames:
            config["allow_duplicate_hostnames"] = True
        fault_config = dict(rate=args.faults, modes=[m.strip() for m in args.fault_modes.split(",") if m.strip()],
                            seed=args.fault_seed, retry_after=args.fault_retry_after, slow=args.fault_slow)
        emulator = Emulator(config, latency=args.latency, state_path=args.state, verbose=args.verbose,
                            tls_cert=args.tls_cert, tls_key=args.tls_key, faults=fault_config).start(args.host, args.port)
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
