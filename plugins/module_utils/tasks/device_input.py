# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Devices as an operator has them (no Ansible imports): a survey answer (YAML or JSON text), a CSV file with a
header row, or a YAML/JSON file, read into the list of device mappings that nac_device takes, and checked with
nac_device's own words (ensure_devices.item_problems and device_specs), so that the module and the role
device_onboarding say the same thing about the same mistake.

Every failure raises InvalidRequest with one line naming the variable or the file (and for a CSV file the line
and the column) and the shape expected.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
import json
import re

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown as quoted
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import hostname_problem, hostname_value
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    InvalidRequest,
    device_specs,
    item_problems,
    normalise_ip,
    normalise_mac,
)

try:
    import yaml
except ImportError:  # a target without PyYAML reads JSON text only
    yaml = None

# A MAC address of digits only (00:11:22:33:44:55) is read as text, not as YAML 1.1's base-60 number.
_MAC_TEXT = re.compile(r"^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$")
if yaml is not None:

    class _DeviceLoader(yaml.SafeLoader):
        """The safe loader, reading a MAC address as text."""

    _DeviceLoader.yaml_implicit_resolvers = dict(
        (first, [("tag:yaml.org,2002:str", _MAC_TEXT)] + list(resolvers))
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    )

DEVICE_KEYS = ("hostname", "group", "profile", "macs", "ips")
EXAMPLE = "[{hostname: cam-01, group: Cameras, profile: Camera, macs: ['00:1a:2b:3c:4d:5e']}]"
CSV_HEADER = "hostname,group,profile,macs,ips"
_SEPARATORS = re.compile(r"[\s;,]+")
FILE_BYTES = 64 * 1024 * 1024  # a device file larger than this is refused rather than read into memory


def parsed_text(text):
    """The value that YAML (or JSON, without PyYAML) text spells; raise ValueError with the parser's first line."""
    try:
        if yaml is not None:
            return yaml.load(text, Loader=_DeviceLoader)
        return json.loads(text)
    except Exception as error:  # yaml.YAMLError or ValueError: its first line says where
        first = str(error).strip().splitlines()
        raise ValueError(" ".join(line.strip() for line in first[:4]) or type(error).__name__) from None


def text_devices(value, name):
    """``value`` as a list: text (a survey answer, YAML or JSON) is parsed, a list is returned as it is, None
    and empty text are an empty list; anything else raises InvalidRequest naming ``name``."""
    if value is None:
        return []
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        if not value.strip():
            return []
        try:
            parsed = parsed_text(value.lstrip("\ufeff"))
        except ValueError as error:
            raise InvalidRequest(
                "%s is text that is neither YAML nor JSON (%s): give a list of devices, for example %s"
                % (name, quoted(str(error), 200), EXAMPLE)
            ) from None
        if parsed is None:
            return []
        if isinstance(parsed, list):
            return parsed
        raise InvalidRequest(
            "%s is %s, not a list of devices: give a list, for example %s" % (name, _what(parsed), EXAMPLE)
        )
    if isinstance(value, (list, tuple)):
        return list(value)
    raise InvalidRequest("%s is %s, not a list of devices: give a list, for example %s" % (name, _what(value), EXAMPLE))


def _what(value):
    if isinstance(value, str):
        return "the text '%s'" % quoted(value, 80)
    if isinstance(value, dict):
        return "one mapping (%s)" % quoted(json.dumps(value, default=str, sort_keys=True), 80)
    return "a %s (%s)" % (type(value).__name__, quoted(str(value), 80))


def checked_devices(items, name, keys=DEVICE_KEYS, labels=None):
    """The items as device mappings (values as nac_device's options read them), checked as nac_device checks its
    devices: raise InvalidRequest naming each bad item (``name[index]``, or its label) and what a device looks
    like."""
    problem = item_problems(items, list(keys), name=name, strict=True)
    if problem:
        raise InvalidRequest(problem)
    devices = [_device_values(item) for item in items]
    device_specs(devices, name=name, labels=labels)  # hostnames, MACs and IPs, and none requested twice
    return devices


def _device_values(item):
    """One mapping with its values as the module's options read them: a number as text, MACs and IPs as lists
    (text split on spaces, semicolons or commas)."""
    device = {}
    for key, value in item.items():
        if value is None or value == "":
            continue
        if key in ("macs", "ips"):
            if isinstance(value, str):
                value = [part for part in _SEPARATORS.split(value.strip()) if part]
            elif isinstance(value, (list, tuple)):
                value = [str(part) if isinstance(part, (int, float)) else part for part in value]
        elif key != "hostname" and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        device[key] = value
    return device


