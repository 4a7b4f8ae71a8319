# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print the closing summary of `make test`: per ansible-core version, the sanity, unit and integration
counts, each stage's outcome and time, and the total.

usage: python tests/tools/test_summary.py RESULTS_DIR --version V=STAGE+STAGE... [--version ...]
                                          [--targets DIR] [--label WORD]

RESULTS_DIR is what the Makefile left in build/test-results:
  stages.tsv                one line per stage that ran: version, stage, exit status, seconds
  V/STAGE/version           "ansible-core X / Python Y" of the run (tests/tools/ansible_test_stage.sh)
  V/sanity/junit/*.xml      one junit file per sanity test (ansible-test sanity --junit)
  V/units/junit/*.xml       pytest's junit file (ansible-test units)
  V/integration/data/*.json the targets that passed (ansible-test integration)
  V/integration/targets.tsv each target's seconds (tests/tools/ansible_test_stage.sh)
  V/smoke/...               the integration target smoke_modules alone (`make check`), as integration

Each --version names a version of the matrix and the stages expected of it (venv may be absent: an up
to date environment is not made again). A stage that is expected but did not run (its prerequisite
failed) or that exited non-zero without a failed test to show for it counts as one failure. Integration
targets are those of --targets (tests/integration/targets of this repository by default) that are not
disabled or unsupported: one that did not pass counts as failed.

The last line reads ``WORD: N passed, N failed, N skipped`` (WORD is "tests" unless --label says
otherwise), over every sanity test, unit test case and integration target of every version. Before it come
the stage times (stages run side by side: their sum is more than the wall time) and the ten slowest
integration targets and unit tests, by name, so that a slow change is seen the day it lands. The exit
status is 1 when anything failed or did not run.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TARGETS = os.path.join(HERE, os.pardir, "integration", "targets")
TEST_STAGES = ("sanity", "units", "integration", "smoke")
# Columns of the time table; the docs toolchain's install is counted with the venv.
TIME_COLUMNS = ("venv", "build", "lint", "docs", "sanity", "units", "integration", "smoke")
SMOKE_TARGETS = ["smoke_modules"]
SLOWEST = 10
SKIP_ALIASES = ("disabled", "unsupported", "hidden")

Counts = collections.namedtuple("Counts", "passed failed skipped")


def read_stages(results):
    """{(version, stage): (exit status, seconds)} from stages.tsv; a stage run twice keeps its last run."""
    stages = {}
    path = os.path.join(results, "stages.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 4:
                    continue
                version, stage, status, seconds = fields
                if stage == "docs-toolchain":
                    stage = "venv"
                    previous = stages.get((version, stage), (0, 0))
                    stages[(version, stage)] = (max(previous[0], int(status)), previous[1] + int(seconds))
                    continue
                stages[(version, stage)] = (int(status), int(seconds))
    return stages


def junit_counts(paths):
    """Counts over the test cases of these junit files (a test case with a failure or error failed)."""
    passed = failed = skipped = 0
    for path in paths:
        root = ET.parse(path).getroot()
        for case in root.iter("testcase"):
            tags = set(child.tag for child in case)
            if tags & {"failure", "error"}:
                failed += 1
            elif "skipped" in tags:
                skipped += 1
            else:
                passed += 1
    return Counts(passed, failed, skipped)


def expected_targets(targets_dir):
    """Names of the integration targets that ansible-test runs (not disabled, unsupported or hidden)."""
    names = []
    for name in sorted(os.listdir(targets_dir)):
        path = os.path.join(targets_dir, name)
        if not os.path.isdir(path) or name.startswith(("setup_", "prepare_")):
            continue
        aliases = []
        if os.path.exists(os.path.join(path, "aliases")):
            with open(os.path.join(path, "aliases"), encoding="utf-8") as handle:
                aliases = [line.split("#", 1)[0].strip() for line in handle]
        if not any(alias in SKIP_ALIASES for alias in aliases):
            names.append(name)
    return names


def integration_passed(stage_dir):
    """Names of the targets that passed, from the data file(s) of the integration run."""
    passed = set()
    for path in sorted(glob.glob(os.path.join(stage_dir, "data", "integration-*.json"))):
        with open(path, encoding="utf-8") as handle:
            passed.update(json.load(handle).get("targets", {}))
    return passed


def stage_counts(results, version, stage, targets):
    """(Counts, notes) of one ansible-test stage of one version, from its results."""
    stage_dir = os.path.join(results, version, stage)
    notes = []
    if stage == "sanity":
        counts = junit_counts(sorted(glob.glob(os.path.join(stage_dir, "junit", "ansible-test-sanity-*.xml"))))
    elif stage == "units":
        counts = junit_counts(sorted(glob.glob(os.path.join(stage_dir, "junit", "python*-units.xml"))))
    else:
        passed = integration_passed(stage_dir)
        missing = [name for name in (SMOKE_TARGETS if stage == "smoke" else targets) if name not in passed]
        counts = Counts(len(passed), len(missing), 0)
        if missing and os.path.isdir(stage_dir):
            notes.append("not passed: %s" % ", ".join(missing))
    return counts, notes


def slowest_targets(results):
    """The slowest integration targets of every version: [(seconds, "version target")], slowest first."""
    found = []
    for path in glob.glob(os.path.join(results, "*", "*", "targets.tsv")):
        version = os.path.basename(os.path.dirname(os.path.dirname(path)))
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                target, _tab, seconds = line.rstrip("\n").partition("\t")
                if seconds.isdigit():
                    found.append((int(seconds), "%s %s" % (version, target)))
    return sorted(found, reverse=True)[:SLOWEST]


def slowest_tests(results):
    """The slowest unit tests of every version, from pytest's junit files: [(seconds, "version test")]."""
    found = []
    for path in glob.glob(os.path.join(results, "*", "units", "junit", "python*-units.xml")):
        version = os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(path))))
        for case in ET.parse(path).getroot().iter("testcase"):
            name = "%s::%s" % (case.get("classname", ""), case.get("name", ""))
            found.append((float(case.get("time") or 0), "%s %s" % (version, name)))
    return sorted(found, reverse=True)[:SLOWEST]


def print_slowest(results):
    for title, rows, unit in (
        ("slowest integration targets", slowest_targets(results), "%5d s"),
        ("slowest unit tests", slowest_tests(results), "%5.1f s"),
    ):
        if rows:
            print("%s:" % title)
            for seconds, name in rows:
                print("  " + unit % seconds + "  " + name)
            print()


def describe(results, version):
    """ "ansible-core X / Python Y" as the version's ansible-test stages recorded it."""
    for stage in TEST_STAGES:
        path = os.path.join(results, version, stage, "version")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read().strip()
    return "not run"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("results")
    parser.add_argument(
        "--version",
        action="append",
        required=True,
        metavar="V=STAGE+STAGE...",
        help="a version of the matrix and the stages expected of it",
    )
    parser.add_argument("--targets", default=DEFAULT_TARGETS, help="tests/integration/targets")
    parser.add_argument("--label", default="tests", help="the word before the closing counts")
    args = parser.parse_args(argv)
    matrix = []
    for spec in args.version:
        version, _sep, stages = spec.partition("=")
        if not version or not stages:
            parser.error("--version wants V=STAGE+STAGE..., got %r" % spec)
        matrix.append((version, stages.split("+")))
    return args, matrix


def main(argv):
    args, matrix = parse_args(argv)
    stages = read_stages(args.results)
    targets = expected_targets(args.targets)
    total = Counts(0, 0, 0)
    rows = []
    bad_versions = []

    for version, expected in matrix:
        print("%s (%s)" % (version, describe(args.results, version)))
        version_failed = 0
        times = {}
        for stage in expected:
            status, seconds = stages.get((version, stage), (None, None))
            times[stage] = seconds
            if stage in TEST_STAGES:
                counts, notes = stage_counts(args.results, version, stage, targets)
                if status is None:
                    counts = Counts(0, max(counts.failed, 1), 0)
                    notes.insert(0, "NOT RUN (a stage it needs failed)")
                elif status != 0 and counts.failed == 0:
                    counts = Counts(counts.passed, 1, counts.skipped)
                    notes.insert(0, "FAILED: exit status %d" % status)
                what = "targets" if stage == "integration" else "tests"
                line = "  %-12s %4d passed, %d failed, %d skipped %s" % (
                    stage,
                    counts.passed,
                    counts.failed,
                    counts.skipped,
                    what,
                )
                if notes:
                    line += " (%s)" % "; ".join(notes)
                print(line)
                total = Counts(*(a + b for a, b in zip(total, counts)))
                version_failed += counts.failed
            elif status is None and stage != "venv":
                print("  %-12s NOT RUN (a stage it needs failed)" % stage)
                total = Counts(total.passed, total.failed + 1, total.skipped)
                version_failed += 1
            elif status:
                print("  %-12s FAILED (exit status %d)" % (stage, status))
                total = Counts(total.passed, total.failed + 1, total.skipped)
                version_failed += 1
        if version_failed:
            bad_versions.append(version)
        rows.append((version, times))

    # Stage times: every stage that ran, per version, then the sum.
    print()
    print('stage times in seconds (a venv that was up to date is not made again: "-"; stages run side by side):')
    columns = [column for column in TIME_COLUMNS if any(column in times for _version, times in rows)]
    header = "  %-8s" % "version" + "".join("%13s" % column for column in columns) + "%9s" % "total"
    print(header)
    grand = 0
    for version, times in rows:
        cells = []
        version_total = 0
        for column in columns:
            if column not in times:
                cells.append("")
            elif times[column] is None:
                cells.append("-")
            else:
                cells.append(str(times[column]))
                version_total += times[column]
        grand += version_total
        print("  %-8s" % version + "".join("%13s" % cell for cell in cells) + "%9d" % version_total)
    print("  sum of the stages: %d s (%d min %02d s)" % (grand, grand // 60, grand % 60))
    print()
    print_slowest(args.results)
    if bad_versions:
        print("FAILED on %s" % ", ".join(bad_versions))
    else:
        print("every version passed: %s" % ", ".join(version for version, _stages in matrix))
    print("%s: %d passed, %d failed, %d skipped" % (args.label, total.passed, total.failed, total.skipped))
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
