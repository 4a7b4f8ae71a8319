# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: html_report
short_description: The 802.1x status of devices as one self-contained HTML page
version_added: 0.1.0
description:
  - Makes one HTML page of the results of M(netaccess.nac.nac_dot1x_status), each with its C(expected_status).
  - >-
    The page starts with a verdict, C(PASSED), C(FAILED) or C(INCOMPLETE), for example
    C(FAILED: 22 of 28 not at their expected status (18 failed, 4 still in progress)).
    Each device has one outcome. It has C(reached) its expected status when its C(status) equals C(expected_status)
    (ignoring case) and it has no C(error). It is C(in progress) when it has not, has no C(error), and its status
    is one of O(in_progress) (C(CONNECTING) and the like, the authentication still under way, so not a failure and not
    yet a success). Otherwise it has C(failed). The verdict is C(FAILED) when a device failed, C(INCOMPLETE)
    when none failed but some are in progress, and C(PASSED) when all reached their expected status.
  - Then the counts (devices, reached, failed, in progress), a bar chart of the statuses, what changed since the
    previous report (O(previous)), what this run created (O(created)), and two tables, the devices not at their
    expected status and all devices, with the group, profile, MAC and IP addresses of each device where the
    device list gives them (O(devices)). The header names the NAC, when the status was read, the run's context
    (O(context)) and links to the CSV report (O(csv)).
  - Both tables sort (a click on a column's title) and page (100 rows a page, with a sticky header), and one set
    of filters applies to both (words, the outcome, a click on a bar of the chart or on a kind of change). The
    rows are drawn by the page's script from the page's data, a page at a time, so a page of 20,000 devices
    stays fast. Without the script, the first 100 rows of each table are shown.
  - Self-contained, it loads nothing and sends nothing. Its Content-Security-Policy allows nothing but its own
    style and script (by their hashes); its data is a JSON block, which a browser never runs.
  - Every value is text, never markup. Values come from the NAC, which may be hostile. They are
    HTML-escaped, braces included, so that no value can reach a template, and in the data block every
    non-ASCII character, C(<), C(>), C(&) and the braces are written as C(\u) escapes. Control characters,
    bidirectional overrides and other invisible characters are shown as C(\x1b), C(\u202e) and so on,
    and tabs and line breaks as spaces. The script writes the rows' values as text, never as markup.
  - Used by the role P(netaccess.nac.device_onboarding#role) and the playbook C(netaccess.nac.dot1x_report).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description:
      - The devices, as RV(netaccess.nac.nac_dot1x_status#module:results) with the C(expected_status) of each.
      - Or the path of the file that M(netaccess.nac.nac_dot1x_status) wrote to its
        O(netaccess.nac.nac_dot1x_status#module:dest) (JSON Lines or CSV), with O(expected_status), so that the
        report of a whole network never passes through a registered variable. The filter runs on the controller;
        the file is read there (run the query delegated to C(localhost), as the examples do). Every line of
        the file is checked; the filter fails naming the first line that is not a result.
      - A device is at its expected status when its C(status) equals C(expected_status) (ignoring case) and it
        has no C(error).
    type: raw
    required: true
  expected_status:
    description:
      - The expected status of every device of the file given as the input (a file's results have none of their
        own). Required with a file; not used with a list.
    type: str
  title:
    description: The title of the page.
    type: str
    default: 802.1x status
  nac:
    description: The NAC that was asked, for example its O(netaccess.nac.nac_dot1x_status#module:api_url).
    type: str
    default: ""
  created:
    description:
      - The hostnames of the devices that this run created. The page lists them.
      - Omit this for a run that does not create devices. The page then has no such section.
    type: list
    elements: str
  existing:
    description: How many devices existed already (shown with O(created)).
    type: int
  generated_at:
    description: When the status was read, as shown; the current time in UTC when omitted.
    type: str
  devices:
    description:
      - The devices as the NAC lists them (RV(netaccess.nac.nac_device_info#module:devices), or the C(nac_record)
        host variables of the inventory P(netaccess.nac.nac#inventory)), for their C(group), C(profile) (a string, or
        the C(name) of an object), C(macs) and C(ips).
      - Or the variables of the inventory's hosts (each a mapping with C(nac_id), and C(nac_hostname), C(nac_group),
        C(nac_profile), C(nac_macs), C(nac_ips) where set), as
        C(ansible_play_hosts | map('extract', hostvars) | selectattr('nac_id', 'defined')) gives them.
      - Matched to the results by C(id), else by hostname (ignoring case). A column is shown when some device has a
        value for it.
    type: list
    elements: dict
  context:
    description:
      - >-
        The run's context, shown in the header, as labels and values in their order, for example
        C({"AWX job": "42 onboard cameras", "Playbook": "onboard.yml", "Duration": "95 s", "Wait timeout": "300 s"}).
      - Values that are empty are left out.
    type: dict
  csv:
    description: The file name of the CSV report written beside the page; the header links to it.
    type: str
  previous:
    description:
      - The record of the previous report, as C(ansible.builtin.slurp) returns the file that
        P(netaccess.nac.html_report_record#filter) wrote (its C(content), base64-encoded). The page then says what
        changed since then (the devices newly failing, recovered, new, and no longer in the report).
      - Omitted or empty, the page says that there is nothing to compare with. A record that is not one is
        ignored, and the page says so.
    type: str
  previous_size:
    description:
      - The size in bytes of the file of O(previous), as C(ansible.builtin.stat) gives it. A record larger than a
        record of this report's devices can be (1 MiB and 4 KiB a device) is refused unread, and the page says so
        (a file that is not a record, or was tampered with); read it with C(ansible.builtin.slurp) only when it is
        not larger, as the role P(netaccess.nac.device_onboarding#role) does. O(previous) past that bound is refused
        the same way.
    type: int
  in_progress:
    description:
      - The statuses that mean that the authentication is still under way (compared ignoring case). The API does
        not list its statuses; these are the common transient ones.
    type: list
    elements: str
    default: [CONNECTING, AUTHENTICATING, PENDING, IN_PROGRESS]
seealso:
  - plugin: netaccess.nac.html_report_record
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Write the HTML report of a status query
  ansible.builtin.copy:
    content: >-
      {{ status.results | map('combine', {'expected_status': 'AUTHENTICATED'})
         | netaccess.nac.html_report(title='802.1x re-check', nac=lookup('ansible.builtin.env', 'NAC_API_URL')) }}
    dest: /var/tmp/nac/dot1x.html
    mode: "0600"

- name: Query every device of a large network into a file on the controller
  netaccess.nac.nac_dot1x_status:
    all_devices: true
    concurrency: 64
    dest: /var/tmp/nac/dot1x.jsonl
  delegate_to: localhost
  register: network

- name: Write the HTML report of that file
  ansible.builtin.copy:
    content: "{{ '/var/tmp/nac/dot1x.jsonl' | netaccess.nac.html_report(expected_status='AUTHENTICATED') }}"
    dest: /var/tmp/nac/dot1x.html
    mode: "0600"
  delegate_to: localhost

- name: With the device list's fields, the run's context and a link to the CSV report beside it
  ansible.builtin.copy:
    content: >-
      {{ status.results | map('combine', {'expected_status': 'AUTHENTICATED'})
         | netaccess.nac.html_report(devices=listed.devices, csv='dot1x.csv',
                                     context={'Playbook': 'recheck.yml', 'Wait timeout': '300 s'}) }}
    dest: /var/tmp/nac/dot1x.html
    mode: "0600"
"""

RETURN = r"""
_value:
  description: The HTML page (UTF-8 text), starting with C(<!DOCTYPE html>).
  type: str
"""

import inspect

from ansible.errors import AnsibleFilterError

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import page
from ansible_collections.netaccess.nac.plugins.plugin_utils.results_file import read_results


def html_report(results, *args, **options):
    """The page (see DOCUMENTATION; built by plugin_utils/html_report.py, whose ``page`` takes these options), of
    ``results`` or of the file they name (plugin_utils/results_file.py, with ``expected_status``)."""
    expected_status = options.pop("expected_status", None)
    try:
        arguments = inspect.signature(page).bind(results, *args, **options)
    except TypeError as error:
        raise AnsibleFilterError("html_report: %s" % error) from None
    try:
        if isinstance(results, str):
            arguments.arguments["results"] = read_results(results, expected_status)
        elif expected_status is not None:
            raise ValueError("expected_status is for a file of results; give each device its own in a list")
        return page(*arguments.args, **arguments.kwargs)
    except ValueError as error:
        raise AnsibleFilterError("html_report: %s" % error) from None


class FilterModule:
    def filters(self):
        return {"html_report": html_report}
