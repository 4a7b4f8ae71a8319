# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's README says what its built-in groups and profiles are (section "Built-in groups and profiles"):
its tables are DEFAULT_CONFIG's, and the devices it names are the built-in ones."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.netaccess.nac.tests.emulator.nac_emu.config import DEFAULT_CONFIG

README = os.path.join(os.path.dirname(__file__), "..", "..", "emulator", "README.md")


def section(title):
    with open(README) as handle:
        text = handle.read()
    return text.split("\n## %s\n" % title, 1)[1].split("\n## ", 1)[0]


def rows(text, first):
    """The rows of the table whose header starts with ``first``: lists of cells, backquotes dropped."""
    table = text[text.index("| %s |" % first) :].split("\n\n", 1)[0].splitlines()[2:]
    return [[cell.strip().strip("`") for cell in line.strip("|").split("|")] for line in table]


def test_the_readme_lists_the_built_in_groups_and_profiles():
    text = section("Built-in groups and profiles")
    assert rows(text, "Group") == [[g["name"], g["subnet"]] for g in DEFAULT_CONFIG["groups"]]
    assert rows(text, "Profile") == [
        [p["name"], str(p["max_pairs"]), "%d-%d" % (p["host_start"], p["host_end"])] for p in DEFAULT_CONFIG["profiles"]
    ]
    named = re.findall(r"`([a-z]+-\d+)`", text.split("The built-in devices", 1)[1])
    assert named == [d["hostname"] for d in DEFAULT_CONFIG["devices"]]
