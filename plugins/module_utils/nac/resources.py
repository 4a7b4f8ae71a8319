# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Declare each resource of the NAC API in one place, so that the generic machinery reads it instead of
spreading its facts over the client, the plan and the apply engine.

A ``Resource`` says where its records are (the paths of its verbs), the fields a record has and how each is
checked, how a listed record is matched to a wanted one (its name, compared by the hostname rules of
hostnames.py), which verbs change the server and which are safe to repeat, and how an uncertain write of each
verb is decided from the list (``SHOWN``: the list shows the record; ``GONE``: its id is no longer listed).
``DEVICE`` is the device, the one resource the API documents today (the API guide, docs/docsite/rst/api.rst).

What reads a declaration: client.NacClient.list_records and NacClient.send (the requests), pagination.Records
(the list's pages), tasks/record_specs.py (the checks of a wanted record), tasks/ensure_devices.py (the plan and
the counts of a result), tasks/operations.py (the apply engine's operation of each verb). A next verb or a next
resource is a row here and a module (docs/docsite/rst/developing.rst, "Adding a verb or a resource").
"""

import collections
import ipaddress
import re
from typing import Callable, Dict, Optional, Sequence

from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import device_keeper
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import hostname_key

# How an uncertain write of a verb is decided from the list: the record is shown (a creation), or gone (a deletion).
SHOWN, GONE = "shown", "gone"
# The verbs of the generic machinery: reading the list, and the writes a plan may give an action.
LIST, CREATE, DELETE = "list", "create", "delete"

Verb = collections.namedtuple("Verb", "method path changes_server safe_to_repeat settles counted words")
Verb.__doc__ = """One request of a resource: its ``method`` and ``path`` (``{id}`` stands for the record's id), two
facts the transport needs (``changes_server``: refused by a read-only client, as in check mode; ``safe_to_repeat``:
sent again after any failure, not only one that provably reached nobody), how an uncertain write is decided from
the list (``settles``: SHOWN or GONE; None for a read), the key of a bulk result that counts the records it
changed (``counted``: ``created``; None for a read) and the apply engine's words for it (``words``: the fields of
apply.Wording as ``str.format`` templates; None for a read)."""

Wanted = collections.namedtuple("Wanted", "listed missing")
Wanted.__doc__ = """What a wanted state (``state: present``) asks of a record: the verb for a record that is listed
(``listed``; None: leave it) and for one that is not (``missing``; None: nothing to do)."""

Field = collections.namedtuple("Field", "name kind label normalise")
Field.__doc__ = """One field a wanted record may give: ``kind`` NAME (the record's identity), TEXT (a non-empty string)
or VALUES (a list, each value normalised by ``normalise``, which raises ValueError); ``label`` names its values in
messages (MAC), for a VALUES field."""
NAME, TEXT, VALUES = "name", "text", "values"

Listed = collections.namedtuple("Listed", "by_name by_id")
Listed.__doc__ = """One list read, indexed by the name key (``Resource.name_key``) and by id."""

_MAC = re.compile(
    r"^(?:[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){4}|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}"
    r"|[0-9a-f]{12})$",
    re.IGNORECASE,
)
_DOTTED_QUAD = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")


def normalise_mac(value: object) -> str:
    """Write a MAC address one way ('00-1A-2B-3C-4D-5E', '001a.2b3c.4d5e', '001A2B3C4D5E' -> '00:1a:2b:3c:4d:5e'),
    so that two spellings of one address compare equal."""
    text = value.strip() if isinstance(value, str) else ""
    if not _MAC.match(text):
        raise ValueError(
            "'%s' is not a MAC address (expected six colon-separated hex pairs such as 00:1a:2b:3c:4d:5e; "
            "00-1a-2b-3c-4d-5e, 001a.2b3c.4d5e and 001a2b3c4d5e are accepted too)" % (value,)
        )
    digits = re.sub(r"[^0-9a-f]", "", text.lower())
    return ":".join(digits[i : i + 2] for i in range(0, 12, 2))


def normalise_ip(value: object) -> str:
    """Accept an IPv4 address in dotted notation only (such as '10.20.0.15'), as the API takes it."""
    text = value.strip() if isinstance(value, str) else ""
    try:
        if _DOTTED_QUAD.match(text):
            return str(ipaddress.IPv4Address(text))
    except ValueError:
        pass
    raise ValueError("'%s' is not an IPv4 address in dotted notation (such as 10.20.0.15)" % (value,))


class Resource:
    """Hold the declaration of one resource of the API (see the module's docstring), and answer the few questions
    the generic machinery asks of it: a verb's request, a record's body and name, a list indexed for matching."""

    def __init__(
        self,
        name: str,
        noun: str,
        fields: Sequence[Field],
        verbs: Dict[str, Verb],
        states: Dict[str, Wanted],
        needed: Sequence[str] = (),
        keeper: Optional[Callable] = None,
    ):
        self.name, self.noun = name, noun  # "device", "devices": in messages
        self.fields = tuple(fields)
        self.name_field = next(field.name for field in self.fields if field.kind == NAME)
        self.verbs, self.states = dict(verbs), dict(states)
        self.needed = tuple(needed)  # the fields a creation needs beyond the name
        self.key = "id"  # the field of a record's integer id, which messages call its id (hostnames.py)
        self.keeper = keeper  # device_list.device_keeper's kind: what a compact list keeps of a record (None: all)

    def verb(self, name: str) -> Verb:
        """Return the verb ``name``; a verb the resource does not declare is a programming error, said plainly."""
        try:
            return self.verbs[name]
        except KeyError:
            known = sorted(self.verbs)
            raise ValueError("the %s resource declares no verb %r (it has %s)" % (self.name, name, known)) from None

    def path(self, verb: str, ident: Optional[int] = None) -> str:
        """Return the path of ``verb`` for the record ``ident``, which a path with ``{id}`` needs: without an integer
        id it is refused, never sent to a path naming no record."""
        path = self.verb(verb).path
        if "{id}" in path and (not isinstance(ident, int) or isinstance(ident, bool)):
            raise ValueError(
                "%s %s needs the integer id of a %s, not %r" % (self.verb(verb).method, path, self.name, ident)
            )
        return path.format(id=ident)

    def body(self, spec: dict) -> dict:
        """Return the body of a creation: the declared fields the wanted record gives, in declared order."""
        return dict((field.name, spec[field.name]) for field in self.fields if field.name in spec)

    def name_of(self, record) -> str:
        """Return a record's name, the field that identifies it to a person (a device's hostname)."""
        return record[self.name_field]

    @staticmethod
    def name_key(name: str) -> str:
        """Return what two names compare as: the same name when their keys are equal (hostnames.hostname_key)."""
        return hostname_key(name)

    def by_name(self, records) -> dict:
        """Index one list read by name key: {key: [records]} (the API does not promise unique names)."""
        index, field = {}, self.name_field
        for record in records:  # one tight pass: a list may hold hundreds of thousands of records
            index.setdefault(hostname_key(record[field]), []).append(record)
        return index

    def index(self, records) -> Listed:
        """Index one list read by name key and by id (the API promises neither unique: each maps to a list)."""
        by_id = {}
        for record in records:
            by_id.setdefault(record[self.key], []).append(record)
        return Listed(self.by_name(records), by_id)


# What the apply engine says of a device's creation (nac_device's messages), as apply.Wording's fields. An item's
# error never says the list "did not show" it while the list shows it: the engine reports what the last list shows.
DEVICE_CREATION_WORDS = dict(
    not_attempted="not attempted: {reason}",
    unproven="the first creation of this task, {name}{id}, was not confirmed by the device list (its entry says why), "
    "so no other device was sent: a list that hides or renames the devices it holds would have had each of them "
    "created again",
    stopped="{error}; the outcome is unknown: the device list did not show it during the settle window, and it "
    "was not sent again: {reason}",
    refused_access="a creation was refused for lack of access, so no other was sent ({error})",
    several_known="created {name} (id {id}), but the device list shows {count} devices named {name} (ids {ids}): "
    "another client created one too (the API cannot prevent it); remove the extra device in the NAC",
    several_unidentified="POST /api/device was answered as a success without a device id, and the device list shows "
    "{count} devices named {name} (ids {ids}): one of them was created by this task, which one is unknown (another "
    "client created the other); remove the extra device in the NAC",
    several_after_resends="the device list shows {count} devices named {name} (ids {ids}): the creation was sent "
    "{attempts} times because it was missing from the device list for a whole settle window of {window}, "
    "so an earlier attempt was probably committed later than that (or another client created "
    "one meanwhile); remove the extra device in the NAC",
    several="{error}; the device list, checked afterwards, shows {count} devices named {name} (ids {ids}): check "
    "them in the NAC",
    not_listed="created {name} (id {id} in the reply), but the device list read afterwards does not list it yet",
    unconfirmed="created {name} (id {id} in the reply), but the device list did not list id {id} during the settle "
    "window of {window} (its last read listed {listed} devices), so whether another device named {name} exists is "
    "unknown: the list is probably capped (it shows only its first devices, without a sign) or served by a read "
    "replica lagging more than {window} behind the writes. A next run that does not find {name} would create it "
    "again: check {name} in the NAC (a lagging list: raise settle_timeout)",
    unconfirmed_list_failed="created {name} (id {id} in the reply), but listing the devices to confirm it failed "
    "({list_error}): check {name} in the NAC",
    unidentified_not_shown="POST /api/device was answered as a success but without a device id{said}, and the device "
    "list did not show {name} during the settle window of {window}: whether it was created is "
    "unknown. Check the NAC; a later run looks for it before creating anything",
    unidentified_list_failed="created, but its id is unknown: the reply carried none and listing the devices failed "
    "({list_error})",
    unknown_list_failed="{error}; whether the device was created is unknown, and listing the devices to find out "
    "failed too ({list_error}). Check the NAC; a later run looks for {name} before creating "
    "anything",
    unknown_not_shown="{error}; the outcome is unknown: the device list did not show {name} during the settle window "
    "of {window} after {each_attempt}. Check the NAC; a later run looks for it before creating "
    "anything",
    final_list_failed="{name} was sent {attempts} times; listing the devices once more at the end, to find a "
    "duplicate, failed ({list_error}): check {name} in the NAC",
)

DEVICE = Resource(
    "device",
    "devices",
    fields=(
        Field("hostname", NAME, "hostname", None),
        Field("group", TEXT, "group", None),
        Field("profile", TEXT, "profile", None),
        Field("macs", VALUES, "MAC", normalise_mac),
        Field("ips", VALUES, "IP", normalise_ip),
    ),
    verbs={
        LIST: Verb("GET", "/api/device", False, True, None, None, None),
        # The API gives no read of one device: the list is the confirming read of every creation.
        CREATE: Verb("POST", "/api/device", True, False, SHOWN, "created", DEVICE_CREATION_WORDS),
    },
    states={"present": Wanted(listed=None, missing=CREATE)},
    needed=("group", "profile"),
    keeper=device_keeper,
)
