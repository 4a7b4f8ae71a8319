# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One HTTP/1.1 reply read off a connection (no Ansible imports; RFC 9112): its status line and header fields,
its body framed by Content-Length, chunks or the connection's end, decoded (gzip, deflate) as it arrives and read
against a deadline; and the requests exception of a failed exchange, worded as urllib3 words it (``failure``),
which retries.py reads. wire.py sends the requests and owns the connections.

The header fields are read here rather than by http.client's parser (the email package), which cost a third of
the CPU of a request in the profile of a status batch (issue 26)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.client
import socket
import ssl
import zlib

try:
    import requests
    from requests.structures import CaseInsensitiveDict
    from requests.utils import get_encoding_from_headers
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    requests = None

READ_CHUNK = 65536
MAX_LINE = 65536  # the longest status line or header field read, as http.client bounds it
MAX_FIELDS = 100  # the most header fields of one reply, as http.client bounds them
DIGITS = "0123456789"  # (str.isdigit admits other scripts' digits: "²" is one)
HEX_DIGITS = b"0123456789abcdefABCDEF"


class Answer:
    """A reply whose status line and header fields have been read (RFC 9112): ``status_code``, ``headers``
    (case-insensitive; a field that came more than once joined with ", ", as urllib3 joins it), ``url``,
    ``encoding`` (the charset of its Content-Type, as requests reads it), ``set_cookies`` (each Set-Cookie field).
    Its body is read once, with ``chunks``; ``close`` drops the connection."""

    __slots__ = (
        "status_code",
        "headers",
        "url",
        "encoding",
        "set_cookies",
        "_wire",
        "_connection",
        "_chunked",
        "_left",
        "_keep",
    )

    def __init__(self, wire, connection, method, url):
        self._wire, self._connection, self.url = wire, connection, url
        fp = connection.fp
        while True:  # an interim reply (100 Continue, 103 Early Hints) is skipped
            line = fp.readline(MAX_LINE + 1)
            if not line:
                raise http.client.RemoteDisconnected("Remote end closed connection without response")
            parts = line.split(None, 2)
            status = parts[1] if len(parts) > 1 else b""
            if (
                len(line) > MAX_LINE
                or not parts[0].startswith(b"HTTP/1.")
                or len(status) != 3
                or status.strip(b"0123456789")
            ):
                raise http.client.BadStatusLine(repr(line[:80]))
            status = int(status)
            fields = _fields(fp)
            if not 100 <= status < 200 or status == 101:
                break
        self.status_code = status
        joined, cookies = {}, []
        for name, value in fields:
            key = name.lower()
            if key == "set-cookie":
                cookies.append(value)  # each field apart: a cookie's Expires holds a comma
            if key in joined:
                joined[key] = (joined[key][0], joined[key][1] + ", " + value)
            else:
                joined[key] = (name, value)
        headers = self.headers = CaseInsensitiveDict(joined.values())
        self.set_cookies = cookies
        self.encoding = get_encoding_from_headers(headers)
        tokens = (headers.get("Connection") or "").lower()
        keep = "keep-alive" in tokens if parts[0] == b"HTTP/1.0" else "close" not in tokens
        coding = (headers.get("Transfer-Encoding") or "").lower()
        self._chunked = coding.rsplit(",", 1)[-1].strip() == "chunked"
        self._left = None  # body bytes still to come (Content-Length); for a chunked body, of the current chunk
        if method == "HEAD" or status in (204, 304) or status < 200:
            self._chunked, self._left = False, 0
        elif coding and not self._chunked:
            keep = False  # a body framed by the end of the connection
        elif not self._chunked:
            self._left = _length(headers.get("Content-Length"))
            keep = keep and self._left is not None
        self._keep = keep

    def info(self):
        """The header fields as http.cookiejar reads a reply's (its Set-Cookie fields, each apart)."""
        return _CookieFields(self.set_cookies)

    def chunks(self, deadline, budget):
        """The body as it arrives, decoded (gzip, deflate), each read from the socket given only the time left until
        ``deadline`` (a ReadTimeout once it has passed: wire.Connection's reader). A decoded chunk is at most
        ``budget`` + 1 bytes, so that a compressed body that would decode past the caller's limit is never held
        whole. The connection goes back to the idle ones once the body has come whole, and is closed if the body is
        not read to its end."""
        decoder = _decoder(self.headers.get("Content-Encoding"))
        self._connection.raw.deadline, size = deadline, 0
        try:
            while True:
                if self._left == 0 and not self._chunked:  # the whole body has come: no read
                    break
                data = self._read1()
                if not data:
                    break
                if decoder is not None:
                    data = decoder.decompress(data, max(budget - size, 0) + 1)
                    size += len(data)
                    if size > budget:
                        yield data
                        self.close()  # the caller stops reading here: the rest of the body stays unread
                        return
                if data:
                    yield data
            if decoder is not None:
                tail = decoder.flush()
                if tail:
                    yield tail
        except GeneratorExit:
            self.close()
            raise
        except (OSError, http.client.HTTPException, zlib.error, ValueError) as exc:
            self.close()
            raise failure(exc, self._wire.host) from None
        if self._keep:
            self._wire.kept(self._connection)
            self._connection = None
        else:
            self.close()

    def _read1(self):
        """The next piece of the body as one read gives it (RFC 9112 framing); b"" at its end."""
        fp = self._connection.fp
        if not self._chunked:
            if self._left is None:  # to the end of the connection
                return fp.read1(READ_CHUNK)
            data = fp.read1(min(READ_CHUNK, self._left))
            if not data:
                raise http.client.IncompleteRead(b"", self._left)
            self._left -= len(data)
            return data
        if self._left is None:  # a chunk's size line
            size = fp.readline(MAX_LINE + 1).split(b";", 1)[0].strip()
            if not size or len(size) > 16 or size.strip(HEX_DIGITS):  # empty, over 16 EiB, or no hex number
                raise http.client.HTTPException("invalid chunk size %r" % size[:40])
            self._left = int(size, 16)
            if self._left == 0:  # the last chunk: the trailer fields, then the end
                _fields(fp)
                self._chunked = False
                return b""
        data = fp.read1(min(READ_CHUNK, self._left))
        if not data:
            raise http.client.IncompleteRead(b"", self._left)
        self._left -= len(data)
        if self._left == 0:
            if fp.readline(MAX_LINE + 1) not in (b"\r\n", b"\n"):
                raise http.client.IncompleteRead(b"", None)
            self._left = None
        return data

    def close(self):
        """The connection is closed: the body is not read (further)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class _CookieFields:
    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values

    def get_all(self, name, default=None):
        return list(self.values) if name.lower() == "set-cookie" and self.values else default


def _fields(fp):
    """The header (or trailer) fields up to the empty line: (name, value) pairs, a folded line joined to the one
    before. At most MAX_FIELDS fields of at most MAX_LINE bytes each, as http.client bounds them."""
    pairs = []
    while True:
        line = fp.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise http.client.LineTooLong("header line")
        if line in (b"\r\n", b"\n", b""):
            return pairs
        if len(pairs) >= MAX_FIELDS:
            raise http.client.HTTPException("got more than %d headers" % MAX_FIELDS)
        text = line.decode("latin-1")
        if text[:1] in (" ", "\t"):
            if pairs:
                pairs[-1] = (pairs[-1][0], pairs[-1][1] + " " + text.strip())
            continue
        name, colon, value = text.partition(":")
        if colon and name and name == name.strip():
            pairs.append((name, value.strip()))


def _length(value):
    """The body's length from Content-Length (None when absent); repeated, the values must agree (RFC 9112 6.3)."""
    if value is None:
        return None
    values = set(part.strip() for part in value.split(","))
    digits = next(iter(values))
    if len(values) != 1 or not digits or len(digits) > 20 or digits.strip(DIGITS):
        raise http.client.HTTPException("invalid Content-Length %r" % value[:40])
    return int(digits)


