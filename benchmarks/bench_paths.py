# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-request path candidates of issue 26, side by side: the same status fires (one POST per device, JSON
reply decoded, status checked) by ``--concurrency`` worker threads through

- requests: one ``requests.Session`` (what transport.Transport uses today, without its guarantees);
- urllib3: requests' own transport used directly (one ``HTTPConnectionPool`` of ``concurrency`` connections);
- http.client: one stdlib ``HTTPConnection`` owned by each worker thread;
- the collection: module_utils' NacClient.fire_intent (every guarantee: deadline per exchange, reply size limit,
  retries, masking, throttle), through engine.ordered_steps;
- aiohttp: the reference client (bench_aiohttp.py), an event loop.

Each path runs once per round, in turns (the order rotates); it prints wall ms per request, CPU ms per request and
context switches per request (RUSAGE_SELF of this process), medians [min-max] of ``--repeat`` rounds. The first
three are bare: they show the floor each library sets, not a client with the collection's guarantees.

    .venv/bin/python benchmarks/bench_paths.py [--requests 3000] [--latency 0.02] [--concurrency 64] [--repeat 3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import http.client
import json
import threading
import urllib.parse

import urllib3
from bench_aiohttp import AiohttpClient
from bench_compare import EmulatorProcess, show
from bench_dot1x_status import ADMIN_KEY, client_for, config
from bench_engine import measure, per

from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import ordered_steps

FIRE = "/api/intent/dot1x_status/fire"
HEADERS = {"Authorization": "Bearer " + ADMIN_KEY, "Accept": "application/json", "Content-Type": "application/json"}


def body(ident):
    return json.dumps({"targetId": ident, "additionalPayload": {"json": True}}).encode()


def threaded(count, concurrency, make_worker):
    """``count`` fires on ``concurrency`` threads, each with its own ``make_worker()`` (a function of an id)."""
    lock, next_id, answered = threading.Lock(), [0], [0]

    def run():
        fire = make_worker()
        while True:
            with lock:
                if next_id[0] >= count:
                    return
                next_id[0] += 1
                ident = next_id[0]
            reply = fire(ident)
            assert "status" in reply
            with lock:
                answered[0] += 1

    threads = [threading.Thread(target=run) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answered[0]


def via_requests(url, count, concurrency):
    import requests
    from requests.adapters import HTTPAdapter

    session = requests.Session()
    session.mount("http://", HTTPAdapter(pool_connections=1, pool_maxsize=concurrency))
    session.headers.update(HEADERS)

    def worker():
        def fire(ident):
            reply = session.post(url + FIRE, data=body(ident), timeout=30)
            reply.raise_for_status()
            return reply.json()

        return fire

    try:
        return threaded(count, concurrency, worker)
    finally:
        session.close()


def via_urllib3(url, count, concurrency):
    parts = urllib.parse.urlsplit(url)
    pool = urllib3.HTTPConnectionPool(parts.hostname, parts.port, maxsize=concurrency, block=True, headers=HEADERS)

    def worker():
        def fire(ident):
            reply = pool.request("POST", FIRE, body=body(ident), timeout=urllib3.Timeout(30), retries=False)
            if reply.status >= 300:
                raise RuntimeError(reply.status)
            return json.loads(reply.data)

        return fire

    try:
        return threaded(count, concurrency, worker)
    finally:
        pool.close()


def via_http_client(url, count, concurrency):
    parts = urllib.parse.urlsplit(url)

    def worker():
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)

        def fire(ident):
            connection.request("POST", FIRE, body=body(ident), headers=HEADERS)
            reply = connection.getresponse()
            data = reply.read()
            if reply.status >= 300:
                raise RuntimeError(reply.status)
            return json.loads(data)

        return fire

    return threaded(count, concurrency, worker)


def via_collection(url, count, concurrency):
    client = client_for(url, concurrency)
    try:
        return len(list(ordered_steps(client.fire_intent_steps, range(1, count + 1), concurrency)))
    finally:
        client.close()


def via_aiohttp(url, count, concurrency):
    import asyncio

    async def run():
        async with AiohttpClient(url, concurrency) as client:
            bodies = [{"targetId": ident, "additionalPayload": {"json": True}} for ident in range(1, count + 1)]
            return len(await client.call_all("POST", FIRE, bodies))

    return asyncio.run(run())


PATHS = (
    ("aiohttp", via_aiohttp),
    ("http.client", via_http_client),
    ("urllib3", via_urllib3),
    ("requests", via_requests),
    ("collection", via_collection),
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("load average at start: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    with EmulatorProcess(config(args.requests), args.latency) as emulator:
        for concurrency in args.concurrency:
            print(
                "Per-request paths: %d fires, %.0f ms latency, concurrency %d, %d rounds in turns"
                % (args.requests, args.latency * 1000, concurrency, args.repeat)
            )
            runs = dict((name, []) for name, _path in PATHS)
            for index in range(args.repeat):
                turn = PATHS[index % len(PATHS) :] + PATHS[: index % len(PATHS)]
                for name, path in turn:
                    sample, answered = measure(
                        emulator.url, lambda path=path, c=concurrency: path(emulator.url, args.requests, c)
                    )
                    assert answered == args.requests, (name, answered)
                    runs[name].append(sample)
            base = runs["aiohttp"]
            print(
                "  %-12s %-22s %-22s %-22s %s"
                % ("path", "wall ms/request", "CPU ms/request", "switches/request", "wall, CPU / aiohttp")
            )
            for name, samples in runs.items():
                print(
                    "  %-12s %-22s %-22s %-22s %s, %s"
                    % (
                        name,
                        show([s.wall * 1000.0 / s.requests for s in samples], "%.3f"),
                        show([per(s.cpu * 1000.0, s) for s in samples], "%.3f"),
                        show([per(s.switches, s) for s in samples], "%.2f"),
                        show([s.wall / b.wall for s, b in zip(samples, base)], "%.2f"),
                        show([per(s.cpu, s) / per(b.cpu, b) for s, b in zip(samples, base)], "%.2f"),
                    )
                )
    print("load average at end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
