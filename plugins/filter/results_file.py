# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: results_file
short_description: The results that nac_dot1x_status wrote to a file, each with its expected status
version_added: 0.1.0
description:
  - Reads the file that M(netaccess.nac.nac_dot1x_status) wrote to its O(netaccess.nac.nac_dot1x_status#module:dest)
    (JSON Lines or CSV) on the controller, and returns its entries as a list, each with O(expected_status), so that a
    template makes a report of every device without the results passing through a registered variable.
  - Also takes a list of such files, each a mapping with C(path) and C(expected_status), as the role
    P(netaccess.nac.device_onboarding#role) writes one for each expected status, and returns their entries in order.
  - Checks every line as P(netaccess.nac.html_report#filter) does when it is given the file, and fails naming the
    line that is not a result entry and why.
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description:
      - The path of the file of results, on the controller, or a list of mappings with C(path) and C(expected_status).
    type: raw
    required: true
  expected_status:
    description: The expected status of every device of the file; required for a path, not taken with a list.
    type: str
seealso:
  - plugin: netaccess.nac.html_report
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Write a CSV report with each device's expected status from the file of results
  ansible.builtin.template:
    src: dot1x.csv.j2  # iterates over rows
    dest: /var/tmp/nac/dot1x.csv
    mode: "0600"
  vars:
    rows: "{{ '/var/tmp/nac/dot1x.jsonl' | netaccess.nac.results_file(expected_status='AUTHENTICATED') }}"

- name: Show the hostnames of two files, one for each expected status
  ansible.builtin.debug:
    msg: >-
      {{ [{'path': '/var/tmp/nac/dot1x.1.jsonl', 'expected_status': 'AUTHENTICATED'},
          {'path': '/var/tmp/nac/dot1x.2.jsonl', 'expected_status': 'UNAUTHENTICATED'}]
         | netaccess.nac.results_file | map(attribute='hostname') | list }}
"""

RETURN = r"""
_value:
  description:
    - The entries of the file, as RV(netaccess.nac.nac_dot1x_status#module:results), each with C(expected_status).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.netaccess.nac.plugins.plugin_utils.results_file import read_results


def results_file(path, expected_status=None):
    """Return the entries of the file ``path`` with ``expected_status``, or of each file of a list of mappings with
    ``path`` and ``expected_status`` (plugin_utils/results_file.py reads them)."""
    try:
        if not isinstance(path, (list, tuple)):
            return read_results(path, expected_status)
        if expected_status is not None:
            raise ValueError("expected_status is for one path; give each file of a list its own")
        return [entry for given in path for entry in read_results(*_file_of(given))]
    except ValueError as error:
        raise AnsibleFilterError("results_file: %s" % error) from None


def _file_of(given):
    """(path, expected_status) of ``given``, a mapping that has both; ValueError naming what it lacks."""
    if not isinstance(given, dict) or not given.get("path"):
        raise ValueError("each item of a list of files is a mapping with path and expected_status")
    return given["path"], given.get("expected_status")


class FilterModule:
    def filters(self):
        return {"results_file": results_file}
