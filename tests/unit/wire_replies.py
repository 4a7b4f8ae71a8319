# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the fake service's replies as a service writes them, and name what a script may give instead of a reply.

A reply is HTTP/1.1 bytes, its head and its body's pieces (``reply``), that wire_fakes.py writes onto the service's
end of a socket pair; a failure is what the system raises at the wire (a refused connection, a TLS handshake that
fails, a connection cut before the reply, a reply that never comes), so that the client types it itself.
"""

import errno
import http
import json
import socket
import ssl

from ansible_collections.netaccess.nac.plugins.module_utils.common import errors
from ansible_collections.netaccess.nac.plugins.module_utils.http import response

PIECE = 65536  # bytes the service writes at most at once (a body's piece; a request is sent in pieces as large)
NO_BODY = (204, 304)


class Request:
    """Keep one request as the service read it: ``method``, ``url``, ``path_url`` (the request line's target),
    ``headers`` (case-insensitive) and ``body`` (bytes, or None)."""

    __slots__ = ("method", "url", "path_url", "headers", "body")

    def __init__(self, method, url, path_url, headers, body):
        self.method, self.url, self.path_url, self.headers, self.body = method, url, path_url, headers, body


# -- what a script may give instead of a reply -------------------------------------------------------------------


class AtConnect:
    """Fail the connection before any byte of the request is written, with ``error`` as the system raises it; the
    wire types it (response.failure: ``sent`` False)."""

    def __init__(self, error):
        self.error = error


class Cut:
    """Close the connection once the request has come, before any byte of a reply (a reset, a restart)."""


class Silent:
    """Never answer: the reply's deadline passes (the wire raises socket.timeout, as at its deadline)."""


def refused() -> AtConnect:
    """Refuse the connection (ECONNREFUSED), as a service that is down does."""
    return AtConnect(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"))


def connect_timeout() -> AtConnect:
    """Let the connection time out before it is made."""
    return AtConnect(socket.timeout("timed out"))


def tls_rejected(reason: str) -> AtConnect:
    """Fail the TLS handshake's verification with OpenSSL's ``reason`` (a self-signed certificate, say)."""
    text = "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: %s (_ssl.c:1006)" % reason
    return AtConnect(ssl.SSLCertVerificationError(1, text))


def never_sent(error: object, cause: str = response.REFUSED, stage: object = None) -> errors.ExchangeError:
    """Return the ExchangeError the wire raises when no byte of the request was written (the connection never made),
    with the typed facts retry_policy.py reads; ``error`` gives its words (an exception or a text)."""
    if stage is None:
        stage = errors.PROXY if cause in (response.PROXY_AUTH, response.PROXY_REFUSED) else errors.CONNECT
    return errors.ExchangeError(str(error), stage, sent=False, cause=cause)


CUT, SILENT = Cut(), Silent()


# -- a reply as bytes ---------------------------------------------------------------------------------------------


class Canned:
    """Hold one reply as the service writes it: its head's bytes, then its body's pieces; ``total``, the bytes of the
    whole reply when its framing states them (None: the body ends when the connection closes)."""

    def __init__(self, head, pieces, total):
        self.head, self.pieces, self.total = head, pieces, total


def reply(status: int, body: object = None, headers: object = None, json_type: bool = True) -> "Canned":
    """Write a reply plainly, as a service would: ``body`` bytes as they are, a str in UTF-8, None empty, an iterator
    of bytes as it yields them (framed by the connection's end unless ``headers`` say chunked), anything else as
    JSON (with ``Content-Type: application/json`` when ``json_type`` and ``headers`` name none); ``headers`` a dict,
    or a list of (name, value) pairs (a name may repeat). A Content-Length is added for a body of known length."""
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or ())
    names = set(name.lower() for name, _value in pairs)
    streamed = hasattr(body, "__next__")
    if not streamed and not isinstance(body, (bytes, str, type(None))):
        body = json.dumps(body).encode("utf-8")
        if json_type and "content-type" not in names:
            pairs.insert(0, ("Content-Type", "application/json"))
    elif isinstance(body, str):
        body = body.encode("utf-8")
    chunked = "chunked" in ",".join(value.lower() for name, value in pairs if name.lower() == "transfer-encoding")
    sized = not streamed and not chunked and status not in NO_BODY and status >= 200
    if sized and "content-length" not in names:
        pairs.append(("Content-Length", str(len(body or b""))))
    head = _head(status, pairs)
    if streamed:  # (its length unknown: the connection's end, or the last chunk, ends it)
        return Canned(head, _pieces(body, chunked), None)
    if status in NO_BODY:
        return Canned(head, iter(()), len(head))
    body = body or b""
    return Canned(head, _pieces(body, chunked), len(head) + _framed(len(body), chunked))


def _head(status, pairs):
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = ["HTTP/1.1 %d %s" % (status, reason)] + ["%s: %s" % pair for pair in pairs]
    text = "\r\n".join(lines) + "\r\n\r\n"
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _framed(size, chunked):
    """Return the bytes a body of ``size`` bytes takes on the wire, in pieces of PIECE (and their chunks' framing)."""
    if not chunked:
        return size
    pieces = [PIECE] * (size // PIECE) + ([size % PIECE] if size % PIECE else [])
    return sum(len(b"%x\r\n\r\n" % piece) + piece for piece in pieces) + len(b"0\r\n\r\n")


def _pieces(body, chunked):
    """Yield the body's bytes in pieces of at most PIECE (each a chunk when ``chunked``, then the last chunk); a
    body of bytes is read in place (views of it), so that the service holds no copy of a large reply."""
    if isinstance(body, bytes):
        view = memoryview(body)
        source = (view[start : start + PIECE] for start in range(0, len(body), PIECE))
    else:
        source = body
    for piece in source:
        if piece:
            yield b"%x\r\n%s\r\n" % (len(piece), bytes(piece)) if chunked else piece
    if chunked:
        yield b"0\r\n\r\n"
