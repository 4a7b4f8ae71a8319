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
    The page shows the counts per status as a bar chart, what this run created, which devices did not reach
    their expected status and why, when and against which NAC, and every device in a table that sorts (a click
    on a column's title) and filters (words, a click on a bar of the chart, or only the devices not at their
    expected status) in the browser.
  - Self-contained, it loads nothing and sends nothing. Its Content-Security-Policy allows nothing but its own
    style and script (by their hashes), and the page is readable without its script.
  - Every value is text, never markup. Values come from the NAC, which may be hostile. They are
    HTML-escaped, braces included, so that no value can reach a template. Control characters,
    bidirectional overrides and other invisible characters are shown as C(\x1b), C(\u202e) and so on,
    and tabs and line breaks as spaces. The script only moves and hides rows, and never writes markup.
  - Used by the role P(netaccess.nac.device_onboarding#role) and the playbook C(netaccess.nac.dot1x_report).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description:
      - The devices, as RV(netaccess.nac.nac_dot1x_status#module:results) with the C(expected_status) of each.
      - A device is at its expected status when its C(status) equals C(expected_status) (ignoring case) and it
        has no C(error).
    type: list
    elements: dict
    required: true
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
"""

EXAMPLES = r"""
- name: Write the HTML report of a status query
  ansible.builtin.copy:
    content: >-
      {{ status.results | map('combine', {'expected_status': 'AUTHENTICATED'})
         | netaccess.nac.html_report(title='802.1x re-check', nac=lookup('ansible.builtin.env', 'NAC_API_URL')) }}
    dest: /var/tmp/nac/dot1x.html
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The HTML page (UTF-8 text), starting with C(<!DOCTYPE html>).
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import page


def html_report(results, title="802.1x status", nac="", created=None, existing=None, generated_at=None):
    """The page (see DOCUMENTATION; built by plugin_utils/html_report.py)."""
    try:
        return page(results, title=title, nac=nac, created=created, existing=existing, generated_at=generated_at)
    except ValueError as error:
        raise AnsibleFilterError("html_report: %s" % error) from None


class FilterModule:
    def filters(self):
        return {"html_report": html_report}
