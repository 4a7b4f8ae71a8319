# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Soak the modules beside another controller and through a restart of the NAC, so that ``make soak`` shows what
cannot be prevented is counted and reported, never hidden (soak_faults.py says the rules and runs these scenarios:
``two-controllers``, ``restart``)."""

import collections
import re
import threading
import time

from harness.soak import (
    Emulator,
    Row,
    config,
    duplicates,
    entries_of,
    explain,
    in_place,
    judge_devices,
    judge_status,
    requested,
    same,
    seeds,
    settle,
    truth,
)


# house: long because one scenario read in order: its runs, then what it judges
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
        held, _records = truth(emulator)  # what the two runs left: their reports are judged against it
        # The next run, alone and the faults over: each task above stops at its first creation when the list shows
        # the other controller's too (the proof, API guide), and the rerun creates what they did not.
        (rerun,), rerun_seconds = runner.finish(
            runner.start("rerun", emulator, [("netaccess.nac.nac_device", dict(devices=items))], timeout=5)
        )
        final, _records = truth(emulator)
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
    false, contra = judge_devices(items, rerun, final, clean_duplicates=False)
    wrong += false
    contradictions += contra
    print(
        "the rerun, alone: wall %5.1f s, created %s, existing %s, failures %s; devices in place %d, duplicates %d"
        % (
            rerun_seconds,
            rerun.get("created"),
            rerun.get("existing"),
            rerun.get("failures"),
            in_place(items, final),
            duplicates(items, final),
        )
    )
    explain(wrong)
    row.count(items, final, wrong)
    row.target("in place == 200 after the rerun", row.in_place, row.in_place == 200)
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


# house: long because one scenario read in order: its runs, then what it judges
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
    row.count(items, held, wrong)
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
