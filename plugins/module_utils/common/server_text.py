# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading replies for messages (no Ansible imports): decoding JSON, naming its type, quoting the
server's own words, one-line excerpts of any text, and ``shown``: the one way a server's text is put
into a message, a warning, a ``failure`` field or a log line (its control characters escaped visibly).

Data stays exact: ``shown`` is for text read by people (a terminal, a log), never for the values a
result returns (``results[].hostname``, ``devices``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import json
import re

from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import CUT, mask

EXCERPT_LEN = 160
REASON_LEN = 400
LARGE_BODY = 1024 * 1024  # bytes: decode_json pauses the garbage collector for a body this large
# What ``shown`` escapes: every control character (C0, DEL, C1: ESC and the rest of ANSI's sequences, BEL,
# backspace, carriage return and line feed), the line and paragraph separators (U+2028, U+2029), the format
# characters (Unicode category Cf: bidirectional overrides that reorder what a terminal shows, zero-width
# characters that hide in a name) and lone surrogates (which a terminal cannot even encode). Every character of
# the Unicode categories Cc, Cf, Cs, Zl and Zp of Unicode 15.1; a unit test compares it with ``unicodedata``.
CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[nrt])")  # what ``shown`` writes
SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found):
    char = found.group(0)
    code = ord(char)
    short = SHORT_ESCAPES.get(char)
    if short:
        return short
    return "\\x%02x" % code if code < 0x100 else "\\u%04x" % code if code < 0x10000 else "\\U%08x" % code


def shown(text, limit=None):
    """A server's text as a message shows it: every character of CONTROL escaped as Python writes it
    (``\\x1b``, ``\\n``, ``\\u2028``), so that no escape sequence reaches a terminal and no line break
    forges a line of output or of a log; everything else as it is (a backslash too: the text stays readable).
    Shown twice, a text is as shown once. ``limit``: at most that many characters, ``...`` ending a text cut
    short, never within an escape. None stays None, and anything else is shown as its ``str``."""
    if text is None:
        return None
    text = text if isinstance(text, str) else str(text)
    if limit is not None and len(text) > limit:
        text = text[:limit]  # escaping only lengthens it: the first ``limit`` characters are all that can show
        cut = True
    else:
        cut = False
    if CONTROL.search(text):
        text = CONTROL.sub(_escape, text)
    if limit is None or (not cut and len(text) <= limit):
        return text
    end = limit - len(CUT)
    found = ESCAPE.search(text, max(0, end - 9), end + 9)
    while found and found.end() <= end:
        found = ESCAPE.search(text, found.end(), end + 9)
    if found and found.start() < end:
        end = found.start()  # never within an escape
    return text[:end] + CUT


def excerpt(text, limit=EXCERPT_LEN, secrets=()):
    """One short line of a (possibly HTML) body, for messages: its ``secrets`` (masking.hidden_forms) masked
    first, then its whitespace collapsed, then ``shown`` (at most ``limit`` characters), so that no cut or
    collapse ever shows a secret or a part of one.

    Linear in the length of the text, also for unclosed tags: a block ends its search at the next
    opening of the same tag, a tag at the next ``<``.
    """
    text = mask(text or "", secrets)
    text = re.sub(r"(?is)<(head|script|style)\b(?:(?!<\1\b).)*?</\1>", " ", text)
    text = re.sub(r"<[^<>]+>", " ", text)
    text = " ".join(text.split())
    return mask(shown(text, limit), secrets)


def decode_json(response):
    """The JSON of a reply body; ValueError also for JSON nested too deeply to decode.

    A large body (a device list) is decoded with the garbage collector paused: decoding makes no
    reference cycles, and a list of 200,000 devices is well over a million objects, each of which would
    otherwise count towards collections that scan the whole heap again and again."""
    paused = len(response.content) >= LARGE_BODY and gc.isenabled()
    if paused:
        gc.disable()
    try:
        return response.json()
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    finally:
        if paused:
            gc.enable()


JSON_TYPES = (
    (bool, "a boolean"),
    (dict, "an object"),
    (list, "an array"),
    (str, "a string"),
    ((int, float), "a number"),
)


def json_type(value):
    """The JSON name of a decoded value's type, for messages ('an object', 'null', ...)."""
    if value is None:
        return "null or an empty body"
    for kind, name in JSON_TYPES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def server_reason(response, secrets=()):
    """The server's own words: a JSON body's message/error/fields, else a text excerpt (``secrets`` masked first)."""
    try:
        body = decode_json(response)
    except ValueError:
        return excerpt(response.text, secrets=secrets) or None
    return body_reason(body, secrets)


def body_reason(body, secrets=()):
    """The server's own words in a decoded JSON body: its message/error/fields, else an excerpt (``secrets``
    masked before any cut)."""
    if isinstance(body, dict):
        parts = [str(body[k]) for k in ("error", "message", "detail") if body.get(k)]
        fields = body.get("fields") or body.get("errors")
        if isinstance(fields, dict):
            parts.append("; ".join("%s: %s" % (k, v) for k, v in sorted(fields.items())))
        elif isinstance(fields, list):
            parts.append("; ".join(str(v) for v in fields))
        if parts:
            return excerpt(" - ".join(parts), REASON_LEN, secrets)
    return excerpt(json.dumps(body), REASON_LEN, secrets)
