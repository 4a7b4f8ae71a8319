# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading replies for messages (no Ansible imports): decoding JSON, naming its type, quoting the
server's own words, and one-line excerpts of any text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import json
import re

EXCERPT_LEN = 160
REASON_LEN = 400
LARGE_BODY = 1024 * 1024  # bytes: decode_json pauses the garbage collector for a body this large


def excerpt(text, limit=EXCERPT_LEN):
    """One short line of a (possibly HTML) body, for messages.

    Linear in the length of the text, also for unclosed tags: a block ends its search at the next
    opening of the same tag, a tag at the next ``<``.
    """
    text = re.sub(r"(?is)<(head|script|style)\b(?:(?!<\1\b).)*?</\1>", " ", text or "")
    text = re.sub(r"<[^<>]+>", " ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def server_reason(response):
    """The server's own words: a JSON body's message/error/fields, else a text excerpt."""
    try:
        body = decode_json(response)
    except ValueError:
        return excerpt(response.text) or None
    return body_reason(body)


def body_reason(body):
    """The server's own words in a decoded JSON body: its message/error/fields, else an excerpt."""
    if isinstance(body, dict):
        parts = [str(body[k]) for k in ("error", "message", "detail") if body.get(k)]
        fields = body.get("fields") or body.get("errors")
        if isinstance(fields, dict):
            parts.append("; ".join("%s: %s" % (k, v) for k, v in sorted(fields.items())))
        elif isinstance(fields, list):
            parts.append("; ".join(str(v) for v in fields))
        if parts:
            return excerpt(" - ".join(parts), REASON_LEN)
    return excerpt(json.dumps(body), REASON_LEN)
