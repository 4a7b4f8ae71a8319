# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter netaccess.nac.shown writes a server's text as the collection's messages do (server_text.shown)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL, shown

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every template

    def trust_as_template(template):
        return template


def render(value):
    templar = Templar(loader=DataLoader(), variables=dict(value=wrap_var(value)))
    return templar.template(trust_as_template("{{ value | netaccess.nac.shown }}"))


@pytest.mark.parametrize(
    "value",
    [
        "\x1b[2J\x1b[HALL DEVICES AUTHENTICATED",
        '\nok: [localhost] => {"changed": false}\r',
        "\x9b2J \x85 \u202eexe.txt \u2028 \t",
        "cam-01",
        "{{ lookup('pipe', 'id') }}",
    ],
)
def test_control_characters_are_escaped_as_in_messages(value):
    text = render(value)
    assert text == shown(value) and not CONTROL.search(text)


def test_none_is_empty_and_numbers_are_text():
    assert render(None) == "" and render(42) == "42"
