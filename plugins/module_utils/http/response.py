# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One HTTP/1.1 reply as h11 reads it (no Ansible imports): h11 is a parser built to be fed bytes and asked for
events, so that every byte received is parsed once, as it comes, and this project writes no status-line, header
or chunk parser. What is ours is the policy around it: the bounds of a reply (``Limits``: the bytes of its heads,
its interim replies, a chunk header or trailer block, every byte on the wire), whether the connection may carry
another request once the reply is read (``Answer``), the body read against a deadline and a size limit and
decoded by ``zlib`` (gzip, deflate) with the compressed bytes counted too, and the typed facts of a failed
exchange (``failure``: where it failed, whether any byte of the request was written or of a reply received),
which retry_policy.py reads. connections.py sends the requests and owns the connections.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.client
import json
import socket
import ssl
import zlib

try:
    import h11
except ImportError:  # the client reports h11 missing (transport.HAS_H11)
    h11 = None

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    CONNECT,
    DECODE,
    EXCHANGE,
    PROXY,
    TLS,
    ExchangeError,
)

try:
    from requests.compat import chardet
    from requests.structures import CaseInsensitiveDict
    from requests.utils import get_encoding_from_headers, guess_json_utf
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    chardet = guess_json_utf = None
    CaseInsensitiveDict = get_encoding_from_headers = None

MAX_INTERIM = 8  # interim replies (100 Continue, 102 Processing, 103 Early Hints) before the final one, at most
MAX_HEAD = 65536  # bytes of all the heads of one reply (its interim replies too), at most
MAX_BLOCK = 65536  # bytes received between two parsed events (a head, a chunk header, a trailer block), at most
FRAMING_SHARE = 8  # a body's framing (chunk headers, trailers) may add a FRAMING_SHARE-th of its budget on the wire

# What a failed exchange's ``cause`` says (common.errors.ExchangeError, made by ``failure``; read by retry_policy.py): a
# fact of the failure's type, never of its words.
REFUSED = "refused"  # the connection was refused (ECONNREFUSED)
UNRESOLVED = "unresolved"  # the host name could not be resolved
TIMED_OUT = "timed out"
TLS_PORT = "tls port"  # a plain http:// request answered with TLS bytes: the service speaks TLS there
PROXY_AUTH = "proxy auth"  # the proxy refused the credentials (407): sending again will not change it
PROXY_REFUSED = "proxy refused"  # the proxy refused the tunnel with another status
OVER_BOUND = "over a bound"  # a reply passed a bound of this client (its heads, interim replies, a block): final
TLS_RECORDS = (b"\x15\x03", b"\x16\x03")  # how a TLS record (an alert, a handshake) begins


class Unframed(http.client.HTTPException):
    """A reply this client cannot frame safely (h11 refused it, a 101, too many interim replies, a head or block
    past its bound). ``nac_cause``: TLS_PORT when the reply was a TLS record, OVER_BOUND when it passed a bound,
    else None."""

    def __init__(self, text, cause=None):
        super(Unframed, self).__init__(text)
        self.nac_cause = cause


class TooLarge(Exception):
    """The reply's body, as it came on the wire (compressed, its chunk headers and trailers too), passed the size
    limit."""


def body_cap(received, budget):
    """The bytes a connection may have received for a reply at most, once ``received`` have come with its heads,
    for a body of at most ``budget`` bytes: the body, a FRAMING_SHARE-th more for its chunk headers, and one
    MAX_BLOCK for its trailers."""
    return received + budget + budget // FRAMING_SHARE + MAX_BLOCK


def unframed(exc, lead):
    """The Unframed of h11's refusal of a reply (``exc``, an h11.RemoteProtocolError) that began with ``lead``, in
    this client's words."""
    text = str(exc)
    if "_SWITCH_UPGRADE" in text:  # a 101 to a request that never asked to switch
        text = "the service switched protocols (101 Switching Protocols), which this client never asks for"
    return Unframed(text, TLS_PORT if lead in TLS_RECORDS else None)


class _Fields:
    """The header fields of a reply as http.cookiejar reads them (``get_all``)."""

    __slots__ = ("_pairs",)

    def __init__(self, pairs):
        self._pairs = pairs

    def get_all(self, name, default=None):
        key = name.lower()
        found = [value for field, value in self._pairs if field.lower() == key]
        return found or default