def _decoder(encoding):
    """The decompressor of a Content-Encoding (gzip, deflate), None for none (or one not asked for: passed as is)."""
    encoding = (encoding or "").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _Deflate()
    return None


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped (RFC 9110), else raw, as urllib3 reads it (the zlib header is
    looked for until the first output, the bytes kept until then to be read again as raw deflate)."""

    def __init__(self):
        self._inner, self._seen = zlib.decompressobj(), b""

    def decompress(self, data, limit):
        if self._seen is None:
            return self._inner.decompress(data, limit)
        self._seen += data
        try:
            out = self._inner.decompress(data, limit)
        except zlib.error:
            self._inner, seen, self._seen = zlib.decompressobj(-zlib.MAX_WBITS), self._seen, None
            return self._inner.decompress(seen, limit)
        if out:
            self._seen = None
        return out

    def flush(self):
        return self._inner.flush()


def failure(exc, host, connecting=False, proxy=None):
    """The requests exception of a failed exchange (``exc``), worded as urllib3 words it: ``connecting``, no byte of
    the request was sent yet (a connection never made), else the request may have reached the server."""
    exceptions = requests.exceptions
    if isinstance(exc, exceptions.RequestException):
        return exc
    if connecting and isinstance(exc, (ssl.SSLError, ssl.CertificateError)):
        return exceptions.SSLError(exc)
    if not isinstance(exc, (OSError, http.client.HTTPException, zlib.error, ValueError)):
        return exc  # KeyboardInterrupt and the like: not a failure of the exchange
    if connecting and isinstance(exc, OSError) and "Tunnel connection failed" in str(exc):
        return exceptions.ProxyError("Unable to connect to proxy: %s" % exc)
    if connecting:
        if isinstance(exc, socket.timeout):
            return exceptions.ConnectTimeout("Connection to %s timed out." % host)
        if isinstance(exc, socket.gaierror):
            what = "NameResolutionError: Failed to resolve '%s' (%s)" % (host, exc)
        else:
            what = "NewConnectionError: Failed to establish a new connection: %s" % exc
        if proxy is not None:
            return exceptions.ProxyError("Unable to connect to proxy: %s" % what)
        return exceptions.ConnectionError(what)
    if isinstance(exc, socket.timeout):
        return exceptions.ReadTimeout("Read timed out.")
    if isinstance(exc, zlib.error):
        return exceptions.ContentDecodingError("the reply's body could not be decoded: %s" % exc)
    return exceptions.ConnectionError("('Connection aborted.', %r)" % (exc,))
