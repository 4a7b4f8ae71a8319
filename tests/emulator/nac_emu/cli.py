# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command line of the NAC API emulator (README, "Command line")."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import os
import signal
import sqlite3
import sys
import threading

from .config import (
    CREATION_REDIRECTS,
    HOSTNAME_CHARS,
    HOSTNAME_MATCHES,
    PAGE_SHIFTS,
    PAGE_STYLES,
    SETTINGS,
    STORED_HOSTNAMES,
    complete_config,
    load_config,
)
from .emulator import Emulator
from .faults import FAULT_DEFAULTS
from .framing import FRAMINGS
from .hostile import HOSTILE_DEFAULTS
from .outage import OUTAGE_MODES


def comma_list(text):
    """The items of a comma-separated option; None for an empty one (as if not given)."""
    return [item.strip() for item in text.split(",") if item.strip()] if text else None


# The fault options: (option, fault setting of FAULT_DEFAULTS, argparse keywords); the default is the setting's.
FAULT_OPTIONS = (
    ("--faults", "rate", dict(type=float, metavar="RATE", help="share of /api requests that get a fault, 0 to 1")),
    (
        "--fault-modes",
        "modes",
        dict(
            type=comma_list,
            metavar="LIST",
            help="comma-separated fault modes to choose from (default all: %(default)s)",
        ),
    ),
    (
        "--fault-seed",
        "seed",
        dict(type=int, help="seed of the fault generator (default: random, shown by GET /_emulator/faults)"),
    ),
    (
        "--fault-retry-after",
        "retry_after",
        dict(type=int, metavar="SECONDS", help="Retry-After of a 429 fault (default %(default)s)"),
    ),
    (
        "--fault-slow",
        "slow",
        dict(
            type=float,
            metavar="SECONDS",
            help="how long a slow request is held before it is processed (default %(default)s)",
        ),
    ),
    (
        "--fault-only",
        "only",
        dict(
            type=comma_list,
            metavar="LIST",
            help="comma-separated 'METHOD /path' that may get faults, e.g. 'POST /api/device' (default every /api "
            "request)",
        ),
    ),
    ("--fault-limit", "limit", dict(type=int, metavar="N", help="inject at most N faults in all (default no limit)")),
    (
        "--commit-delay",
        "commit_delay",
        dict(
            type=float,
            metavar="SECONDS",
            help="commit_drop and commit_500 lose the reply at once and commit SECONDS later (default 0: at once)",
        ),
    ),
    (
        "--fault-in-front",
        "in_front",
        dict(
            action="store_true",
            help="draw faults in front of the rate limiter: a faulty request never reaches it (default: behind it)",
        ),
    ),
)


# The servers that confirm nothing: (option, argparse keywords); each a config key (None, not given: the config's).
UNCONFIRMED_OPTIONS = (
    ("--list-cap", dict(type=int, metavar="N", help="GET /api/device lists only the first N devices, without a sign")),
    ("--list-lag", dict(type=float, metavar="SECONDS", help="GET /api/device is a replica SECONDS behind the writes")),
    ("--stored-hostname", dict(choices=STORED_HOSTNAMES, help="the hostname a creation stores and answers with")),
    (
        "--race-twins",
        dict(type=int, metavar="N", help="another client creates each of the first N hostnames POSTed just before us"),
    ),
    (
        "--creation-redirect",
        dict(type=int, choices=CREATION_REDIRECTS, help="a committed creation is answered with this redirect (0: off)"),
    ),
    (
        "--page-shift",
        dict(
            choices=PAGE_SHIFTS,
            help="before a page after the first: a device inserted at the front, or the first deleted",
        ),
    ),
    ("--page-shifts", dict(type=int, metavar="N", help="how many times --page-shift happens (default 1)")),
)


def parser():
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
    # The server variants and --seed-devices are config keys: None (not given) keeps the config's.
    parser.add_argument(
        "--allow-duplicate-hostnames",
        action="store_true",
        default=None,
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
        "--pad-list-chunked",
        action="store_true",
        default=None,
        help="send a padded list chunked instead of with a Content-Length",
    )
    unconfirmed = parser.add_argument_group(
        "servers that confirm nothing (README, Servers that confirm nothing); off by default"
    )
    for option, keywords in UNCONFIRMED_OPTIONS:
        unconfirmed.add_argument(option, **keywords)
    variants.add_argument(
        "--seed-devices",
        type=int,
        metavar="N",
        help="also seed N bulk devices (bulk-000001, ...; group and profile Bulk)",
    )
    hostile = parser.add_argument_group("hostile mode (README, Hostile mode): a compromised NAC")
    hostile.add_argument(
        "--hostile",
        action="store_true",
        help="answer with hostile payloads in every field, and errors that echo the Authorization header",
    )
    hostile.add_argument(
        "--hostile-canary",
        metavar="DIR",
        default=HOSTILE_DEFAULTS["canary"],
        help="directory that the payloads' commands touch a file in (default %(default)s)",
    )
    hostile.add_argument(
        "--hostile-echo",
        action="store_true",
        help="with --hostile: every 802.1x status echoes the request's Authorization header (raw, URL-encoded, JSON)",
    )
    hostile.add_argument(
        "--framing",
        choices=FRAMINGS,
        default="none",
        help="hostile framing (README, Hostile framing): replies whose bytes try to answer the next request",
    )
    faults = parser.add_argument_group("fault injection (README, Faults); off unless --faults is above 0")
    for option, key, keywords in FAULT_OPTIONS:
        default = FAULT_DEFAULTS[key]
        faults.add_argument(
            option, dest="fault_" + key, default=",".join(default) if isinstance(default, list) else default, **keywords
        )
    limit = parser.add_argument_group(
        "a rate limit: one token bucket for all clients (README, Rate limit); off by default"
    )
    limit.add_argument(
        "--rate", type=float, metavar="R", help="admit R /api requests a second, refuse the rest with 429"
    )
    limit.add_argument("--burst", type=int, metavar="B", help="the bucket holds B requests (default 1)")
    limit.add_argument("--retry-after", type=int, metavar="S", help="the Retry-After seconds of a refusal (default 1)")
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
    return parser


def emulator_of(args):
    """The Emulator (not started) that the command line ``args`` describe."""
    config = load_config(args.config) if args.config else complete_config(None)
    for key in SETTINGS + ("seed_devices",):
        if getattr(args, key) is not None:
            config[key] = getattr(args, key)
    limit = dict(config.get("rate_limit") or {})
    for key in ("rate", "burst", "retry_after"):
        if getattr(args, key) is not None:
            limit[key] = getattr(args, key)
    config["rate_limit"] = limit
    scheduled = None
    if args.outage is not None:
        scheduled = dict(
            seconds=args.outage,
            mode=args.outage_mode,
            delay=args.outage_delay,
            after_requests=args.outage_after_requests,
        )
    return Emulator(
        config,
        latency=args.latency,
        state_path=args.state,
        verbose=args.verbose,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        faults=dict((key, getattr(args, "fault_" + key)) for _option, key, _keywords in FAULT_OPTIONS),
        outage=scheduled,
        hostile=dict(on=args.hostile, canary=args.hostile_canary, echo=args.hostile_echo),
        framing=args.framing,
    )


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        emulator = emulator_of(args).start(args.host, args.port)
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
