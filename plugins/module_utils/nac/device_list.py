# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device lists held compactly (no Ansible imports).

A caller that needs only the ``id`` and ``hostname`` of most devices (a status query by hostname, the
identity lookup of nac_device, a round of the event source) reads the list with a ``ListDecoder``: its
``keep`` turns each object of the reply's array into what is kept of it as soon as it is decoded
(``device_keeper``: a ``Device(id, hostname)``, about 150 bytes, instead of a dict of every field, about
1 KB). The decoder is an argument of the request (transport.Transport.exchange): the transport feeds a
successful GET's body to the decoder's ``ArrayReader`` as it arrives, so neither the reply's whole body
nor its whole text is held; a body decoded whole (``decode_reply``) drops its bytes once they are decoded
to text. Anything that is not a well-formed JSON array is decoded by server_text.decode_json, so its errors
read the same whichever way the list is decoded; an item without an integer id and a string hostname is
kept as it is, for the client's shape checks (listing.ListReader.records) to name it, and so is every item
kept whole, to the last nested object.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import codecs
import gc
import json
import re

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import LARGE_BODY, decode_json
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import HOSTNAME_MAX

try:
    from requests.utils import guess_json_utf
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    guess_json_utf = None

_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = frozenset("0123456789.eE+-")
_OPENING = 64  # how far into an item its first key is looked for (what opens every record)
HEAD = 65536  # a streamed reply's first characters, kept for messages (and its first bytes, for a fallback)


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


def device_keeper(keep_whole=None):
    """What a device list keeps of each item: a ``Device`` for each record with an integer id and a string
    hostname of at most HOSTNAME_MAX characters, except those ``keep_whole(record)`` is true of, kept whole (as
    is every other item, for the client's shape checks to name: a Device needs none)."""

    def keep(item):
        if isinstance(item, dict):
            ident, hostname = item.get("id"), item.get("hostname")
            named = isinstance(ident, int) and not isinstance(ident, bool) and isinstance(hostname, str)
            named = named and len(hostname) <= HOSTNAME_MAX
            if named and not (keep_whole is not None and keep_whole(item)):
                return Device(ident, hostname)
        return item

    return keep


class ListDecoder:
    """How the transport decodes a list's reply that keeps ``keep(item)`` of each item of its JSON array
    (transport.Transport.exchange's ``decoder``): as it arrives (``reader``), or from the whole body (``decode``)."""

    def __init__(self, keep):
        self.keep = keep

    def reader(self, response):
        """An ArrayReader to feed the body of ``response`` as it arrives, when it is a success; else None (the
        body is read whole)."""
        if guess_json_utf is None or not 200 <= response.status_code < 300:
            return None
        return ArrayReader(self.keep, response.encoding)

    def decode(self, reply):
        """The JSON of a reply read whole (decode_reply)."""
        return decode_reply(reply, self.keep)


def decode_reply(reply, keep):
    """The JSON of a successful reply's body (a transport's ``Reply``): as server_text.decode_json, but a JSON array
    holds ``keep(item)`` of each item, and the reply's bytes are dropped once decoded to text."""
    content = reply.content
    start = _SPACE.match(content[:64].decode("latin-1")).end()
    encoding = None
    if guess_json_utf is not None and content[start : start + 1] == b"[":
        encoding = reply.encoding or guess_json_utf(content)
    if encoding is None:
        return _whole(reply, keep)
    try:
        text = content.decode(encoding)  # as requests' .json() decodes it, strictly
    except (UnicodeDecodeError, LookupError):
        return _whole(reply, keep)
    del content
    reply.content = None  # the bytes go: only the text is read from here on
    paused = len(text) >= LARGE_BODY and gc.isenabled()
    if paused:
        gc.disable()  # decoding makes no reference cycles (see server_text.decode_json)
    try:
        # Each object is kept as soon as it is decoded, so no record is held whole for long; an object
        # within an item is passed to ``keep`` too, which is right only where its item becomes a Device itself.
        items = json.loads(text, object_hook=keep)
        if all(isinstance(item, Device) or not _holds_device(item) for item in items):
            return items
    except (ValueError, RecursionError):
        pass  # not JSON: server_text.decode_json decodes it again, for the error it reports
    finally:
        if paused:
            gc.enable()
    items = None
    reply.content = text.encode(encoding)
    del text
    return _whole(reply, keep)


