# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX credential type: its inputs are well formed, and its injectors give the modules a working connection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import datetime
import os
from types import SimpleNamespace

import jsonschema
import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import connection_argument_spec
from ansible_collections.netaccess.nac.plugins.module_utils.common.tls_trust import AWX_CA_FIELD, ca_advice
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient, NacConfigError
from ansible_collections.netaccess.nac.tests.unit.helpers import Scripted, mounted

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECRETS = ("api_key", "password")  # the tenant is an identifier, shown like the username


def _self_signed_pem():
    """A real PEM certificate: the client refuses a ca_path that holds none."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Internal CA")])
    now = datetime.datetime(2026, 1, 1)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode("ascii")


CA_BUNDLE = _self_signed_pem()

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

# The shape AWX accepts for its injectors (awx/main/fields.py CredentialTypeInjectorField): one
# unnamed file (template) or named ones (template.<name>), environment variables, extra variables.
INJECTORS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "file": {
            "type": "object",
            "patternProperties": {r"^template(\.[a-zA-Z_]+[a-zA-Z0-9_]*)?$": {"type": "string"}},
            "additionalProperties": False,
        },
        "env": {
            "type": "object",
            "patternProperties": {"^[a-zA-Z_]+[a-zA-Z0-9_]*$": {"type": "string"}},
            "additionalProperties": False,
        },
        "extra_vars": {"type": "object"},
    },
}


@pytest.fixture(scope="module")
def credential_type():
    with open(os.path.join(ROOT, "extensions", "awx", "credential_type_nac.yml")) as handle:
        return yaml.safe_load(handle)


def file_names(credential_type):
    """The names of the injected files, as the templates reference them (tower.filename.<name>)."""
    return [label.split(".", 1)[1] for label in credential_type["injectors"].get("file", {})]


def inject(credential_type, inputs, directory):
    """The job environment AWX makes from a credential, as its inject_credential does.

    Only non-empty inputs are in the namespace, an unset boolean input is false, every file
    template is rendered to a file first (its path in tower.filename.<name>), then every
    environment template; all in Jinja2's immutable sandbox. Returns (environment, files).
    """
    fields = credential_type["inputs"]["fields"]
    namespace = dict((name, value) for name, value in inputs.items() if isinstance(value, bool) or value)
    for field in fields:
        if field["type"] == "boolean" and field["id"] not in inputs:
            namespace[field["id"]] = False
    sandbox = ImmutableSandboxedEnvironment()
    files = {}
    for name, template in zip(file_names(credential_type), credential_type["injectors"].get("file", {}).values()):
        path = os.path.join(str(directory), "awx-file-%s" % name)
        with open(path, "w") as handle:
            handle.write(sandbox.from_string(template).render(**namespace))
        files[name] = path
    namespace["tower"] = SimpleNamespace(filename=SimpleNamespace(**files))
    environment = dict(
        (name, sandbox.from_string(template).render(**namespace))
        for name, template in credential_type["injectors"]["env"].items()
    )
    return environment, files


def client_from_environment(environment, monkeypatch):
    """What a module builds from that environment alone: its connection options (NAC_* fallbacks and
    type conversion by Ansible's own argument spec validator), then the client."""
    for name in list(os.environ):
        if name.startswith("NAC_"):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    validated = ArgumentSpecValidator(connection_argument_spec()).validate({})
    assert not validated.error_messages, validated.error_messages
    return NacClient(**validated.validated_parameters)


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
    fallbacks = set(
        name for spec in connection_argument_spec().values() for name in spec.get("fallback", (None, []))[1]
    )
    assert set(credential_type["injectors"]["env"]) <= fallbacks


def sent_headers(client):
    """The header fields of a request the client sends (through the unit tests' fake transport)."""
    transport = Scripted((200, []))
    mounted(client, transport).request("GET", "/api/intent")
    return transport.requests[0].headers


def test_an_api_key_credential_gives_a_bearer_client(credential_type, tmp_path, monkeypatch):
    environment, dummy = inject(
        credential_type, dict(api_url="https://nac.example.com", api_key="k-123", validate_certs=True), tmp_path
    )
    assert environment["NAC_API_KEY"] == "k-123" and environment["NAC_USERNAME"] == ""
    client = client_from_environment(environment, monkeypatch)
    headers = sent_headers(client)
    assert headers["Authorization"] == "Bearer k-123"
    assert "X-Tenant" not in headers


def test_a_basic_credential_with_a_tenant_gives_a_basic_client(credential_type, tmp_path, monkeypatch):
    inputs = dict(api_url="https://nac.example.com", username="svc", password="pw", tenant="t-1", validate_certs=True)
    environment, dummy = inject(credential_type, inputs, tmp_path)
    client = client_from_environment(environment, monkeypatch)
    headers = sent_headers(client)
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"svc:pw").decode()
    assert headers["X-Tenant"] == "t-1"


def test_a_credential_without_a_secret_fails_clearly(credential_type, tmp_path, monkeypatch):
    environment, dummy = inject(credential_type, dict(api_url="https://nac.example.com", validate_certs=True), tmp_path)
    with pytest.raises(NacConfigError, match="no credentials"):
        client_from_environment(environment, monkeypatch)


