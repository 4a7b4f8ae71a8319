# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Soak the writes through faults and late commits, so that ``make soak`` shows a creation is never lost nor
duplicated by the collection and never reported falsely (soak_faults.py says the rules and runs these scenarios:
``faults``, ``late-commit``)."""

import json
import time

from harness.soak import (
    FAULT_MODES,
    FAULT_TARGETS,
    Emulator,
    Row,
    config,
    duplicates,
    explain,
    in_place,
    judge_devices,
    requested,
    same,
    settle,
    truth,
)


# house: long because one scenario read in order: its runs, then what it judges
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
