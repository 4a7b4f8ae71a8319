# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic about device records (no Ansible imports, no I/O)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def hostname_key(hostname):
    """Hostnames are compared case-insensitively."""
    return hostname.casefold()


def index_by_hostname(records):
    """{hostname key: [records with that hostname]} (the API does not promise unique hostnames)."""
    index = {}
    for record in records:
        index.setdefault(hostname_key(record["hostname"]), []).append(record)
    return index


def select(records, hostnames=None, ids=None):
    """Records matching any of ``hostnames`` (case-insensitive) or ``ids``; all when neither is given.

    Returns ``(selected, missing)``: the matching records in the server's order, and the requested
    hostnames and ids that matched nothing, in the order they were asked for.
    """
    if not hostnames and not ids:
        return list(records), []
    wanted_names = set(hostname_key(name) for name in hostnames or ())
    wanted_ids = set(ids or ())
    selected = [r for r in records if hostname_key(r["hostname"]) in wanted_names or r["id"] in wanted_ids]
    found_names = set(hostname_key(r["hostname"]) for r in selected)
    found_ids = set(r["id"] for r in selected)
    missing = [name for name in hostnames or () if hostname_key(name) not in found_names]
    missing += [ident for ident in ids or () if ident not in found_ids]
    return selected, missing
