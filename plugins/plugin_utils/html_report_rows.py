# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn the NAC's results into the report's rows of visible text, so that no value of the NAC reaches the page raw.

Every value is the NAC's and may be hostile. In the markup it goes through ``text()`` (made visible, then
HTML-escaped with quotes and braces) and nowhere else; in the page's data (``data()``, a JSON block that is never
run) every non-ASCII character, ``<``, ``>``, ``&`` and the braces are \\u escapes.

A device's outcome: ``reached`` (its status is its expected status, ignoring case, and its query had no error),
``in progress`` (not yet, but its status is one of ``in_progress``: still under way, not a failure), or
``failed`` (anything else)."""

import datetime
import html
import json
from collections.abc import Mapping

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown

REACHED, IN_PROGRESS, FAILED = "reached", "in progress", "failed"
# The statuses that say "not yet": the authentication is under way. The API guide does not list the statuses
# (api.rst): these are the transient ones that NACs and the emulator use; the filter's in_progress replaces them.
IN_PROGRESS_STATUSES = ("CONNECTING", "AUTHENTICATING", "PENDING", "IN_PROGRESS")
# The table's columns: title, the key of a row, how its values sort. The last five only when some device has them.
COLUMNS = [
    ("Hostname", "hostname", "text"),
    ("Id", "id", "number"),
    ("Expected", "expected_status", "text"),
    ("Status", "status", "text"),
    ("Auth method", "auth_method", "text"),
    ("Username", "username", "text"),
    ("Message", "why", "text"),
    ("Group", "group", "text"),
    ("Profile", "profile", "text"),
    ("MACs", "macs", "text"),
    ("IPs", "ips", "text"),
    ("Since the last report", "change", "text"),
]
OPTIONAL = ("group", "profile", "macs", "ips", "change")
# What a device of ``devices`` given as a host's variables from the inventory has, each as nac_<name>.
HOST_VARIABLES = ("id", "hostname", "group", "profile", "macs", "ips")
MARKS = {
    REACHED: ("yes", "At its expected status", "\u2713"),
    IN_PROGRESS: ("wait", "In progress: not yet at its expected status", "\u2026"),
    FAILED: ("no", "Not at its expected status", "\u2717"),
}
SPACES = {9: " ", 10: " ", 13: " "}  # a tab or a line break in a cell is a space
DATA_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", ord("{"): "\\u007b", ord("}"): "\\u007d"}


def visible(value):
    """A value as plain text that shows every character: None is empty; tabs and line breaks become spaces;
    control, bidirectional, zero-width and other invisible characters become \\x1b, \\u202e and so on
    (server_text.shown, the collection's one way to show a server's text)."""
    value = "" if value is None else value if isinstance(value, str) else str(value)
    return shown(value.translate(SPACES))


def text(value):
    """``visible(value)`` as HTML text or attribute value: escaped, quotes and braces too."""
    return html.escape(visible(value), quote=True).replace("{", "&#123;").replace("}", "&#125;")


def data(value):
    """``value`` (lists and strings, no mapping) as JSON inside the page's data block: nothing in it can end the
    block, start markup or a template (every non-ASCII character and < > & { } escaped as \\u)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).translate(DATA_ESCAPES)


def _name(value):
    """A group or profile as the list shows it: a string, or the name of an object."""
    if isinstance(value, dict):
        value = value.get("name")
    return visible(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""


def _listed(value):
    """MAC or IP addresses as the list shows them: a list, joined."""
    if isinstance(value, (list, tuple)):
        return ", ".join(visible(item) for item in value)
    return visible(value) if isinstance(value, str) else ""


def key_of(identity, hostname):
    """What identifies a device from one report to the next: its id, else its hostname (ignoring case)."""
    if identity not in (None, ""):
        return "id:%s" % identity
    return "hostname:%s" % (hostname or "").lower()


def outcome_of(result, in_progress):
    status = "" if result.get("status") is None else str(result.get("status"))
    expected = "" if result.get("expected_status") is None else str(result.get("expected_status"))
    if result.get("error"):
        return FAILED
    if status.lower() == expected.lower():
        return REACHED
    return IN_PROGRESS if status.upper() in in_progress else FAILED


def _as_listed(record):
    """The listed record ``record`` is, or the one that a host's variables from the inventory give (``nac_id``...)."""
    if "id" in record or "nac_id" not in record:
        return record
    return dict((name, record["nac_" + name]) for name in HOST_VARIABLES if "nac_" + name in record)


def _devices_by_key(devices):
    """The listed records of ``devices`` by id and by lower-case hostname."""
    found = {}
    for number, record in enumerate(devices or [], 1):
        if not isinstance(record, Mapping):
            raise ValueError("devices: item %d is not a mapping: %s" % (number, visible(repr(record))[:80]))
        record = _as_listed(record)
        if record.get("id") not in (None, ""):
            found.setdefault(key_of(record.get("id"), None), record)
        if isinstance(record.get("hostname"), str):
            found.setdefault(key_of(None, record["hostname"]), record)
    return found


def rows_of(results, devices=None, in_progress=IN_PROGRESS_STATUSES):
    """The rows of the page: each result's columns as visible text, its key and its outcome (with the group,
    profile, MACs and IPs of its record in ``devices``, listed records, matched by id, else by hostname)."""
    listed = _devices_by_key(devices)
    waiting = set(str(status).upper() for status in in_progress or ())
    rows = []
    for number, result in enumerate(results, 1):
        if not isinstance(result, dict):
            raise ValueError("device %d is not a mapping: %s" % (number, visible(repr(result))[:80]))
        row = dict((key, visible(result.get(key))) for _title, key, _kind in COLUMNS[:6])
        row["why"] = visible(result.get("error") or result.get("message"))
        row["key"] = key_of(result.get("id"), result.get("hostname"))
        record = listed.get(row["key"]) or listed.get(key_of(None, result.get("hostname"))) or {}
        row.update(group=_name(record.get("group")), profile=_name(record.get("profile")))
        row.update(macs=_listed(record.get("macs")), ips=_listed(record.get("ips")), change="")
        row["outcome"] = outcome_of(result, waiting)
        rows.append(row)
    return rows


def now():
    """Return the time of day in UTC as the report prints it."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
