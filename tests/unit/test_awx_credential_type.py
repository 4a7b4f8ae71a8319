# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX credential type: its inputs are well formed, and its injectors give the modules a working connection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os

import jsonschema
import pytest
import requests
import yaml
from jinja2.sandbox import SandboxedEnvironment

from ansible_collections.netaccess.nac.plugins.module_utils.api import NacClient, NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.module import connection_argument_spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECRETS = ("api_key", "password")  # the tenant is an identifier, shown like the username

# The shape AWX accepts for a credential type's inputs (awx/main/fields.py CredentialInputField).
INPUTS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["fields"],
    "properties": {
        "fields": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "label", "type"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[a-zA-Z_]+[a-zA-Z0-9_]*$"},
                    "label": {"type": "string"},
                    "type": {"enum": ["string", "boolean"]},
                    "secret": {"type": "boolean"},
                    "multiline": {"type": "boolean"},
                    "help_text": {"type": "string"},
                    "format": {"enum": ["ssh_private_key", "url"]},
                    "choices": {"type": "array", "items": {"type": "string"}},
                    "default": {},
                    "ask_at_runtime": {"type": "boolean"},
                },
            },
        },
        "required": {"type": "array", "items": {"type": "string"}},
    },
}


@pytest.fixture(scope="module")
def credential_type():
    with open(os.path.join(ROOT, "extensions", "awx", "credential_type_nac.yml")) as handle:
        return yaml.safe_load(handle)


def inject(credential_type, inputs):
    """The job environment AWX makes from the injectors, rendering them in a Jinja2 sandbox as AWX does."""
    sandbox = SandboxedEnvironment()
    return dict((name, sandbox.from_string(template).render(**inputs)) for name, template in credential_type["injectors"]["env"].items())


def client_from_environment(environment):
    """What a module builds from that environment alone: each option from its NAC_* fallback."""
    options = {}
    for option, spec in connection_argument_spec().items():
        names = spec.get("fallback", (None, []))[1]
        values = [environment[name] for name in names if name in environment]
        if values:
            options[option] = values[0]
    return NacClient(**options)


def test_inputs_are_what_awx_accepts(credential_type):
    jsonschema.validate(credential_type["inputs"], INPUTS_SCHEMA)
    ids = [field["id"] for field in credential_type["inputs"]["fields"]]
    assert len(ids) == len(set(ids))
    assert set(credential_type["inputs"]["required"]) <= set(ids)
    assert credential_type["kind"] == "cloud"


def test_every_secret_input_is_marked_secret(credential_type):
    fields = dict((field["id"], field) for field in credential_type["inputs"]["fields"])
    for name in SECRETS:
        assert fields[name].get("secret") is True, name
    assert not fields["tenant"].get("secret")  # AWX would mask it in job output, like a no_log value


def test_injected_variables_are_the_ones_the_modules_read(credential_type):
    fallbacks = set(name for spec in connection_argument_spec().values() for name in spec.get("fallback", (None, []))[1])
    assert set(credential_type["injectors"]["env"]) <= fallbacks


def test_an_api_key_credential_gives_a_bearer_client(credential_type):
    environment = inject(credential_type, dict(api_url="https://nac.example.com", api_key="k-123"))
    assert environment["NAC_API_KEY"] == "k-123" and environment["NAC_USERNAME"] == ""
    client = client_from_environment(environment)
    headers = client.session.prepare_request(requests.Request("GET", client.base_url)).headers
    assert headers["Authorization"] == "Bearer k-123"
    assert "X-Tenant" not in headers


def test_a_basic_credential_with_a_tenant_gives_a_basic_client(credential_type):
    environment = inject(credential_type, dict(api_url="https://nac.example.com", username="svc", password="pw", tenant="t-1"))
    client = client_from_environment(environment)
    headers = client.session.prepare_request(requests.Request("GET", client.base_url)).headers
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"svc:pw").decode()
    assert headers["X-Tenant"] == "t-1"


def test_a_credential_without_a_secret_fails_clearly(credential_type):
    environment = inject(credential_type, dict(api_url="https://nac.example.com"))
    with pytest.raises(NacConfigError, match="no credentials"):
        client_from_environment(environment)
