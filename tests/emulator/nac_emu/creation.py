# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The creation rules of POST /api/device in the NAC API emulator: which bodies are valid, and which addresses a
device gets when it gives none."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

from .common import validation_error
from .variants import unicode_hostname_ok

HOSTNAME_RE = re.compile(r"^[A-Za-z0-9.-]+$")
MAC_RE = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
IPV4_RE = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def device_fields(data, groups, profiles, hostname_chars):
    """(hostname, group, profile name, MACs, IPs) of a valid creation body ``data``; a 400 naming every field
    that is not (``groups``: {name: IPv4Network}, ``profiles``: {name: profile})."""
    fields = {}
    hostname = required_string(data, "hostname", fields)
    unicode_names = hostname_chars == "unicode"
    if hostname and len(hostname) > 63:
        fields["hostname"] = "must be at most 63 characters long"
    elif hostname and not (unicode_hostname_ok(hostname) if unicode_names else HOSTNAME_RE.match(hostname)):
        fields["hostname"] = "may contain only letters, %sdigits, hyphens and dots" % (
            "marks, " if unicode_names else ""
        )
    group = known_name(data, "group", groups, fields)
    profile = known_name(data, "profile", profiles, fields)
    network = groups.get(group)
    macs = string_list(data, "macs", fields, normal_mac)
    ips = string_list(data, "ips", fields, lambda ip: normal_ip(ip, group, network))
    if profile in profiles:
        most = profiles[profile]["max_pairs"]
        for key, values in (("macs", macs), ("ips", ips)):
            if len(values) > most:
                fields[key] = "profile %s allows at most %d IP/MAC pair(s), got %d" % (profile, most, len(values))
    if fields:
        raise validation_error(fields)
    return hostname, group, profile, macs, ips


def free_ips(network, profile, count, used):
    """Lowest addresses of the profile's host range within the group's subnet that are not ``used``."""
    free = []
    last = min(profile["host_end"], network.num_addresses - 2)
    for offset in range(max(profile["host_start"], 1), last + 1):
        address = str(network.network_address + offset)
        if address not in used:
            free.append(address)
            if len(free) >= count:
                break
    return free


def required_string(data, key, fields):
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


def known_name(data, key, known, fields):
    value = required_string(data, key, fields)
    if value is not None and value not in known:
        fields[key] = "unknown %s %s; known %ss: %s" % (key, value, key, ", ".join(sorted(known)))
    return value


def string_list(data, key, fields, normalise):
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


def normal_mac(mac):
    if MAC_RE.match(mac):
        return mac.lower(), None
    return None, "%s is not a MAC address (expected six colon-separated hex pairs, xx:xx:xx:xx:xx:xx)" % mac


def normal_ip(ip, group, network):
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
