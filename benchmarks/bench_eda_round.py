#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure the cost of one round of the event source netaccess.nac.dot1x_status against the NAC API emulator.

Starts the emulator in this process with N devices and an injected latency per request, then runs
``dot1x_events.poll_once`` (what the source runs in its worker thread each round) three times: the
first round (baseline, no events), a round after ``--changes`` devices changed status (admin
endpoint), and a round with no change. Prints each round's wall time, requests by kind (counted by
the emulator), events, and the time of the change detection alone.

Then, side by side in the same run (harness/compare.py), against the emulator in a process of its own: a
bare requests + ThreadPoolExecutor client making the same requests (the device list, one fire per
device) and ``poll_once`` with its client built as the source builds it (``source_options``), each
keeping its session from round to round as the source does (one warm-up round each, not counted):
wall time, CPU time per request (RUSAGE_SELF of this process) and their ratios to the bare client,
median and spread of --compare-repeat rounds, PASS/FAIL against the target of issue 17 (<= 1.3x the
bare client's wall time). It asserts nothing about speed.

    .venv/bin/python benchmarks/bench_eda_round.py [--devices 5000] [--latency 0.02] [--concurrency 32] [--changes 50]
        [--compare-repeat 3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import time

import requests
from harness.bare import BareClient
from harness.compare import compare
from harness.emulator import EmulatorProcess
from harness.nac import client_for, config
from harness.paths import ADMIN_KEY

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import detect, poll_once, source_options
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator


def one_round(emulator, nac, concurrency, known):
    before = emulator.request_counts()
    start = time.perf_counter()
    result = poll_once(nac, concurrency=concurrency, known=known)
    elapsed = time.perf_counter() - start
    after = emulator.request_counts()
    requests_made = dict(
        (kind, after.get(kind, 0) - before.get(kind, 0)) for kind in after if after.get(kind, 0) != before.get(kind, 0)
    )
    return result, elapsed, requests_made


ROUND_TARGETS = (1.3, None)  # issue 17: wall time as a ratio to the bare client's; CPU per request shown, no target


def side_by_side(devices, latency, concurrency, repeat):
    """Rounds of the bare client and of poll_once, in turns, each keeping its session across rounds."""
    with EmulatorProcess(config(devices), latency) as emulator:
        bare_client = BareClient(emulator.url, concurrency)
        client_kwargs, _options = source_options(
            dict(api_url=emulator.url, api_key=ADMIN_KEY, concurrency=concurrency), environ={}
        )
        nac = NacClient(**client_kwargs)
        state = dict(known=None)
        try:

            def bare(_index):
                sample, replies = emulator.measure(bare_client.status_round)
                assert len(replies) == devices
                return sample

            def source(_index):
                sample, result = emulator.measure(lambda: poll_once(nac, concurrency=concurrency, known=state["known"]))
                assert len(result.known) == devices and not result.events, result.events[:1]
                state["known"] = result.known
                return sample

            bare(0)
            state["known"] = poll_once(
                nac, concurrency=concurrency
            ).known  # the first round: connections, known statuses
            compare(
                "Event source round side by side (issue 17): %d devices, %.0f ms latency, concurrency %d, emulator"
                " in its own\n"
                "  process; warm sessions (one round each before); CPU: RUSAGE_SELF of this process"
                % (devices, latency * 1000, concurrency),
                [("bare requests+threads", bare), ("event source poll_once", source)],
                repeat,
                {"event source poll_once": ROUND_TARGETS},
            )
        finally:
            bare_client.close()
            nac.close()


# house: long because its argument table and the runs in the order they print
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=5000)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added to every API request")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--changes", type=int, default=50, help="devices whose status changes before the second round")
    parser.add_argument(
        "--compare-repeat",
        type=int,
        default=3,
        help="rounds of each side in the comparison with a bare client (default 3; 0 to skip)",
    )
    args = parser.parse_args()

    print(
        "event source round: %d devices, %g ms latency per request, concurrency %d"
        % (args.devices, args.latency * 1000, args.concurrency)
    )
    with Emulator(config=config(args.devices), latency=args.latency).start() as emulator:
        nac = client_for(emulator.url, args.concurrency)
        known = None
        try:
            for label in ("first round (baseline)", "after %d changes" % args.changes, "no change"):
                if label.startswith("after"):
                    for ident in range(1, args.devices + 1, max(1, args.devices // args.changes))[: args.changes]:
                        requests.post(
                            emulator.url + "/_emulator/dot1x", json={"id": ident, "status": "HELD"}, timeout=10
                        )
                result, elapsed, made = one_round(emulator, nac, args.concurrency, known)
                changes = sum(1 for event in result.events if "nac_dot1x" in event)
                errors = sum(1 for event in result.events if "nac_dot1x_error" in event)
                total = sum(made.values())
                print(
                    "  %-24s %6.2f s  %5d requests (%s)  %.0f requests/s  %d change events, %d error events"
                    % (
                        label,
                        elapsed,
                        total,
                        ", ".join("%s: %d" % item for item in sorted(made.items())),
                        total / elapsed,
                        changes,
                        errors,
                    )
                )
                known = result.known
        finally:
            nac.close()
    results = list(known.values())
    start = time.perf_counter()
    for _repeat in range(10):
        detect(known, results)
    print(
        "  change detection alone (detect, %d results): %.1f ms per round"
        % (len(results), (time.perf_counter() - start) * 100)
    )
    print(
        "  ideal fire phase at this latency and concurrency: %.2f s (devices x latency / concurrency)"
        % (args.devices * args.latency / args.concurrency)
    )
    if args.compare_repeat:
        side_by_side(args.devices, args.latency, args.concurrency, args.compare_repeat)


if __name__ == "__main__":
    main()
