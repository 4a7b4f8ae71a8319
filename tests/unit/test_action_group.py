# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module is in the action group `nac` and documents its membership; nothing else is listed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def modules():
    folder = os.path.join(ROOT, "plugins", "modules")
    return sorted(name[:-3] for name in os.listdir(folder) if name.endswith(".py") and not name.startswith("_"))


def test_every_module_is_in_the_action_group_and_nothing_else():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        runtime = yaml.safe_load(handle)
    group = runtime["action_groups"]["nac"]
    assert modules(), "no modules found under plugins/modules"
    assert sorted(group) == modules(), "meta/runtime.yml action group 'nac' must list exactly the modules"


def test_every_module_documents_its_group_and_connection_options():
    for name in modules():
        with open(os.path.join(ROOT, "plugins", "modules", name + ".py")) as handle:
            source = handle.read()
        start = source.index('DOCUMENTATION = r"""') + len('DOCUMENTATION = r"""')
        doc = yaml.safe_load(source[start : source.index('"""', start)])
        fragments = doc.get("extends_documentation_fragment", [])
        assert "netaccess.nac.connection" in fragments, name
        assert "netaccess.nac.attributes" in fragments, name
