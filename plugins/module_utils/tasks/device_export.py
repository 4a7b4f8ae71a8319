# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device list written to a file (nac_device_info's ``dest``), no Ansible imports.

Every device is written as it is decoded, never held: a ``DeviceFile`` is where client.NacClient.list_devices puts
the records (``into``) instead of a list. Its decoder's ``keep`` (``line_keeper``) turns each record into a ``Line``
(its id, hostname and line of the file: a JSON object, or a CSV row whose cells are neutralised as the CSV reports'
are, csv_cells.csv_row), and the page being read (a ``PageSink``, the device_list.ArrayReader's items) writes each
Line to a temporary file beside ``dest`` (mode 0600) at once, keeping its id in an array (8 bytes a device of the
page). Once a page is read whole, the list's checks run on what is kept: its ids go into an ``IdSet`` (a bit a
device up to the largest id, in a bytearray), which finds repeated ids and, from page 2 on, the same record on two
pages (pagination.Shifts' check, read back from the file for the few ids it finds); the count headers are Shifts'
own. So the memory is the reader's buffer, one page's ids and the bitmap, not the list. The records of a page read
again (a retry, a body decoded whole) replace those written for it; a list that fails, or is not checked whole,
removes the temporary file and leaves ``dest`` as it was; a list read and checked whole takes the place of ``dest`` as
ansible.builtin.copy puts a file in place (dest_file.py: only when its content differs; nothing written beside
``dest`` in check mode).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import csv
import json
import os
from array import array

from ansible_collections.netaccess.nac.plugins.module_utils.common.csv_cells import csv_cell
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import (
    ArrayReader,
    Device,
    ListDecoder,
    decode_reply,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import HOSTNAME_MAX
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import SAME_RECORD, Page, Shifts
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dest_file import (
    StagedFile,
    put_in_place,
    temporary_file,
    unwritable,
)

try:
    from requests.utils import guess_json_utf
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    guess_json_utf = None

FORMATS = ("jsonl", "csv")
CSV_COLUMNS = ("id", "hostname", "group", "profile", "macs", "ips")
ENDINGS = {"jsonl": "\n", "csv": "\r\n"}
BITMAP_IDS = 1 << 27  # ids from 0 below this are a bit each (16 MiB at most); any other id is a set's member
BUFFER = 1 << 20  # bytes written at once


class Line(Device):
    """A listed device as its line of the file (``text``, without the line break), with its id and hostname."""

    __slots__ = ("text",)

    def __init__(self, ident, hostname, text):
        Device.__init__(self, ident, hostname)
        self.text = text


def _csv_value(value):
    """A field of the CSV: a list as its items joined by spaces, an object as its ``name`` (a group or a
    profile shown as an object) or else its JSON; anything else as it is."""
    if type(value) is str:  # pylint: disable=unidiomatic-typecheck
        return value  # (the usual cell, first)
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
        render = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # one encoder for every line

    else:

        def render(record):
            return ",".join([csv_cell(_csv_value(record.get(column))) for column in CSV_COLUMNS])  # (csv_row)

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


def id_keeper():
    """The ``keep`` of a JSON Lines DeviceFile that holds each device's id and hostname alone (a status query's
    targets, dot1x_targets.ListedTargets), as ``line_keeper`` keeps the records it makes Lines of."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def keep(item):
        if isinstance(item, dict):
            ident, hostname = item.get("id"), item.get("hostname")
            if isinstance(ident, int) and not isinstance(ident, bool) and isinstance(hostname, str):
                return Line(ident, hostname, encode(dict(id=ident, hostname=hostname)))
        return item

    return keep


class IdSet:
    """The ids of a list seen so far, compactly: a bit each for ids from 0 below BITMAP_IDS (a bytearray as long as
    the largest such id needs, grown by doubling: 125 KB for ids up to a million), a set for any other id."""

    def __init__(self):
        self.bits = bytearray()
        self.others = set()

    def add(self, ids):
        """Add ``ids``; the list of those seen before (in ``ids`` or earlier), in their order."""
        bits, others, seen = self.bits, self.others, []
        for ident in ids:
            if 0 <= ident < BITMAP_IDS:
                byte, mask = ident >> 3, 1 << (ident & 7)
                if byte >= len(bits):
                    bits.extend(bytes(min(max(byte + 1, 2 * len(bits)), BITMAP_IDS >> 3) - len(bits)))
                if bits[byte] & mask:
                    seen.append(ident)
                else:
                    bits[byte] |= mask
            elif ident in others:
                seen.append(ident)
            else:
                others.add(ident)
        return seen

    def size(self):
        """Its bytes: the bitmap's and the set's."""
        return len(self.bits) + (self.others.__sizeof__() + 32 * len(self.others) if self.others else 0)


class PageSink(Page):
    """The items of one page as the decoder takes them (device_list.ArrayReader's ``items``): each Line written to the
    file at once, its id kept (``ids``); any other item kept with its index in the list (``unusual``, for the
    client's shape checks), and so is a Line whose hostname is too long to be one. Its length is the page's."""

    def __init__(self, export):
        Page.__init__(self)
        self.export = export
        self.count = 0
        self.ids = array("q")
        self.large = []  # ids beyond the array's 64 bits
        self.unusual = []
        export.rewind()  # what an earlier reading of this page wrote goes

    def __len__(self):
        return self.count

    def append(self, item):
        export = self.export
        if type(item) is Line:  # pylint: disable=unidiomatic-typecheck
            try:
                export.write(item.text)
                export.write(export.ending)
            except OSError as error:  # (a full disk) raised as the list's failure, through the transport
                raise export.unwritable(error) from None
            try:
                self.ids.append(item.id)
            except OverflowError:
                self.large.append(item.id)
            if len(item.hostname) > HOSTNAME_MAX:
                self.unusual.append((len(export) + self.count, item))
        else:
            self.unusual.append((len(export) + self.count, item))
        self.count += 1

    def extend(self, items):
        for item in items:
            self.append(item)


class DeviceDecoder(ListDecoder):
    """How the pages of a DeviceFile are decoded: into a PageSink, as they arrive or from a whole body."""

    def __init__(self, export):
        ListDecoder.__init__(self, export.keep)
        self.export = export

    def reader(self, response):
        if guess_json_utf is None or not 200 <= response.status_code < 300:
            return None
        return ArrayReader(self.keep, response.encoding, PageSink(self.export))

    def decode(self, reply):
        value = decode_reply(reply, self.keep)
        if not isinstance(value, list):
            return value
        page = PageSink(self.export)
        page.extend(value)
        return page


class DeviceFile(StagedFile):
    """The device list written to ``dest`` in format ``form`` (FORMATS), as its pages are decoded: where
    client.NacClient.list_devices puts the records (``into``); a context manager, whose end without ``commit``
    removes the temporary file. NacConfigError naming ``dest`` when it cannot be written."""

    def __init__(self, dest, form, check_mode=False, keep=None):
        self.dest, self.form, self.check_mode = dest, form, check_mode
        self.ending = ENDINGS[form]
        self.keep = keep or line_keeper(form)
        self.decoder = DeviceDecoder(self)
        self.changed = False
        handle, self.temporary = temporary_file(dest, ".nac_devices.", check_mode)  # mode 0600
        self.stream = os.fdopen(handle, "w", encoding="utf-8", newline="", buffering=BUFFER)
        self.write = self.stream.write
        self.restart()

    def unwritable(self, error):
        """The NacConfigError of an OSError writing the file."""
        return unwritable(self.dest, error)

    # -- as listing.ListReader._read_pages takes the pages (pagination.Records' methods) ------------------------------

    def restart(self):
        """Drop what was read: the list is read again from its first page."""
        self.stream.seek(0)
        self.stream.truncate()
        if self.form == "csv":
            self.write(",".join(CSV_COLUMNS) + self.ending)
        self.committed = self.flushed()  # where the page being read starts
        self.count, self.ids, self.shifts = 0, IdSet(), Shifts("id")
        self.repeated, self.unusual = set(), []

    def flushed(self):
        """Where the file ends, all written to it (an OSError raised as ``unwritable``)."""
        try:
            self.stream.flush()
        except OSError as error:
            raise self.unwritable(error) from None
        return self.stream.tell()

    def rewind(self):
        """Back to the end of the pages taken (a page is being read, again or for the first time)."""
        if self.flushed() != self.committed:
            self.stream.seek(self.committed)
            self.stream.truncate()

    def __len__(self):
        return self.count

    def add(self, page, number, headers, last):
        """Take page ``number`` (a PageSink, its records written): what shows that the pages shifted, or None."""
        before = self.count
        self.committed = self.flushed()
        self.count += len(page)
        self.unusual.extend(page.unusual)
        again = self.ids.add(page.ids) + self.ids.add(page.large)
        page.ids = page.large = None
        self.repeated.update(again)
        if again and number > 1:
            shift = self._same_record(set(again), before, number)
            if shift:
                return shift
        return self.shifts.counted(headers, number, last, self.count)

    def result(self):
        return self

    def indexed(self):
        """(index, item) of the items that are not plain device records, for the client's shape checks."""
        return iter(self.unusual)

    # -- what is read back -------------------------------------------------------------------------------

    def _records(self):
        """(id, hostname) of each record written, in order, read back from the file (a CSV cell without the ' that
        neutralised it; control characters as the cell shows them)."""
        self.flushed()
        with open(self.temporary, encoding="utf-8", newline="") as handle:
            if self.form == "jsonl":
                for line in handle:
                    record = json.loads(line)
                    yield record["id"], record["hostname"]
            else:
                rows = csv.reader(handle)
                next(rows, None)  # the header
                for row in rows:
                    name = row[1]
                    yield int(row[0]), name[1:] if name.startswith("'") else name

    def _same_record(self, ids, before, number):
        """The phrase of pagination.Shifts when one of ``ids`` names the same record (id and hostname, as a compact
        list compares them) on an earlier page (the first ``before`` records) and on page ``number``; None."""
        earlier = collections.defaultdict(set)
        for index, (ident, hostname) in enumerate(self._records()):
            if ident not in ids:
                continue
            if index < before:
                earlier[ident].add(hostname)
            elif hostname in earlier[ident]:
                return SAME_RECORD % ("id", ident, hostname, number)
        return None

    def repeated_ids(self):
        """{id: [Device]} of the ids the list shows for more than one record (hostnames.repeated_ids)."""
        if not self.repeated:
            return collections.OrderedDict()
        found, repeated = collections.defaultdict(list), collections.OrderedDict()
        for ident, hostname in self._records():
            if ident in self.repeated:
                found[ident].append(Device(ident, hostname))
                if len(found[ident]) == 2:
                    repeated[ident] = found[ident]
        return repeated

    def commit(self):
        """Put the file written (synced first) in the place of ``dest`` as dest_file.put_in_place does (``changed``
        says whether ``dest`` changed, or would in check mode): the number of devices written."""
        try:
            self.stream.flush()
            if not self.check_mode:
                os.fsync(self.stream.fileno())
            self.stream.close()
        except OSError as error:
            raise self.unwritable(error) from None
        temporary, self.temporary = self.temporary, None
        self.changed = put_in_place(temporary, self.dest, self.check_mode)
        return self.count


def write_records(dest, form, records, check_mode=False):
    """Write ``records`` (whole, as listed: those a list read with a filter selected) to ``dest`` as a DeviceFile
    writes a list: (the number written, whether ``dest`` changed)."""
    with DeviceFile(dest, form, check_mode) as export:
        page = PageSink(export)
        page.extend(export.keep(record) for record in records)
        export.add(page, 1, {}, True)
        return export.commit(), export.changed


def write_file(dest, form, records):
    """``write_records``' number written."""
    return write_records(dest, form, records)[0]
