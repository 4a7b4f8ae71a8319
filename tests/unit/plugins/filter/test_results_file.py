# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter results_file, through Ansible's templar: the CSV report that playbooks/dot1x_report.yml makes from the
file nac_dot1x_status wrote to its dest is the one it made from the registered results; hostile values stay data; a
file that is not one is named."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
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


RECORDS = [dict(id=1, hostname="cam-01"), dict(id=2, hostname="Printer-01"), dict(id=3, hostname="prn-02")]
HOSTILE = dict(
    status="{{ lookup('pipe', 'id') }}", authMethod="<script>x</script>", username="=1+1", message="a\nb\x1b[31m"
)
SCRIPTS = {2: [HOSTILE], 3: [dict(status="UNAUTHENTICATED", authMethod=None, username=None, message=None)]}


def query(tmp_path=None, form="jsonl"):
    """The Report of nac_dot1x_status for four ids (one unknown), written to tmp_path/s.<form> when given."""
    client = FakeClient(
        RECORDS,
        dict((k, list(v)) for k, v in SCRIPTS.items()),
        default_reply=lambda ident: dict(status="AUTHENTICATED", authMethod="EAP-TLS", username="u%d" % ident),
        compact_only=True,
    )
    options = dict(device_id=[1, 2, 3, 42])
    if tmp_path is not None:
        options.update(dest=str(tmp_path / ("s." + form)), format=form)
    return dot1x_status(client, **options)


TEMPLATE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))),
    "roles",
    "device_onboarding",
    "templates",
    "device_onboarding.csv.j2",
)
# The rows as the playbook gives them to the CSV template: read from the file, else from the registered results.
ROWS = (
    "{{ path | netaccess.nac.results_file(expected_status='AUTHENTICATED') if path"
    " else results | map('combine', {'expected_status': 'AUTHENTICATED'}) | list }}"
)


def csv_report(path="", results=None):
    """The CSV report of the role's template, with the rows of ROWS, rendered by Ansible's templar."""
    with open(TEMPLATE) as handle:
        source = handle.read()
    templar = Templar(loader=DataLoader(), variables=untrusted(dict(path=path, results=results or [])))
    rows = templar.template(trust_as_template(ROWS))
    templar = Templar(loader=DataLoader(), variables=untrusted(dict(device_onboarding_rows=rows)))
    return templar.template(trust_as_template(source))


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_the_csv_report_of_the_file_is_that_of_the_registered_results(form, tmp_path):
    results = query().results
    query(tmp_path, form)
    report = csv_report(path=str(tmp_path / ("s." + form)))
    assert report == csv_report(results=results)
    rows = list(csv.reader(io.StringIO(report)))
    assert len(rows) == 1 + 4 and rows[2][3] == "{{ lookup('pipe', 'id') }}" and "uid=" not in report


def test_a_file_that_is_not_one_is_named(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": 1, "hostname": "a", "status": "OK"}\nnot json\n', encoding="utf-8")
    with pytest.raises(AnsibleError, match="results_file: .*s.jsonl line 2 is not JSON"):
        csv_report(path=str(path))
    with pytest.raises(AnsibleError, match="results_file: .*cannot be read: No such file"):
        csv_report(path=str(tmp_path / "none.jsonl"))


def rows_of(value, **options):
    arguments = "".join(", %s=%s" % (name, name) for name in options)
    templar = Templar(loader=DataLoader(), variables=untrusted(dict(value=value, **options)))
    return templar.template(trust_as_template("{{ value | netaccess.nac.results_file(%s) }}" % arguments[2:]))


def test_a_list_of_files_gives_their_entries_in_order_each_with_its_expected_status(tmp_path):
    query(tmp_path, "jsonl")
    query(tmp_path, "csv")
    files = [
        dict(path=str(tmp_path / "s.jsonl"), expected_status="AUTHENTICATED"),
        dict(path=str(tmp_path / "s.csv"), expected_status="UNAUTHENTICATED"),
    ]
    rows = rows_of(files)
    results = query().results
    assert [(r["id"], r["expected_status"]) for r in rows] == [(r["id"], "AUTHENTICATED") for r in results] + [
        (r["id"], "UNAUTHENTICATED") for r in results
    ]
    assert rows_of([]) == []
    with pytest.raises(AnsibleError, match="results_file: expected_status is for one path"):
        rows_of(files, expected_status="AUTHENTICATED")
    with pytest.raises(AnsibleError, match="results_file: each item of a list of files is a mapping with path"):
        rows_of([str(tmp_path / "s.jsonl")])
    with pytest.raises(AnsibleError, match="expected_status .* is required"):
        rows_of([dict(path=str(tmp_path / "s.jsonl"))])
