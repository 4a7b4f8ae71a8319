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


TEMPLATES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
    "roles",
    "device_onboarding",
    "templates",
)

RESULTS = [
    dict(
        id=3,
        hostname="cam-lobby-01",
        status="AUTHENTICATED",
        auth_method="EAP-TLS",
        username="cam-lobby-01",
        message=None,
        expected_status="AUTHENTICATED",
    ),
    dict(
        id=4,
        hostname="prn-02",
        status="UNAUTHENTICATED",
        auth_method=None,
        username=None,
        message='Certificate rejected, "expired" |\nrenew it',
        expected_status="AUTHENTICATED",
    ),
    dict(
        id=None,
        hostname="ghost-01",
        status="ERROR",
        auth_method=None,
        username=None,
        message=None,
        error="not in the device list (GET /api/device)",
        expected_status="AUTHENTICATED",
    ),
    dict(
        id=7,
        hostname="prn-nomac-01",
        status="UNAUTHENTICATED",
        auth_method=None,
        username=None,
        message="No MAC address registered for this device",
        expected_status="UNAUTHENTICATED",
    ),
]


def render(name, results=None, created=2):
    with open(os.path.join(TEMPLATES, name)) as handle:
        source = handle.read()
    results = RESULTS if results is None else results
    variables = dict(
        device_onboarding_expected_status="AUTHENTICATED",
        device_onboarding_rows=results,
        device_onboarding_status=dict(
            count=len(results),
            not_reached=len([r for r in results if r["status"].lower() != r["expected_status"].lower()]),
            summary={"AUTHENTICATED": 1, "UNAUTHENTICATED": 2, "ERROR": 1},
        ),
        device_onboarding_provisioned=dict(created=created, existing=4 - created),
    )
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(source))


def test_csv_report_quotes_what_needs_quoting_and_reads_back():
    rows = list(csv.reader(io.StringIO(render("device_onboarding.csv.j2"))))
    assert rows == [
        ["hostname", "id", "expected_status", "status", "auth_method", "username", "message"],
        ["cam-lobby-01", "3", "AUTHENTICATED", "AUTHENTICATED", "EAP-TLS", "cam-lobby-01", ""],
        ["prn-02", "4", "AUTHENTICATED", "UNAUTHENTICATED", "", "", 'Certificate rejected, "expired" |\nrenew it'],
        ["ghost-01", "", "AUTHENTICATED", "ERROR", "", "", "not in the device list (GET /api/device)"],
        [
            "prn-nomac-01",
            "7",
            "UNAUTHENTICATED",
            "UNAUTHENTICATED",
            "",
            "",
            "No MAC address registered for this device",
        ],
    ]


def test_markdown_report_has_counts_and_one_escaped_row_per_device():
    text = render("device_onboarding.md.j2")
    assert "2 of 4 devices have their expected 802.1x status." in text
    assert "| AUTHENTICATED | 1 |" in text
    assert "| UNAUTHENTICATED | 2 |" in text
    rows = [line for line in text.splitlines() if line.startswith(("| ✅ |", "| ❌ |"))]
    assert rows == [
        "| ✅ | cam-lobby-01 | 3 | AUTHENTICATED | AUTHENTICATED | EAP-TLS | cam-lobby-01 |  |",
        (
            "| ❌ | prn-02 | 4 | AUTHENTICATED | UNAUTHENTICATED |  |  | "
            'Certificate rejected, "expired" &#124;<br>renew it |'
        ),
        "| ❌ | ghost-01 |  | AUTHENTICATED | ERROR |  |  | not in the device list (GET /api/device) |",
        (
            "| ✅ | prn-nomac-01 | 7 | UNAUTHENTICATED | UNAUTHENTICATED |  |  | "
            "No MAC address registered for this device |"
        ),
    ]
    assert text.startswith("# 802.1x status after onboarding\n")


@pytest.mark.parametrize("name", ["device_onboarding.csv.j2", "device_onboarding.md.j2"])
def test_a_report_says_nothing_about_the_run_that_wrote_it(name):
    """A rerun that creates nothing must write the same files (no change reported)."""
    assert render(name, created=3) == render(name, created=0)


@pytest.mark.parametrize("name", ["device_onboarding.csv.j2", "device_onboarding.md.j2"])
def test_no_devices_still_renders(name):
    assert render(name, results=[]).strip()
