# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of the NAC API emulator: devices, accounts and the 802.1x model, and the /api endpoints."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import collections
import hmac
import ipaddress
import itertools
import json
import re
import threading
import time
from urllib.parse import parse_qs

from .admin import AdminMixin
from .common import (
    JSON_TYPE,
    ApiError,
    describe,
    error,
    is_int,
    json_reply,
    not_allowed,
    parse_object,
    server_error,
    validation_error,
)
from .config import BULK_MAX, CREATION_REPLIES, RESULT_KEYS, SETTINGS, SETTLED_AGE, complete_config, settings_problems
from .creation import device_fields, free_ips
from .faults import Faults
from .framing import FramingMixin
from .hostile import HostileMixin
from .ratelimit import RateLimit
from .store import StateFile
from .unconfirmed import UnconfirmedMixin, list_order, stored_hostname
from .variants import SeedingMixin, hostname_key, paged_reply


class NacModel(SeedingMixin, UnconfirmedMixin, AdminMixin, HostileMixin, FramingMixin):
    """Devices, accounts and the 802.1x model; every method is thread-safe.

    Devices are kept by an internal row number, not by id: a faulty server's list may repeat an id
    (POST /_emulator/devices seeds such records); the API itself always assigns a new id.
    Seeded records come from SeedingMixin (variants.py), the /_emulator endpoints from AdminMixin (admin.py),
    the servers that confirm nothing (capped, lagging, shifting lists; stored names, twins, redirects) from
    UnconfirmedMixin (unconfirmed.py), the hostile mode from HostileMixin (hostile.py), hostile framing from
    FramingMixin (framing.py).
    """

    ROUTES = (
        ("GET", re.compile(r"^/api/intent$"), "list_intents"),
        ("GET", re.compile(r"^/api/device$"), "list_devices"),
        ("POST", re.compile(r"^/api/device$"), "create_device"),
        ("POST", re.compile(r"^/api/intent/(?P<tag>[^/]+)/fire$"), "fire_intent"),
    )

    def __init__(self, config=None, state_path=None, faults=None, hostile=None, framing=None):
        self.config = config = complete_config(config)
        self.faults = Faults(faults)
        self.rate_limit = RateLimit(config.get("rate_limit"))
        self._init_hostile(hostile)
        self._init_framing(framing)
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
        self._clear_variant_events()
        self.store = StateFile(state_path) if state_path else None
        if self.store is None or not self._load_state():
            self.reset()
        elif self.hostile_start["on"]:
            self.set_hostile(dict(self.hostile_start))

    # ---- configuration and state -------------------------------------------------------------

    def _check_config(self):
        if self.config["creation_reply"] not in CREATION_REPLIES:
            raise ValueError("creation_reply must be one of %s" % ", ".join(CREATION_REPLIES))
        problems = settings_problems(dict((key, self.config[key]) for key in SETTINGS))
        if problems:
            raise ValueError(describe(problems))
        if not is_int(self.config["seed_devices"]) or not 0 <= self.config["seed_devices"] <= BULK_MAX:
            raise ValueError("seed_devices must be a whole number from 0 to %d" % BULK_MAX)
        for profile in self.profiles.values():
            if not all(is_int(profile.get(k)) for k in ("max_pairs", "host_start", "host_end")):
                raise ValueError("profile %s needs integer max_pairs, host_start and host_end" % profile.get("name"))
        for seed in self.config["devices"]:
            if seed.get("group") not in self.groups or seed.get("profile") not in self.profiles:
                raise ValueError("seeded device %s: unknown group or profile" % seed.get("hostname"))

    @property
    def allow_duplicate_hostnames(self):
        return self.settings["allow_duplicate_hostnames"]

    def clock(self):
        """The virtual clock of the 802.1x model: monotonic time plus every advance."""
        return time.monotonic() + self.advance

    def reset(self):
        """Back to the configured devices, settings, clock, counters and faults (and rewrite the state file)."""
        self.faults.reset()
        self.rate_limit.reset()
        with self.lock:
            self.counts.clear()
            self.fires.clear()
            self.advance = 0.0
            self.settings = dict((key, self.config[key]) for key in SETTINGS)
            self._clear()
            self._clear_variant_events()
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
                    ips = free_ips(self.groups[seed["group"]], profile, len(macs) or profile["max_pairs"], self.by_ip)
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
        self._reset_hostile()

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
        saved = self.store.load()
        if saved is None:
            return False
        devices, next_id, self.advance, legacy = saved
        for device in devices:
            self._add(device)
        self.next_id = max(self.next_id, next_id)
        if legacy:
            self._write_state()
            self.store.drop_legacy()
        return True

    def _write_state(self, devices=None):
        """Persist new devices (a list), or (devices None) the whole table; call with the lock held."""
        if self.store is not None:
            whole = devices is None
            self.store.write(list(self.devices.values()) if whole else devices, self.next_id, self.advance, whole)

    def advance_clock(self, seconds):
        with self.lock:
            self.advance += seconds
            if self.store is not None:
                self.store.write_advance(self.advance)
            return self.advance

    def close(self):
        with self.lock:
            if self.store is not None:
                self.store.close()
                self.store = None

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
            if "page_shift" in changes or "page_shifts" in changes:
                self.shifts_left = self.settings["page_shifts"]
            if rematch:
                self._reindex_hostnames()
        return {}

    def settings_snapshot(self):
        with self.lock:
            return dict((key, self.settings[key]) for key in SETTINGS)

    def records(self):
        """Every device as GET /api/device lists it when it is not paginated nor padded (a copy)."""
        return json.loads(self._list_body())

    def _sorted_records(self):
        """The listed records in list order (unconfirmed.list_order: ids ascending, repeated ids in insertion
        order); lock held."""
        return [self._record(d) for d in self._sorted_devices()]

    def _sorted_devices(self):
        return sorted(self.devices.values(), key=list_order)

    def _list_parts(self):
        """The JSON of each listed record, in list order (for pages and padding); lock held."""
        if self._parts is None:
            self._parts = [json.dumps(record).encode("utf-8") for record in self._sorted_records()]
        return self._parts

    def _list_body(self):
        """The whole list as JSON (json.dumps of the records: the same bytes as the parts joined)."""
        with self.lock:
            return self._whole_list()

    def _whole_list(self):
        """The body of _list_body, cached; lock held."""
        if self._list_cache is None:
            self._list_cache = json.dumps(self._sorted_records()).encode("utf-8")
        return self._list_cache

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
        (for the links of a paginated list). In hostile mode an error is a hostile one (hostile.py)."""
        try:
            return self._handle_api(method, path, headers, body, query, base)
        except ApiError as exc:
            if self.hostile_on():
                raise self.hostile_error(exc, headers) from None
            raise

    def _handle_api(self, method, path, headers, body, query, base):
        account = self.authenticate(headers)
        allowed = []
        for route_method, pattern, name in self.ROUTES:
            match = pattern.match(path)
            if match and route_method == method:
                params = match.groupdict()
                query_params = parse_qs(query or "", keep_blank_values=True)
                params.update(query=query_params, base=base, path=path, headers=headers)
                return getattr(self, name)(account, params, body)
            if match:
                allowed.append(route_method)
        if allowed:
            raise not_allowed(
                method, path, allowed, "%s is not allowed on %s (allowed: %s)" % (method, path, ", ".join(allowed))
            )
        raise error(404, "Not found", "No endpoint %s %s" % (method, path))

    def account_intents(self, account):
        return [tag for tag in self.intents if tag in (account.get("intents") or ())]

    # ---- endpoints --------------------------------------------------------------------------

    def list_intents(self, account, params, _body):
        intents = [{"tag": tag, "name": self.intents[tag].get("name", tag)} for tag in self.account_intents(account)]
        if self.hostile_on():
            intents += self.hostile_intents()
        parts = [json.dumps(intent).encode("utf-8") for intent in intents]
        with self.lock:
            return paged_reply(parts, params or {}, "/api/intent", self.settings)

    def list_devices(self, _account, params, _body):
        params = params or {}
        if self.hostile_on() and self.hostile["endless"]:
            return self.endless_page(params)
        with self.lock:
            settings = self.settings
            self._shift_pages(params)
            plain = not (settings["list_cap"] or settings["list_lag"])
            if settings["page_size"] <= 0 and not settings["pad_list_bytes"] and plain:
                return (200, JSON_TYPE, self._whole_list(), ())
            return paged_reply(self._listed_parts(), params, "/api/device", settings, pad=settings["pad_list_bytes"])

    @staticmethod
    def _record(device):
        shown = device.get("shown")
        if shown is not None:
            record = collections.OrderedDict((("id", device["id"]), ("hostname", device["hostname"])))
            record.update(shown)
            return record
        return dict((k, device[k]) for k in ("id", "hostname", "group", "profile", "macs", "ips"))

    def create_device(self, _account, params, body):
        hostname, group, profile, macs, ips = device_fields(
            parse_object(body), self.groups, self.profiles, self.settings["hostname_chars"]
        )
        with self.lock:
            hostname = stored_hostname(hostname, self.settings["stored_hostname"])
            self._race_twin(hostname, group, self.profiles[profile])
            device = self._create_locked(hostname, group, self.profiles[profile], macs, ips)
            redirected = self._redirected(device, (params or {}).get("base"))
        if redirected:
            return redirected
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
            ips = free_ips(self.groups[group], profile, needed, self.by_ip)
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
            self.hostile_fire_error(target)
            result = self.dot1x_result(device, params.get("headers"))
        if (payload or {}).get("json") is True:
            return json_reply(200, result)
        text = "Device %s (id %d): %s" % (device["hostname"], device["id"], result.get("status", "status unknown"))
        for prefix, key in ((" via ", "authMethod"), (" as ", "username"), (" - ", "message")):
            if result.get(key):
                text += prefix + str(result[key])
        return (200, "text/plain; charset=utf-8", (text + "\n").encode("utf-8"), ())

    def dot1x_result(self, device, headers=None):
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
        if self.hostile_on():
            result = self.hostile_result(device["id"], headers)
        override = dict(self.overrides.get(device["hostname"].lower()) or {})
        override.update(self.id_overrides.get(device["id"]) or {})
        if override.get("status") == "UNAUTHENTICATED":
            # No method, no user, unless the override gives them (as the docs' events show).
            result.update(authMethod=None, username=None)
        result.update((key, override[key]) for key in RESULT_KEYS if key in override)
        if override.get("omit_status"):
            result.pop("status", None)
        return result
