# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The layout the developer guide describes is the layout there is: every file of plugins/module_utils has its
row in the table "Each file holds one concern" (docs/docsite/rst/developing.rst), every row names a file, and the
map of the layers names every layer's folder, top to bottom (tests/unit/plugins/module_utils/test_layers.py holds
the layers' rule)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


FOLDER = os.path.join(ROOT, "plugins", "module_utils")


def layers():
    return set(name for name in os.listdir(FOLDER) if os.path.isdir(os.path.join(FOLDER, name)) and name[0] != "_")


def module_utils():
    return set(
        "%s/%s" % (layer, name)
        for layer in layers()
        for name in os.listdir(os.path.join(FOLDER, layer))
        if name.endswith(".py") and name != "__init__.py"
    )


def guide():
    with open(os.path.join(ROOT, "docs", "docsite", "rst", "developing.rst")) as handle:
        return handle.read()


def documented():
    text = guide()
    table = text[text.index("Each file holds one concern") : text.index("The modules (``plugins/modules/``)")]
    return set(re.findall(r"^   \* - (.+)$", table, re.M)[1:])  # the first row is the header


def test_every_module_utils_file_has_a_row_of_the_developer_guide_and_every_row_a_file():
    rows = documented()
    named = set(name for row in rows for name in re.findall(r"``([a-z_]+/[a-z_0-9]+\.py)``", row))
    assert named, "no rows found in the table of developing.rst"
    assert module_utils() - named == set(), "files of plugins/module_utils without a row in developing.rst"
    assert named - module_utils() == set(), "rows of developing.rst naming no file of plugins/module_utils"


def test_the_map_of_the_layers_shows_every_layer_folder_from_the_top():
    text = guide()
    block = text[text.index("The layers\n") : text.index("Each file holds one concern")]
    drawn = re.findall(r"^   module_utils/([a-z_]+)/", block, re.M)
    assert set(drawn) == layers()
    with open(os.path.join(FOLDER, "README.md")) as handle:
        bottom_up = re.findall(r"^- ([a-z_]+):", handle.read(), re.M)
    assert drawn == bottom_up[::-1], "the guide draws the layers from the top, as module_utils/README.md lists them"
