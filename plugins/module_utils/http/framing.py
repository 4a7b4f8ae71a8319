# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One HTTP/1.1 reply as the standard library's ``http.client`` reads it (no Ansible imports): this project writes
no status-line, header-field or chunk parser. What is ours is the policy around it: whether the connection may
carry another request once the reply is read (``Answer``), the body read against a deadline and a size limit and
decoded by ``zlib`` (gzip, deflate) with the compressed bytes counted too, and the typed facts of a failed
exchange (``failure``: where it failed, whether any byte of the request was written or of a reply received),
which retry_policy.py reads. connections.py sends the requests and owns the connections.
"""

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
MAX_INTERIM = 8  # interim replies (102 Processing, 103 Early Hints) skipped before the final one, at most
DIGITS = "0123456789"  # (str.isdigit admits other scripts' digits: "²" is one)

# What a failed exchange's ``nac_cause`` says (set by ``failure``; read by retry_policy.py and tls_trust.py): a fact
# of the failure's type, never of its words.
REFUSED = "refused"  # the connection was refused (ECONNREFUSED)
UNRESOLVED = "unresolved"  # the host name could not be resolved
TIMED_OUT = "timed out"
TLS_PORT = "tls port"  # a plain http:// request answered with TLS bytes: the service speaks TLS there
PROXY_AUTH = "proxy auth"  # the proxy refused the credentials (407): sending again will not change it
PROXY_REFUSED = "proxy refused"  # the proxy refused the tunnel with another status


class Unframed(http.client.HTTPException):
    """A reply this client cannot frame safely (a 101, Transfer-Encoding other than chunked, conflicting lengths)."""


class TooLarge(Exception):
    """The reply's body, as it came on the wire (compressed), passed the size limit."""


