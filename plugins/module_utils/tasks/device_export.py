# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device list written to a file (nac_device_info's ``dest``), no Ansible imports.

The list is read with a device_list.ListDecoder whose ``keep`` turns each record, as soon as it is decoded, into a
``Line``: its id and hostname (what the list's checks read: shapes, pages, repeated ids, the hostname filter) and
the record's line of the file, already written as text (a JSON object, or a CSV row whose cells are neutralised
as the CSV reports' are, csv_cells.csv_row). So no record is held as a dict: about the bytes of the file, a sixth of
the records' memory. The file is written whole only once the whole list has been read and checked, to a
temporary file beside ``dest`` (mode 0600) that then replaces ``dest``: a list that fails leaves ``dest`` as it
was, never a part of a list.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile

from ansible_collections.netaccess.nac.plugins.module_utils.common.csv_cells import csv_row
from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import Device

FORMATS = ("jsonl", "csv")
CSV_COLUMNS = ("id", "hostname", "group", "profile", "macs", "ips")


class Line(Device):
    """A listed device as its line of the file (``text``, without the line break), with its id and hostname."""

    __slots__ = ("text",)

    def __init__(self, ident, hostname, text):
        Device.__init__(self, ident, hostname)
        self.text = text


def _csv_value(value):
    """A field of the CSV: a list as its items joined by spaces, an object as its ``name`` (a group or a
    profile shown as an object) or else its JSON; anything else as it is."""
    if isinstance(value, list):
        return " ".join(
            str(item) if item is None or isinstance(item, (str, int, float)) else json.dumps(item) for item in value
        )
    if isinstance(value, dict):
        name = value.get("name")
        return name if isinstance(name, str) else json.dumps(value, sort_keys=True)
    return value


def line_keeper(form):
    """The ``keep`` of a list read for a file of format ``form``: a Line for each record with an integer id and
    a string hostname (device_list.device_keeper's rule), any other item as it is (for the client's shape checks)."""
    if form == "jsonl":

        def render(record):
            return json.dumps(record, ensure_ascii=False, separators=(",", ":"))

    else:

        def render(record):
            return csv_row([_csv_value(record.get(column)) for column in CSV_COLUMNS])

    def keep(item):
        if isinstance(item, dict):
            ident, hostname = item.get("id"), item.get("hostname")
            if isinstance(ident, int) and not isinstance(ident, bool) and isinstance(hostname, str):
                try:
                    return Line(ident, hostname, render(item))
                except TypeError:  # it holds an object made a Line (a record within a record): decoded again
                    pass  # whole, without Lines, by the decoder (compact: an item that holds a compact object)
        return item

    return keep


def write_lines(dest, form, devices):
    """Write ``devices`` (Lines) to ``dest`` (a CSV header line first), through a temporary file of mode 0600
    beside it that then replaces it; the number of devices written. NacConfigError naming ``dest`` when its
    directory is missing or not writable."""
    directory = os.path.dirname(os.path.abspath(dest))
    if os.path.isdir(dest):
        raise NacConfigError("dest %s is a directory: it must be the path of a file" % dest)
    try:
        handle, temporary = tempfile.mkstemp(prefix=".nac_devices.", dir=directory)  # mode 0600
    except OSError as error:
        raise NacConfigError("dest %s cannot be written: %s" % (dest, error.strerror or error)) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            if form == "csv":
                stream.write(",".join(CSV_COLUMNS) + "\r\n")
            ending = "\r\n" if form == "csv" else "\n"
            for device in devices:
                stream.write(device.text)
                stream.write(ending)
        os.replace(temporary, dest)
    except OSError as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise NacConfigError("dest %s cannot be written: %s" % (dest, error.strerror or error)) from None
    return len(devices)