def _holds_device(value):
    """Whether a Device is anywhere within ``value`` (an item kept whole, where nothing may be kept compactly)."""
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


def _whole(reply, keep):
    """The reply decoded whole (server_text.decode_json), a JSON array's items then each as ``keep(item)``."""
    value = decode_json(reply)
    return [keep(item) for item in value] if isinstance(value, list) else value


class ArrayReader:
    """A JSON array reply decoded as it arrives, each item held as ``keep(item)`` at once: neither the whole body
    nor its whole text is ever held (decode_reply holds both, one after the other).

    ``feed`` each chunk of the body, then ``finish``: each returns the bytes that the body is to be read from
    whole (none while the reply is read here). What is not read here is read whole, by the transport: a body that
    does not begin with ``[`` (decided on its first characters), an encoding requests would not decode as it
    is, and any body of at most HEAD bytes that is not a well-formed array (so that it fails or succeeds
    exactly as when read whole). A larger body that fails here is not held: ``result()`` raises ValueError,
    and ``head`` (its first HEAD characters) is what a message quotes.

    The text is decoded incrementally (``codecs``), as requests' ``.json()`` decodes it: the charset of the
    Content-Type (``response.encoding``, its errors replaced as in ``.text``), else the encoding guessed from
    the first bytes (``guess_json_utf``, strictly). Each item is taken from a rolling buffer with ``raw_decode``
    and its text dropped. An item cut off by the end of a chunk fails to decode and is tried again only once
    the text from its start has doubled (or the body has ended), so the work stays linear in the body's size
    even for one huge item. The items are those of decode_reply: ``keep`` applied to every object as it is
    decoded, and an item that is not kept compactly itself but holds a compact object decoded again without it."""

    def __init__(self, keep, encoding, items=None):
        self.keep = keep
        self.items = [] if items is None else items  # (or what takes them as they come: device_export.PageSink)
        self.head = ""
        self.streaming = None  # None until decided, then True (read here) or False (read whole)
        self.failed = False
        self._encoding, self._errors = (encoding, "replace") if encoding else (None, "strict")
        self._decoder = None
        self._hooked = json.JSONDecoder(object_hook=keep)
        self._raw, self._size = [], 0  # the bytes as read, while they are few (or not yet decided on)
        self._pieces, self._length = [], 0  # the text not yet taken
        self._retry_at = 0  # the length of the text not yet taken at which to decode again
        self._open = False  # whether the array's '[' has been taken
        self._after = False  # whether an item was taken last (a ',' or ']' comes next)
        self._done = False  # whether the array's ']' has been taken

    def feed(self, chunk, final=False):
        """Take one chunk of the body (``final``: the body has ended); the bytes to read whole."""
        if self.streaming is False:
            return chunk
        if self.failed:
            return b""
        if self._raw is not None:
            self._raw.append(chunk)
            self._size += len(chunk)
        try:
            text = self._decode(chunk, final)
        except (UnicodeDecodeError, LookupError, ValueError):
            return self._fail(decided=self.streaming)
        if text:
            if len(self.head) < HEAD:
                self.head += text[: HEAD - len(self.head)]
            self._pieces.append(text)
            self._length += len(text)
        if self.streaming is None:
            start = _SPACE.match(self.head).end()
            if start < len(self.head):
                self.streaming = self.head[start] == "["
            elif final:
                self.streaming = False
            if self.streaming is False:
                return self._fallback()
            if self.streaming is None:
                return b""
        if self._raw is not None and self._size > HEAD:
            self._raw = None
        if final or self._length >= self._retry_at:
            paused = gc.isenabled()
            if paused:
                gc.disable()  # decoding makes no reference cycles (see server_text.decode_json)
            try:
                self._take(final)
            finally:
                if paused:
                    gc.enable()
        return self._fail(decided=True) if self.failed else b""

    def finish(self):
        """The body has ended: the bytes to read whole (those held while undecided, or of a small body
        that failed here)."""
        return self.feed(b"", final=True)

    def result(self):
        """The items of the array (after ``finish``, when ``streaming``); ValueError when it failed."""
        if self.failed:
            raise ValueError("not a JSON array")
        return self.items

    def _decode(self, chunk, final):
        if self._decoder is None:
            if self._encoding is None:
                if self._size < 4 and not final:
                    return ""
                self._encoding = guess_json_utf(b"".join(self._raw)) if self._size > 3 else None
                if self._encoding is None:
                    raise LookupError("no encoding")  # read whole (requests guesses it from the text)
            self._decoder = codecs.getincrementaldecoder(self._encoding)(self._errors)
            chunk = b"".join(self._raw)
        return self._decoder.decode(chunk, final)

    def _fail(self, decided):
        """A body not read here: read whole where its bytes are all held, else a failure."""
        if not decided or self._raw is not None:
            return self._fallback()
        self.failed = True
        self.items, self._pieces, self._length = [], [], 0
        return b""

    def _fallback(self):
        self.streaming, self.failed = False, False
        raw, self._raw, self.items, self._pieces, self.head = self._raw or [], None, [], [], ""
        return b"".join(raw)

    def _take(self, final):
        """Take every whole item from the text not yet taken, and drop its text."""
        text = "".join(self._pieces)
        pos, end, run = 0, len(text), True
        self._retry_at = 0
        while not self.failed:
            pos = _SPACE.match(text, pos).end()
            if pos == end:
                self.failed = final and not self._done
                break
            char = text[pos]
            if self._done or not self._open:
                self.failed = self._done  # text after the array (the first character is its '[')
                self._open, pos = True, pos + 1
            elif char == "]" and (self._after or not self.items):
                self._done, pos = True, pos + 1
            elif self._after:
                self.failed = char != ","
                self._after, pos = False, pos + 1
            else:
                taken = self._run(text, pos) if run else None
                run = False
                taken = taken or self._item(text, pos, final)
                if taken is None:  # cut off by the end of the text so far
                    self.failed, self._retry_at = final, 2 * (end - pos)
                    break
                pos, self._after = taken, True
        text = text[pos:] if pos else text
        self._pieces, self._length = [text] if text else [], len(text)

    def _run(self, text, pos):
        """Take the items from ``pos`` to the last place in the text where one record ends and the next begins, at
        once: in one decoding of that run as an array, which succeeds only where an item does end there (an
        unclosed string, object or array within the run leaves the ``]`` added to it unmatched). Where it ends;
        None where it does not (items go one by one)."""
        for last in self._ends(text, pos):
            try:
                values = self._hooked.decode("[" + text[pos : last + 1] + "]")
            except (ValueError, RecursionError):
                continue  # not an item's end (a record's own list of objects): the one before is tried
            if not all(isinstance(value, Device) or not _holds_device(value) for value in values):
                return None  # an item that holds a compact object: taken again one by one
            self.items.extend(values)
            return last + 1
        return None

    @staticmethod
    def _ends(text, pos, tries=3):
        """Up to ``tries`` places, last first, where an item may end: a ``}`` followed by a ``,`` and the opening
        of an object as the item at ``pos`` opens (``{"id":``: a server writes every record alike), so that
        an object within a record, cut off by the end of the text, is no candidate. Where the item at ``pos``
        is no object, or no such opening follows it, the text's last ``}``."""
        opening = None
        if text.startswith("{", pos):
            colon = text.find(":", pos, pos + _OPENING)
            opening = text[pos : colon + 1] if colon > 0 else "{"
        found, at = 0, len(text)
        while opening is not None and found < tries:
            at = text.rfind(opening, pos + 1, at)
            if at < 0:
                break
            end = at - 1
            while text[end] in " \t\n\r":
                end -= 1
            if text[end] == ",":
                end -= 1
                while text[end] in " \t\n\r":
                    end -= 1
                if text[end] == "}" and end > pos:
                    found += 1
                    yield end
        if not found:
            last = text.rfind("}", pos)
            if last > pos:
                yield last

    def _item(self, text, pos, final):
        """Take the item at ``pos``: where it ends, or None when it may be cut off (``failed`` when it is bad)."""
        try:
            value, end = self._hooked.raw_decode(text, pos)
        except RecursionError:
            self.failed = True  # nested too deeply: more text does not change that
            return len(text)
        except ValueError:
            return None
        if not final and (end == len(text) or text[end] in _NUMBER) and text[end - 1] in _NUMBER:
            return None  # a number may go on in the next chunk ("-6" of "-6.5e-1")
        if not isinstance(value, Device) and _holds_device(value):
            value = self.keep(json.JSONDecoder().raw_decode(text, pos)[0])
        self.items.append(value)
        return end
