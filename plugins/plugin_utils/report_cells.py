# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server values as cells of the reports: CSV rows (RFC 4180, formulas neutralised) and Markdown table rows
(escaped, so that no value adds a row or a column). The rules are documented in the filters netaccess.nac.csv_row
and netaccess.nac.md_row and in the docs' "Reports" section."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.netaccess.nac.plugins.module_utils.common.csv_cells import csv_row
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL, shown

# CSV: module_utils/common/csv_cells.py (nac_device_info's CSV export writes its cells too).
# Markdown: a line break becomes <br>; the characters of HTML and of table cells become entities; those of inline
# markup (code, emphasis, links, strikethrough, maths) get a backslash.
# The characters of markup, and those that start an autolink of GitHub-flavoured Markdown: the ':' of '://' and the
# '.' of 'www.' (any case), which a backslash before them breaks (as cmark-gfm and markdown-it's linkify read it).
MD_CHARS = re.compile("(\r\n|\r|\n)|(%s)|([&<>|])|([\\\\`*_\\[\\]~$]|:(?=//)|(?<=[Ww][Ww][Ww])\\.)" % CONTROL.pattern)
MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;"}


def _text(value):
    """The text of a cell: '' for None (and Ansible's omitted values), numbers as they are written."""
    if value is None:
        return ""
    return to_text(value, errors="surrogate_or_replace")


def _md_char(match):
    breaks, hidden, entity, markup = match.groups()
    if breaks:
        return "<br>"
    if hidden:
        return shown(hidden)
    if entity:
        return MD_ENTITIES[entity]
    return "\\" + markup


def md_cell(value):
    """One cell of a Markdown table: nothing in it can end the cell or the row, nor become markup or HTML."""
    return MD_CHARS.sub(_md_char, _text(value))


__all__ = ["csv_row", "md_cell", "md_row"]  # csv_row: module_utils/common/csv_cells.py, read here by the filter csv_row


def md_row(values):
    """One row of a Markdown table (without its line break) of ``values``: | a | b |."""
    return "| %s |" % " | ".join(md_cell(value) for value in values)
