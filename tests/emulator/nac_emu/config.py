# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The configuration of the NAC API emulator: the built-in config, loading a config file, and the server-variant
settings (README, "Server variants") with their checks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re

from .common import is_int, is_number

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
    # Servers that confirm nothing (README, "Servers that confirm nothing"): off by default.
    "list_cap": 0,
    "list_lag": 0,
    "stored_hostname": "as-sent",
    "race_twins": 0,
    "creation_redirect": 0,
    "page_shift": "none",
    "page_shifts": 1,
    "seed_devices": 0,
    # The token bucket in front of the API (README, "Rate limit"): rate 0, off.
    "rate_limit": {"rate": 0.0, "burst": 1, "retry_after": 1},
}

CREATION_REPLIES = ("record", "empty", "id")
# Server variants (README, "Server variants"): the settings of GET/POST /_emulator/settings, kept in the config.
HOSTNAME_MATCHES = ("exact", "ascii-nocase", "casefold")
HOSTNAME_CHARS = ("ldh", "unicode")
PAGE_STYLES = ("link", "link-relative", "total-only", "content-range", "body-next", "link-loop", "link-foreign")
STORED_HOSTNAMES = ("as-sent", "lower", "first-label", "first-label-lower")
CREATION_REDIRECTS = (0, 301, 302, 303, 307, 308)
PAGE_SHIFTS = ("none", "insert-front", "delete-front")
SETTINGS = (
    "allow_duplicate_hostnames",
    "hostname_match",
    "hostname_chars",
    "page_size",
    "page_style",
    "page_foreign_url",
    "pad_list_bytes",
    "pad_list_chunked",
    "list_cap",
    "list_lag",
    "stored_hostname",
    "race_twins",
    "creation_redirect",
    "page_shift",
    "page_shifts",
)
ORIGIN_RE = re.compile(r"^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")
# Devices of --seed-devices / POST /_emulator/devices {"count": N}: their own group and profile, one MAC and one IP
# each.
BULK_GROUP = {"name": "Bulk", "subnet": "100.64.0.0/10"}
BULK_PROFILE = {"name": "Bulk", "max_pairs": 1, "host_start": 1, "host_end": 4194302}
BULK_MAX = 4000000
RESULT_KEYS = ("status", "authMethod", "username", "message")
SETTLED_AGE = 10 * 365 * 86400.0  # seeded devices were "created" this long ago


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
        elif key in ("page_size", "pad_list_bytes", "list_cap", "race_twins") and (not is_int(value) or value < 0):
            problems[key] = "must be a whole number, 0 or more (0: off)"
        elif key == "page_shifts" and (not is_int(value) or value < 0):
            problems[key] = "must be a whole number, 0 or more"
        elif key == "list_lag" and (not is_number(value) or value < 0):
            problems[key] = "must be a number of seconds, 0 or more (0: off)"
        elif key == "stored_hostname" and value not in STORED_HOSTNAMES:
            problems[key] = "must be one of %s" % ", ".join(STORED_HOSTNAMES)
        elif key == "creation_redirect" and (not is_int(value) or value not in CREATION_REDIRECTS):
            problems[key] = "must be one of %s (0: off)" % ", ".join(str(code) for code in CREATION_REDIRECTS)
        elif key == "page_shift" and value not in PAGE_SHIFTS:
            problems[key] = "must be one of %s" % ", ".join(PAGE_SHIFTS)
        elif (
            key == "page_foreign_url" and value is not None and not (isinstance(value, str) and ORIGIN_RE.match(value))
        ):
            problems[key] = "must be null or a scheme://host[:port] origin such as http://127.0.0.2:8787 (no path)"
    return problems
