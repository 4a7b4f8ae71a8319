# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every part of the NAC API emulator uses: replies and error replies, checks of JSON values, streamed
bodies."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math

JSON_TYPE = "application/json"
SERVER_ERROR_HTML = b"<html><head><title>Server error</title></head><body><h1>Server error</h1></body></html>"
STREAM_CHUNK = 65536


def json_reply(status, payload, headers=()):
    return (status, JSON_TYPE, json.dumps(payload).encode("utf-8"), tuple(headers))


class ApiError(Exception):
    """An error reply; raised anywhere in request handling."""

    def __init__(self, status, payload, content_type=JSON_TYPE, headers=()):
        super(ApiError, self).__init__(status)
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        self.reply = (status, content_type, body, tuple(headers))


def error(status, title, message, headers=()):
    return ApiError(status, {"error": title, "message": message}, headers=headers)


def validation_error(fields):
    return ApiError(400, {"error": "Validation failed", "fields": fields})


def server_error():
    return ApiError(500, SERVER_ERROR_HTML, content_type="text/html")


def not_allowed(method, path, allowed, message=None):
    """The 405 reply to ``method`` on ``path``, whose methods are ``allowed`` (in the order of its Allow)."""
    allow = ", ".join(allowed)
    return error(
        405, "Method not allowed", message or "%s is not allowed on %s" % (method, path), headers=[("Allow", allow)]
    )


def describe(problems):
    """{key: problem} as one line: "key problem; key problem", keys sorted."""
    return "; ".join("%s %s" % item for item in sorted(problems.items()))


class ProblemsError(ValueError):
    """Settings that are not usable; ``problems`` maps each bad key to what is wrong."""

    what = "settings"

    def __init__(self, problems):
        super(ProblemsError, self).__init__("%s: %s" % (self.what, describe(problems)))
        self.problems = problems


def parse_object(body):
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict):
        raise error(400, "Bad request", "The request body must be a JSON object")
    return data


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class Stream:
    """A reply body produced piece by piece (never held whole): ``segments`` are bytes, or (count, byte)
    for ``count`` repetitions of one byte. Sent with its Content-Length, or chunked."""

    def __init__(self, segments, chunked=False):
        self.segments = segments
        self.chunked = chunked
        self.length = sum(len(s) if isinstance(s, bytes) else s[0] for s in segments)

    def __len__(self):
        return self.length

    def pieces(self, size=STREAM_CHUNK):
        """The body in pieces of ``size`` bytes (the last may be shorter)."""
        buffer = bytearray()
        blocks = {}
        for segment in self.segments:
            if isinstance(segment, bytes):
                buffer += segment
                while len(buffer) >= size:
                    yield bytes(buffer[:size])
                    del buffer[:size]
                continue
            count, byte = segment
            block = blocks.setdefault(byte, byte * size)
            while count:
                take = min(count, size - len(buffer))
                buffer += block[:take]
                count -= take
                if len(buffer) >= size:
                    yield bytes(buffer)
                    buffer = bytearray()
        if buffer:
            yield bytes(buffer)

    def read(self):
        """The whole body (tests of small replies only)."""
        return b"".join(self.pieces())
