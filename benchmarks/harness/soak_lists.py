# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Soak the reads of issue 16 through pages, signs of more pages, lookalike names and repeated ids, so that
``make soak`` shows every list is read whole or the task fails loudly (soak_faults.py says the rules and runs these
scenarios: ``paginated``, ``page-signs``, ``lookalike``, ``duplicate-ids``)."""

import unicodedata

from harness.soak import (
    SOAK,
    Emulator,
    Row,
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
    same,
    seeds,
    texts,
    truth,
)


# house: long because one scenario read in order: its runs, then what it judges
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


# house: long because one scenario read in order: its runs, then what it judges
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
    row.count(items, held, wrong)
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


# house: long because one scenario read in order: its runs, then what it judges
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
