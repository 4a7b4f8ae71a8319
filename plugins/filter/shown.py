# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: shown
short_description: A server's text as a message shows it, its control characters escaped
version_added: 0.1.0
description:
  - Writes a server's text (a hostname, a status, a message) for a message, a warning or an assertion
    that people read in a terminal or a log, as the collection's modules write it in theirs.
  - Every control character (C0 with the line breaks and the tab, DEL, C1) and every invisible format
    character (bidi controls, zero-width characters, the line and paragraph separators) is written as
    Python writes it in a string, for example C(\x1b), C(\n) or C(\u202e); so no escape sequence reaches a
    terminal and no line break forges a line of output. Everything else is written as it is.
  - For text that people read only. Values that a task compares or stores stay as the server sent them.
  - C(None) gives an empty text. Used by the messages of the role P(netaccess.nac.device_onboarding#role).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description: The text.
    type: raw
    required: true
seealso:
  - plugin: netaccess.nac.csv_row
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Name the devices that are not authenticated
  ansible.builtin.debug:
    msg: "{{ item.hostname | netaccess.nac.shown }}: {{ item.status | netaccess.nac.shown }}"
  loop: "{{ status.results | rejectattr('status', 'eq', 'AUTHENTICATED') }}"
# A hostname "\x1b[2Jcam-01" is shown \x1b[2Jcam-01, as text: the terminal's screen is not cleared.
"""

RETURN = r"""
_value:
  description: The text, its control characters escaped.
  type: str
"""

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown


def shown_text(value):
    """``value`` as a message shows it (server_text.shown); '' for None."""
    return shown(value) or ""


class FilterModule:
    def filters(self):
        return {"shown": shown_text}