def file_devices(path, keys=DEVICE_KEYS, read=None):
    """The devices of the file ``path``: CSV (by its name, ``.csv``) or YAML/JSON; checked as ``checked_devices``
    does, a problem named by the file and, in a CSV file, its line and column."""
    try:
        data = read(path) if read else _read(path)
    except (IOError, OSError) as error:
        raise InvalidRequest("cannot read the devices file %s: %s" % (path, error.strerror or error)) from None
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data.lstrip("\ufeff")
    except UnicodeDecodeError as error:
        raise InvalidRequest(
            "the devices file %s is not UTF-8 text (at byte offset %d): save it as UTF-8 (CSV UTF-8 in a spreadsheet)"
            % (path, error.start)
        ) from None
    if str(path).lower().endswith((".csv", ".txt")):
        devices, labels = csv_devices(text, path, keys)
        return checked_devices(devices, path, keys, labels)
    try:
        parsed = parsed_text(text)
    except ValueError as error:
        raise InvalidRequest(
            "the devices file %s is neither YAML nor JSON: %s" % (path, quoted(str(error), 200))
        ) from None
    if isinstance(parsed, dict) and len(parsed) == 1 and isinstance(list(parsed.values())[0], list):
        parsed = list(parsed.values())[0]  # a variables file: {nac_devices: [...]}
    if parsed is None:
        return []
    if not isinstance(parsed, list):
        raise InvalidRequest(
            "the devices file %s holds %s, not a list of devices: write a list, for example %s"
            % (path, _what(parsed), EXAMPLE)
        )
    return checked_devices(parsed, path, keys)


def _read(path):
    with open(path, "rb") as handle:
        data = handle.read(FILE_BYTES + 1)
    if len(data) > FILE_BYTES:
        raise InvalidRequest("the devices file %s is larger than %d MiB" % (path, FILE_BYTES // 1048576))
    return data


def csv_devices(text, path, keys=DEVICE_KEYS):
    """``(devices, labels)`` of CSV text with a header row: one mapping per row that is not empty, cells trimmed,
    empty cells left out, and each row's label ``"<path> line <n>"``. Raise InvalidRequest naming the file, the
    line and the column of the first bad row."""
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
    header = None
    devices, labels = [], []
    try:
        for row in reader:
            cells = [cell.strip() for cell in row]
            if not any(cells):
                continue  # an empty line, or a row of empty cells
            if header is None:
                header = _csv_header(cells, path, reader.line_num, keys)
                continue
            where = "%s line %d" % (path, reader.line_num)
            devices.append(_csv_row(cells, header, where))
            labels.append(where)
    except csv.Error as error:
        raise InvalidRequest("%s line %d is not CSV: %s" % (path, reader.line_num, error)) from None
    if header is None:
        raise InvalidRequest(
            "the devices file %s is empty: it needs a header row (%s) and a row per device" % (path, CSV_HEADER)
        )
    return devices, labels


def _csv_header(cells, path, line, keys):
    header = [cell.lower() for cell in cells]
    for column, name in enumerate(header, 1):
        if name not in keys:
            hint = item_problems([{name: ""}], list(keys), name="x") or ""
            mean = re.search(r"\(did you mean [^)]*\)", hint)
            raise InvalidRequest(
                "%s line %d, column %d: '%s' is not a column of a devices file%s; the header row names the columns, "
                "for example %s%s"
                % (
                    path,
                    line,
                    column,
                    quoted(cells[column - 1], 80),
                    " " + mean.group(0) if mean else "",
                    CSV_HEADER,
                    ",expected_status" if "expected_status" in keys else "",
                )
            )
        if header.index(name) != column - 1:
            raise InvalidRequest("%s line %d: the column %s is named twice in the header row" % (path, line, name))
    if "hostname" not in header:
        raise InvalidRequest(
            "%s line %d: the header row has no hostname column; it names the columns, for example %s"
            % (path, line, CSV_HEADER)
        )
    return header


def _csv_row(cells, header, where):
    if len(cells) > len(header) and any(cells[len(header) :]):
        raise InvalidRequest(
            "%s, column %d: the row has %d cells but the header names %d columns (several MACs or IPs in one "
            "cell are separated by spaces or semicolons, or the cell is quoted)"
            % (where, len(header) + 1, len(cells), len(header))
        )
    device = dict((name, cell) for name, cell in zip(header, cells) if cell)
    for column, name in enumerate(header, 1):
        problem = _cell_problem(name, device.get(name))
        if problem:
            raise InvalidRequest("%s, column %d (%s): %s" % (where, column, name, problem))
    return _device_values(device)


def _cell_problem(name, cell):
    if name == "hostname":
        problem = hostname_problem(hostname_value(cell or ""))
        return "hostname %s" % problem if problem else None
    normalise = {"macs": normalise_mac, "ips": normalise_ip}.get(name)
    for value in _SEPARATORS.split(cell or "") if normalise else ():
        try:
            value and normalise(value)
        except ValueError as error:
            return str(error)
    return None