class Answer:
    """A reply whose head ``http.client`` has read: ``status_code``, ``headers`` (case-insensitive; a field that came
    more than once joined with ", ", as urllib3 joins it), ``url``, ``encoding`` (the charset of its Content-Type,
    as requests reads it), ``set_cookies`` (each Set-Cookie field). Its body is read once, with ``read_steps``;
    ``close`` drops the connection. ``keep``: whether the connection may carry another request once the body has
    been read whole (and nothing else is waiting on it: connections.Connection.idle)."""

    __slots__ = (
        "status_code",
        "headers",
        "url",
        "encoding",
        "set_cookies",
        "_wire",
        "_connection",
        "_response",
        "_decoder",
        "_size",
        "_wire_size",
    )

    def __init__(self, wire, connection, response, url):
        self._wire, self._connection, self._response, self.url = wire, connection, response, url
        self._decoder, self._size, self._wire_size = None, 0, 0  # (read_steps)
        self.status_code = response.status
        joined, cookies = {}, []
        for name, value in response.msg.items():
            key = name.lower()
            if key in joined:
                joined[key] = (joined[key][0], joined[key][1] + ", " + value)
            else:
                joined[key] = (name, value)
            if key == "set-cookie":
                cookies.append(value)
        self.headers = CaseInsensitiveDict(joined.values())
        self.set_cookies = cookies
        self.encoding = get_encoding_from_headers(self.headers)

    def info(self):
        """The header fields as http.cookiejar reads a reply's."""
        return self._response.msg

    def read_steps(self, deadline, budget):
        """Steps (steps.py) that return the body's next piece as it arrives, framed by http.client and decoded (gzip,
        deflate), or None once it has come whole: each read from the socket given only the time left until
        ``deadline`` (a ReadTimeout once it has passed). Neither the bytes on the wire nor a decoded piece pass
        ``budget`` + 1: a body whose compressed bytes pass it raises TooLarge, and a compressed body that would
        decode past it is never held whole (the piece that passes it is the last: the rest stays unread). A
        compressed body must end as its format says (a gzip stream cut before its trailer is a failure). The
        connection goes back to the idle ones once the body has come whole on a connection that may carry another
        request (``reusable``), and is closed otherwise."""
        if self._connection is None:
            return None
        response, connection = self._response, self._connection
        if self._decoder is None:
            self._decoder = _decoder(self.headers.get("Content-Encoding")) or False
        decoder = self._decoder
        try:
            while True:
                data = yield from connection.parsed(_read1, (response,), deadline)
                if not data:
                    if response.length:  # http.client's read1 ends a body cut short without a word
                        raise http.client.IncompleteRead(b"", response.length)
                    tail = decoder.finish() if decoder else b""
                    self._finish()
                    return tail or None
                self._wire_size += len(data)
                if self._wire_size > budget + 1:
                    raise TooLarge()
                if decoder:
                    data = decoder.decompress(data, max(budget - self._size, 0) + 1)
                    self._size += len(data)
                    if self._size > budget:
                        self.close()  # the caller stops reading here: the rest of the body stays unread
                        return data
                if data:
                    return data
        except TooLarge:
            self.close()
            raise
        except (OSError, http.client.HTTPException, zlib.error, ValueError) as exc:
            self.close()
            raise failure(exc, self._wire.host, sent=True, replied=True, reused=connection.uses > 1) from None
        except BaseException:  # GeneratorExit (the caller stopped), KeyboardInterrupt
            self.close()
            raise

    def _finish(self):
        if self.reusable():
            self._wire.kept(self._connection)
            self._connection = None
        else:
            self.close()

    def reusable(self):
        """Whether the connection may carry another request: http.client read the reply whole on a connection it
        does not close, the reply was framed by its length or chunks (never by the connection's end, nor chunks
        with a Content-Length or on HTTP/1.0, RFC 9112 6.1). Whether anything else is waiting on it is asked
        when it is taken for the next request (connections.Connection.idle)."""
        response, msg = self._response, self._response.msg
        if not response.chunked and response.length == 0:  # read whole (Python 3.11's read1 leaves it open)
            response.close()
        if response.will_close or not response.isclosed():
            return False
        return not ("Transfer-Encoding" in msg and ("Content-Length" in msg or response.version == 10))

    def close(self):
        """The connection is closed: the body is not read (further)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _read1(response):
    """One read of the body by http.client (``read1``): what the connection's inbox holds, at most READ_CHUNK. When
    the inbox runs short (connections.NeedMore), the reply's framing state is as before the read, which is tried
    again once more bytes have come."""
    saved = response.chunk_left, response.length
    try:
        return response.read1(READ_CHUNK)
    except Exception:
        response.chunk_left, response.length = saved
        raise


def check_framing(response):
    """Raise Unframed for a reply whose body this client will not frame: a 101 (this client never asks to switch
    protocols), a Transfer-Encoding other than ``chunked`` (http.client would read it to the connection's end), a
    Content-Length that is not one plain number (http.client's ``int()`` takes "+1_0" and ignores a second, different
    field)."""
    if response.status == 101:
        raise Unframed("the service switched protocols (101 Switching Protocols), which this client never asks for")
    msg = response.msg
    coding = msg.get_all("Transfer-Encoding")
    if coding and not response.chunked:
        raise Unframed("a Transfer-Encoding this client does not frame (%s)" % ", ".join(coding))
    lengths = msg.get_all("Content-Length")
    if lengths and not response.chunked:
        values = set(part.strip() for value in lengths for part in value.split(","))
        value = next(iter(values))
        if len(values) != 1 or not value or len(value) > 20 or value.strip(DIGITS):
            raise Unframed("a Content-Length that is not one number")


def _decoder(encoding):
    """The decoder of a Content-Encoding (gzip, deflate), None for none (or one not asked for: passed as is)."""
    encoding = (encoding or "").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return _Decoder(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _Decoder(None)
    return None


class _Decoder:
    """A compressed body decoded by zlib as it arrives. gzip (members one after another, as urllib3 reads them); or
    ``deflate``, zlib-wrapped (RFC 9110) or raw as some servers send it: zlib itself says which, from the first two
    bytes (its header check), so at most those two are held before the format is known. The stream must end as
    its format says (``finish``)."""

    def __init__(self, wbits):
        self._wbits, self._head = wbits, b""
        self._inner = None if wbits is None else zlib.decompressobj(wbits)

    def decompress(self, data, limit):
        if self._inner is None:  # deflate, its format not known yet
            self._head += data
            if len(self._head) < 2:
                return b""
            data, self._head = self._head, b""
            probe = zlib.decompressobj()
            try:
                probe.decompress(data[:2])
            except zlib.error:
                self._inner = zlib.decompressobj(-zlib.MAX_WBITS)
            else:
                self._inner = zlib.decompressobj()
        out = self._inner.decompress(data, limit)
        while self._inner.eof and self._inner.unused_data and self._wbits is not None and len(out) < limit:
            rest = self._inner.unused_data  # the next gzip member
            self._inner = zlib.decompressobj(self._wbits)
            out += self._inner.decompress(rest, limit - len(out))
        return out

    def finish(self):
        """What is left; zlib.error when the stream did not end (a body cut before its end, or trailer)."""
        if self._inner is None or not self._inner.eof:
            raise zlib.error("the compressed body ended before its end")
        return self._inner.flush()


def failure(exc, host, sent, replied=False, reused=False, proxy=None):
    """The requests exception of a failed exchange (``exc``), with the typed facts of where it failed:
    ``nac_sent`` (False: it failed before any byte of the request was written, the connection never made; True: a
    byte may have reached the service), ``nac_replied`` (a byte of a reply was received), ``nac_reused`` (the
    connection had carried an earlier request) and ``nac_cause`` (REFUSED, UNRESOLVED, TIMED_OUT, TLS_PORT,
    PROXY_AUTH, PROXY_REFUSED or None). Its text is for people; retry_policy.py decides from the facts alone."""
    exceptions = requests.exceptions
    if isinstance(exc, exceptions.RequestException):
        error = exc
    elif not isinstance(exc, (OSError, http.client.HTTPException, zlib.error, ValueError)):
        return exc  # KeyboardInterrupt and the like: not a failure of the exchange
    elif not sent:
        error = _connect_failure(exc, host, proxy)
    elif isinstance(exc, socket.timeout):
        error = exceptions.ReadTimeout("Read timed out.")
    elif isinstance(exc, zlib.error):
        error = exceptions.ContentDecodingError("the reply's body could not be decoded: %s" % exc)
    elif isinstance(exc, Unframed):
        error = exceptions.ConnectionError("the reply could not be read safely: %s" % exc)
    else:
        error = exceptions.ConnectionError("('Connection aborted.', %r)" % (exc,))
    error.nac_sent, error.nac_replied, error.nac_reused = sent, replied, reused
    error.nac_cause = getattr(exc, "nac_cause", None) or _cause(exc)
    error.nac_names = getattr(exc, "nac_names", None)  # the names of a certificate that is for another name
    return error


def _connect_failure(exc, host, proxy):
    exceptions = requests.exceptions
    if getattr(exc, "nac_cause", None) in (PROXY_AUTH, PROXY_REFUSED):
        return exceptions.ProxyError("Unable to connect to proxy: %s" % exc)
    if isinstance(exc, (ssl.SSLError, ssl.CertificateError)):
        return exceptions.SSLError(exc)
    if isinstance(exc, socket.timeout):
        return exceptions.ConnectTimeout("Connection to %s timed out." % host)
    what = "Failed to establish a new connection: %s" % exc
    if proxy is not None:
        return exceptions.ProxyError("Unable to connect to proxy: %s" % what)
    return exceptions.ConnectionError(what)


def _cause(exc):
    if isinstance(exc, ConnectionRefusedError):
        return REFUSED
    if isinstance(exc, socket.gaierror):
        return UNRESOLVED
    if isinstance(exc, socket.timeout):
        return TIMED_OUT
    if isinstance(exc, http.client.BadStatusLine) and str(exc.line).startswith(("\x15\x03", "\x16\x03")):
        return TLS_PORT  # a TLS record (an alert, a handshake) where an HTTP status line was due
    return None
