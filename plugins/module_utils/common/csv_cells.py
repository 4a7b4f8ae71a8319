# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A server value as a CSV cell (RFC 4180, formulas neutralised, no raw control character; no Ansible imports):
the one rule of the CSV reports (plugin_utils/report_cells.py, the filter netaccess.nac.csv_row) and of
nac_device_info's CSV export (device_export.py), documented in the filter netaccess.nac.csv_row."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL, shown

# Never written raw in a report or an export: what the collection never shows raw in a message either
# (server_text.CONTROL: the C0 and C1 control characters, DEL, and the invisible format characters, bidi controls and
# line separators among them), each written as the messages write it (server_text.shown: \x1b, \t, \u202e).
# CSV: a line break (LF or CR LF) is data, kept inside the quotes (RFC 4180); any other such character is escaped.
CSV_CHARS = re.compile("(\r\n|\n)|(%s)" % CONTROL.pattern)
# A cell that a spreadsheet would read as a formula starts with one of these (OWASP, CSV injection; the full-width
# forms too); a cell starting with ' is marked as well, so that dropping one leading ' always gives the value back.
# A tab or a lone CR is escaped anyway: only the CR of a line break (CR LF) can still start a cell.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'", "\uff1d", "\uff0b", "\uff0d", "\uff20")
CSV_QUOTED = re.compile('[,"\r\n]')
# Whatever csv_cell changes or quotes (CONTROL includes CR, LF and tab): a text without any of it, that starts with
# neither whitespace nor a formula's first character, is its own cell (one search instead of the rule's steps).
CSV_TOUCHED = re.compile('[,"]|%s' % CONTROL.pattern)


def _text(value):
    """The text of a cell: '' for None (and Ansible's omitted values), numbers as they are written, bytes decoded
    (undecodable bytes replaced)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else str(value)


def csv_cell(value):
    """One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; ' before a formula."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # a number is never a formula, even a negative one
    text = value if isinstance(value, str) else _text(value)
    if not text or not (text[0].isspace() or text.startswith(FORMULA_STARTS) or CSV_TOUCHED.search(text)):
        return text
    text = CSV_CHARS.sub(lambda match: match.group(1) or shown(match.group(2)), text)
    if text.startswith(FORMULA_STARTS) or text.lstrip().startswith(FORMULA_STARTS):  # after any whitespace too
        text = "'" + text
    if CSV_QUOTED.search(text):
        text = '"%s"' % text.replace('"', '""')
    return text


def csv_row(values):
    """One line of CSV (without its line break) of ``values``."""
    return ",".join(csv_cell(value) for value in values)
