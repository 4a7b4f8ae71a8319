# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check and normalise the records a task is asked to ensure, field by field as their resource declares them
(nac/resources.py), before anything is sent: one message names every problem. Also say how a listed record
visibly differs from the one asked for.

ensure_devices.py and device_input.py use these checks; a next resource declares its fields and gets them.
"""

import difflib
import re
from typing import List, Optional, Sequence, Tuple

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown as quoted
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    hostname_key,
    hostname_problem,
    hostname_value,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.resources import DEVICE, NAME, TEXT, VALUES, Resource


class InvalidRequest(ValueError):
    """The requested devices cannot be sent as they are; the message lists every problem."""


def device_spec(item: dict, resource: Resource = DEVICE) -> Tuple[dict, List[str]]:
    """Check and normalise one requested record: return ``(spec, problems)``.

    ``spec`` has the name, and each other declared field only when given (an empty list counts as not given:
    for a device, the absence of macs / ips selects the server's creation rule).
    """
    problems, spec = [], {}
    for field in resource.fields:
        if field.kind == NAME:
            spec[field.name] = hostname_value(item.get(field.name))
            problem = hostname_problem(spec[field.name])
            if problem:
                problems.append("%s %s" % (field.name, problem))
        elif field.kind == TEXT and item.get(field.name) is not None:
            # needed only to create the record: checked once the list is known (ensure_devices._check_complete)
            if not isinstance(item[field.name], str) or not item[field.name].strip():
                problems.append("%s must not be empty" % field.name)
            spec[field.name] = item[field.name]
        elif field.kind == VALUES:
            values = _values(item.get(field.name), field, problems)
            if values:
                spec[field.name] = values
    return spec, problems


def _values(given, field, problems):
    """Normalise the values of one VALUES field, adding each problem (a bad value, one given twice) to ``problems``."""
    values = []
    for value in given or ():
        try:
            value = field.normalise(value)
        except ValueError as error:
            problems.append("%s: %s" % (field.name, error))
            continue
        if value in values:
            problems.append("%s: %s is given twice" % (field.name, value))
        values.append(value)
    return values


def item_problems(items: object, keys: Sequence[str], name: str = "devices", strict: bool = False) -> Optional[str]:
    """Say what is wrong with the items of the bulk option ``name`` as given (before Ansible reads them as mappings
    of ``keys``), naming each item by its index and what to write instead; None when nothing is (what Ansible reads
    as a mapping, a JSON or ``key=value`` string, passes unless ``strict``: then only a mapping is a device)."""
    if not isinstance(items, list):
        return None
    problems = []
    for index, item in enumerate(items):
        where = "%s[%d]" % (name, index)
        if isinstance(item, dict):
            problems.extend("%s %s" % (where, problem) for problem in _key_problems(item, keys))
        elif strict or not (isinstance(item, str) and (item.lstrip().startswith("{") or "=" in item)):
            problems.append("%s is %s, not a device" % (where, _described(item)))
    if not problems:
        return None
    example = "%s: [{hostname: cam-01, group: Cameras, profile: Camera}]" % name
    return "%s. Each item of %s is one device, a mapping with the keys %s (hostname required), for example: %s" % (
        "; ".join(problems),
        name,
        ", ".join(keys),
        example,
    )


def _key_problems(item, keys):
    """Name each key of one item that is not an option of an item (a misspelling, a YAML key without its space)."""
    problems = []
    for key in item:
        if key in keys:
            continue
        text = quoted(str(key))
        head, colon, tail = str(key).partition(":")
        if colon and head.strip() in keys and item[key] is None:
            problems.append(
                "has the key '%s', which YAML reads as one key because no space follows the colon: write '%s: %s'"
                % (text, head.strip(), quoted(tail.strip()))
            )
            continue
        close = difflib.get_close_matches(str(key), keys, 1)
        hint = " (did you mean %s?)" % close[0] if close else ""
        problems.append("has the key '%s', which is not an option of an item%s" % (text, hint))
    if "hostname" not in item and not problems:
        problems.append("has no hostname: each item needs one")
    return problems


def _described(item):
    """Describe an item that is no mapping, quoting a short excerpt of it."""
    if item is None:
        return "null"
    if isinstance(item, str):
        return "the string '%s'" % quoted(item, 80)
    return "a %s (%s)" % ("list" if isinstance(item, list) else type(item).__name__, quoted(str(item), 80))


def device_specs(
    items: Sequence[dict],
    name: Optional[str] = "devices",
    labels: Optional[Sequence[str]] = None,
    resource: Resource = DEVICE,
) -> List[dict]:
    """Validate every item before anything is sent; raise InvalidRequest listing all problems.

    A name (the same name: hostnames.hostname_key), or a value of a VALUES field (a MAC, an IP), requested for two
    items is a problem too: it could only ever create one of them. ``labels`` name the items instead of
    ``name[index]`` (a file's lines).
    """
    specs, problems, seen = [], [], {}
    name_field = resource.name_field
    for index, item in enumerate(items):
        spec, item_problems = device_spec(item, resource)
        where = labels[index] if labels else "%s[%d]" % (name, index) if name else ""
        if hostname_problem(spec[name_field]) is None:
            where = "%s (%s)" % (where, spec[name_field]) if where else spec[name_field]
            values = [(name_field, hostname_key(spec[name_field]), spec[name_field])]
            values += [
                (field.label, value, value)
                for field in resource.fields
                if field.kind == VALUES
                for value in spec.get(field.name, ())
            ]
            for label, key, value in values:
                first = seen.setdefault((label, key), where)
                if first != where:
                    item_problems.append("%s %s is also requested by %s" % (label, value, first))
        problems.extend("%s: %s" % (where, problem) if where else problem for problem in item_problems)
        specs.append(spec)
    if problems:
        raise InvalidRequest("Invalid %s request, nothing was sent: %s" % (resource.name, "; ".join(problems)))
    return specs


def differences(spec: dict, record, resource: Resource = DEVICE) -> List[str]:
    """Say how a listed record visibly differs from the request, as readable phrases.

    Only fields that the request gives and the record shows in a recognisable form are compared
    (the API promises nothing beyond id and hostname): TEXT fields exactly (a string, or an object's
    ``name``), VALUES fields normalised and as sets (a list, or a comma/space separated string).
    """
    found = []
    for field in resource.fields:
        key = field.name
        if field.kind == TEXT:
            shown = _shown_name(record.get(key))
            if key in spec and shown is not None and shown != spec[key]:
                found.append("%s is %s, not %s" % (key, quoted(shown), spec[key]))
        elif field.kind == VALUES:
            shown = _shown_values(record.get(key), field.normalise)
            if key in spec and shown is not None and set(shown) != set(spec[key]):
                found.append("%s are %s, not %s" % (key, quoted(", ".join(shown)) or "none", ", ".join(spec[key])))
    return found


def _shown_name(value):
    if isinstance(value, dict):
        value = value.get("name")
    return value.strip() if isinstance(value, str) else None


def _shown_values(value, normalise):
    if isinstance(value, str):
        value = re.split(r"[\s,;]+", value.strip()) if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    shown = []
    for item in value:
        try:
            shown.append(normalise(item))
        except ValueError:
            shown.append(item.strip().lower())
    return shown
