#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Soak: the modules through faults and through the server variants the API guide leaves "not shown".

Every scenario starts its own NAC API emulator in this process (tests/emulator/README.md) and drives the
real modules through ``ansible-playbook``, as a user runs them (the collection of this checkout). Then it
reads the truth from the emulator (its whole record list, never paginated nor padded) and judges every
report against it. It prints what it saw, one table row per scenario (devices requested, devices in
place, duplicates created, false reports, status results with a status, wall time), PASS/FAIL per target,
and exits non-zero when a target is missed.

Scenarios (``--scenarios`` picks some, comma-separated; default all):

- ``faults``: a bulk nac_device of N devices, an all-devices nac_dot1x_status and the rerun, through
  20 % injected faults (500, 502, 503, 429, reset, commit_drop, commit_500, slow; duplicate hostnames
  allowed, so that a creation sent twice shows); requests beyond the minimum are shown too.
- ``paginated`` (issue 16, point 1): a server that pages its lists by 100 with RFC 8288 Link headers and
  150 devices: nac_device_info, nac_dot1x_status all_devices, a bulk ensure of the 150 existing and a
  single ensure of a device on page 2, twice.
- ``page-signs`` (point 1): the 150 existing ensured in bulk against each other way a page may say there
  is more (relative Link, X-Total-Count only, Content-Range, a body with "next", a Link loop, a Link to
  another host): either the complete list is read (no duplicate), or the task fails loudly before any
  POST with a message naming the sign; the other host never sees a request.
- ``lookalike`` (point 2): names that match only by a looser rule than "NFC, ASCII without case" (RFC
  4343): strasse-01 listed and straße-01 requested, CAFÉ-02 listed and café-02 requested; and names that
  are the same by that rule: NFD café-01 requested with NFC café-01 listed, Kiosk-01 written with U+212A
  KELVIN SIGN (canonically equivalent to K) with Kiosk-01 listed. nac_device, nac_device_info and
  nac_dot1x_status by hostname. A listed lookalike must be named (with its id) in the result.
- ``duplicate-ids`` (point 3): two records sharing an id: nac_device_info must flag it (a warning naming
  the id and both hostnames), a status query of the two hostnames must return both.
