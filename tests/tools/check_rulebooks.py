# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The example rulebooks are rulebooks: each file of extensions/eda/rulebooks/ passes ansible-rulebook's own schema
and parser (its validators and rules_parser, as ``ansible-rulebook -r`` loads a rulebook), offline and without a
controller; dot1x_watch runs dot1x_requery as a playbook, dot1x_watch_controller as a job template, on the same
conditions.

usage: python tests/tools/check_rulebooks.py   (make lint runs it with the toolchain's Python, which has
ansible-rulebook)
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from ansible_rulebook.rules_parser import parse_rule_sets
from ansible_rulebook.validators import Validate

RULEBOOKS = Path(__file__).resolve().parents[2] / "extensions/eda/rulebooks"


def actions(rulebook):
    return [(rule["condition"], sorted(rule["action"])) for ruleset in rulebook for rule in ruleset["rules"]]


def main():
    loaded = {}
    for path in sorted(RULEBOOKS.glob("*.yml")):
        rulebook = yaml.safe_load(path.read_text())
        Validate.rulebook(rulebook)  # raises on a rulebook that ansible-rulebook refuses
        parse_rule_sets(rulebook)
        loaded[path.stem] = rulebook
        print("    %s: a valid rulebook (%d rules)" % (path.name, len(actions(rulebook))))
    local, controller = actions(loaded["dot1x_watch"]), actions(loaded["dot1x_watch_controller"])
    swapped = [(condition, ["run_job_template"] if kind == ["run_playbook"] else kind) for condition, kind in local]
    if swapped != controller:
        print("dot1x_watch_controller.yml: not dot1x_watch.yml's rules with run_job_template", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
