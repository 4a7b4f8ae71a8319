# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML report and its record made from the file that nac_dot1x_status wrote to its dest (JSON Lines or CSV,
plugin_utils/results_file.py), through Ansible's templar: the same page and record as of the same results in a
list; hostile values in the file stay data; a file that is not one is named, line and reason."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.tests.unit.helpers import FakeClient

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every template, and every variable that is not unsafe
    from ansible.utils.unsafe_proxy import wrap_var as untrusted

    def trust_as_template(template):
        return template

else:  # since 2.19 a variable is never a template unless trusted

    def untrusted(value):
        return value


CONNECTING = dict(status="CONNECTING", authMethod=None, username=None, message="Authentication in progress")
RECORDS = [dict(id=1, hostname="cam-01"), dict(id=2, hostname="Printer-01"), dict(id=3, hostname="dup-host")]
RECORDS.append(dict(id=4, hostname="DUP-HOST"))


def fake_client(scripts):
    return FakeClient(
        RECORDS,
        scripts,
        default_reply=lambda ident: dict(status="AUTHENTICATED", authMethod="EAP-TLS", username="u%d" % ident),
        compact_only=True,
    )


def render(value, **options):
    """The page, made by the filter through Ansible's templar (the file's values are data, never templates)."""
    arguments = "".join(", %s=%s" % (name, name) for name in options)
    templar = Templar(loader=DataLoader(), variables=untrusted(dict(value=value, **options)))
    return templar.template(trust_as_template("{{ value | netaccess.nac.html_report(%s) }}" % arguments[2:]))


HOSTILE = dict(
    status="{{ lookup('pipe', 'id') }}", authMethod="<script>x</script>", username="=1+1", message="a\nb\x1b[31m"
)
SCRIPTS = {2: [HOSTILE], 3: [CONNECTING], 4: [dict(status="UNAUTHENTICATED", message=None)]}
WHEN = "2026-12-07 04:00:00 UTC"


def query(tmp_path=None, form="jsonl"):
    client = fake_client(dict((k, list(v)) for k, v in SCRIPTS.items()))
    options = dict(device_id=[1, 2, 3, 4, 42])
    if tmp_path is not None:
        options.update(dest=str(tmp_path / ("s." + form)), format=form)
    return dot1x_status(client, **options)


def record_of(value, **options):
    arguments = "".join(", %s=%s" % (name, name) for name in options)
    templar = Templar(loader=DataLoader(), variables=untrusted(dict(value=value, **options)))
    return templar.template(trust_as_template("{{ value | netaccess.nac.html_report_record(%s) }}" % arguments[2:]))


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_the_page_and_record_of_a_file_are_those_of_its_results(form, tmp_path):
    results = [dict(entry, expected_status="AUTHENTICATED") for entry in query().results]
    query(tmp_path, form)
    path = str(tmp_path / ("s." + form))
    assert render(path, expected_status="AUTHENTICATED", generated_at=WHEN) == render(results, generated_at=WHEN)
    assert record_of(path, expected_status="AUTHENTICATED", generated_at=WHEN) == record_of(results, generated_at=WHEN)
    page = render(path, expected_status="AUTHENTICATED", generated_at=WHEN)
    assert "uid=" not in page and "\\u007b\\u007b lookup('pipe', 'id') \\u007d\\u007d" in page  # data, not run


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"id": 1, "hostname": "a", "status": "OK"}\nnot json\n', "line 2 is not JSON: not json"),
        ('{"id": true, "status": "OK"}\n', "line 1: id is not a whole number"),
        ('{"id": 1, "status": 5}\n', "line 1: status is not text"),
        ("[1, 2]\n", "line 1 is not a result entry"),
        ('{"id": 1}\n', "line 1 has no status"),
        ("id,hostname,status,auth_method,username,message,error\r\n1,a\r\n", "row 2 has 2 cells, not the 7 columns"),
        ('{"id": 1, "status": "%s"}\n' % ("x" * (1 << 20)), "line 1 is longer than 1048576 characters"),
    ],
)
def test_a_file_that_is_not_one_is_named_with_its_line(content, message, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(AnsibleError, match="html_report: %s.*%s" % (str(path), message.replace("(", "\\(")[:40])):
        render(str(path), expected_status="AUTHENTICATED")


def test_a_missing_file_expected_status_or_misuse_is_named(tmp_path):
    path = str(tmp_path / "s.jsonl")
    with pytest.raises(AnsibleError, match="s.jsonl cannot be read: No such file"):
        render(path, expected_status="AUTHENTICATED")
    with open(path, "w") as handle:
        json.dump(dict(id=1, hostname="a", status="AUTHENTICATED"), handle)
    with pytest.raises(AnsibleError, match="expected_status .* is required"):
        render(path)
    with pytest.raises(AnsibleError, match="is not a regular file"):
        render(str(tmp_path), expected_status="AUTHENTICATED")
    with pytest.raises(AnsibleError, match="expected_status is for a file of results"):
        render([], expected_status="AUTHENTICATED")
    assert os.path.exists(path) and "1 of 1" not in render(path, expected_status="authenticated")
