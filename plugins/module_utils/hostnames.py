# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostnames, the identity of a device (no Ansible imports): when two names are the same, which
requested names are usable, and finding records in the device list by hostname or id."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import unicodedata

from ansible_collections.netaccess.nac.plugins.module_utils.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.replies import excerpt

HOSTNAME_MAX = 253  # a DNS name's limit


def hostname_key(hostname):
    """Hostnames are compared case-insensitively."""
    return hostname.casefold()


def hostname_problem(value):
    """Why ``value`` cannot be a requested hostname, or None: one string (a whole number is read as one) of
    at most 253 characters, without whitespace or control characters."""
    if isinstance(value, (list, tuple, dict, set)):
        return "must be one name (a string), got a %s: %s" % (
            "mapping" if isinstance(value, dict) else "list",
            excerpt(repr(value), 80),
        )
    if not isinstance(value, str) or not value:
        return "is required" if value in (None, "") else "must be a name (a string), got %r" % (value,)
    if len(value) > HOSTNAME_MAX:
        return "has %d characters, more than the %d a hostname may have: %s" % (
            len(value),
            HOSTNAME_MAX,
            excerpt(value, 40),
        )
    if any(unicodedata.category(char)[0] in "CZ" for char in value):
        return "%r contains whitespace or a control character, which a hostname cannot have" % (value,)
    return None


def hostname_value(value):
    """A requested hostname as a string: whole numbers (YAML reads ``1234`` as one) become their digits."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def check_hostnames(hostnames, name="hostname"):
    """Raise NacConfigError naming every unusable hostname of a list option; return the names as strings."""
    names = [hostname_value(value) for value in hostnames]
    problems = [
        "%s[%d] %s" % (name, index, problem) for index, problem in enumerate(map(hostname_problem, names)) if problem
    ]
    if problems:
        raise NacConfigError("Invalid %s, nothing was sent: %s" % (name, "; ".join(problems)))
    return names


def index_by_hostname(records):
    """{hostname key: [records with that hostname]} (the API does not promise unique hostnames)."""
    index = {}
    for record in records:
        index.setdefault(hostname_key(record["hostname"]), []).append(record)
    return index


def select(records, hostnames=None, ids=None):
    """Records matching any of ``hostnames`` (case-insensitive) or ``ids``; all when neither is given
    (None): an empty list is given, and matches nothing.

    Returns ``(selected, missing)``: the matching records in the server's order, and the requested
    hostnames and ids that matched nothing, in the order they were asked for.
    """
    if hostnames is None and ids is None:
        return list(records), []
    wanted_names = set(hostname_key(name) for name in hostnames or ())
    wanted_ids = set(ids or ())
    selected = [r for r in records if hostname_key(r["hostname"]) in wanted_names or r["id"] in wanted_ids]
    found_names = set(hostname_key(r["hostname"]) for r in selected)
    found_ids = set(r["id"] for r in selected)
    missing = [name for name in hostnames or () if hostname_key(name) not in found_names]
    missing += [ident for ident in ids or () if ident not in found_ids]
    return selected, missing
