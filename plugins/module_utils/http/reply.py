# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One reply as the transport read it (no Ansible imports): ``Reply``, what transport.Transport returns (the body
is read against a deadline by connections.Answer.chunks).

A ``Reply`` holds the status, headers, address and body as read, and reads its ``text`` and ``json()`` as
requests' ``Response`` does, from that body: the transport never writes a ``Response``'s private fields.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

try:
    from requests.compat import chardet
    from requests.utils import guess_json_utf
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    chardet = guess_json_utf = None


class Reply:
    """What was read of one reply: ``status_code``, ``headers``, ``url``, ``encoding`` (the charset of its
    Content-Type, as requests reads it; None when it names none), ``content`` (the body's bytes; None once a
    decoder dropped them, or when the body was decoded as it arrived), ``items`` (a device_list.ArrayReader that
    decoded the body as it arrived, else None), ``size`` (the body's bytes as read, decoded: what counts towards
    a list's max_list_mb), ``attempts`` (the requests sent for it, retries included) and ``refused`` (a write a rate
    limit refused with 503, the shared pause taken: the list decides whether to send it again)."""

    __slots__ = ("status_code", "headers", "url", "encoding", "content", "items", "size", "attempts", "refused")

    def __init__(self, response, content, items=None, size=None, attempts=1):
        self.status_code = response.status_code
        self.headers = response.headers
        self.url = response.url
        self.encoding = response.encoding
        self.content = content
        self.items = items
        self.size = len(content or b"") if size is None else size
        self.attempts = attempts
        self.refused = False

    @property
    def text(self):
        """The body as text, as requests' ``Response.text``: its charset, else the one detected."""
        if not self.content:
            return ""
        encoding = self.encoding
        if encoding is None:
            encoding = chardet.detect(self.content)["encoding"] if chardet is not None else "utf-8"
        try:
            return str(self.content, encoding or "utf-8", errors="replace")
        except (LookupError, TypeError):
            return str(self.content, errors="replace")

    def json(self):
        """The body's JSON, as requests' ``Response.json``: without a charset, in the UTF encoding its first bytes
        show (RFC 4627), else from ``text``. ValueError when it is not JSON."""
        content = self.content
        if not self.encoding and content and len(content) > 3:
            encoding = guess_json_utf(content)
            if encoding is not None:
                try:
                    return json.loads(content.decode(encoding))
                except UnicodeDecodeError:
                    pass  # not the UTF codec guessed (an 8-bit one): read from text, as requests does
        return json.loads(self.text)
