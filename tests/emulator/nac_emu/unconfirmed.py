# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Servers whose replies confirm nothing (README, "Servers that confirm nothing"): what real NACs sit behind
(a list capped without a word, a read replica behind the writes, a server that stores a normalised name,
another client racing ours, a committed creation answered with a redirect, pages that shift while they are
read). Each is a setting of NacModel (config.SETTINGS), off by default."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json

from .common import JSON_TYPE
from .creation import free_ips
from .variants import query_int

# What happened because of these settings since start/reset (GET /_emulator/variants).
EVENTS = ("twins", "redirects", "shifts", "capped_lists", "lagging_lists")


def stored_hostname(hostname, rule):
    """The hostname a server that normalises names stores (``stored_hostname``): as sent, lower case, the first
    DNS label of an FQDN, or that label in lower case."""
    if rule in ("first-label", "first-label-lower"):
        hostname = hostname.split(".", 1)[0] or hostname
    if rule in ("lower", "first-label-lower"):
        hostname = hostname.lower()
    return hostname


def list_order(device):
    """The position of a device in the list: ids ascending (repeated ids in insertion order), except devices
    inserted at the front by a page shift, newest first, before all others."""
    if device.get("front"):
        return (0, -device["row"], 0)
    return (1, device["id"], device["row"])


class UnconfirmedMixin:
    """The settings list_cap, list_lag, stored_hostname, race_twins, creation_redirect, page_shift and page_shifts
    of NacModel (model.py calls these hooks with its lock held)."""

    def _clear_variant_events(self):
        self.variant_events = collections.Counter(dict((event, 0) for event in EVENTS))
        self.raced = set()  # hostname keys the race hook has made a twin for
        self.shifts_left = self.settings["page_shifts"]

    def variant_counts(self):
        """{event: count} since start/reset (EVENTS)."""
        with self.lock:
            return dict(self.variant_events)

    def _listed_parts(self):
        """The JSON of each record the list shows now: a lagging replica's snapshot (``list_lag``: what was
        written at least that many seconds ago), silently capped (``list_cap``: the first N); lock held."""
        lag, cap = self.settings["list_lag"], self.settings["list_cap"]
        if lag:
            horizon = self.clock() - lag
            parts = [
                json.dumps(self._record(d)).encode("utf-8") for d in self._sorted_devices() if d["created"] <= horizon
            ]
            if len(parts) < len(self.devices):
                self.variant_events["lagging_lists"] += 1
        else:
            parts = self._list_parts()
        if cap and len(parts) > cap:
            self.variant_events["capped_lists"] += 1
            parts = parts[:cap]
        return parts

    def _shift_pages(self, params):
        """Before a page after the first of GET /api/device is served: another client inserts a device at the
        front of the list (``insert-front``) or deletes the first listed one (``delete-front``), ``page_shifts``
        times in all (counted again from a reset or a change of either setting); lock held."""
        mode = self.settings["page_shift"]
        if mode == "none" or self.settings["page_size"] <= 0 or self.shifts_left <= 0:
            return
        if query_int(params.get("query") or {}, "page", 1) <= 1:
            return
        self.shifts_left -= 1
        self.variant_events["shifts"] += 1
        if mode == "insert-front":
            device = dict(
                id=self.next_id,
                hostname="shifted-%06d" % self.variant_events["shifts"],
                group=next(iter(self.groups), None),
                profile=next(iter(self.profiles), None),
                macs=[],
                ips=[],
                created=self.clock(),
                front=True,
            )
            self._add(device)
            self._write_state([device])
        elif self.devices:
            self._remove(min(self.devices.values(), key=list_order))

    def _remove(self, device):
        """Drop a device from the table and its indexes (another client deleted it); lock held."""
        row = device["row"]
        del self.devices[row]
        for index, key in ((self.by_id, device["id"]), (self.by_host, self._key(device["hostname"]))):
            rows = index.get(key)
            if rows is not None:
                if isinstance(rows, list):
                    rows.remove(row)
                else:
                    rows.discard(row)
                if not rows:
                    del index[key]
        for index, values in ((self.by_mac, device["macs"]), (self.by_ip, device["ips"])):
            for value in values:
                if index.get(value) == row:
                    del index[value]
        self._list_cache = self._parts = None
        self._write_state()

    def _race_twin(self, hostname, group, profile):
        """Another client creates ``hostname`` between our list and our POST (``race_twins``: for the first N
        hostnames POSTed that no device holds yet): its twin, no MAC, addresses allocated; lock held."""
        if self.variant_events["twins"] >= self.settings["race_twins"]:
            return
        key = self._key(hostname)
        if key in self.raced or self.by_host.get(key):
            return
        self.raced.add(key)
        twin = dict(
            id=self.next_id,
            hostname=hostname,
            group=group,
            profile=profile["name"],
            macs=[],
            ips=free_ips(self.groups[group], profile, profile["max_pairs"], self.by_ip),
            created=self.clock(),
        )
        self._add(twin)
        self._write_state([twin])
        self.variant_events["twins"] += 1

    def _redirected(self, device, base):
        """The reply to a committed creation under ``creation_redirect`` (a status, 0: off): that status, an
        empty body and ``Location: <base>/api/device/<id>``; None when off. Lock held."""
        status = self.settings["creation_redirect"]
        if not status:
            return None
        self.variant_events["redirects"] += 1
        return (status, JSON_TYPE, b"", (("Location", "%s/api/device/%d" % (base or "", device["id"])),))
