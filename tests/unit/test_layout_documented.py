# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The layout the developer guide describes is the layout there is: every file of plugins/module_utils has its
row in the table "Each file holds one concern" (docs/docsite/rst/developing.rst), and every row names a file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def module_utils():
    folder = os.path.join(ROOT, "plugins", "module_utils")
    return set(name for name in os.listdir(folder) if name.endswith(".py") and name != "__init__.py")


def documented():
    with open(os.path.join(ROOT, "docs", "docsite", "rst", "developing.rst")) as handle:
        text = handle.read()
    table = text[text.index("Each file holds one concern") : text.index("The modules (``plugins/modules/``)")]
    return set(re.findall(r"^   \* - (.+)$", table, re.M)[1:])  # the first row is the header


def test_every_module_utils_file_has_a_row_of_the_developer_guide_and_every_row_a_file():
    rows = documented()
    named = set(name for row in rows for name in re.findall(r"``([a-z_0-9]+\.py)``", row))
    assert named, "no rows found in the table of developing.rst"
    assert module_utils() - named == set(), "files of plugins/module_utils without a row in developing.rst"
    assert named - module_utils() == set(), "rows of developing.rst naming no file of plugins/module_utils"
