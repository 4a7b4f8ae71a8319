# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state file of the NAC API emulator (--state): the devices, the next id and the clock advance in SQLite,
committed on every write."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import sqlite3
import time


class StateFile:
    """One SQLite file; not thread-safe by itself (the model calls it with its lock held)."""

    def __init__(self, path):
        self.db = sqlite3.connect(path, check_same_thread=False)
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

    def load(self):
        """(devices, next id, clock advance, legacy) as saved, or None for a new file; ``legacy``: the devices
        come from the earlier schema, to be written again (write) and dropped (drop_legacy)."""
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        if "next_id" not in meta:
            return None
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
        devices = []
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
            devices.append(device)
        return devices, int(meta["next_id"]), float(meta.get("advance", 0.0)), bool(legacy)

    def drop_legacy(self):
        self.db.execute("DROP TABLE device")
        self.db.commit()

    def write(self, devices, next_id, advance, replace=False):
        """Persist ``devices`` (new ones; with ``replace``, all of them) and the meta data."""
        offset = time.time() - time.monotonic()
        if replace:
            self.db.execute("DELETE FROM device_row")
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
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("next_id", str(next_id)), ("advance", repr(advance))]
        )
        self.db.commit()

    def write_advance(self, advance):
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('advance', ?)", (repr(advance),))
        self.db.commit()

    def close(self):
        self.db.close()
