#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of a device list that pages without end (issue 23, "Bounded by design").

A local HTTP server answers every ``GET /api/device?page=N`` with the same page of ``--records`` device records
(200,000 by default, about 135 bytes each, as the emulator lists them) and ``Link: <...?page=N+1>; rel="next"``,
for ever. A fresh Python process lists the devices with the collection's client (``NacClient.list_devices``):
whole records, as ``nac_device_info`` without a filter and the inventory plugin do, or compactly
(``--compact``), as ``nac_dot1x_status`` and the event source do. Printed: the pages served, how the listing
ended (its message), its wall time and the process's peak RSS (``ru_maxrss``). A guard stops a process whose RSS
passes ``--guard-mb`` (or that runs for ``--guard-seconds``): the code before the list limits grew without end.
With ``--hostname-mb N`` the server answers instead one page without a next link: one device whose hostname is
N MiB long.

    .venv/bin/python benchmarks/bench_endless_pages.py [--collection /tmp/netaccess-nac-<hash>] [--records 200000]
        [--compact] [--max-list-items N] [--max-list-mb N] [--guard-mb 4096] [--guard-seconds 300] [--hostname-mb N]

``--collection``: the directory that holds ``ansible_collections`` (``make build`` prints it); by default this
checkout's parent directories are searched for it.
"""

from __future__ import absolute_import, division, print_function

import argparse
import http.server
import json
import os
import subprocess
import sys
import threading
import time

MB = 1024.0 * 1024.0
KEY = "bench-endless-key"
CLIENT = r"""
import json, resource, sys, time
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient, NacError
url, compact, limits = sys.argv[1], sys.argv[2] == "1", json.loads(sys.argv[3])
client = NacClient(url, api_key=%(key)r, max_retries=0, timeout=600, **limits)
started = time.monotonic()
try:
    records = client.list_devices(compact=compact)
    outcome = "listed %%d records" %% len(records)
except NacError as error:
    outcome = error.message
print(json.dumps(dict(outcome=outcome, seconds=time.monotonic() - started,
                      rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)))
""" % dict(key=KEY)


RECORD = (
    b'{"id": %d, "hostname": "dev-%08d", "group": "Cameras", "profile": "Camera", '
    b'"macs": ["02:00:00:00:%02x:%02x"], "ips": ["10.0.%d.%d"]}'
)


def page_body(records, page=0):
    """Page ``page``: ``records`` device records as the emulator lists them (about 135 bytes each), their ids and
    hostnames those of that page (no record on two pages: a list whose pages shift is read again)."""
    first = page * records
    return (
        b"["
        + b", ".join(
            RECORD % (n, n, n >> 8 & 255, n & 255, n >> 8 & 255, n & 255) for n in range(first, first + records)
        )
        + b"]"
    )


def serve(body, endless=True):
    """A threaded HTTP server answering every page with ``body(page)`` and (``endless``) a next link; (server,
    pages served)."""
    served = [0]

    class Pages(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            page = int(self.path.partition("page=")[2] or 0)
            served[0] += 1
            content = body(page)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            if endless:
                self.send_header("Link", '</api/device?page=%d>; rel="next"' % (page + 1))
            self.end_headers()
            try:
                self.wfile.write(content)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, served


def rss(pid):
    try:
        with open("/proc/%d/statm" % pid) as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def find_collection():
    here = os.path.dirname(os.path.abspath(__file__))
    while here != os.path.dirname(here):
        if os.path.basename(here) == "ansible_collections":
            return os.path.dirname(here)
        here = os.path.dirname(here)
    sys.exit("give --collection: the directory that holds ansible_collections (make build prints it)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", help="the directory that holds ansible_collections")
    parser.add_argument("--records", type=int, default=200000, help="records a page")
    parser.add_argument("--compact", action="store_true", help="list compactly (id and hostname)")
    parser.add_argument("--max-list-items", type=int, help="the client's max_list_items (default: its own)")
    parser.add_argument("--max-list-mb", type=int, help="the client's max_list_mb (default: its own)")
    parser.add_argument("--guard-mb", type=float, default=4096, help="stop the listing process above this RSS")
    parser.add_argument("--guard-seconds", type=float, default=300, help="stop the listing process after this")
    parser.add_argument("--hostname-mb", type=int, help="one page, one device with a hostname this long (MiB)")
    args = parser.parse_args()
    collection = args.collection or find_collection()
    if args.hostname_mb:
        args.records = 1
        huge = json.dumps([dict(id=1, hostname="h" * (args.hostname_mb * 1024 * 1024))]).encode("utf-8")
        body = lambda page: huge  # noqa: E731
    else:
        body = lambda page: page_body(args.records, page)  # noqa: E731
    size = len(body(0))
    server, served = serve(body, endless=not args.hostname_mb)
    limits = dict(
        (name, value)
        for name, value in (("max_list_items", args.max_list_items), ("max_list_mb", args.max_list_mb))
        if value
    )
    url = "http://127.0.0.1:%d" % server.server_address[1]
    environment = dict(os.environ, PYTHONPATH=collection)
    child = subprocess.Popen(
        [sys.executable, "-c", CLIENT, url, "1" if args.compact else "0", json.dumps(limits)],
        stdout=subprocess.PIPE,
        env=environment,
    )
    started, peak, guarded = time.monotonic(), 0, None
    while child.poll() is None:
        peak = max(peak, rss(child.pid))
        if peak > args.guard_mb * MB or time.monotonic() - started > args.guard_seconds:
            guarded = "stopped by the guard at %.0f MiB after %.0f s, still listing" % (
                peak / MB,
                time.monotonic() - started,
            )
            child.kill()
            break
        time.sleep(0.05)
    out = child.communicate()[0]
    server.shutdown()
    print("collection: %s" % collection)
    print("page: %d records, %.1f MiB; %s" % (args.records, size / MB, "compact" if args.compact else "whole"))
    print("pages served: %d (%.0f MiB, %d records)" % (served[0], served[0] * size / MB, served[0] * args.records))
    if guarded:
        print("outcome: %s" % guarded)
        print("peak RSS: >= %.0f MiB (sampled)" % (peak / MB))
        return
    result = json.loads(out.decode("utf-8").strip().splitlines()[-1])
    print("outcome: %s" % result["outcome"])
    print(
        "listing: %.1f s; peak RSS %.0f MiB (ru_maxrss; sampled %.0f MiB)"
        % (result["seconds"], result["rss"] / MB, peak / MB)
    )


if __name__ == "__main__":
    main()
