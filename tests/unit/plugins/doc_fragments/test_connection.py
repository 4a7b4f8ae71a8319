# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The connection options are declared once (options.CONNECTION_OPTIONS) and documented three times: the doc
fragment netaccess.nac.connection (modules; with its PLUGINS part, the inventory plugin) and the event
source's own DOCUMENTATION. Each documentation must match the table: names, types, defaults, environment
variables, and which options are secrets."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import re

import pytest
import yaml
from ansible import constants as C
from ansible.plugins.loader import inventory_loader

from ansible_collections.netaccess.nac.plugins.doc_fragments.connection import ModuleDocFragment
from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import connection_argument_spec
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import CONNECTION_OPTIONS, SECRET_OPTIONS
from ansible_collections.netaccess.nac.plugins.module_utils.tasks import dot1x_events

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
EVENT_SOURCE = os.path.join(COLLECTION, "extensions", "eda", "plugins", "event_source", "dot1x_status.py")
TABLE = [
    (o.name, o.env, o.type, o.default, o.secret) for o in CONNECTION_OPTIONS.values()
]  # name, variable, kind, default, secret


def fragment(part="DOCUMENTATION"):
    return yaml.safe_load(getattr(ModuleDocFragment, part))["options"]


def event_source_options():
    """The event source's documented options, read from its file without running it (as ansible-rulebook would)."""
    with open(EVENT_SOURCE) as source:
        tree = ast.parse(source.read())
    documentation = next(
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(target, "id", None) == "DOCUMENTATION" for target in node.targets)
    )
    return yaml.safe_load(documentation)["options"]


def environment_named(description):
    """The environment variables that a description names with E(...)."""
    text = " ".join(description) if isinstance(description, list) else description
    return re.findall(r"E\((NAC_[A-Z_]+)\)", text)


def same_default(documented, declared):
    return documented == declared or (isinstance(declared, float) and documented == int(declared))


def test_the_table_names_each_secret_and_only_the_secrets():
    assert SECRET_OPTIONS == ("api_key", "password")  # the tenant is an identifier, not a secret


@pytest.mark.parametrize("name, variable, kind, default, secret", TABLE)
def test_the_doc_fragment_documents_each_option_as_declared(name, variable, kind, default, secret):
    documented = fragment()[name]
    assert documented["type"] == kind
    assert same_default(documented.get("default"), default)
    assert "required" not in documented  # every option has an environment variable, a default, or is optional
    assert environment_named(documented["description"]) == ([variable] if variable else [])


@pytest.mark.parametrize("name", list(CONNECTION_OPTIONS))
def test_each_options_record_holds_the_first_line_of_its_description_in_the_doc_fragment(name):
    description = fragment()[name]["description"]
    assert " ".join(description[0].split()) == CONNECTION_OPTIONS[name].doc


def test_the_doc_fragment_documents_no_other_option():
    assert list(fragment()) == list(CONNECTION_OPTIONS)


def test_the_plugins_part_of_the_fragment_gives_each_environment_variable():
    plugins = fragment("PLUGINS")
    assert dict((name, [env["name"] for env in option["env"]]) for name, option in plugins.items()) == dict(
        (name, [variable]) for name, variable, kind, default, secret in TABLE if variable
    )


@pytest.mark.parametrize("name, variable, kind, default, secret", TABLE)
def test_the_modules_argument_spec_follows_the_table(name, variable, kind, default, secret):
    option = connection_argument_spec()[name]
    assert option["type"] == kind and option.get("default") == default
    assert option.get("no_log", False) is secret
    assert "required" not in option  # as documented: api_url may come from NAC_API_URL, checked by options.py
    assert option.get("fallback", (None, [None]))[1] == [variable]


@pytest.mark.parametrize("name, variable, kind, default, secret", TABLE)
def test_the_inventory_plugin_reads_each_option_as_declared(name, variable, kind, default, secret):
    """What Ansible's configuration system makes of the plugin's documentation (fragments merged)."""
    plugin = inventory_loader.get("netaccess.nac.nac")  # loading it registers its option definitions
    option = C.config.get_configuration_definitions("inventory", plugin._load_name)[name]
    assert option["type"] == kind
    assert same_default(option.get("default"), default)
    assert [env["name"] for env in option.get("env", [])] == ([variable] if variable else [])


@pytest.mark.parametrize("name, variable, kind, default, secret", TABLE)
def test_the_event_source_documents_each_option_as_declared(name, variable, kind, default, secret):
    documented = event_source_options()[name]
    assert documented["type"] == kind
    assert same_default(documented.get("default"), default)
    assert environment_named(documented["description"]) == ([variable] if variable else [])
    assert dot1x_events.CONNECTION_OPTIONS[name] == (variable, "secret" if secret else kind, default)


def test_the_event_source_documents_its_connection_options_and_its_own():
    assert list(event_source_options()) == list(CONNECTION_OPTIONS) + list(dot1x_events.SOURCE_OPTIONS)
    for name, kind in dot1x_events.SOURCE_OPTIONS.items():
        documented = event_source_options()[name]
        assert documented["type"] == kind
        assert same_default(documented.get("default"), dot1x_events.SOURCE_DEFAULTS[name])
        variable = dot1x_events.SOURCE_ENVIRONMENT.get(name)
        assert environment_named(documented["description"]) == ([variable] if variable else [])
