# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: html_report_record
short_description: The record of an HTML report that the next report compares with
version_added: 0.1.0
description:
  - The record of the devices of a report of P(netaccess.nac.html_report#filter) (each device's id, hostname and
    outcome, and when), as JSON text, to write beside the report. The next report reads it (its
    O(netaccess.nac.html_report#filter:previous)) and says what changed since it (the devices newly failing,
    recovered, new, and no longer in the report).
  - A device is identified by its C(id), else by its hostname (ignoring case). Its outcome is as the report decides
    it (C(reached), C(in progress), C(failed)), with the same O(in_progress).
  - The text holds no brace and no non-ASCII character (all written as C(\u) escapes). Write it private to the
    user (mode C(0600)), as the role P(netaccess.nac.device_onboarding#role) and the playbook
    C(netaccess.nac.dot1x_report) do (C(<report>.last.json)).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description:
      - The devices, as for P(netaccess.nac.html_report#filter), a list or the path of the file that
        M(netaccess.nac.nac_dot1x_status) wrote to its O(netaccess.nac.nac_dot1x_status#module:dest), read on the
        controller, with O(expected_status).
    type: raw
    required: true
  expected_status:
    description: The expected status of every device of a file given as the input, as for the report.
    type: str
  generated_at:
    description: When the status was read, as the report shows it; the current time in UTC when omitted.
    type: str
  in_progress:
    description: The statuses that mean that the authentication is still under way, as for the report.
    type: list
    elements: str
    default: [CONNECTING, AUTHENTICATING, PENDING, IN_PROGRESS]
seealso:
  - plugin: netaccess.nac.html_report
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Read the record of the previous report, if it is a regular file (a symbolic link is never followed)
  ansible.builtin.stat:
    path: /var/tmp/nac/dot1x.last.json
    follow: false
    get_checksum: false
  register: last

- name: Read it
  ansible.builtin.slurp:
    path: /var/tmp/nac/dot1x.last.json
  register: previous
  when: last.stat.isreg | default(false)

- name: Write the report, with what changed since the previous one
  ansible.builtin.copy:
    content: "{{ rows | netaccess.nac.html_report(previous=previous.content | default('')) }}"
    dest: /var/tmp/nac/dot1x.html
    mode: "0600"

- name: Write its record, for the next report
  ansible.builtin.copy:
    content: "{{ rows | netaccess.nac.html_report_record }}"
    dest: /var/tmp/nac/dot1x.last.json
    mode: "0600"
"""

RETURN = r"""
_value:
  description: The record, JSON text.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import IN_PROGRESS_STATUSES, record
from ansible_collections.netaccess.nac.plugins.plugin_utils.results_file import read_results


def html_report_record(results, generated_at=None, in_progress=IN_PROGRESS_STATUSES, expected_status=None):
    """The record (see DOCUMENTATION; plugin_utils/html_report.py), of ``results`` or of the file they name
    (plugin_utils/results_file.py, with ``expected_status``)."""
    if not isinstance(results, (list, tuple, str)):
        raise AnsibleFilterError("html_report_record: expects a list of devices or the path of a file of results")
    try:
        if isinstance(results, str):
            results = read_results(results, expected_status)
        return record(results, generated_at=generated_at, in_progress=in_progress)
    except ValueError as error:
        raise AnsibleFilterError("html_report_record: %s" % error) from None


class FilterModule:
    def filters(self):
        return {"html_report_record": html_report_record}
