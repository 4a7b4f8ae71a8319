# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GitHub CI workflow runs the Makefile's matrix: the same ansible-core versions, each on the same Python.

usage: python tests/tools/check_ci_matrix.py VERSION=PYTHON ...   (make lint passes the Makefile's MATRIX)

Compares the arguments with the ``include`` list of the ``test`` job of .github/workflows/ci.yml, and checks
that each job runs ``make test-<version>`` and that the lint job runs ``make lint docs``; exits 1 naming the
difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github/workflows/ci.yml"


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
    for problem in problems:
        print("%s: %s" % (WORKFLOW.name, problem), file=sys.stderr)
    if problems:
        sys.exit(1)
    print("    %s: the Makefile's matrix (%s)" % (WORKFLOW.name, ", ".join(sorted(wanted, reverse=True))))


if __name__ == "__main__":
    main(sys.argv[1:])