- ``two-controllers`` (point 4): two ansible-playbook processes ensure the same 200 hostnames at once
  (the first list of each is held until both asked for it, so both read it before either writes;
  duplicates allowed, creations answered with an empty body, 10 % faults on the POSTs): duplicates
  cannot be prevented without a server-side key and are only counted; a report must not contradict the final
  list, nor itself ("did not show" in an item's error while a warning of the same result says the list shows it twice).
- ``late-commit`` (point 5): timeout 5 s, every first POST loses its reply and commits 20 s later; then
  the next run: devices in place, duplicates, and reports that said clean success while a duplicate
  appeared.
- ``restart`` (point 6): connections refused for 30 s in the middle of a 200-device bulk, and in the
  middle of a 200-device all_devices status batch (default client settings).
- ``capped-list``, ``racing-client``, ``normalised-name``, ``lagging-replica``, ``redirect-commit``,
  ``shifting-pages`` (issue 25, servers that confirm nothing): harness/soak_servers.py.

What counts as a false report (a result or message that contradicts what the server's final list
shows; names compared by the rule above): an item with no report; an item reported created/existing
with an id that is not a device of its name; an item reported failed although its device exists
exactly once, without the report saying the outcome is unknown; a name the final list shows more than
once, whose report (item or result warnings) does not name every id (in two-controllers only when the
item failed: a clean creation cannot know of the other controller's later one); an item error saying
the list "did not show" it while the same result says the list shows it; a device_info or status result
that returns another device for a requested name, drops a requested name, or a partial list without
failing; device_info not flagging a repeated id.

    .venv/bin/python benchmarks/soak_faults.py [--scenarios faults,paginated,...] [--devices 500]
        [--rate 0.2] [--seed 8] [--timeout 2] [--slow SECONDS] [--latency 0.01] [--list]
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import json
import os
import re
import sys
import tempfile
import threading
import time
import unicodedata

from harness.soak import (
    FAULT_TARGETS,
    SOAK,
    Row,
    Runner,
    config,
    duplicates,
    entries_of,
    explain,
    in_place,
    judge_devices,
    judge_info,
    judge_lookalikes,
    judge_status,
    loose,
    mac,
    mentions,
    requested,
    same,
    seeds,
    texts,
    truth,
)
from harness.soak_servers import SERVER_SCENARIOS
from nac_emulator import FAULT_MODES, Emulator  # harness.soak put tests/emulator on sys.path

# ---- scenarios -------------------------------------------------------------------------------


def scenario_faults(args, runner):
    """The fault soak: a bulk of N devices, an all-devices status and the rerun through ``rate`` faults."""
    row = Row("faults")
    items = requested(args.devices)
    count = row.requested = len(items)
    print(
        "%d devices through %.0f %% faults (%s; seed %d), client timeout %g s (default 30), slow commit %g s,"
        " latency %g s; "
        "duplicate hostnames allowed, Retry-After 1 s"
        % (count, args.rate * 100, ", ".join(FAULT_MODES), args.seed, args.timeout, args.slow, args.latency)
    )
    faults = dict(rate=0, seed=args.seed, retry_after=1, slow=args.slow)
    with Emulator(config(), latency=args.latency, faults=faults).start() as emulator:

        def run(name, module, module_args):
            before, faults_before = emulator.request_counts(), emulator.faults()["injected"]
            emulator.faults(rate=args.rate)
            try:
                (result,), seconds = runner.run(name, emulator, [(module, module_args)], timeout=args.timeout)
            finally:
                settle(emulator, args.slow + 30)
            after, faults_after = emulator.request_counts(), emulator.faults()["injected"]
            injected = dict((mode, faults_after[mode] - faults_before[mode]) for mode in FAULT_MODES)
            return result, seconds, sum(after.values()) - sum(before.values()), injected

        first, seconds, sent, injected = run("faults-first", "netaccess.nac.nac_device", dict(devices=items))
        row.seconds += seconds
        held, _records = truth(emulator)
        show_run("first run", seconds, sent, count + 1, count, injected)
        wrong = judge_reports(items, first, held)
        placed, doubled = in_place(items, held), duplicates(items, held)
        print(
            "          devices in place %d of %d (%.1f %%), duplicates %d, items reported wrongly %d "
            "(module: created %s, existing %s, failures %s)"
            % (
                placed,
                count,
                100.0 * placed / count,
                doubled,
                len(wrong),
                first.get("created"),
                first.get("existing"),
                first.get("failures"),
            )
        )
        explain(wrong)

        status, seconds, sent, injected = run("faults-status", "netaccess.nac.nac_dot1x_status", dict(all_devices=True))
        row.seconds += seconds
        listed = sorted(i for ids in held.values() for i in ids)
        results = status.get("results") or []
        answered = [r for r in results if not r.get("error") and isinstance(r.get("status"), str)]
        show_run("status", seconds, sent, len(listed) + 2, len(listed), injected)
        print(
            "          results %d for %d devices (every device: %s), with a status %d (%.1f %%), summary %s%s"
            % (
                len(results),
                len(listed),
                sorted(r.get("id") for r in results) == listed,
                len(answered),
                100.0 * len(answered) / max(len(listed), 1),
                json.dumps(status.get("summary")),
                "" if answered or not status.get("msg") else "; module: %s" % status["msg"][:300],
            )
        )
        explain([("", "error: " + str(r["error"])[:120]) for r in results if r.get("error")])

        rerun, seconds, sent, injected = run("faults-rerun", "netaccess.nac.nac_device", dict(devices=items))
        row.seconds += seconds
        final, _records = truth(emulator)
        total = sum(len(final.get(same(item["hostname"]), ())) for item in items)
        converged = in_place(items, final) == count == total
        show_run("rerun", seconds, sent, count - placed + 1, count, injected)
        print(
            "          module: created %s, existing %s, failures %s; devices with the requested hostnames %d"
            " (%d distinct)%s"
            % (
                rerun.get("created"),
                rerun.get("existing"),
                rerun.get("failures"),
                total,
                in_place(items, final),
                "" if not rerun.get("failed") else "; module: %s" % str(rerun.get("msg"))[:300],
            )
        )
    row.in_place, row.duplicates, row.false = placed, doubled, len(wrong)
    row.statuses = "%d/%d" % (len(answered), len(listed))
    every = sorted(r.get("id") for r in results) == listed
    row.target(FAULT_TARGETS[0], "%.1f %%" % (100.0 * placed / count), 100.0 * placed / count >= 99)
    row.target(FAULT_TARGETS[1], doubled, doubled == 0)
    row.target(FAULT_TARGETS[2], len(wrong), not wrong)
    row.target(
        FAULT_TARGETS[3],
        "%.1f %%" % (100.0 * len(answered) / max(len(listed), 1)),
        len(answered) >= 0.99 * len(listed) and every,
    )
    row.target(FAULT_TARGETS[4].replace(" N", " %d" % count), total, converged)
    return row


def settle(emulator, limit):
    """Faults off, and wait until no slow request or late commit is held (its creation has landed)."""
    emulator.faults(rate=0)
    deadline = time.monotonic() + limit
    while emulator.faults()["holding"]:
        if time.monotonic() > deadline:
            raise SystemExit("a slow request or late commit is still held %.0f s after the run" % limit)
        time.sleep(0.05)


def judge_reports(items, result, held):
    """The fault soak's judgement: items whose report is not the truth, as (hostname, what is wrong)."""
    reports = result.get("devices") or []
    wrong = []
    for index, item in enumerate(items):
        name = same(item["hostname"])
        report = reports[index] if index < len(reports) and same(str(reports[index].get("hostname"))) == name else None
        if report is None:
            wrong.append((item["hostname"], "no report, module: %s" % str(result.get("msg"))[:100]))
        elif report.get("error"):
            if held.get(name):
                times = len(held[name])
                wrong.append(
                    (
                        item["hostname"],
                        "reported failed but exists"
                        + (" %d times" % times if times > 1 else "")
                        + ": "
                        + cause(report),
                    )
                )
        elif report.get("id") not in held.get(name, ()):
            wrong.append((item["hostname"], "reported with an id not listed under its hostname: " + cause(report)))
    return wrong


def cause(report):
    """What the module said went wrong with one item: its failure's type, status and the start of its message."""
    failure = report.get("failure") or {}
    kind = " ".join(str(part) for part in (failure.get("type"), failure.get("status")) if part)
    if failure.get("outcome_unknown"):
        kind += " (outcome unknown)"
    return "%s: %s" % (kind or "no failure", str(report.get("error") or "")[:90])


def show_run(label, seconds, sent, minimum, per, injected):
    print(
        "%-9s wall %6.1f s   requests %5d (minimum %d), extra per device %.2f   faults injected: %s"
        % (
            label,
            seconds,
            sent,
            minimum,
            (sent - minimum) / float(max(per, 1)),
            " ".join("%s=%d" % (mode, injected[mode]) for mode in FAULT_MODES),
        )
    )


def scenario_paginated(args, runner):
    """Point 1: lists paged by 100 (Link, X-Total-Count), 150 devices: info, status, bulk and single ensure."""
    row = Row("paginated")
    existing = seeds(150, "soak-pg-")
    items = [dict(hostname=record["hostname"], **SOAK) for record in existing]  # no MAC: a second copy is possible
    single = dict(items[120])
    print(
        '150 devices, GET /api/device paged by 100 with Link rel="next" and X-Total-Count (page 2: %s ...)'
        % items[100]["hostname"]
    )
    with Emulator(config(devices=existing, page_size=100, page_style="link")).start() as emulator:
        reads = [("netaccess.nac.nac_device_info", {}), ("netaccess.nac.nac_dot1x_status", dict(all_devices=True))]
        (info, status), seconds = runner.run("pg-read", emulator, reads)
        row.seconds += seconds
        held, records = truth(emulator)
        wrong = judge_info(info, records)
        status_wrong, answered = judge_status(status, records)
        wrong += status_wrong
        print(
            "read      wall %6.1f s   nac_device_info: %s devices%s; nac_dot1x_status all_devices: %d results,"
            " %d with a status%s"
            % (
                seconds,
                len(info.get("devices") or []),
                " (failed: %s)" % str(info.get("msg"))[:120] if info.get("failed") else "",
                len(status.get("results") or []),
                len(answered),
                " (failed: %s)" % str(status.get("msg"))[:120] if status.get("failed") else "",
            )
        )

        (bulk,), seconds = runner.run("pg-bulk", emulator, [("netaccess.nac.nac_device", dict(devices=items))])
        row.seconds += seconds
        held, records = truth(emulator)
        bulk_wrong, _contradictions = judge_devices(items, bulk, held)
        doubled = duplicates(items, held)
        print(
            "bulk      wall %6.1f s   the 150 existing ensured: module created %s, existing %s, failures %s%s;"
            " duplicates now %d"
            % (
                seconds,
                bulk.get("created"),
                bulk.get("existing"),
                bulk.get("failures"),
                " (%s)" % str(bulk.get("msg"))[:120] if bulk.get("failed") else "",
                doubled,
            )
        )
        row.in_place = in_place(items, held)

        emulator.reset()
        single_args = dict(single)
        results, seconds = runner.run("pg-single", emulator, [("netaccess.nac.nac_device", single_args)] * 2)
        row.seconds += seconds
        held, records = truth(emulator)
        single_wrong = []
        for result in results:
            single_wrong += judge_devices([single], result, held)[0]
        single_doubled = duplicates([single], held)
        print(
            "single    wall %6.1f s   %s ensured twice: %s; devices of that name now %d"
            % (
                seconds,
                single["hostname"],
                ", ".join("changed" if r.get("changed") else "failed" if r.get("failed") else "ok" for r in results),
                len(held.get(same(single["hostname"]), [])),
            )
        )
    wrong += bulk_wrong + single_wrong
    explain(wrong)
    row.requested, row.duplicates, row.false = 151, doubled + single_doubled, len(wrong)
    row.statuses = "%d/150" % len(answered)
    row.target("duplicates == 0", row.duplicates, row.duplicates == 0)
    row.target("false reports == 0", row.false, row.false == 0)
    row.target("statuses == 150", row.statuses, len(answered) == 150)
    return row


PAGE_SIGNS = (
    ("link-relative", ("link", "relative")),  # can be followed (same origin); refusing it loudly is allowed too
    ("total-only", ("x-total-count",)),
    ("content-range", ("content-range",)),
    ("body-next", ("next", "object", "items")),
    ("link-loop", ("twice", "loop", "again", "already", "seen", "repeat")),
    ("link-foreign", ("origin", "another host", "other host", "different host", "api_url")),  # and the foreign address
)


def scenario_page_signs(args, runner):
    """Point 1: every other sign of a partial page: read whole, or a loud failure before any POST."""
    row = Row("page-signs")
    existing = seeds(150, "soak-ps-")
    items = [dict(hostname=record["hostname"], **SOAK) for record in existing]  # no MAC: a second copy is possible
    print(
        "150 existing devices ensured in bulk against each other sign of a partial page (page size 100): "
        "the complete list read, or a loud failure naming the sign before any POST"
    )
    outcomes = []
    with Emulator(config()).start() as foreign, Emulator(config(devices=existing, page_size=100)).start() as emulator:
        origin = "http://127.0.0.1:%d" % foreign.port
        for style, words in PAGE_SIGNS:
            emulator.reset()
            emulator.settings(page_size=100, page_style=style, page_foreign_url=origin)
            (result,), seconds = runner.run(
                "ps-" + style, emulator, [("netaccess.nac.nac_device", dict(devices=items))]
            )
            row.seconds += seconds
            held, _records = truth(emulator)
            posts = emulator.request_counts().get("POST /api/device", 0)
            doubled = duplicates(items, held)
            message = str(result.get("msg") or "")
            leaked = sum(foreign.request_counts().values())
            if leaked:
                outcome = "FOLLOWED to another host (%d requests there: the credentials went with them)" % leaked
            elif not result.get("failed") and doubled == 0 and result.get("existing") == 150:
                outcome = "complete (150 existing)"
            elif (
                result.get("failed")
                and posts == 0
                and words
                and any(w in message.lower() for w in words + (origin[7:],))
            ):
                outcome = "loud (no POST)"
            elif result.get("failed") and posts == 0:
                outcome = "failed before any POST, but the message does not name the sign"
            else:
                outcome = "SILENT: %d POSTs, %d duplicates, created %s" % (posts, doubled, result.get("created"))
            good = outcome.startswith(("complete", "loud"))
            outcomes.append(good)
            row.requested += 150
            row.in_place += in_place(items, held)
            row.duplicates += doubled
            row.false += 0 if good else 1
            print(
                "%-14s wall %5.1f s   %s%s"
                % (style, seconds, outcome, "; module: %s" % message[:160] if message else "")
            )
            foreign.reset()
    row.target(
        "styles read whole or refused loudly, no foreign request",
        "%d/%d" % (sum(outcomes), len(outcomes)),
        all(outcomes),
    )
    row.target("duplicates == 0", row.duplicates, row.duplicates == 0)
    return row


LOOKALIKES = (  # (listed, requested, the same name by NFC + ASCII case-insensitive?)
    ("strasse-01", "straße-01", False),
    ("Kiosk-01", "\u212aiosk-01", True),
    (unicodedata.normalize("NFC", "café-01"), unicodedata.normalize("NFD", "café-01"), True),
    ("CAFÉ-02", "café-02", False),
)


def scenario_lookalike(args, runner):
    """Point 2: straße/strasse, CAFÉ/café, NFD/NFC café, KELVIN SIGN Kiosk: ensure, info, status by name."""
    row = Row("lookalike")
    listed = [
        dict(hostname=listed_name, macs=[mac(0x20000 + n)], **SOAK)
        for n, (listed_name, _r, _s) in enumerate(LOOKALIKES)
    ]
    items = [dict(hostname=name, **SOAK) for _l, name, _s in LOOKALIKES]
    names = [item["hostname"] for item in items]
    print(
        "listed %s; requested %s (the same by the rule: %s)"
        % (
            ", ".join(ascii(r["hostname"]) for r in listed),
            ", ".join(ascii(n) for n in names),
            ", ".join(ascii(n) for _l, n, same_name in LOOKALIKES if same_name),
        )
    )
    with Emulator(config(devices=listed, hostname_chars="unicode")).start() as emulator:
        before = emulator.records()
        (ensure, info, status), seconds = runner.run(
            "lookalike",
            emulator,
            [
                ("netaccess.nac.nac_device", dict(devices=items)),
                ("netaccess.nac.nac_device_info", dict(hostname=names)),
                ("netaccess.nac.nac_dot1x_status", dict(hostname=names)),
            ],
        )
        row.seconds = seconds
        held, records = truth(emulator)
    wrong = judge_devices(items, ensure, held)[0]
    missed = judge_lookalikes(items, ensure, before)
    # A requested name with a listed lookalike may be created (a warning names the lookalike) or refused (the
    # item's failure names it): issue 16 leaves the choice. Refused and named counts as handled, not as in place.
    entries = dict((e.get("hostname"), e) for e in entries_of(ensure, items))
    refused = [
        item
        for item in items
        if not held.get(same(item["hostname"]))
        and (entries.get(item["hostname"]) or {}).get("error")
        and not any(name == item["hostname"] for name, _why in missed)
        and any(loose(r["hostname"]) == loose(item["hostname"]) for r in before)
    ]
    wrong += judge_info(info, records, names)
    status_wrong, answered = judge_status(status, records, names)
    wrong += status_wrong
    for item, entry in zip(items, entries_of(ensure, items)):
        print(
            "          %-14s -> %s id %s%s"
            % (
                ascii(item["hostname"]),
                "created" if entry.get("changed") else "failed" if entry.get("error") else "existing",
                entry.get("id"),
                "; " + texts(entry.get("warnings"))[:120] if entry.get("warnings") else "",
            )
        )
    explain(wrong + missed)
    row.requested, row.in_place, row.duplicates, row.false = (
        len(items),
        in_place(items, held),
        duplicates(items, held),
        len(wrong),
    )
    covered = sum(1 for name in names if any(same(str(r.get("hostname") or "")) == same(name) for r in answered))
    row.statuses = "%d/%d" % (
        covered,
        row.in_place,
    )  # requested names in place with a status (a name of two devices has two results)
    row.target(
        "in place, or refused naming the lookalike == %d" % len(items),
        "%d + %d" % (row.in_place, len(refused)),
        row.in_place + len(refused) == len(items),
    )
    row.target("duplicates == 0", row.duplicates, row.duplicates == 0)
    row.target("false reports == 0", row.false, row.false == 0)
    row.target("listed lookalikes named with their id", "%d missed" % len(missed), not missed)
    row.target("every name in place has a status", row.statuses, covered == row.in_place)
    return row


def scenario_duplicate_ids(args, runner):
    """Point 3: two records sharing an id: device_info flags it, a status of both names returns both."""
    row = Row("duplicate-ids")
    shared = [
        dict(id=500, hostname="soak-shared-a", macs=[mac(0x30001)], **SOAK),
        dict(id=500, hostname="soak-shared-b", macs=[mac(0x30002)], **SOAK),
    ]
    names = [record["hostname"] for record in shared]
    print("10 devices plus %s and %s sharing id 500" % tuple(names))
    with Emulator(config(devices=seeds(10, "soak-id-"))).start() as emulator:
        emulator.seed(shared)
        (info, by_name, every, ensure), seconds = runner.run(
            "duplicate-ids",
            emulator,
            [
                ("netaccess.nac.nac_device_info", {}),
                ("netaccess.nac.nac_dot1x_status", dict(hostname=names)),
                ("netaccess.nac.nac_dot1x_status", dict(all_devices=True)),
                ("netaccess.nac.nac_device", dict(devices=[dict(hostname=name, **SOAK) for name in names])),
            ],
        )
        row.seconds = seconds
        held, records = truth(emulator)
    wrong = judge_info(info, records)
    flag_text = texts(info.get("warnings")) + " | " + str(info.get("msg") or "")
    flagged = mentions(flag_text, 500) and all(name in flag_text for name in names)
    if not flagged:
        wrong.append(
            (
                "device_info",
                "returned %d records, id 500 twice, without a warning naming the id and both hostnames"
                % len(info.get("devices") or []),
            )
        )
    status_wrong, answered = judge_status(by_name, records, names)
    every_wrong, every_answered = judge_status(every, records)
    wrong += status_wrong + every_wrong + judge_devices([dict(hostname=name) for name in names], ensure, held)[0]
    for label, result in (("status of both names", by_name), ("status of all", every)):
        print(
            "          %s: %d results (%s), warnings: %s"
            % (
                label,
                len(result.get("results") or []),
                ", ".join(
                    "%s=%s" % (r.get("hostname"), r.get("status") or r.get("error"))
                    for r in (result.get("results") or [])
                    if r.get("id") == 500
                ),
                texts(result.get("warnings"))[:160] or "none",
            )
        )
    print(
        "          device_info: %d records, warnings: %s"
        % (len(info.get("devices") or []), texts(info.get("warnings"))[:200] or "none")
    )
    explain(wrong)
    row.requested, row.in_place, row.false = len(names), in_place([dict(hostname=n) for n in names], held), len(wrong)
    row.statuses = "%d/%d" % (len(answered) + len(every_answered), len(names) + len(records))
    row.target("device_info flags the repeated id", "yes" if flagged else "no", flagged)
    row.target(
        "status of both names returns both",
        "%d/2" % len(set(r.get("hostname") for r in by_name.get("results") or [])),
        not status_wrong and len(answered) == 2,
    )
    row.target("false reports == 0", row.false, row.false == 0)
    return row


def scenario_two_controllers(args, runner):
    """Point 4: two ansible-playbook runs ensure the same 200 hostnames at once (10 % POST faults)."""
    row = Row("two-controllers")
    items = requested(200, "soak-cc-", macs_every=0)
    faults = dict(rate=0.1, modes=["commit_500", "commit_drop", "503"], only=["POST /api/device"], seed=16)
    print(
        "two ansible-playbook processes ensure the same 200 hostnames at once (each reads the list before either"
        " writes); duplicates allowed, creations answered 201 with "
        "an empty body (the API guide does not show one), 10 % faults on the POSTs (commit_500, commit_drop, 503),"
        " client timeout 5 s"
    )
    with Emulator(config(creation_reply="empty"), latency=0.01, faults=faults).start() as emulator:
        gate_first_lists(emulator, 2)
        handles = [
            runner.start(
                "controller-%s" % which, emulator, [("netaccess.nac.nac_device", dict(devices=items))], timeout=5
            )
            for which in "ab"
        ]
        finished = [runner.finish(handle) for handle in handles]
        settle(emulator, 60)
        held, _records = truth(emulator)
    row.seconds = max(seconds for _results, seconds in finished)
    wrong, contradictions, clean_both = [], [], 0
    reports = []
    for which, ((result,), seconds) in zip("ab", finished):
        false, contra = judge_devices(items, result, held, clean_duplicates=False)
        wrong += false
        contradictions += contra
        reports.append(dict((e.get("hostname"), e) for e in entries_of(result, items)))
        print(
            "controller %s: wall %5.1f s, created %s, existing %s, failures %s, warnings %d"
            % (
                which,
                seconds,
                result.get("created"),
                result.get("existing"),
                result.get("failures"),
                len(result.get("warnings") or []),
            )
        )
    doubled = [item["hostname"] for item in items if len(held.get(same(item["hostname"]), ())) > 1]
    for name in doubled:
        if all(
            not (report.get(name) or {}).get("error") and not (report.get(name) or {}).get("warnings")
            for report in reports
        ):
            clean_both += 1
    print(
        "          hostnames listed twice or more: %d (duplicates %d); of them reported clean, with no warning,"
        " by both "
        "controllers: %d (no client can see the other's later creation); contradictions %d"
        % (len(doubled), duplicates(items, held), clean_both, len(contradictions))
    )
    explain(wrong)
    row.requested, row.in_place, row.duplicates, row.false = (
        len(items),
        in_place(items, held),
        duplicates(items, held),
        len(wrong),
    )
    row.target("in place == 200", row.in_place, row.in_place == 200)
    row.target("false reports == 0", row.false, not wrong)
    row.target("contradictions within a result == 0", len(contradictions), not contradictions)
    return row


def gate_first_lists(emulator, count, limit=60):
    """Hold the first ``count`` GET /api/device until all of them arrived: every controller has read the
    list before any writes (however their start-up is skewed), the worst case of controllers racing."""
    barrier = threading.Barrier(count, timeout=limit)
    original, calls, lock = emulator.model.list_devices, [0], threading.Lock()

    def gated(*args):
        with lock:
            calls[0] += 1
            first = calls[0] <= count
        if first:
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                pass
        return original(*args)

    emulator.model.list_devices = gated


def scenario_late_commit(args, runner):
    """Point 5: timeout 5 s, commits landing 20 s after their lost reply, then the next run."""
    row = Row("late-commit")
    count, delay = 20, 20.0
    items = requested(count, "soak-lc-", macs_every=0)
    faults = dict(rate=1, modes=["commit_500"], only=["POST /api/device"], limit=count, commit_delay=delay, seed=1)
    print(
        "%d new devices, client timeout 5 s; every first POST is answered 500 and commits %g s later"
        " (duplicates allowed)" % (count, delay)
    )
    with Emulator(config(), faults=faults).start() as emulator:
        started = time.monotonic()
        (first,), seconds = runner.run(
            "late-first", emulator, [("netaccess.nac.nac_device", dict(devices=items))], timeout=5
        )
        settle(emulator, delay + 30)
        waited = time.monotonic() - started
        held, _records = truth(emulator)
        first_wrong = judge_devices(items, first, held)[0]
        clean = [name for name, why in first_wrong if "while the list shows" in why]
        print(
            "first run wall %5.1f s: created %s, existing %s, failures %s, warnings %d; every late commit landed"
            " %.1f s after the start"
            % (
                seconds,
                first.get("created"),
                first.get("existing"),
                first.get("failures"),
                len(first.get("warnings") or []),
                waited,
            )
        )
        (rerun,), rerun_seconds = runner.run(
            "late-next", emulator, [("netaccess.nac.nac_device", dict(devices=items))], timeout=5
        )
        final, _records = truth(emulator)
        rerun_wrong = judge_devices(items, rerun, final)[0]
        print(
            "next run  wall %5.1f s: created %s, existing %s, failures %s%s"
            % (
                rerun_seconds,
                rerun.get("created"),
                rerun.get("existing"),
                rerun.get("failures"),
                "; module: %s" % str(rerun.get("msg"))[:200] if rerun.get("failed") else "",
            )
        )
    row.seconds = waited + rerun_seconds
    explain(first_wrong + rerun_wrong)
    row.requested, row.in_place, row.duplicates = count, in_place(items, held), duplicates(items, held)
    row.false = len(first_wrong) + len(rerun_wrong)
    print(
        "          duplicates the next run finds: %d; first-run reports of clean success while a duplicate appeared: %d"
        % (row.duplicates, len(clean))
    )
    row.target("in place == %d" % count, row.in_place, row.in_place == count)
    row.target("duplicates on the next run == 0", row.duplicates, row.duplicates == 0)
    row.target("clean success while a duplicate appeared == 0", len(clean), not clean)
    row.target("false reports == 0", row.false, row.false == 0)
    return row


def scenario_restart(args, runner):
    """Point 6: 30 s of refused connections mid-way through a 200-device bulk and a 200-device status batch."""
    row = Row("restart")
    items = requested(200, "soak-rs-")
    outage = 30.0
    print(
        "connections refused for %g s from the 100th request of a 200-device bulk, then of a 200-device status batch "
        "(default client settings)" % outage
    )
    with Emulator(config(), latency=0.01).start() as emulator:
        emulator.outage(outage, after_requests=100)
        (bulk,), seconds = runner.run("restart-bulk", emulator, [("netaccess.nac.nac_device", dict(devices=items))])
        wait_outage(emulator)
        settle(emulator, 30)
        held, _records = truth(emulator)
        row.seconds += seconds
    wrong = judge_devices(items, bulk, held)[0]
    print(
        "bulk      wall %5.1f s: created %s, existing %s, failures %s; in place %d%s"
        % (
            seconds,
            bulk.get("created"),
            bulk.get("existing"),
            bulk.get("failures"),
            in_place(items, held),
            "; module: %s" % str(bulk.get("msg"))[:200] if bulk.get("failed") else "",
        )
    )
    with Emulator(config(devices=seeds(200, "soak-rt-")), latency=0.01).start() as emulator:
        emulator.outage(outage, after_requests=100)
        (status,), status_seconds = runner.run(
            "restart-status", emulator, [("netaccess.nac.nac_dot1x_status", dict(all_devices=True))]
        )
        wait_outage(emulator)
        _held, records = truth(emulator)
        row.seconds += status_seconds
    status_wrong, answered = judge_status(status, records)
    errors = collections.Counter(
        re.sub(r"[0-9]+", "N", str(r.get("error")))[:100] for r in status.get("results") or [] if r.get("error")
    )
    print(
        "status    wall %5.1f s: %d results, %d with a status%s"
        % (
            status_seconds,
            len(status.get("results") or []),
            len(answered),
            "; errors: %s" % "; ".join("%d x %s" % (n, e) for e, n in errors.most_common(3)) if errors else "",
        )
    )
    wrong += status_wrong
    explain(wrong)
    row.requested, row.in_place, row.duplicates, row.false = (
        len(items),
        in_place(items, held),
        duplicates(items, held),
        len(wrong),
    )
    row.statuses = "%d/%d" % (len(answered), len(records))
    row.target("in place == 200", row.in_place, row.in_place == 200)
    row.target("duplicates == 0", row.duplicates, row.duplicates == 0)
    row.target("false reports == 0", row.false, row.false == 0)
    row.target("statuses == 200", row.statuses, len(answered) == 200)
    return row


def wait_outage(emulator):
    """Wait until the outage (if it began) is over, so that the truth can be read."""
    while emulator.outage_state()["state"] in ("scheduled", "active"):
        if emulator.outage_state()["state"] == "scheduled":
            emulator.cancel_outage()  # the run ended before it began
            break
        time.sleep(0.1)


SCENARIOS = collections.OrderedDict(
    (
        ("faults", scenario_faults),
        ("paginated", scenario_paginated),
        ("page-signs", scenario_page_signs),
        ("lookalike", scenario_lookalike),
        ("duplicate-ids", scenario_duplicate_ids),
        ("two-controllers", scenario_two_controllers),
        ("late-commit", scenario_late_commit),
        ("restart", scenario_restart),
    )
)


def main():
    SCENARIOS.update(SERVER_SCENARIOS)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scenarios", default="all", help="comma-separated scenarios to run (default all: %s)" % ", ".join(SCENARIOS)
    )
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--devices", type=int, default=500, help="devices of the faults scenario (default 500)")
    parser.add_argument(
        "--rate", type=float, default=0.2, help="faults scenario: share of /api requests that get a fault (default 0.2)"
    )
    parser.add_argument(
        "--seed", type=int, default=8, help="faults scenario: seed of the emulator's fault generator (default 8)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        help="faults scenario: the client's timeout in seconds (default 2; collection default 30)",
    )
    parser.add_argument(
        "--slow", type=float, help="faults scenario: seconds the emulator holds a slow request (default 1.5 x timeout)"
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.01,
        help="faults scenario: seconds the emulator adds to every /api request (default 0.01)",
    )
    args = parser.parse_args()
    if args.list:
        for name, function in SCENARIOS.items():
            print("%-16s %s" % (name, (function.__doc__ or "").strip().split("\n")[0]))
        return 0
    names = (
        list(SCENARIOS)
        if args.scenarios == "all"
        else [name.strip() for name in args.scenarios.split(",") if name.strip()]
    )
    unknown = [name for name in names if name not in SCENARIOS]
    if unknown or not names:
        parser.error("unknown scenario(s) %s; known: %s" % (", ".join(unknown) or "(none given)", ", ".join(SCENARIOS)))
    if args.slow is None:
        args.slow = 1.5 * args.timeout
    print("soak: scenarios %s; %s cores" % (", ".join(names), os.cpu_count()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="soak-faults-") as workdir:
        runner = Runner(workdir)
        for name in names:
            print("\n== %s" % name)
            started = time.monotonic()
            row = SCENARIOS[name](args, runner)
            for label, value, passed in row.targets:
                print("  %s  %-58s %s" % ("PASS" if passed else "FAIL", label + ":", value))
            print("  scenario %s: %s (%.0f s)" % (name, "PASS" if row.passed else "FAIL", time.monotonic() - started))
            rows.append(row)
    print(
        "\n%-16s %9s %9s %10s %8s %10s %8s  %s"
        % ("scenario", "requested", "in place", "duplicates", "false", "statuses", "wall s", "result")
    )
    for row in rows:
        failed = [label for label, _value, passed in row.targets if not passed]
        print(
            "%-16s %9d %9d %10d %8d %10s %8.1f  %s"
            % (
                row.name,
                row.requested,
                row.in_place,
                row.duplicates,
                row.false,
                row.statuses,
                row.seconds,
                "PASS" if row.passed else "FAIL: " + "; ".join(failed),
            )
        )
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
