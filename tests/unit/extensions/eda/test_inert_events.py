# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ansible-core makes of an event of netaccess.nac.dot1x_status on its way into a playbook, on the core
these tests run on: ansible-rulebook writes the extra variables with ``yaml.dump`` (ansible_rulebook/action/
run_playbook.py), ansible-runner gives the file to ansible-playbook as ``-e @file``, which ansible-core loads
as trusted (2.19+) or plain (before 2.19). A server string passed through inert_event is rendered to its
exact value and never run, however the playbook uses it; the same string as it came (the control) runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.template_guard import inert_event
from ansible_collections.netaccess.nac.tests.unit.templating import BEFORE_2_19, render, templatable


def load_extra_vars(path):
    """As ansible-core's utils/vars.py load_extra_vars loads ``-e @path``."""
    if BEFORE_2_19:
        return DataLoader().load_from_file(path)
    return DataLoader().load_from_file(path, trusted_as_template=True)


USES = [
    "{{ ansible_eda.event.nac_dot1x.FIELD }}",
    "{{ (ansible_eda.event.nac_dot1x | dict2items | selectattr('key', 'eq', 'FIELD') | first).value }}",
    "{{ [ansible_eda.event.nac_dot1x.FIELD] | first }}",
    "{{ ansible_eda.event.nac_dot1x.FIELD | string }}",
]


@pytest.fixture
def event_file(tmp_path):
    def write(event):
        path = tmp_path / "extravars"
        extra_vars = dict(out_file="/tmp/x", ansible_eda=dict(ruleset="r", rule="lost", event=event))
        path.write_text(yaml.dump(extra_vars))  # as ansible-rulebook writes it
        return load_extra_vars(str(path))

    return write


@pytest.mark.parametrize("use", USES)
def test_every_server_string_arrives_exactly_and_never_runs(tmp_path, event_file, use):
    canary = tmp_path / "RAN"
    evil = "{{ lookup('pipe', 'touch %s') }}" % canary
    values = dict(
        hostname=evil,
        status="UNAUTHENTICATED",
        auth_method="{1: 2}",  # before 2.19 a template's result that looks like a literal is converted (not here)
        username="naïve {x} \U0001f4a5\n\t'\"\\",
        message="{% raw %}" + evil,
    )
    loaded = event_file(inert_event(dict(nac_dot1x=dict(values, id=90, previous_status="AUTHENTICATED"))))
    for field, value in values.items():
        got = render(use.replace("FIELD", field), loaded)
        assert got == value and isinstance(got, str), field
        if field != "status":  # a string without a brace: ordinary text
            assert not templatable(got)
            # The value used again (a fact, a loop item, a variable of its own): still never run.
            assert render("{{ again }}", dict(loaded, again=got)) == value
    assert not os.path.exists(str(canary)), "a server string ran as a template"


def test_the_control_the_event_as_it_came_runs(tmp_path, event_file):
    canary = tmp_path / "RAN"
    loaded = event_file(dict(nac_dot1x=dict(id=90, hostname="{{ lookup('pipe', 'touch %s') }}" % canary)))
    render("{{ ansible_eda.event.nac_dot1x.hostname }}", loaded)
    assert os.path.exists(str(canary))  # what the source sent before inert_event: why it exists
