# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GitHub CI workflow runs the Makefile's matrix: the same ansible-core versions, each on the same Python.

usage: python tests/tools/check_ci_matrix.py VERSION=PYTHON ...   (make lint passes the Makefile's MATRIX)

Compares the arguments with the ``include`` list of the ``test`` job of .github/workflows/ci.yml, and checks
that each job runs ``make test-<version>`` and that the lint job runs ``make lint docs``; and that the execution
environment and the decision environment pin ansible-core alike, to the releases of the matrix
(``ansible-core>=<oldest>,<<the minor after the newest>``: one pin policy); exits 1 naming the difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github/workflows/ci.yml"
ENVIRONMENTS = [ROOT / "execution-environment.yml", ROOT / "extensions/eda/decision-environment.yml"]


def pin_of(versions):
    """The ansible-core pin of the execution and decision environments: the matrix's releases."""
    numbers = sorted(tuple(int(part) for part in version.split(".")) for version in versions)
    return "ansible-core>=%d.%d,<%d.%d" % (numbers[0] + (numbers[-1][0], numbers[-1][1] + 1))


def pin_problems(versions):
    wanted = pin_of(versions)
    problems = []
    for path in ENVIRONMENTS:
        pinned = yaml.safe_load(path.read_text())["dependencies"]["ansible_core"]["package_pip"]
        if pinned != wanted:
            problems.append("%s pins %s, the matrix %s" % (path.relative_to(ROOT), pinned, wanted))
    return problems


def main(arguments):
    wanted = dict(argument.split("=", 1) for argument in arguments)
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    listed = dict((str(item["core"]), str(item["python"])) for item in jobs["test"]["strategy"]["matrix"]["include"])
    problems = []
    if listed != wanted:
        problems.append("the test job's matrix is %s, the Makefile's %s" % (listed, wanted))
    runs = [step.get("run", "") for step in jobs["test"]["steps"]]
    if "make test-${{ matrix.core }}" not in runs:
        problems.append("the test job does not run make test-${{ matrix.core }}")
    if "make lint docs" not in [step.get("run", "") for step in jobs["lint-docs"]["steps"]]:
        problems.append("the lint-docs job does not run make lint docs")
    problems = ["%s: %s" % (WORKFLOW.name, problem) for problem in problems] + pin_problems(wanted)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print("    %s: the Makefile's matrix (%s)" % (WORKFLOW.name, ", ".join(sorted(wanted, reverse=True))))
    print("    execution and decision environments: %s" % pin_of(wanted))


if __name__ == "__main__":
    main(sys.argv[1:])
