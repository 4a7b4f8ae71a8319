# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The layers of plugins/module_utils are its folders (plugins/module_utils/README.md): every file is in one
layer, a layer imports only the layers below it, nothing below the glue imports Ansible, each layer's README.md
says what it holds and what it may import (its ``__init__.py`` stays empty: ansible-test 2.16's sanity test
empty-init requires it of plugins/module_utils), the unit tests mirror the layers, and no test file imports
another."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
MODULE_UTILS = os.path.join(ROOT, "plugins", "module_utils")
PACKAGE = "ansible_collections.netaccess.nac.plugins.module_utils"
LAYERS = ("common", "http", "nac", "tasks", "ansible_glue")  # from the bottom
ANSIBLE_ALLOWED = {os.path.join("ansible_glue", "module.py")}  # the one file that imports Ansible


def imported(source):
    """Every module a Python source imports (``from X import a, b`` counts X.a and X.b: a or b may be a module)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names.extend("%s.%s" % (node.module, alias.name) for alias in node.names)
    return names


def layer_of(module):
    """The layer a dotted module name of this collection's module_utils is in, or None."""
    if not module.startswith(PACKAGE + "."):
        return None
    first = module[len(PACKAGE) + 1 :].split(".")[0]
    return first if first in LAYERS else "?" + first


def violations(layer, relative, source):
    """What a file of ``layer`` (``relative``: its path under module_utils) imports that its layer may not."""
    found = []
    for module in imported(source):
        other = layer_of(module)
        if other is not None and (other not in LAYERS or LAYERS.index(other) > LAYERS.index(layer)):
            found.append("%s imports %s (layer %s above %s)" % (relative, module, other, layer))
        if (module == "ansible" or module.startswith("ansible.")) and relative not in ANSIBLE_ALLOWED:
            found.append("%s imports Ansible (%s): only %s may" % (relative, module, sorted(ANSIBLE_ALLOWED)))
    return found


def layer_files():
    for layer in LAYERS:
        folder = os.path.join(MODULE_UTILS, layer)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as handle:
                    yield layer, os.path.join(layer, name), handle.read()


def readme(folder):
    """A layer's README.md without its title line."""
    with open(os.path.join(folder, "README.md")) as handle:
        title, text = handle.read().split("\n\n", 1)
    assert title == "# " + os.path.relpath(folder, ROOT), "%s/README.md is titled with its folder" % folder
    return text


def test_every_file_of_module_utils_is_in_a_layer():
    entries = set(os.listdir(MODULE_UTILS)) - {"__pycache__"}
    assert entries == set(LAYERS) | {"__init__.py", "README.md"}, "module_utils holds only the layers' folders"
    for folder in [MODULE_UTILS] + [os.path.join(MODULE_UTILS, layer) for layer in LAYERS]:
        assert os.path.getsize(os.path.join(folder, "__init__.py")) == 0, "%s/__init__.py is empty" % folder


def test_no_layer_imports_a_layer_above_it_and_only_the_glue_imports_ansible():
    found = [problem for layer, relative, source in layer_files() for problem in violations(layer, relative, source)]
    assert found == []


@pytest.mark.parametrize(
    "layer, source, wrong",
    [
        ("http", "from %s.tasks.apply import apply" % PACKAGE, True),
        ("http", "from %s.common import masking" % PACKAGE, False),
        ("nac", "import %s.ansible_glue.module" % PACKAGE, True),
        ("tasks", "def f():\n    from %s.nac.client import NacClient\n" % PACKAGE, False),
        ("common", "def f():\n    from %s.http.transport import Transport\n" % PACKAGE, True),
        ("tasks", "from ansible.module_utils.basic import AnsibleModule", True),
        ("tasks", "from %s.flat_file import x" % PACKAGE, True),
    ],
)
def test_the_rule_finds_what_it_must(layer, source, wrong):
    assert bool(violations(layer, os.path.join(layer, "x.py"), source)) is wrong


def test_each_layer_says_what_it_may_import_and_the_package_lists_the_layers_in_order():
    for index, layer in enumerate(LAYERS):
        text = readme(os.path.join(MODULE_UTILS, layer))
        assert text.startswith("Layer %d of %d, %s:" % (index + 1, len(LAYERS), layer)), layer
        may = re.search(r"May import: ([^.]*)\.", text)
        assert may, "%s/README.md says what it may import" % layer
        named = [name for name in re.findall(r"[a-z_]+", may.group(1)) if name in LAYERS]
        assert named == list(LAYERS[:index]), "%s may import %s" % (layer, named)
        for name in sorted(os.listdir(os.path.join(MODULE_UTILS, layer))):
            if name.endswith(".py") and name != "__init__.py":
                assert re.search(r"\b%s\b" % name[:-3], text), "%s/README.md names %s" % (layer, name)
    listed = re.findall(r"^- ([a-z_]+):", readme(MODULE_UTILS), re.M)
    assert listed == list(LAYERS)


def test_the_unit_tests_mirror_the_layers():
    folders = set(name for name in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, name))) - {"__pycache__"}
    assert folders == set(LAYERS)
    loose = [name for name in os.listdir(HERE) if name.endswith(".py") and name != os.path.basename(__file__)]
    assert loose == [], "test files of module_utils go in the folder of their layer"


def test_no_test_file_imports_another():
    tests = os.path.join(ROOT, "tests")
    found = []
    for folder, dirs, files in os.walk(tests):
        dirs[:] = [name for name in dirs if name not in ("output", "__pycache__")]
        for name in files:
            if name.startswith("test_") and name.endswith(".py"):
                with open(os.path.join(folder, name)) as handle:
                    source = handle.read()
                found.extend(
                    "%s imports %s" % (os.path.relpath(os.path.join(folder, name), ROOT), module)
                    for module in imported(source)
                    if module.split(".")[-1].startswith("test_")
                )
    assert found == []
