# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option ``hostname`` of the modules that take a list of names is documented once: its type and how a name
is compared and checked come from the doc fragment netaccess.nac.hostnames, which each of them extends, and no
module repeats its paragraphs; the documentation, fragments merged as ansible-doc merges them, matches the
argument spec."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml
from ansible.plugins.loader import fragment_loader
from ansible.utils.plugin_docs import add_fragments

from ansible_collections.netaccess.nac.plugins.modules import nac_device_info, nac_dot1x_status

MODULES = [nac_device_info, nac_dot1x_status]
SHARED = ("canonically equivalent Unicode", "at most 253 characters", "C(raw)")


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_each_module_extends_the_fragment_and_repeats_none_of_it(module):
    doc = yaml.safe_load(module.DOCUMENTATION)
    assert "netaccess.nac.hostnames" in doc["extends_documentation_fragment"]
    own = " ".join(doc["options"]["hostname"]["description"])
    assert not [text for text in SHARED if text in own]


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_the_merged_documentation_gives_the_option_its_type_and_the_shared_notes(module):
    doc = yaml.safe_load(module.DOCUMENTATION)
    add_fragments(doc, module.__file__, fragment_loader=fragment_loader, is_module=True)
    option = doc["options"]["hostname"]
    assert (option["type"], option["elements"]) == ("list", "raw")
    assert option["description"] == yaml.safe_load(module.DOCUMENTATION)["options"]["hostname"]["description"]
    notes = " ".join(doc["notes"])
    assert all(text in notes for text in SHARED)
