# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Soak the modules against issue 25's servers, whose replies confirm nothing (tests/emulator/README.md, "Servers that
confirm nothing"). soak_faults.py runs them with its own (``make soak``; ``--scenarios capped-list,...``).

Each counts on the server side (the emulator's whole list): devices, duplicates, false reports, and the
reports that call a duplicate a clean creation. The targets are the issue's: no duplicate reported as a
clean "created" (an item with no error and no warning, and no result warning naming it) and no false report
(harness.soak.judge_devices; for stored names: an item reported created or existing clean under a name the
server does not hold). Duplicates themselves are counted, not targeted: some servers make them unavoidable,
the report must say so.

- ``capped-list``: 1,500 existing devices, a list capped at the first 1,000 without a sign; the bulk ensure of
  all 1,500, three runs in a row (settle window 10 s: the cap never lets a creation be listed, whatever the
  window). The ids past the cap are never listed: false reports are judged against the ids a client can see (a
  failure need not name a hidden id), clean duplicates against all.
- ``racing-client``: another client creates each name between our list and our POST (duplicates allowed,
  the reply carries the id): one device alone, then a bulk of 5.
- ``normalised-name``: a server that stores the first DNS label of an FQDN: a bulk of 5 FQDNs, three runs.

``capped-list`` and ``normalised-name`` print, after each of their three runs, the devices the run created on the
server, its failures and the duplicates on the server so far (issue 34), and target at most one device created
per run: the first creation of a task is confirmed by reading before any other is sent.
- ``lagging-replica``: a read replica 30 s behind the writes: the same bulk of 50 run twice in a row.
- ``redirect-commit``: committed creations answered 303 (a bulk of 11), 302 and 301 (one device each).
- ``shifting-pages``: pages of 100 of 150 devices, one device inserted at the front (then: the first deleted)
  while nac_device (bulk of the 150), nac_device_info, nac_dot1x_status all_devices and the inventory read
  them; then a list that shifts on every read, which must fail loudly before any POST.
"""

import json
import os
import subprocess
import sys

from harness.soak import (
    API_KEY,
    SOAK,
    Emulator,
    Row,
    config,
    entries_of,
    explain,
    judge_devices,
    judge_info,
    judge_status,
    same,
    seeds,
    stored_hostname,
    texts,
    truth,
)

DEVICE = "netaccess.nac.nac_device"


def items_of(prefix, count, suffix=""):
    return [dict(hostname="%s%04d%s" % (prefix, n, suffix), **SOAK) for n in range(count)]


def clean_duplicates(items, result, held):
    """Items whose name the server holds more than once, reported as a clean creation or existence: no error,
    no warning of the item, no result warning or message naming it."""
    result_text = texts(result.get("warnings")) + " | " + str(result.get("msg") or "")
    found = []
    for entry, item in zip(entries_of(result, items), items):
        ids = held.get(same(item["hostname"]), [])
        if (
            len(ids) > 1
            and not entry.get("error")
            and not entry.get("warnings")
            and item["hostname"] not in result_text
        ):
            found.append((item["hostname"], "listed %d times (ids %s), reported clean" % (len(ids), ids)))
    return found


def count_row(row, items, held, results, hidden=frozenset()):
    """Add one run's server-side counts and judgement to ``row``; returns (false reports, clean duplicates).
    ``hidden``: ids that no list ever shows (a capped list): a report cannot name them, so the false reports are
    judged against the ids a client could see; the clean duplicates against every id."""
    visible = dict((name, [i for i in ids if i not in hidden]) for name, ids in held.items())
    wrong, clean = [], []
    for result in results:
        wrong += judge_devices(items, result, visible)[0]
        clean += clean_duplicates(items, result, held)
    row.false += len(wrong)
    row.clean += len(clean)
    return wrong, clean


def doubled(items, held, key=same):
    return sum(max(len(held.get(name, ())) - 1, 0) for name in set(key(item["hostname"]) for item in items))


def finish(row, held, items, wrong, clean, key=same, earlier=0):
    """The row's counts from the final list ``held`` (``earlier``: duplicates of runs on a list reset since)."""
    names = set(key(item["hostname"]) for item in items)
    row.requested = len(items)
    row.in_place = sum(1 for name in names if held.get(name))
    row.duplicates = doubled(items, held, key) + earlier
    print(
        "          server: devices of the requested names %d (%d names), duplicates %d; false reports %d, "
        "duplicates reported as a clean creation %d"
        % (sum(len(held.get(name, ())) for name in names), len(names), row.duplicates, row.false, row.clean)
    )
    explain(wrong + clean)
    row.target("duplicates reported as a clean 'created' == 0", row.clean, row.clean == 0)
    row.target("false reports == 0", row.false, row.false == 0)
    return row


def show(label, result, seconds):
    print(
        "%-9s wall %5.1f s: changed %s, created %s, existing %s, failures %s, warnings %d%s"
        % (
            label,
            seconds,
            result.get("changed"),
            result.get("created"),
            result.get("existing"),
            result.get("failures"),
            len(result.get("warnings") or []),
            "; module: %s" % str(result.get("msg"))[:160] if result.get("failed") else "",
        )
    )


def new_row(name):
    row = Row(name)
    row.clean = 0
    return row


def per_run(emulator, items, result, before, key=same):
    """Print and return one run's figures: devices the run created on the server, its failures, and the duplicates
    of the requested names on the server so far (names compared by ``key``)."""
    held, records = truth(emulator)  # {same name: ids}: key(requested name) is the same name of its stored form
    created = len(records) - before
    failures = result.get("failures")
    duplicates = doubled(items, held, key)
    print(
        "          server: %d devices (%+d this run); failures %s; duplicates of the requested names %d"
        % (len(records), created, failures, duplicates)
    )
    return len(records), created


def at_most_one_per_run(row, created):
    row.target(
        "devices created per run, none listed as requested, <= 1", ", ".join(map(str, created)), max(created) <= 1
    )


def bulk_twice(row, runner, settings, label, items, cap=None):
    """The same bulk of ``items`` run twice in a row against an emulator of ``settings``, judged (``cap``: the
    list shows only that many devices: the ids past it are hidden from every report)."""
    with Emulator(settings).start() as emulator:
        results = []
        for run in (1, 2):
            (result,), seconds = runner.run("%s-%d" % (label, run), emulator, [(DEVICE, dict(devices=items))])
            show("run %d" % run, result, seconds)
            results.append(result)
            row.seconds += seconds
        held, records = truth(emulator)
    hidden = frozenset(r["id"] for r in sorted(records, key=lambda r: r["id"])[cap:]) if cap else frozenset()
    if hidden:
        print("          ids the capped list never shows (no report can name them): %d" % len(hidden))
    wrong, clean = count_row(row, items, held, results, hidden)
    return finish(row, held, items, wrong, clean)


def scenario_capped_list(args, runner):
    """Issue 25 case 1: a list capped at the first 1,000 of 1,500 devices without a sign; bulk ensure of all, three
    runs in a row (issue 34: at most one device created per run)."""
    row = new_row("capped-list")
    existing = seeds(1500, "soak-cap-")
    items = [dict(hostname=record["hostname"], **SOAK) for record in existing]
    print("1,500 existing devices, GET /api/device shows the first 1,000 (no header, no sign); bulk ensure, 3 runs")
    created, results = [], []
    with Emulator(config(devices=existing, list_cap=1000)).start() as emulator:
        count = len(emulator.records())
        for run in (1, 2, 3):
            (result,), seconds = runner.run(
                "cap-%d" % run, emulator, [(DEVICE, dict(devices=items, settle_timeout=10))]
            )
            show("run %d" % run, result, seconds)
            results.append(result)
            row.seconds += seconds
            count, made = per_run(emulator, items, result, count)
            created.append(made)
        held, records = truth(emulator)
    hidden = frozenset(r["id"] for r in sorted(records, key=lambda r: r["id"])[1000:])
    print("          ids the capped list never shows (no report can name them): %d" % len(hidden))
    wrong, clean = count_row(row, items, held, results, hidden)
    at_most_one_per_run(row, created)
    return finish(row, held, items, wrong, clean)


def scenario_racing_client(args, runner):
    """Issue 25 case 2: another client creates each name between our list and our POST (reply with an id)."""
    row = new_row("racing-client")
    single, bulk = items_of("soak-race-", 1), items_of("soak-race-b", 5)
    print("another client creates each hostname just before our POST is processed; duplicates allowed")
    with Emulator(config(race_twins=1000)).start() as emulator:
        (one,), seconds = runner.run("race-single", emulator, [(DEVICE, dict(single[0]))])
        show("single", one, seconds)
        (many,), more = runner.run("race-bulk", emulator, [(DEVICE, dict(devices=bulk))])
        show("bulk of 5", many, more)
        row.seconds = seconds + more
        held, _records = truth(emulator)
        print("          twins made by the other client: %d" % emulator.variant_counts()["twins"])
    wrong, clean = count_row(row, single, held, [one])
    more_wrong, more_clean = count_row(row, bulk, held, [many])
    return finish(row, held, single + bulk, wrong + more_wrong, clean + more_clean)


def scenario_normalised_name(args, runner):
    """Issue 25 case 3: a server that stores the first DNS label of an FQDN (and answers with it); 3 runs."""
    row = new_row("normalised-name")
    items = items_of("soak-nn-", 5, ".lab.example")
    rule = "first-label"

    def key(name):
        return same(stored_hostname(name, rule))

    print("creations stored under the first DNS label (soak-nn-0000.lab.example -> soak-nn-0000); 3 runs of 5")
    wrong, created_clean, created = [], [], []
    with Emulator(config(stored_hostname=rule)).start() as emulator:
        count = len(emulator.records())
        for run in (1, 2, 3):
            (result,), seconds = runner.run("nn-%d" % run, emulator, [(DEVICE, dict(devices=items))])
            show("run %d" % run, result, seconds)
            row.seconds += seconds
            count, made = per_run(emulator, items, result, count, key)
            created.append(made)
            result_text = texts(result.get("warnings")) + " | " + str(result.get("msg") or "")
            for entry, item in zip(entries_of(result, items), items):
                name = item["hostname"]
                if entry.get("error") or entry.get("warnings") or name in result_text:
                    continue
                what = "created" if entry.get("changed") else "existing"
                wrong.append(
                    (
                        name,
                        "reported %s clean, but the server holds it as %s (id %s)"
                        % (what, stored_hostname(name, rule), entry.get("id")),
                    )
                )
                if entry.get("changed") and run > 1:  # the stored name was held already: a duplicate
                    created_clean.append((name, "reported created clean (run %d)" % run))
        held, _records = truth(emulator)
    row.false = len(wrong)
    clean = [pair for pair in created_clean if len(held.get(key(pair[0]), ())) > 1]
    row.clean = len(clean)
    at_most_one_per_run(row, created)
    return finish(row, held, items, wrong, clean, key=key)


def scenario_lagging_replica(args, runner):
    """Issue 25 case 4: lists from a read replica 30 s behind the writes; the same bulk of 50 run twice."""
    row = new_row("lagging-replica")
    items = items_of("soak-lag-", 50)
    # 30 s (the issue saw 10 s): the second run lists within the lag even on a loaded machine (a run takes 3-9 s)
    print("GET /api/device from a replica 30 s behind the writes; the same bulk of 50 run twice in a row")
    return bulk_twice(row, runner, config(list_lag=30), "lag", items)


def scenario_redirect_commit(args, runner):
    """Issue 25 case 5: committed creations answered 303 (bulk of 11), 302 and 301 (one device each)."""
    row = new_row("redirect-commit")
    bulk = items_of("soak-303-", 11)
    print("each creation is committed, then answered with a redirect (Location: /api/device/<id>), never followed")
    wrong, clean, everything = [], [], []
    with Emulator(config()).start() as emulator:
        for status, items in ((303, bulk), (302, items_of("soak-302-", 1)), (301, items_of("soak-301-", 1))):
            emulator.settings(creation_redirect=status)
            task = dict(devices=items) if len(items) > 1 else dict(items[0])
            (result,), seconds = runner.run("redirect-%d" % status, emulator, [(DEVICE, task)])
            show("%d" % status, result, seconds)
            row.seconds += seconds
            held, _records = truth(emulator)
            false, clean_now = count_row(row, items, held, [result])
            wrong, clean, everything = wrong + false, clean + clean_now, everything + items
        print("          redirects answered: %d" % emulator.variant_counts()["redirects"])
    return finish(row, held, everything, wrong, clean)


def inventory_hosts(runner, emulator):
    """(host names, error text) of ansible-inventory --list against the emulator."""
    source = os.path.join(runner.workdir, "shift.nac.yml")
    with open(source, "w") as handle:
        handle.write("plugin: netaccess.nac.nac\napi_url: %s\n" % emulator.url)
    env = dict(runner.env, NAC_API_KEY=API_KEY, ANSIBLE_INVENTORY_UNPARSED_FAILED="true")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-inventory"), "-i", source, "--list"]
    done = subprocess.run(command, env=env, cwd=runner.workdir, capture_output=True, universal_newlines=True)
    if done.returncode:
        return None, done.stderr[-300:]
    return sorted(json.loads(done.stdout).get("_meta", {}).get("hostvars", {})), ""


# house: long because one scenario read in order: its runs, then what it judges
def scenario_shifting_pages(args, runner):
    """Issue 25 case 6: a device inserted at the front / the first deleted while the pages are read."""
    row = new_row("shifting-pages")
    existing = seeds(150, "soak-sh-")
    items = [dict(hostname=record["hostname"], **SOAK) for record in existing]
    print("150 devices in pages of 100 (Link, X-Total-Count); another client changes the list once during a read")
    wrong, clean, earlier = [], [], 0
    with Emulator(config(devices=existing, page_size=100)).start() as emulator:
        for shift in ("insert-front", "delete-front"):
            emulator.reset()
            emulator.settings(page_shift=shift)
            (bulk,), seconds = runner.run("shift-bulk-" + shift, emulator, [(DEVICE, dict(devices=items))])
            row.seconds += seconds
            held, records = truth(emulator)
            show(shift[:9], bulk, seconds)
            false, clean_now = count_row(row, items, held, [bulk])
            wrong, clean, earlier = wrong + false, clean + clean_now, earlier + doubled(items, held)
            print(
                "          POSTs %d, duplicates %d"
                % (emulator.request_counts().get("POST /api/device", 0), doubled(items, held))
            )
            for module, task in (("netaccess.nac.nac_device_info", {}), ("netaccess.nac.nac_dot1x_status", None)):
                emulator.reset()
                emulator.settings(page_shift=shift)
                (result,), seconds = runner.run(
                    "shift-read-" + shift, emulator, [(module, task if task is not None else dict(all_devices=True))]
                )
                row.seconds += seconds
                held, records = truth(emulator)
                false = judge_info(result, records) if task is not None else judge_status(result, records)[0]
                if result.get("failed"):
                    false.append((module, "failed: %s" % str(result.get("msg"))[:160]))
                print("          %s: %s" % (module.split(".")[-1], "%d false reports" % len(false)))
                wrong += false
                row.false += len(false)
            emulator.reset()
            emulator.settings(page_shift=shift)
            hosts, error = inventory_hosts(runner, emulator)
            held, records = truth(emulator)
            listed = sorted(record["hostname"] for record in records)
            if hosts != listed:
                phantom = sorted(set(hosts or ()) - set(listed))
                missing = sorted(set(listed) - set(hosts or ()))
                wrong.append(
                    (
                        "inventory",
                        "hosts %s: phantom %s, missing %s %s" % (len(hosts or ()), phantom[:3], missing[:3], error),
                    )
                )
                row.false += 1
            print("          inventory: %s hosts for %d devices" % (len(hosts or ()), len(listed)))
        emulator.reset()
        emulator.settings(page_shift="insert-front", page_shifts=100)
        (again,), seconds = runner.run("shift-again", emulator, [(DEVICE, dict(devices=items))])
        row.seconds += seconds
        posts = emulator.request_counts().get("POST /api/device", 0)
        message = str(again.get("msg") or "")
        loud = bool(again.get("failed")) and posts == 0 and any(w in message.lower() for w in ("shift", "changed"))
        print("shifts on every read: %s; POSTs %d; module: %s" % ("loud" if loud else "NOT LOUD", posts, message[:200]))
        if not loud:
            wrong.append(("shift-again", "not a loud failure before any POST: %s" % message[:120]))
            row.false += 1
        held, _records = truth(emulator)
    return finish(row, held, items, wrong, clean, earlier=earlier)


SERVER_SCENARIOS = (
    ("capped-list", scenario_capped_list),
    ("racing-client", scenario_racing_client),
    ("normalised-name", scenario_normalised_name),
    ("lagging-replica", scenario_lagging_replica),
    ("redirect-commit", scenario_redirect_commit),
    ("shifting-pages", scenario_shifting_pages),
)
