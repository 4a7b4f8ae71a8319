# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters device_input and unknown_variables, as the role device_onboarding and the playbook onboard_devices
use them: the devices read and checked, an error in one line, and the role's unknown variables named."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

from ansible_collections.netaccess.nac.plugins.filter import unknown_variables as unknown_module
from ansible_collections.netaccess.nac.plugins.filter.device_input import device_input
from ansible_collections.netaccess.nac.plugins.filter.unknown_variables import unknown_variables

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "device_onboarding")


def test_a_survey_answer_and_a_file_are_read_together(tmp_path):
    (tmp_path / "more.csv").write_text("hostname,macs\nprn-01,00:11:22:33:44:66\n")
    read = device_input(
        '[{"hostname": "cam-01", "expected_status": "authenticated"}]',
        "nac_devices",
        path="more.csv",
        base=str(tmp_path),
        keys=["expected_status"],
    )
    assert read == dict(
        devices=[
            dict(hostname="cam-01", expected_status="authenticated"),
            dict(hostname="prn-01", macs=["00:11:22:33:44:66"]),
        ],
        error="",
    )


def test_an_error_is_one_line_and_no_devices():
    read = device_input(["cam-01"], "device_onboarding_devices", keys=["expected_status"])
    assert read["devices"] == []
    assert read["error"].startswith("device_onboarding_devices[0] is the string 'cam-01', not a device. ")
    assert "a mapping with the keys hostname, group, profile, macs, ips, expected_status" in read["error"]


def test_a_hostname_in_both_the_input_and_the_file_is_an_error(tmp_path):
    (tmp_path / "d.csv").write_text("hostname\ncam-01\n")
    read = device_input([{"hostname": "cam-01"}], "nac_devices", path=str(tmp_path / "d.csv"))
    assert "hostname cam-01 is also requested by nac_devices[0] (cam-01)" in read["error"]


def test_unknown_variables_are_warned_with_the_option_meant(monkeypatch):
    warned = []
    monkeypatch.setattr(unknown_module.display, "warning", warned.append)
    names = ["role_x_report_pth", "role_x_report_path", "role_x_fact", "role_x_zzz", "role_x_report_pth"]
    assert unknown_variables(names, ["role_x_report_path"], ["role_x_fact"], role="role_x") == [
        "role_x_report_pth",
        "role_x_zzz",
    ]
    assert warned == [
        "role_x_report_pth is not a variable of role_x (did you mean role_x_report_path?); it is ignored",
        "role_x_zzz is not a variable of role_x; it is ignored",
    ]


def test_the_role_knows_every_variable_it_uses_and_every_option_it_documents():
    """The lists given to unknown_variables in the role's first task hold each option of its argument spec and
    every device_onboarding_* name its tasks and templates use: a new one missing from them would be warned about
    as unknown on every run."""
    with open(os.path.join(ROLE, "tasks", "main.yml")) as handle:
        text = handle.read()
    first = yaml.safe_load(text)[0]["vars"]
    with open(os.path.join(ROLE, "meta", "argument_specs.yml")) as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert sorted(first["device_onboarding_options"]) == sorted(options)
    used = set(re.findall(r"device_onboarding_\w+", text))
    for name in os.listdir(os.path.join(ROLE, "templates")):
        with open(os.path.join(ROLE, "templates", name)) as handle:
            used |= set(re.findall(r"device_onboarding_\w+", handle.read()))
    known = set(first["device_onboarding_options"]) | set(first["device_onboarding_internal"])
    assert sorted(used - known) == []
