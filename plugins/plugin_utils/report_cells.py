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

from ansible_collections.netaccess.nac.plugins.module_utils.replies import CONTROL, shown

# Never written raw in a report: what the collection never shows raw in a message either (replies.CONTROL: the C0
# and C1 control characters, DEL, and the invisible format characters, bidi controls and line separators among
# them), each written as the messages write it (replies.shown: \x1b, \t, \u202e).
# CSV: a line break (LF or CR LF) is data, kept inside the quotes (RFC 4180); any other such character is escaped.
CSV_CHARS = re.compile("(\r\n|\n)|(%s)" % CONTROL.pattern)
# A cell that a spreadsheet would read as a formula starts with one of these (OWASP, CSV injection; the full-width
# forms too); a cell starting with ' is marked as well, so that dropping one leading ' always gives the value back.
# A tab or a lone CR is escaped anyway: only the CR of a line break (CR LF) can still start a cell.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'", "\uff1d", "\uff0b", "\uff0d", "\uff20")
CSV_QUOTED = re.compile('[,"\r\n]')
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


def csv_cell(value):
    """One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; ' before a formula."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return to_text(value)  # a number is never a formula, even a negative one
    text = CSV_CHARS.sub(lambda match: match.group(1) or shown(match.group(2)), _text(value))
    if text.startswith(FORMULA_STARTS) or text.lstrip().startswith(FORMULA_STARTS):  # after any whitespace too
        text = "'" + text
    if CSV_QUOTED.search(text):
        text = '"%s"' % text.replace('"', '""')
    return text


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


def csv_row(values):
    """One line of CSV (without its line break) of ``values``."""
    return ",".join(csv_cell(value) for value in values)


def md_row(values):
    """One row of a Markdown table (without its line break) of ``values``: | a | b |."""
    return "| %s |" % " | ".join(md_cell(value) for value in values)
