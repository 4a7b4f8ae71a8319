# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostnames, the identity of a device (no Ansible imports): when two names are the same, which
requested names are usable, finding records in the device list by hostname or id, and what in a list
may be mistaken for a requested device (a lookalike name, a repeated id).

Two hostnames are the same name when their NFC forms are equal once ASCII letters are compared
without case (RFC 4343): canonically equivalent spellings (NFD ``café`` and NFC ``café``, the KELVIN
SIGN and ``K``) are one name, and ``CAM-01`` is ``cam-01``. Nothing looser: ``straße`` is not
``strasse`` (Unicode case folding), ``ｃａｍ`` is not ``cam`` (compatibility forms, NFKC), ``cam-01 `` is
not ``cam-01``. A listed name that equals a requested one only by such a looser rule is a *lookalike*:
never taken for the requested device, always named with its id (``lookalikes``). A listed name that is a
*probable stored form* of a requested one (its first DNS label, the name without or with a trailing dot:
``stored_forms``) is not the same name either: a NAC that shortens names shows it so. The policy: the
API guide, docs/docsite/rst/api.rst ("Hostnames: when two names are the same").
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import itertools
import operator
import unicodedata

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import excerpt

HOSTNAME_MAX = 253  # a DNS name's limit


ASCII_LOWER = dict((ord(upper), ord(upper.lower())) for upper in "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
NAMED_IDS = 10  # repeated ids named one by one in a warning
SEARCHED = 16  # requested names at most searched for in a list's names joined (by_hostname); more: name by name
# The looser rules a lookalike may match by, in the words of the messages: (name, transformation).
LOOSER_RULES = (
    ("surrounding whitespace", lambda name: name.strip()),
    ("Unicode compatibility forms, NFKC", lambda name: unicodedata.normalize("NFKC", name)),
    ("Unicode case folding", lambda name: name.casefold()),
)


def hostname_key(hostname):
    """The form in which two hostnames are the same name: NFC, ASCII letters in lower case (RFC 4343).

    Never ``casefold()`` nor NFKC: those would make ``straße-01`` the device ``strasse-01``."""
    if hostname.isascii():  # most names: NFC leaves them alone, and lower() only lowers A-Z
        return hostname.lower()
    return unicodedata.normalize("NFC", hostname).translate(ASCII_LOWER)


def loose_key(hostname):
    """The form in which two hostnames look alike: compatibility form, case folded, without surrounding
    whitespace. Only ever used to *name* lookalikes, never to match a device."""
    if hostname.isascii():
        return hostname.strip().lower()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", hostname.strip()).casefold())


def looser_rule(listed, requested):
    """The looser rule(s) by which ``listed`` matches ``requested``, e.g. "Unicode case folding"."""
    for size in range(1, len(LOOSER_RULES) + 1):
        for chosen in itertools.combinations(LOOSER_RULES, size):
            if _loosened(listed, chosen) == _loosened(requested, chosen):
                return " and ".join(name for name, _rule in chosen)
    return " and ".join(name for name, _rule in LOOSER_RULES)


def _loosened(name, rules):
    for _name, rule in rules:
        name = rule(name)
    return hostname_key(name)


def shown_name(hostname):
    """A hostname as a message shows it: quoted when whitespace or an invisible character would hide in it."""
    return hostname if hostname.isprintable() and hostname == hostname.strip() and hostname else repr(hostname)


def hostname_problem(value):
    """Why ``value`` cannot be a requested hostname, or None: one string (a whole number is read as one) of
    at most 253 characters, without whitespace or control characters."""
    if isinstance(value, (list, tuple, dict, set)):
        return "must be one name (a string), got a %s: %s" % (
            "mapping" if isinstance(value, dict) else "list",
            excerpt(repr(value), 80),
        )
    if not isinstance(value, str) or not value:
        return "is required" if value in (None, "") else "must be a name (a string), got %r" % (value,)
    if len(value) > HOSTNAME_MAX:
        return "has %d characters, more than the %d a hostname may have: %s" % (
            len(value),
            HOSTNAME_MAX,
            excerpt(value, 40),
        )
    if any(unicodedata.category(char)[0] in "CZ" for char in value):
        return "%r contains whitespace or a control character, which a hostname cannot have" % (value,)
    return None


def hostname_value(value):
    """A requested hostname as a string: whole numbers (YAML reads ``1234`` as one) become their digits."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def check_hostnames(hostnames, name="hostname"):
    """Raise NacConfigError naming every unusable hostname of a list option; return the names as strings."""
    names = [hostname_value(value) for value in hostnames]
    problems = [
        "%s[%d] %s" % (name, index, problem) for index, problem in enumerate(map(hostname_problem, names)) if problem
    ]
    if problems:
        raise NacConfigError("Invalid %s, nothing was sent: %s" % (name, "; ".join(problems)))
    return names


def index_by_hostname(records):
    """{hostname key: [records with that hostname]} (the API does not promise unique hostnames)."""
    index = {}
    for record in records:
        index.setdefault(hostname_key(record["hostname"]), []).append(record)
    return index


def is_one_of(hostnames=(), ids=(), loosely=False):
    """A predicate: whether a record is one of ``hostnames`` (the same name; with ``loosely``, also a lookalike)
    or ``ids``: the records a compact device list keeps whole (client.NacClient.list_devices' ``keep_whole``)."""
    key = loose_key if loosely else hostname_key
    names, ids = frozenset(key(name) for name in hostnames), frozenset(ids)
    return lambda record: record["id"] in ids or key(record["hostname"]) in names


def select(records, hostnames=None, ids=None):
    """Records matching any of ``hostnames`` (the same name: ``hostname_key``) or ``ids``; all when neither is given
    (None): an empty list is given, and matches nothing.

    Returns ``(selected, missing)``: the matching records in the server's order, and the requested
    hostnames and ids that matched nothing, in the order they were asked for.
    """
    if hostnames is None and ids is None:
        return list(records), []
    wanted_names = set(hostname_key(name) for name in hostnames or ())
    wanted_ids = set(ids or ())
    selected = [r for r in records if hostname_key(r["hostname"]) in wanted_names or r["id"] in wanted_ids]
    found_names = set(hostname_key(r["hostname"]) for r in selected)
    found_ids = set(r["id"] for r in selected)
    missing = [name for name in hostnames or () if hostname_key(name) not in found_names]
    missing += [ident for ident in ids or () if ident not in found_ids]
    return selected, missing


def by_hostname(records, hostnames, field: str = "hostname") -> dict:
    """Find {requested hostname: (records of the same name, records whose name only looks like it)} for each of
    ``hostnames``, in one pass over ``records``: a lookalike's name equals the requested one by a looser
    rule (``loose_key``), not as the same name (``hostname_key``; the same name always looks alike). ``field``: the
    records' field that holds the name (resources.Resource.name_field)."""
    found = collections.OrderedDict((name, ([], [])) for name in hostnames)
    wanted = {}
    for name in found:
        wanted.setdefault(loose_key(name), []).append((name, hostname_key(name)))
    if not wanted:
        return found
    names = column(records, field)
    for index in _candidates(names, wanted):
        record, hostname = records[index], names[index]
        for name, key in wanted.get(loose_key(hostname), ()):
            found[name][0 if hostname_key(hostname) == key else 1].append(record)
    return found


def _candidates(names, keys):
    """The indexes of ``names`` whose loose key may be one of ``keys``, in order: never fewer than those, maybe a few
    more (by_hostname checks each). With up to SEARCHED keys and names all ASCII without a line break (an ASCII
    name's loose key is its stripped, lowered form: within the name in lower case), each key is searched for in the
    names joined by line breaks in lower case, at C speed (a name's index: the line breaks before it); else every
    name's loose key is made."""
    if len(keys) <= SEARCHED and all(keys) and all(map(str.isascii, names)):
        text = "\n".join(names).lower()
        if text.count("\n") == len(names) - 1:
            found = set()
            for key in keys:
                index, last, at = 0, 0, text.find(key)
                while at >= 0:
                    index, last = index + text.count("\n", last, at), at
                    found.add(index)
                    at = text.find(key, at + 1)
            return sorted(found)
    return [index for index, key in enumerate(map(loose_key, names)) if key in keys]


def column(records, field):
    """The ``field`` ("id" or "hostname") of each record, in order: at C speed where every record is kept compactly
    (device_list.Device), else read as a record's (``record[field]``)."""
    try:
        return list(map(operator.attrgetter(field), records))
    except AttributeError:  # a record kept whole (a dict)
        return [record[field] for record in records]


def lookalikes(records, hostnames, field: str = "hostname") -> dict:
    """Find {requested hostname: [listed records whose name only looks like it]}, for the requested names that
    have lookalikes (``by_hostname``, the name in ``field``), in request order."""
    return collections.OrderedDict(
        (name, alike) for name, (_same, alike) in by_hostname(records, hostnames, field).items() if alike
    )


def stored_forms(hostname):
    """[(hostname key, how it relates to ``hostname``)] of the names a NAC that shortens names may have stored
    ``hostname`` under, other than the same name: the first DNS label of an FQDN (``cam-01`` for
    ``cam-01.example.com``), the name without its trailing dot, or with one. Case needs no form of its own:
    names differing only in ASCII case are the same name (``hostname_key``)."""
    bare = hostname[:-1] if hostname.endswith(".") else hostname
    shown = shown_name(hostname)
    forms = [(bare.split(".", 1)[0], "the first DNS label of %s" % shown)] if "." in bare.lstrip(".") else []
    if bare != hostname:
        forms.append((bare, "%s without its trailing dot" % shown))
    else:
        forms.append((hostname + ".", "%s with a trailing dot" % shown))
    same, found = hostname_key(hostname), []
    for form, relation in forms:
        key = hostname_key(form)
        if key != same and key not in (known for known, _relation in found):
            found.append((key, relation))
    return found


def stored_text(listed, field: str = "hostname") -> str:
    """Say in a message what the ``listed`` records are, each under a probable stored form of a requested name
    ((record, relation) pairs, ``stored_forms``; the name in ``field``), as in: cam-01 (id 7), the first DNS label
    of cam-01.example.com, is listed."""
    return "; ".join(
        "%s (id %s), %s, is listed" % (shown_name(record[field]), record["id"], relation) for record, relation in listed
    )


def lookalike_text(name: str, listed, field: str = "hostname") -> str:
    """Say in a message what the ``listed`` lookalikes are of the requested ``name`` (theirs in ``field``), each as in:
    strasse-01 (id 7) is listed, which matches straße-01 only when compared loosely (Unicode case folding)."""
    return "; ".join(
        "%s (id %s) is listed, which matches %s only when compared loosely (%s)"
        % (shown_name(record[field]), record["id"], shown_name(name), looser_rule(record[field], name))
        for record in listed
    )


def repeated_ids(records):
    """{id: [records]} of the ids that the list shows for more than one record, in list order."""
    if len(set(column(records, "id"))) == len(records):
        return collections.OrderedDict()  # the usual case, found fast
    seen, repeated = {}, collections.OrderedDict()
    for record in records:
        first = seen.setdefault(record["id"], record)
        if first is not record:
            repeated.setdefault(record["id"], [first]).append(record)
    return repeated


def repeated_ids_warning(repeated, limit=NAMED_IDS):
    """The warning naming the repeated ids (``repeated_ids``) and their hostnames, or None when there are none."""
    if not repeated:
        return None
    named = "; ".join(
        "id %s: %s" % (ident, ", ".join(shown_name(record["hostname"]) for record in shared))
        for ident, shared in itertools.islice(repeated.items(), limit)
    )
    if len(repeated) > limit:
        named += "; and %d more ids" % (len(repeated) - limit)
    return (
        "the device list (GET /api/device) shows the same id for several devices (%s): ids are meant to be unique, "
        "so whatever targets such an id (a status query) cannot tell those devices apart; check them in the NAC" % named
    )