def test_injectors_are_what_awx_accepts(credential_type):
    """AWX's own check: the schema, then every template rendered with StrictUndefined and every input defined."""
    injectors = credential_type["injectors"]
    jsonschema.validate(injectors, INJECTORS_SCHEMA)
    # Several files need the multi-file syntax only (AWX refuses a mix with the unnamed "template").
    assert all(label.startswith("template.") for label in injectors.get("file", {}))
    namespace = dict((field["id"], "EXAMPLE") for field in credential_type["inputs"]["fields"])
    namespace["tower"] = SimpleNamespace(
        filename=SimpleNamespace(**dict((name, "EXAMPLE_FILENAME") for name in file_names(credential_type)))
    )
    sandbox = ImmutableSandboxedEnvironment(undefined=StrictUndefined)
    templates = list(injectors.get("file", {}).values()) + list(injectors["env"].values())
    for template in templates:
        sandbox.from_string(template).render(**namespace)


def test_tls_and_time_out_inputs_exist_and_the_ca_bundle_is_no_secret(credential_type):
    fields = dict((field["id"], field) for field in credential_type["inputs"]["fields"])
    assert fields["validate_certs"]["type"] == "boolean" and fields["validate_certs"]["default"] is True
    # AWX turns an unset boolean into false: required, so that verification is never off by omission.
    assert "validate_certs" in credential_type["inputs"]["required"]
    assert fields["ca_bundle"].get("multiline") is True and not fields["ca_bundle"].get("secret")
    assert fields["timeout"]["type"] == "string"


def test_defaults_verify_certificates_with_the_modules_time_out(credential_type, tmp_path, monkeypatch):
    environment, files = inject(
        credential_type, dict(api_url="https://nac.example.com", api_key="k", validate_certs=True), tmp_path
    )
    assert environment["NAC_VALIDATE_CERTS"] == "true" and environment["NAC_CA_PATH"] == ""
    client = client_from_environment(environment, monkeypatch)
    assert client.verify is True
    assert client.timeout == connection_argument_spec()["timeout"]["default"]


def test_only_an_explicit_false_turns_verification_off_in_the_template(credential_type):
    template = ImmutableSandboxedEnvironment().from_string(credential_type["injectors"]["env"]["NAC_VALIDATE_CERTS"])
    assert template.render() == "true"
    assert template.render(validate_certs="") == "true"
    assert template.render(validate_certs=False) == "false"


def test_validate_certs_off_turns_verification_off(credential_type, tmp_path, monkeypatch):
    environment, files = inject(
        credential_type, dict(api_url="https://nac.example.com", api_key="k", validate_certs=False), tmp_path
    )
    assert environment["NAC_VALIDATE_CERTS"] == "false"
    assert client_from_environment(environment, monkeypatch).verify is False


def test_a_ca_bundle_is_written_to_a_file_named_by_nac_ca_path(credential_type, tmp_path, monkeypatch):
    inputs = dict(api_url="https://nac.example.com", api_key="k", validate_certs=True, ca_bundle=CA_BUNDLE)
    environment, files = inject(credential_type, inputs, tmp_path)
    assert environment["NAC_CA_PATH"] == files["ca_bundle"]
    with open(environment["NAC_CA_PATH"]) as handle:
        assert handle.read() == CA_BUNDLE
    assert client_from_environment(environment, monkeypatch).verify == files["ca_bundle"]


def test_a_time_out_reaches_the_client(credential_type, tmp_path, monkeypatch):
    inputs = dict(api_url="https://nac.example.com", api_key="k", validate_certs=True, timeout=" 12.5 ")
    environment, files = inject(credential_type, inputs, tmp_path)
    assert environment["NAC_TIMEOUT"] == "12.5"
    assert client_from_environment(environment, monkeypatch).timeout == 12.5


def test_the_tls_hint_names_the_credentials_ca_field(credential_type, tmp_path, monkeypatch):
    """A certificate the job cannot verify: with NAC_CA_PATH injected by this credential type, the message names
    the field to fill (empty bundle) or the bundle that does not trust the service (a bundle given)."""
    fields = dict((field["id"], field) for field in credential_type["inputs"]["fields"])
    assert fields["ca_bundle"]["label"] == AWX_CA_FIELD
    inputs = dict(api_url="https://nac.example.com", api_key="k", validate_certs=True)
    for bundle in ("", CA_BUNDLE):
        environment, files = inject(credential_type, dict(inputs, ca_bundle=bundle), tmp_path)
        client = client_from_environment(environment, monkeypatch)
        advice = ca_advice(client.verify)
        assert "the field 'CA bundle (PEM)' of the NAC credential" in advice
        if bundle:
            assert advice.startswith("The CA bundle %s (ca_path, from NAC_CA_PATH;" % files["ca_bundle"])
        else:
            assert advice.startswith("Trust its certificate with ca_path or NAC_CA_PATH (in AWX")
    monkeypatch.delenv("NAC_CA_PATH")
    assert ca_advice(True) == "Trust its certificate with ca_path (a PEM bundle)"  # outside AWX: no AWX words
