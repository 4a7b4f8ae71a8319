# -*- coding: utf-8 -*-
# Copyright: (c) 2026, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile framing of the NAC API emulator (README, "Hostile framing"): a sloppy or hostile server whose replies
to /api requests carry bytes meant to answer the next request on the connection (a forged second reply, a body
after the reply, a switch of protocols), framings a careless parser reads wrongly, or words that a careless client
reads as "never sent". Every request is processed as usual; only the bytes of its reply change. A client must end
each request with the right outcome, send each write once, and never take the forged reply's id (4242)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

from .common import parse_object, validation_error

FORGED_ID = 4242
FORGED = b'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"id": 4242}'
# mode: what is sent in place of an honest reply (its status line, its other header fields, its body)
FRAMINGS = (
    "none",  # honest replies
    "forged_reply",  # a second, forged reply in the same write as each reply
    "stray_crlf",  # one CRLF after each reply
    "interim_103",  # a 103 Early Hints before each reply
    "switch_101",  # the first reply to each request (method, path, body) after a 101 and with the forged reply after it
    "chunked_with_length",  # Transfer-Encoding: chunked and a Content-Length, then the forged reply
    "chunked_http10",  # an HTTP/1.0 reply that keeps the connection alive, chunked, then the forged reply
    "words_refused",  # each reply to a creation with "Connection refused" and "NameResolutionError" in its status line
)


class FramingMixin:
    """The framing mode of NacModel: ``framing_mode`` (set by --framing or POST /_emulator/framing) and
    ``framed(request, status_line, fields, body)``, the bytes of a reply to an /api request."""

    def _init_framing(self, mode):
        self.framing_mode = mode or "none"
        self._switched = set()  # the requests (method, path, body) answered after a 101 once
        self._framing_lock = threading.Lock()

    def framed(self, request, status_line, fields, body):
        """The bytes sent for a reply to ``request`` ((method, path, body)); ``status_line``: "HTTP/1.1 200 OK";
        ``fields``: its header lines."""
        mode, method, path = self.framing_mode, request[0], request[1]
        honest = self._head(status_line, fields + ["Content-Length: %d" % len(body)]) + body
        if mode == "forged_reply":
            return honest + FORGED
        if mode == "stray_crlf":
            return honest + b"\r\n"
        if mode == "interim_103":
            return b"HTTP/1.1 103 Early Hints\r\nLink: </api/intent>; rel=preload\r\n\r\n" + honest
        if mode == "switch_101":
            with self._framing_lock:
                first = request not in self._switched
                self._switched.add(request)
            return b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n" + honest + FORGED if first else honest
        if mode == "chunked_with_length":
            chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
            head = self._head(status_line, fields + ["Transfer-Encoding: chunked", "Content-Length: 0"])
            return head + chunked + FORGED
        if mode == "chunked_http10":
            chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
            line = status_line.replace("HTTP/1.1", "HTTP/1.0", 1)
            fields = [field for field in fields if field != "Connection: close"]
            head = self._head(line, fields + ["Transfer-Encoding: chunked", "Connection: keep-alive"])
            return head + chunked + FORGED
        if mode == "words_refused" and method == "POST" and path == "/api/device":
            line = status_line.split(" ", 1)[0] + " 2xx Connection refused NameResolutionError"
            return self._head(line, fields + ["Content-Length: %d" % len(body)]) + body
        return honest

    @staticmethod
    def _head(status_line, fields):
        return ("\r\n".join([status_line] + fields) + "\r\n\r\n").encode("latin-1")

    # ---- admin endpoint /_emulator/framing --------------------------------------------------

    def admin_framing(self, _body):
        return {"mode": self.framing_mode, "modes": list(FRAMINGS)}

    def admin_set_framing(self, body):
        mode = parse_object(body).get("mode")
        if mode not in FRAMINGS:
            raise validation_error({"mode": "must be one of %s" % ", ".join(FRAMINGS)})
        self.framing_mode = mode
        return self.admin_framing(None)
