# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: csv_row
short_description: One line of a CSV report whose cells are server values, safe in every spreadsheet
version_added: 0.1.0
description:
  - Writes a list of values as one line of CSV (RFC 4180), without its line break.
  - A field that holds a comma, a double quote or a line break is quoted, its quotes doubled, so that every
    value reads back exactly with a CSV reader (Python's C(csv) module, a spreadsheet).
  - A field whose text starts with C(=), C(+), C(-), C(@), a tab or a carriage return (or the full-width
    C(＝) C(＋) C(－) C(＠)), which a spreadsheet would run as a formula, is written with a single quote
    C(') before it, as OWASP advises against CSV injection; so is a field that starts with C(') itself, and a
    field in which one of them follows leading whitespace of any kind (spaces, a line break, a no-break space,
    the ideographic space U+3000), which a spreadsheet may skip.
    A program that reads the report gets the value back by dropping the first character of every field
    that starts with C('). Numbers are written as they are (a number is never a formula).
  - Control characters are never written raw. A line break (LF or CR LF) is data, kept inside the quotes
    as RFC 4180 says; any other control character (C0 with the tab, DEL, C1, a carriage return without a
    line feed) and the invisible format characters (bidi controls, zero-width characters, the line and
    paragraph separators; those that the collection's messages escape too) are written as Python writes
    them in a string, for example C(\x1b) or C(\u202e). So a field never starts with a raw tab, nor with
    a carriage return other than that of a line break.
  - C(None) is an empty field. Used by the reports of the role P(netaccess.nac.device_onboarding#role) and
    of the playbook C(netaccess.nac.dot1x_report).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description: The values of the line, in the order of the columns.
    type: list
    elements: raw
    required: true
seealso:
  - plugin: netaccess.nac.md_row
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Write a CSV report of the 802.1x status query
  ansible.builtin.copy:
    dest: "{{ lookup('ansible.builtin.env', 'HOME') }}/status.csv"
    mode: "0600"
    content: |
      hostname,status,message
      {% for r in status.results %}
      {{ [r.hostname, r.status, r.message] | netaccess.nac.csv_row }}
      {% endfor %}
# The values =cmd|' /C calc'!A0, OK and   say "hi", then go   are written as the line
#   '=cmd|' /C calc'!A0,OK,"say ""hi"", then go"
"""

RETURN = r"""
_value:
  description: The line, without a line break.
  type: str
"""

from ansible_collections.netaccess.nac.plugins.plugin_utils.report_cells import csv_row


class FilterModule:
    def filters(self):
        return {"csv_row": csv_row}
