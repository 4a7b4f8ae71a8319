# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: md_row
short_description: One row of a Markdown table whose cells are server values, escaped
version_added: 0.1.0
description:
  - Writes a list of values as one row of a Markdown table, C(| a | b |), without its line break.
  - No value can add a row or a column, nor become markup or HTML. A line break (LF, CR LF or CR) becomes
    C(<br>); C(|), C(&), C(<) and C(>) become the entities C(&#124;), C(&amp;), C(&lt;) and C(&gt;); the
    characters of inline markup (backslash, backtick, C(*), C(_), C([), C(]), C(~), C($)) get a backslash, and
    so do the C(:) of C(://) and the C(.) of C(www.), so that no address becomes a link (an autolink of
    GitHub-flavoured Markdown). An e-mail address may still be shown as a C(mailto:) link by GitHub's renderer,
    which finds them in the text after escapes are read.
  - Control characters are never written raw. Any other control character (C0 with the tab, DEL, C1) and
    the invisible format characters (bidi controls, zero-width characters, the line and paragraph
    separators; those that the collection's messages escape too) are written as Python writes them in a
    string, for example C(\x1b) or C(\u202e).
  - C(None) is an empty cell. Used by the Markdown report of the role P(netaccess.nac.device_onboarding#role).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description: The values of the row, in the order of the columns.
    type: list
    elements: raw
    required: true
seealso:
  - plugin: netaccess.nac.csv_row
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Write a Markdown table of the 802.1x status query
  ansible.builtin.copy:
    dest: "{{ lookup('ansible.builtin.env', 'HOME') }}/status.md"
    mode: "0600"
    content: |
      | Hostname | Status | Message |
      |---|---|---|
      {% for r in status.results %}
      {{ [r.hostname, r.status, r.message] | netaccess.nac.md_row }}
      {% endfor %}
# ["cam|01", "OK", "line 1\nline 2 <b>"] is written | cam&#124;01 | OK | line 1<br>line 2 &lt;b&gt; |
"""

RETURN = r"""
_value:
  description: The row, without a line break.
  type: str
"""

from ansible_collections.netaccess.nac.plugins.plugin_utils.report_cells import md_row


class FilterModule:
    def filters(self):
        return {"md_row": md_row}
