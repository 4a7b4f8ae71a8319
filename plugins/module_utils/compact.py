# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device lists held compactly (no Ansible imports).

A caller that needs only the ``id`` and ``hostname`` of most devices (a status query by hostname, the
identity lookup of nac_device, a round of the event source) reads the list in a ``keeping(form)``
context: ``form`` turns each object of the reply's array into what is kept of it as soon as it is
decoded (``device_form``: a ``Device(id, hostname)``, about 150 bytes, instead of a dict of every field,
about 1 KB), and the reply's bytes are dropped once they are decoded to text. Anything that is not a
well-formed JSON array is decoded as before (replies.decode_json), so errors read the same; an item
without an integer id and a string hostname is kept as it is, for the client's shape checks
(api.NacClient._records) to name it, and so is every item kept whole, to the last nested object.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import gc
import io
import json
import re
import threading

from ansible_collections.netaccess.nac.plugins.module_utils.replies import LARGE_BODY, decode_json

try:
    from requests.utils import guess_json_utf
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    guess_json_utf = None

_FORM = threading.local()  # the form of the list read by this thread, if any (``keeping``)
_SPACE = re.compile(r"[ \t\n\r]*")


class Device:
    """What a compact list keeps of a device record: its ``id`` and ``hostname``, read as a record's are
    (``device["id"]``, ``device.get("hostname")``)."""

    __slots__ = ("id", "hostname")

    def __init__(self, ident, hostname):
        self.id = ident
        self.hostname = hostname

    def __getitem__(self, key):
        if key == "id":
            return self.id
        if key == "hostname":
            return self.hostname
        raise KeyError(key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __repr__(self):
        return "Device(id=%r, hostname=%r)" % (self.id, self.hostname)


def device_form(whole=None):
    """The form of a device list's items: a ``Device`` for each record with an integer id and a string hostname,
    except those ``whole(record)`` is true of, kept whole (as is every other item)."""

    def form(item):
        if isinstance(item, dict):
            ident, hostname = item.get("id"), item.get("hostname")
            named = isinstance(ident, int) and not isinstance(ident, bool) and isinstance(hostname, str)
            if named and not (whole is not None and whole(item)):
                return Device(ident, hostname)
        return item

    return form


@contextlib.contextmanager
def keeping(form):
    """A context in which the JSON array replies this thread decodes (``decode_reply``) keep ``form(item)`` of
    each item."""
    previous = getattr(_FORM, "form", None)
    _FORM.form = form
    try:
        yield
    finally:
        _FORM.form = previous


def decode_reply(response):
    """The JSON of a successful reply's body: as replies.decode_json, but a JSON array read in a ``keeping``
    context holds the form of each item, and the reply's body is dropped once decoded to text."""
    form = getattr(_FORM, "form", None)
    if form is None:
        return decode_json(response)
    content = response.content
    start = _SPACE.match(content[:64].decode("latin-1")).end()
    encoding = None
    if guess_json_utf is not None and content[start : start + 1] == b"[":
        encoding = response.encoding or guess_json_utf(content)
    if encoding is None:
        return _whole(response, form)
    try:
        text = content.decode(encoding)  # as response.json() decodes it, strictly
    except (UnicodeDecodeError, LookupError):
        return _whole(response, form)
    del content
    response._content, response.raw = None, io.BytesIO()  # the bytes go: only the text is read from here on
    paused = len(text) >= LARGE_BODY and gc.isenabled()
    if paused:
        gc.disable()  # decoding makes no reference cycles (see replies.decode_json)
    try:
        # Each object is formed as soon as it is decoded, so no record is held whole for long; an object
        # within an item is formed too, which is right only where its item is formed into a Device itself.
        items = json.loads(text, object_hook=form)
        if all(isinstance(item, Device) or not _holds_device(item) for item in items):
            return items
    except (ValueError, RecursionError):
        pass  # not JSON: decoded as before, for its error
    finally:
        if paused:
            gc.enable()
    items = None
    response._content = text.encode(encoding)
    response.raw = io.BytesIO(response._content)
    del text
    return _whole(response, form)


def _holds_device(value):
    """Whether a Device is anywhere within ``value`` (an item kept whole, where nothing may be formed)."""
    pending = [value]
    while pending:
        value = pending.pop()
        if isinstance(value, Device):
            return True
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _whole(response, form):
    """The reply decoded whole (replies.decode_json), a JSON array's items then in their ``form``."""
    value = decode_json(response)
    return [form(item) for item in value] if isinstance(value, list) else value
