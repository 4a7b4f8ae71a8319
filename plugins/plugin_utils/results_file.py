# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The results that nac_dot1x_status wrote to its ``dest`` (JSON Lines or CSV, module_utils/tasks/dot1x_file.py),
read back one at a time for the HTML report (no Ansible imports), so that a report of a whole network never passes
through a registered variable.

A file is data, perhaps not the one the module wrote: every line is checked, and one that is not a result entry is
named (its line number and why) in a ValueError. The format is told by the first line: the CSV header of
dot1x_file.RESULT_COLUMNS, else JSON Lines. A CSV cell loses one leading ' (the mark of a neutralised formula, as
csv_cells.csv_cell adds it), and an empty cell reads as null."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
import json
import os
import stat

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_file import RESULT_COLUMNS

TEXT_KEYS = ("hostname", "status", "auth_method", "username", "message", "error")
LINE_LIMIT = 1 << 20  # bytes of one line: a result entry is far smaller; a longer line is not read whole


def read_results(path, expected_status):
    """The result entries of the file ``path``, each with ``expected_status``, as a list; ValueError naming the file
    and what is wrong with it."""
    given = "expects a list of devices or the path of a file of results (nac_dot1x_status's dest)"
    if not isinstance(path, str) or not path:
        raise ValueError(given)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ValueError("%s: %s is not a regular file" % (given, shown(path)))
    except OSError as error:
        raise ValueError("%s: %s cannot be read: %s" % (given, shown(path), error.strerror or error)) from None
    if not isinstance(expected_status, str) or not expected_status.strip():
        raise ValueError("expected_status (the status every device of the file %s should have) is required" % path)
    try:
        with io.open(path, encoding="utf-8", newline="") as handle:
            return [dict(entry, expected_status=expected_status) for entry in _entries(handle, path)]
    except OSError as error:
        raise ValueError("%s cannot be read: %s" % (path, error.strerror or error)) from None
    except UnicodeDecodeError as error:
        raise ValueError("%s is not UTF-8 text: %s" % (path, error)) from None


def _entries(handle, path):
    first = handle.readline(LINE_LIMIT)
    if first.rstrip("\r\n") == ",".join(RESULT_COLUMNS):
        for number, row in enumerate(csv.reader(_bounded(handle, path, 1)), 2):
            yield _checked(_from_row(row, path, number), path, number)
        return
    handle.seek(0)
    for number, line in enumerate(_bounded(handle, path, 0), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise ValueError("%s line %d is not JSON: %s" % (path, number, shown(line[:80]))) from None
        yield _checked(entry, path, number)


def _bounded(handle, path, before):
    """The lines of ``handle``, each at most LINE_LIMIT characters (ValueError naming the line)."""
    for number, line in enumerate(iter(lambda: handle.readline(LINE_LIMIT + 1), ""), before + 1):
        if len(line) > LINE_LIMIT:
            raise ValueError("%s line %d is longer than %d characters: not a result" % (path, number, LINE_LIMIT))
        yield line


def _from_row(row, path, number):
    if len(row) != len(RESULT_COLUMNS):
        raise ValueError(
            "%s row %d has %d cells, not the %d columns of the header" % (path, number, len(row), len(RESULT_COLUMNS))
        )
    entry = {}
    for column, cell in zip(RESULT_COLUMNS, row):
        if column == "id":
            entry["id"] = int(cell) if cell.lstrip("-").isdigit() else (None if cell == "" else cell)
        elif cell != "" or column != "error":
            entry[column] = None if cell == "" else (cell[1:] if cell.startswith("'") else cell)
    return entry


def _checked(entry, path, number):
    """``entry`` when it is a result entry (an object with an integer or null id and text or null values)."""
    if not isinstance(entry, dict):
        raise ValueError("%s line %d is not a result entry (an object)" % (path, number))
    ident = entry.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, int)):
        raise ValueError("%s line %d: id is not a whole number: %s" % (path, number, shown(str(ident)[:40])))
    for key in TEXT_KEYS:
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise ValueError("%s line %d: %s is not text" % (path, number, key))
    if not isinstance(entry.get("status"), str):
        raise ValueError("%s line %d has no status" % (path, number))
    return dict((key, entry.get(key)) for key in RESULT_COLUMNS if key != "error" or entry.get("error") is not None)