class Answer:
    """A reply whose head h11 has read: ``status_code``, ``headers`` (case-insensitive; a field that came more than
    once joined with ", ", as urllib3 joins it), ``url``, ``encoding`` (the charset of its Content-Type, as requests
    reads it), ``set_cookies`` (each Set-Cookie field). Its body is read once, with ``read_steps``; ``close`` drops
    the connection. The connection carries another request once the body has been read whole, when h11 says it
    may and the framing was by length or chunks alone (``_reusable``)."""

    __slots__ = (
        "status_code",
        "headers",
        "url",
        "encoding",
        "set_cookies",
        "_wire",
        "_connection",
        "_pairs",
        "_http10",
        "_decoder",
        "_size",
        "_wire_size",
    )

    def __init__(self, wire, connection, response, url):
        self._wire, self._connection, self.url = wire, connection, url
        self._decoder, self._size, self._wire_size = None, 0, 0  # (read_steps)
        self.status_code = response.status_code
        self._http10 = response.http_version == b"1.0"
        pairs = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in response.headers.raw_items()]
        joined, cookies = {}, []
        for name, value in pairs:
            key = name.lower()
            if key in joined:
                joined[key] = (joined[key][0], joined[key][1] + ", " + value)
            else:
                joined[key] = (name, value)
            if key == "set-cookie":
                cookies.append(value)
        self._pairs = pairs
        self.headers = CaseInsensitiveDict(joined.values())
        self.set_cookies = cookies
        self.encoding = get_encoding_from_headers(self.headers)

    def info(self):
        """The header fields as http.cookiejar reads a reply's."""
        return _Fields(self._pairs)

    def read_steps(self, deadline, budget):
        """Steps (loop.py) that return the body's next piece as it arrives, framed by h11 and decoded (gzip,
        deflate), or None once it has come whole: each read from the socket given only the time left until
        ``deadline`` (a ReadTimeout once it has passed). Every byte received for the reply counts: past
        ``body_cap`` (the body's ``budget``, its chunk headers and trailers) the reply raises TooLarge, and so does
        a body whose bytes on the wire pass ``budget`` + 1; a compressed body that would decode past it is never
        held whole (the piece that passes it is the last: the rest stays unread). A compressed body must end as its
        format says (a gzip stream cut before its trailer is a failure). The connection goes back to the idle ones
        once the body has come whole on a connection that may carry another request, and is closed otherwise."""
        if self._connection is None:
            return None
        connection = self._connection
        if self._decoder is None:
            self._decoder = _decoder(self.headers.get("Content-Encoding")) or False
            connection.bound(body_cap(connection.received, budget), TooLarge)
        decoder = self._decoder
        try:
            while True:
                event = yield from connection.event_steps(deadline)
                kind = type(event)
                if kind is h11.EndOfMessage:
                    tail = decoder.finish() if decoder else b""
                    self._finish()
                    return tail or None
                if kind is not h11.Data:
                    raise Unframed("the body ended with %s" % kind.__name__)
                data = event.data
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
        if self._reusable() and self._connection.next_cycle():
            self._wire.kept(self._connection)
            self._connection = None
        else:
            self.close()

    def _reusable(self):
        """Whether the framing lets the connection carry another request: never chunks with a Content-Length or on
        HTTP/1.0 (RFC 9112 6.1); h11 says the rest (a close asked for, a body framed by the connection's end)."""
        headers = self.headers
        return not ("Transfer-Encoding" in headers and ("Content-Length" in headers or self._http10))

    def close(self):
        """The connection is closed: the body is not read (further)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


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
    """The ExchangeError of a failed exchange (``exc``), with the typed facts of where it failed: its ``stage``,
    ``sent`` (False: it failed before any byte of the request was written, the connection never made; True: a byte
    may have reached the service), ``replied`` (a byte of a reply was received), ``reused`` (the connection had
    carried an earlier request), ``cause`` (REFUSED, UNRESOLVED, TIMED_OUT, TLS_PORT, PROXY_AUTH, PROXY_REFUSED or
    None) and ``names`` (those of a certificate for another name). Its text is for people; retry_policy.py decides
    from the facts alone. ``exc`` itself when it is one already, or no failure of the exchange (KeyboardInterrupt)."""
    if isinstance(exc, ExchangeError) or not isinstance(
        exc, (OSError, http.client.HTTPException, zlib.error, ValueError)
    ):
        return exc
    cause = getattr(exc, "nac_cause", None) or _cause(exc)
    if not sent:
        stage, text = _connect_failure(exc, host, proxy, cause)
    elif isinstance(exc, socket.timeout):
        stage, text = EXCHANGE, "Read timed out."
    elif isinstance(exc, zlib.error):
        stage, text = DECODE, "the reply's body could not be decoded: %s" % exc
    elif isinstance(exc, Unframed):
        stage, text = EXCHANGE, "the reply could not be read safely: %s" % exc
    else:
        stage, text = EXCHANGE, "('Connection aborted.', %r)" % (exc,)
    names = getattr(exc, "nac_names", None)  # (tls.check_name: the names read on that connection)
    return ExchangeError(text, stage, sent, replied, reused, cause, names, exc)


def _connect_failure(exc, host, proxy, cause):
    """(stage, text) of a failure before any byte of the request was written."""
    if cause in (PROXY_AUTH, PROXY_REFUSED):
        return PROXY, "Unable to connect to proxy: %s" % exc
    if isinstance(exc, (ssl.SSLError, ssl.CertificateError)):
        return TLS, str(exc)
    if isinstance(exc, socket.timeout):
        return CONNECT, "Connection to %s timed out." % host
    what = "Failed to establish a new connection: %s" % exc
    if proxy is not None:
        return PROXY, "Unable to connect to proxy: %s" % what
    return CONNECT, what


def _cause(exc):  # (a failure's own type: the wire's own exceptions state theirs in nac_cause)
    if isinstance(exc, ConnectionRefusedError):
        return REFUSED
    if isinstance(exc, socket.gaierror):
        return UNRESOLVED
    if isinstance(exc, socket.timeout):
        return TIMED_OUT
    return None


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
