# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role's report templates, rendered by Ansible's own templar and read back as CSV/Markdown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
import os

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every template
    def trust_as_template(template):
        return template

TEMPLATES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                         "roles", "device_onboarding", "templates")

RESULTS = [
    dict(id=3, hostname="cam-lobby-01", status="AUTHENTICATED", auth_method="EAP-TLS", username="cam-lobby-01", message=None),
    dict(id=4, hostname="prn-02", status="UNAUTHENTICATED", auth_method=None, username=None,
         message='Certificate rejected, "expired" |\nrenew it'),
    dict(id=None, hostname="ghost-01", status="ERROR", auth_method=None, username=None, message=None,
         error="not in the device list (GET /api/device)"),
]


def render(name, results=None):
    with open(os.path.join(TEMPLATES, name)) as handle:
        source = handle.read()
    variables = dict(
        device_onboarding_expected_status="AUTHENTICATED",
        device_onboarding_status=dict(results=RESULTS if results is None else results, summary={"AUTHENTICATED": 1, "UNAUTHENTICATED": 1, "ERROR": 1}),
        device_onboarding_provisioned=dict(created=2, existing=1),
    )
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(source))


def test_csv_report_quotes_what_needs_quoting_and_reads_back():
    rows = list(csv.reader(io.StringIO(render("device_onboarding.csv.j2"))))
    assert rows == [
        ["hostname", "id", "status", "auth_method", "username", "message"],
        ["cam-lobby-01", "3", "AUTHENTICATED", "EAP-TLS", "cam-lobby-01", ""],
        ["prn-02", "4", "UNAUTHENTICATED", "", "", 'Certificate rejected, "expired" |\nrenew it'],
        ["ghost-01", "", "ERROR", "", "", "not in the device list (GET /api/device)"],
    ]


def test_markdown_report_has_counts_and_one_escaped_row_per_device():
    text = render("device_onboarding.md.j2")
    assert "2 created by this run, 1 already present" in text
    assert "| ✅ AUTHENTICATED | 1 |" in text
    assert "| ❌ UNAUTHENTICATED | 1 |" in text
    rows = [line for line in text.splitlines() if line.startswith("| ✅ |") or line.startswith("| ❌ |")]
    assert rows == [
        "| ✅ | cam-lobby-01 | 3 | AUTHENTICATED | EAP-TLS | cam-lobby-01 |  |",
        '| ❌ | prn-02 | 4 | UNAUTHENTICATED |  |  | Certificate rejected, "expired" &#124; renew it |',
        "| ❌ | ghost-01 |  | ERROR |  |  | not in the device list (GET /api/device) |",
    ]


@pytest.mark.parametrize("name", ["device_onboarding.csv.j2", "device_onboarding.md.j2"])
def test_no_devices_still_renders(name):
    assert render(name, results=[]).strip()
