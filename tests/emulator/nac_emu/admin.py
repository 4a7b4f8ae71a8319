# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The admin endpoints /_emulator/... of the NAC API emulator (README, "Admin endpoints"); the outage endpoint is
the Emulator's (outage.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from .common import error, is_int, is_number, json_reply, not_allowed, parse_object, validation_error
from .config import BULK_MAX, RESULT_KEYS
from .faults import FaultSettingsError


class AdminMixin:
    """The admin endpoints of NacModel (no auth, not counted, no latency)."""

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
        "/_emulator/variants": {"GET": "admin_variants"},
        "/_emulator/rate_limit": {"GET": "admin_rate_limit", "POST": "admin_set_rate_limit"},
        "/_emulator/hostile": {"GET": "admin_hostile", "POST": "admin_set_hostile"},  # hostile.py
        "/_emulator/framing": {"GET": "admin_framing", "POST": "admin_set_framing"},  # framing.py
    }

    def handle_admin(self, method, path, body):
        methods = self.ADMIN_ROUTES.get(path)
        if methods is None:
            raise error(404, "Not found", "No emulator endpoint %s" % path)
        if method not in methods:
            raise not_allowed(method, path, sorted(methods))
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

    def admin_rate_limit(self, _body):
        """The token bucket's settings and the refusals it sent (and requests it admitted) since start/reset."""
        return self.rate_limit.snapshot()

    def admin_set_rate_limit(self, body):
        problems = self.rate_limit.configure(parse_object(body))
        if problems:
            raise validation_error(problems)
        return self.rate_limit.snapshot()

    def admin_settings(self, _body):
        return self.settings_snapshot()

    def admin_set_settings(self, body):
        problems = self.configure(parse_object(body))
        if problems:
            raise validation_error(problems)
        return self.settings_snapshot()

    def admin_variants(self, _body):
        """What the servers that confirm nothing did since start/reset (unconfirmed.EVENTS)."""
        return self.variant_counts()

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
