# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The results of an 802.1x status query written to a file (nac_dot1x_status's ``dest``), no Ansible imports.

Each result entry is written as its line as soon as it is answered, in the targets' order, and not held: JSON Lines
(the entry as an object) or CSV (RESULT_COLUMNS, cells neutralised as the CSV reports' are, csv_cells.csv_cell), to
a temporary file (mode 0600, dest_file.temporary_file). An entry that a later round of a wait answers again replaces
its line (``rewrite``: the file is copied once, with those lines written anew), so only the entries still waited
for are held. ``commit`` puts the file in the place of ``dest`` as ansible.builtin.copy does (dest_file.put_in_place);
a query that fails before its end leaves ``dest`` as it was.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.netaccess.nac.plugins.module_utils.common.csv_cells import csv_cell
from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dest_file import (
    StagedFile,
    put_in_place,
    temporary_file,
    unwritable,
)

FORMATS = ("jsonl", "csv")
RESULT_COLUMNS = ("id", "hostname", "status", "auth_method", "username", "message", "error")
ENDINGS = {"jsonl": "\n", "csv": "\r\n"}
BUFFER = 1 << 20  # bytes written at once


def renderer(form):
    """The function that gives an entry's line (without its line break) in format ``form``."""
    if form == "jsonl":
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    return lambda entry: ",".join([csv_cell(entry.get(column)) for column in RESULT_COLUMNS])


class ResultFile(StagedFile):
    """The entries of a query written to ``dest`` in format ``form`` (FORMATS); a context manager, whose end without
    ``commit`` removes the temporary file. NacConfigError naming ``dest`` when it cannot be written."""

    def __init__(self, dest, form, check_mode=False):
        if form not in FORMATS:
            raise NacConfigError("format must be one of %s, got %s" % (", ".join(FORMATS), form))
        self.dest, self.form, self.check_mode = dest, form, check_mode
        self.render, self.ending = renderer(form), ENDINGS[form]
        self.changed, self.count, self.position = False, 0, 0
        handle, self.temporary = temporary_file(dest, ".nac_dot1x.", check_mode)
        self.stream = os.fdopen(handle, "wb", buffering=BUFFER)
        if form == "csv":
            self._put(",".join(RESULT_COLUMNS))

    def _put(self, text):
        data = (text + self.ending).encode("utf-8")
        try:
            self.stream.write(data)
        except OSError as error:  # (a full disk)
            raise unwritable(self.dest, error) from None
        start = self.position
        self.position += len(data)
        return start, self.position

    def write(self, entry):
        """Write ``entry``'s line: its (start, end) in the file, for ``rewrite``."""
        self.count += 1
        return self._put(self.render(entry))

    def rewrite(self, entries):
        """Write the file again with the line at each (start, end) of ``entries`` ({(start, end): entry}) replaced by
        that entry's line: once, through a second temporary file that then takes the first's place."""
        if not entries:
            return
        try:
            self.stream.flush()
            self.stream.close()
            handle, temporary = temporary_file(self.dest, ".nac_dot1x.", self.check_mode)
            with open(self.temporary, "rb") as source, os.fdopen(handle, "wb", buffering=BUFFER) as target:
                done = 0
                for start, end in sorted(entries):
                    _copy(source, target, start - done)
                    source.seek(end)
                    target.write((self.render(entries[(start, end)]) + self.ending).encode("utf-8"))
                    done = end
                _copy(source, target, None)
                self.position = target.tell()
            os.replace(temporary, self.temporary)
            self.stream = open(self.temporary, "ab", buffering=BUFFER)  # pylint: disable=consider-using-with
        except OSError as error:
            raise unwritable(self.dest, error) from None

    def commit(self):
        """Put the file written (synced first) in the place of ``dest`` (dest_file.put_in_place: ``changed`` says
        whether ``dest`` changed, or would in check mode): the number of entries written."""
        try:
            self.stream.flush()
            if not self.check_mode:
                os.fsync(self.stream.fileno())
            self.stream.close()
        except OSError as error:
            raise unwritable(self.dest, error) from None
        temporary, self.temporary = self.temporary, None
        self.changed = put_in_place(temporary, self.dest, self.check_mode)
        return self.count


def _copy(source, target, size, chunk=BUFFER):
    """Copy ``size`` bytes (all that is left when None) from ``source`` to ``target``."""
    while size is None or size > 0:
        data = source.read(chunk if size is None else min(chunk, size))
        if not data:
            return
        target.write(data)
        if size is not None:
            size -= len(data)
