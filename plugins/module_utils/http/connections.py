# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-request path (no Ansible imports): HTTP/1.1 on kept-alive connections, each owned by one request at a
time, under transport.Transport. h11, a parser fed bytes as they come and asked for events, writes every request
and reads every reply (its status line, header fields and framing: response.py), each byte parsed once. TLS is made
as urllib3 makes it (``create_urllib3_context``: TLS 1.2 at least, no common-name fallback; the name matched by
urllib3's ``match_hostname`` on the same connection, so that a mismatch names the certificate's names), and requests
gives what it merges from the environment (proxies, ``NO_PROXY``, the CA bundle variables) and its CA bundle
(certifi). What is ours: which request owns which connection, the deadline of each exchange (checked
before every read of a connection, the proxy's CONNECT reply and the TLS handshake included, each wait given only
the time left), the bytes a reply may take (Connection), when a connection may carry another request, the cookies
kept (bounded), and the typed facts of a failure (response.failure: common.errors.ExchangeError), which
retry_policy.py reads.

``Wire(base_url, headers, settings, pool_size)``: ``send_steps(method, path, body, deadline, fresh=False)`` sends
one request on an idle kept-alive connection (or a new one; always a new one when ``fresh``) and returns a
response.Answer once the final reply's head has come; the body is read with ``Answer.read_steps(deadline, budget)``.
Both are steps (loop.py): one exchange driven in its own thread (loop.run), or many in one (loop.Loop).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import collections
import errno
import http.client
import http.cookiejar
import json
import os
import select
import socket
import ssl
import time
import urllib.request
from urllib.parse import unquote, urlsplit

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Blocking, Ready, run
from ansible_collections.netaccess.nac.plugins.module_utils.http.response import (
    MAX_BLOCK,
    MAX_HEAD,
    MAX_INTERIM,
    OVER_BOUND,
    PROXY_AUTH,
    PROXY_REFUSED,
    TLS_PORT,
    Answer,
    TooLarge,
    Unframed,
    failure,
    unframed,
)

try:
    from requests.utils import DEFAULT_CA_BUNDLE_PATH, requote_uri, select_proxy
    from urllib3.util.ssl_ import create_urllib3_context

    try:
        from urllib3.util.ssl_match_hostname import CertificateError, match_hostname
    except ImportError:  # urllib3 1.26 before 1.26.8
        from urllib3.packages.ssl_match_hostname import CertificateError, match_hostname
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    select_proxy = None

try:
    import h11
except ImportError:  # the client reports h11 missing (transport.HAS_H11)
    h11 = None

READ_BUFFER = 65536  # bytes a connection takes from the socket at most in one read
HEAD_OVER = "the reply's heads (its interim replies included) passed %d bytes"
TARGETS = 256  # request targets kept per client, one per path (quoted once)
DEFAULT_PORTS = {"http": 80, "https": 443}
# The cookies the service may set, as browsers bound them (RFC 6265 6.1): at most this many, each at most this
# long (name and value), the Cookie line sent back at most this long; one with a control character is refused.
MAX_COOKIES = 50
MAX_COOKIE_BYTES = 4096
MAX_COOKIE_LINE = 8192
_JSON = json.JSONEncoder(allow_nan=False)  # json.dumps(body, allow_nan=False), its encoder made once


class Wire:
    """One client's connections to the service at ``base_url``. ``headers``: (name, value) pairs sent with every
    request; ``settings``: what requests merges from the environment (``proxies``, ``verify``), merged once by
    the caller; at most ``pool_size`` idle connections are kept."""

    def __init__(self, base_url, headers, settings, pool_size):
        parts = urlsplit(base_url)
        self.scheme, self.host = parts.scheme, parts.hostname or ""
        self.port = parts.port or DEFAULT_PORTS.get(parts.scheme, 80)
        self.url = base_url  # what each answer's url starts with (pages resolve a relative Link against it)
        self.prefix = parts.path.rstrip("/")
        bracketed = self.host if ":" not in self.host else "[%s]" % self.host
        self.origin = "%s://%s" % (self.scheme, bracketed + (":%d" % parts.port if parts.port else ""))
        authority = bracketed if self.port == DEFAULT_PORTS.get(self.scheme) else "%s:%d" % (bracketed, self.port)
        try:
            authority = authority.encode("idna").decode("ascii")  # the Host field, as http.client writes it
        except UnicodeError:
            pass
        self.verify = settings.get("verify", True)
        self.context = None  # the TLS context of the service, or of an https:// proxy in front of an http:// one
        self.proxy = select_proxy(base_url + "/", settings.get("proxies") or {})
        fixed = [("Host", authority)] + list(headers)
        self._tunnel = None  # the head of a CONNECT through the proxy, for an https service
        self._via = None  # (scheme, host, port) of the proxy the service is reached through
        if self.proxy:
            proxied = urlsplit(self.proxy if "://" in self.proxy else "http://" + self.proxy)
            if proxied.scheme not in ("http", "https") or (proxied.scheme == "https" and self.scheme == "https"):
                raise ValueError(
                    "The proxy %s://%s is not supported: give an http:// proxy (HTTPS_PROXY / HTTP_PROXY)"
                    % (proxied.scheme, proxied.hostname)
                )
            credentials = []
            if proxied.username is not None:
                token = "%s:%s" % (unquote(proxied.username), unquote(proxied.password or ""))
                credentials = [("Proxy-Authorization", "Basic " + base64.b64encode(token.encode("latin-1")).decode())]
            if self.scheme == "https":
                target = "%s:%d" % (bracketed, self.port)
                self._tunnel = (target.encode("latin-1"), _fields([("Host", target)] + credentials))
            else:
                fixed += credentials
            self._via = (proxied.scheme, proxied.hostname, proxied.port or DEFAULT_PORTS[proxied.scheme])
        if self.scheme == "https" or (self._via is not None and self._via[0] == "https"):
            self.context = tls_context(self.verify)  # the proxy verified as the service would be (as requests does)
        self._head = _fields(fixed)
        _written(b"GET", b"/", self._head, None)  # a field h11 would refuse is refused here, once (ValueError)
        self._targets = {}
        self._idle = collections.deque()  # kept-alive connections no request is using (popped, appended: atomic)
        self.pool_size = max(1, pool_size)
        self.cookies = http.cookiejar.CookieJar()  # what the service set (a load balancer's affinity, say)
        self.cookies.set_policy(_CookiePolicy(self.cookies))
        self.closed = False

    def target(self, path):
        """The request line's target of ``path`` (under base_url's path; through an http proxy, the absolute
        URL), quoted as requests quotes it: once per path."""
        found = self._targets.get(path)
        if found is None:
            if len(self._targets) >= TARGETS:
                self._targets.clear()
            found = requote_uri(self.prefix + path)
            if self._via is not None and self._tunnel is None:
                found = self.origin + found
            found = self._targets[path] = found.encode("ascii", "replace")
        return found

    def send(self, method, path, body, deadline, fresh=False):
        """``send_steps`` driven in this thread (loop.run): the Answer."""
        return run(self.send_steps(method, path, body, deadline, fresh))

    def send_steps(self, method, path, body, deadline, fresh=False):
        """Send ``method path`` with ``body`` (a JSON value, or None) and read the final reply's head, all before
        ``deadline`` (time.monotonic): steps (loop.py) that return an Answer, whose body is still to be read
        (Answer.read_steps). ``fresh``: on a new connection, never an idle one."""
        connection = (yield from self._connect_steps(deadline)) if fresh else (yield from self._connection(deadline))
        return (yield from self._exchange(connection, method, path, body, deadline))

    def _exchange(self, connection, method, path, body, deadline):
        data = None if body is None else _JSON.encode(body).encode("utf-8")
        fields = self._head
        if data is not None:
            fields = fields + [(b"Content-Type", b"application/json"), (b"Content-Length", b"%d" % len(data))]
        elif method not in ("GET", "HEAD"):
            fields = fields + [(b"Content-Length", b"0")]
        if len(self.cookies):
            fields = fields + self._cookie_line(path)
        connection.uses += 1
        try:
            request = connection.request(method.encode("ascii"), self.target(path), fields, data)
            yield from connection.send_steps(request, deadline)  # the head and body in one segment
            response = yield from _final_reply(connection, deadline)
            answer = Answer(self, connection, response, self.url + path)
        except BaseException as exc:
            connection.close()
            if not isinstance(exc, Exception):  # not a failure of the exchange (GeneratorExit, KeyboardInterrupt)
                raise
            replied = connection.received > 0
            error = failure(exc, self.host, sent=True, replied=replied, reused=connection.uses > 1)
            if connection.uses == 1 and not replied and (yield Blocking(self._speaks_tls, deadline)):
                error.cause = TLS_PORT  # a TLS service closes a plain request without a word
            raise error from None
        if answer.set_cookies:
            self.cookies.extract_cookies(answer, urllib.request.Request(self.origin + self.prefix + path))
        return answer

    def _speaks_tls(self, deadline):
        """Whether an http:// service's port answers a TLS handshake (checked once a plain request there got no
        byte back): the handshake alone, no certificate checked, no request sent."""
        if self.scheme != "http" or self._via is not None or deadline - time.monotonic() <= 0:
            return False
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        try:
            with socket.create_connection((self.host, self.port), timeout=min(_left(deadline), 2.0)) as sock:
                with context.wrap_socket(sock, server_hostname=self.host):
                    return True
        except (OSError, ValueError):
            return False

    def _cookie_line(self, path):
        request = urllib.request.Request(self.origin + self.prefix + path)
        self.cookies.add_cookie_header(request)
        cookie = request.get_header("Cookie")
        if not cookie or len(cookie) > MAX_COOKIE_LINE:
            return []
        return [(b"Cookie", cookie.encode("latin-1", "replace"))]

    def _connection(self, deadline):
        """Steps: an idle connection on which nothing is waiting (the service did not close it or send on it
        unasked), else a new one."""
        while True:
            try:
                connection = self._idle.pop()
            except IndexError:
                return (yield from self._connect_steps(deadline))
            if connection.idle():
                return connection
            connection.close()

    def _connect_steps(self, deadline):
        """Steps: a new connection to the service (through the proxy: an http service's requests sent to it, an https
        service's tunnelled with CONNECT), its TLS handshake done and the certificate's name matched, all within the
        deadline. A failure here sent no byte of the request (response.failure: ``sent`` False). A host name is
        resolved on a helper thread (loop.Blocking; an address at once); the connection is made without blocking."""
        scheme, host, port = self._via or (self.scheme, self.host, self.port)
        connection = None
        try:
            sock = yield from _open(host, port, deadline)
            connection = Connection(sock)
            if self._via is not None and scheme == "https":  # an https:// proxy in front of an http:// service
                connection = yield from connection.secured(self.context, host, self.verify, deadline)
            if self._tunnel is not None:
                yield from self._open_tunnel(connection, deadline)
            if self.scheme == "https":
                connection = yield from connection.secured(self.context, self.host, self.verify, deadline)
        except BaseException as exc:
            if connection is not None:
                connection.close()
            raise failure(exc, self.host, sent=False, proxy=self._via) from None
        return connection

    def _open_tunnel(self, connection, deadline):
        """Steps: CONNECT through the proxy, its reply read by h11 as any reply is (every read checked against the
        deadline, its heads bounded); raise when it refused."""
        target, fields = self._tunnel
        yield from connection.send_steps(connection.request(b"CONNECT", target, fields, None), deadline)
        reply = yield from _final_reply(connection, deadline)
        if reply.status_code != 200:
            reason = reply.reason.decode("latin-1", "replace")
            refused = OSError(
                "the proxy refused the tunnel: %d %s" % (reply.status_code, reason)
                + (" (its credentials: Proxy-Authorization, from the proxy's URL)" if reply.status_code == 407 else "")
            )
            refused.nac_cause = PROXY_AUTH if reply.status_code == 407 else PROXY_REFUSED  # (read by response.failure)
            raise refused
        if connection.buffered():
            raise Unframed("the proxy sent bytes after its reply to CONNECT")

    def kept(self, connection):
        """A connection whose last reply was read whole goes back to the idle ones (at most pool_size)."""
        if self.closed or len(self._idle) >= self.pool_size:
            connection.close()
        else:
            self._idle.append(connection)

    def probe(self, path, timeout):
        """GET ``path`` on a new connection, its body never read, the connection closed: raises as ``send_steps``."""
        deadline = time.monotonic() + timeout
        run(self._probe_steps(path, deadline)).close()

    def _probe_steps(self, path, deadline):
        connection = yield from self._connect_steps(deadline)
        return (yield from self._exchange(connection, "GET", path, None, deadline))

    def close(self):
        self.closed = True
        while self._idle:
            self._idle.pop().close()


def _fields(pairs):
    """(name, value) pairs of text as the bytes h11 is given (latin-1, as http.client wrote them)."""
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in pairs]


def _written(method, target, fields, data):
    """The bytes of a request, written by h11 on a parser of its own (ValueError when it refuses a field)."""
    try:
        return _request(h11.Connection(h11.CLIENT), method, target, fields, data)
    except h11.LocalProtocolError as exc:
        raise ValueError("a request header cannot be sent: %s" % exc) from None


def _request(parser, method, target, fields, data):
    """The bytes of a request written by ``parser``: its head, then its body (not copied but once, onto the head)."""
    head = parser.send(h11.Request(method=method, target=target, headers=fields))
    if not data:
        return head + parser.send(h11.EndOfMessage())
    parts = parser.send_with_data_passthrough(h11.Data(data=data))
    parts.append(parser.send(h11.EndOfMessage()))  # (nothing, for a body framed by its Content-Length)
    return head + parts[0] if len(parts) == 2 and not parts[1] else head + b"".join(parts)


def _left(deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("timed out")
    return left


def _until(sock, writing, deadline):
    """Steps: wait until ``sock`` can be read (or written: ``writing``), at most until ``deadline``
    (time.monotonic): socket.timeout once it has passed. The socket itself never blocks (Connection)."""
    if not (yield Ready(sock, writing, deadline)):
        raise socket.timeout("timed out")


def _ready(sock):
    """Whether ``sock`` can be read without waiting (bytes, or its end, have come): one poll that does not wait."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def _open(host, port, deadline):
    """Steps: a TCP connection to ``host``:``port``, as socket.create_connection makes one (each address in turn,
    the first failure raised when none answers), its name resolved on a helper thread (an address at once) and each
    connection made without blocking, all within ``deadline``."""
    _left(deadline)
    try:  # an address (127.0.0.1, ::1) is no name to resolve: at once
        addresses = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
    except socket.gaierror:
        addresses = yield Blocking(socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM)
    first = None
    for family, kind, proto, dummy, address in addresses:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            code = sock.connect_ex(address)
            if code in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY, errno.EINTR):
                yield from _until(sock, True, deadline)
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, os.strerror(code))  # (OSError makes the subclass of its code: refused, ...)
            return sock
        except BaseException as exc:
            sock.close()
            if not isinstance(exc, OSError) or isinstance(exc, socket.timeout):
                raise
            first = first or exc
    raise first or OSError("getaddrinfo returns an empty list")


def _final_reply(connection, deadline):
    """Steps: the final reply's head (an h11.Response): interim replies (100, 102, 103) skipped, at most MAX_INTERIM
    of them; a reply that ends before its head raises http.client.RemoteDisconnected, one h11 refuses Unframed."""
    interim = 0
    while True:
        event = yield from connection.event_steps(deadline)
        kind = type(event)
        if kind is h11.Response:
            connection.bound(None, TooLarge)  # the head is read: read_steps bounds the body (response.body_cap)
            return event
        if kind is h11.ConnectionClosed:
            raise http.client.RemoteDisconnected("Remote end closed connection without response")
        interim += 1
        if kind is not h11.InformationalResponse or interim > MAX_INTERIM:
            raise Unframed("more than %d interim (1xx) replies" % MAX_INTERIM, OVER_BOUND)


class Connection:
    """One kept-alive socket and its h11 parser (``parser``), used by one request at a time. Each request is written
    by the parser (``request``) and each byte received is fed to it once (``receive_steps``), then asked for events
    (``event_steps``), so that the same reading serves one exchange in its own thread (loop.run) and many in one
    (loop.Loop); a byte sent past a reply stays in the parser and is seen (``idle``) rather than read as the next
    request's reply.

    Every byte read counts (``received``, since the last request was written): the heads of a reply, its interim
    replies included, at most MAX_HEAD; then the reply's own cap (``bound``, response.body_cap); and between two
    events at most MAX_BLOCK (a chunk header with its extensions, a trailer block). A read never takes more than
    the cap leaves, and the deadline is checked before every read, not only before a wait.

    The socket never blocks: a send or read that the socket can take at once is one system call, and a wait is
    a loop.Ready given what is left of the deadline (a poll, or the loop's selector). A socket with a timeout would
    cost a poll before every send and read and a mode switch for every timeout set."""

    __slots__ = (
        "sock",
        "parser",
        "uses",
        "tls",
        "received",
        "_cap",
        "_over",
        "_since",
        "_ended",
        "_lead",
        "_space",
        "_view",
    )

    def __init__(self, sock):
        sock.setblocking(False)
        self.sock = sock
        # (h11's own bound, past ours by the bytes that came with the last event and one read: ours says it first)
        self.parser = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_BLOCK + 2 * READ_BUFFER)
        self.tls = isinstance(sock, ssl.SSLSocket)
        self.uses = 0  # the requests sent on it
        self.received = 0  # the bytes received since the last request was written
        self._cap, self._over, self._since, self._ended = MAX_HEAD, Unframed, 0, False
        self._lead = b""  # the first bytes of the last reply (a TLS record's, from a TLS port)
        self._space = bytearray(READ_BUFFER)  # what one read from the socket takes at most
        self._view = memoryview(self._space)

    def request(self, method, target, fields, data):
        """The bytes of a request, written by the parser (which then expects its reply); its heads bounded by
        MAX_HEAD from here."""
        try:
            written = _request(self.parser, method, target, fields, data)
        except h11.LocalProtocolError as exc:
            raise Unframed("the request could not be written: %s" % exc) from None
        self.received, self._cap, self._over, self._since = 0, MAX_HEAD, Unframed, 0
        return written

    def bound(self, cap, over):
        """From here the reply may have ``cap`` bytes received in all (None: as many as MAX_HEAD more), past which
        its reading raises ``over`` (response.TooLarge for a body)."""
        self._cap = self.received + MAX_HEAD if cap is None else cap
        self._over = over

    def send_steps(self, data, deadline):
        """Steps: write ``data`` whole before ``deadline``: at once when the socket takes it all (a request usually
        does), else waiting for room as often as needed, each wait given what is left of the deadline."""
        _left(deadline)  # the deadline passed already: nothing is written
        view, sock = memoryview(data), self.sock
        while view:
            try:
                sent = sock.send(view)
            except (BlockingIOError, ssl.SSLWantWriteError):
                sent = 0
            except ssl.SSLWantReadError:  # (TLS: a renegotiation wants the peer's bytes first)
                yield from _until(sock, False, deadline)
                continue
            view = view[sent:]
            if view:
                yield from _until(sock, True, deadline)

    def event_steps(self, deadline):
        """Steps: the parser's next event (an h11 event, never NEED_DATA), bytes read for it as needed. Unframed when
        h11 refuses the reply or MAX_BLOCK bytes came without an event."""
        parser = self.parser
        while True:
            try:
                event = parser.next_event()
            except h11.RemoteProtocolError as exc:
                raise unframed(exc, self._lead) from None
            if event is not h11.NEED_DATA:
                self._since = 0
                return event
            if self._ended:
                raise http.client.IncompleteRead(b"")  # (h11 says so itself once told of the end)
            if self._since > MAX_BLOCK:
                what = "%d bytes came without a whole head, chunk header or trailer block" % MAX_BLOCK
                raise Unframed(what, OVER_BOUND)
            yield from self.receive_steps(deadline)

    def receive_steps(self, deadline):
        """Steps: the next bytes from the socket, fed to the parser (or its end), at most what the reply's cap leaves,
        waiting for them at most until ``deadline``, which is checked first (bytes that keep coming never outlast
        it). The first read of a reply waits before it reads (the reply takes a round trip to come); later ones
        read first, and wait only when nothing has come."""
        _left(deadline)
        room = self._cap - self.received
        if room <= 0:
            over = self._over
            if over is Unframed:
                raise Unframed(HEAD_OVER % MAX_HEAD, OVER_BOUND)
            raise over("the reply passed %d bytes" % self._cap)
        sock = self.sock
        if not self.received and not (self.tls and sock.pending()):
            yield from _until(sock, False, deadline)
        while True:
            try:
                count = sock.recv_into(self._space, min(room, READ_BUFFER))
                break
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError) as exc:
                yield from _until(sock, isinstance(exc, ssl.SSLWantWriteError), deadline)
        self._take(count)

    def _take(self, count):
        if not self.received:
            self._lead = bytes(self._view[:2])
        self.received += count
        self._since += count
        self._ended = not count
        self.parser.receive_data(bytes(self._view[:count]))

    def buffered(self):
        """Whether the parser holds bytes it has not read (past a reply: unasked)."""
        return bool(self.parser.trailing_data[0])

    def next_cycle(self):
        """Whether the connection may carry another request now that a reply was read whole (h11 says so: neither
        side asked to close it); the parser is readied for it."""
        parser = self.parser
        if parser.our_state is not h11.DONE or parser.their_state is not h11.DONE:
            return False
        parser.start_next_cycle()
        return True

    def idle(self):
        """True when nothing is waiting on the connection: no byte past the last reply, received or arrived since
        (one poll that does not wait), and the service has not closed it."""
        sock = self.sock
        if self._ended or self.buffered():
            return False
        if not (self.tls and sock.pending()) and not _ready(sock):
            return True
        try:  # something came: bytes, or the end (or a TLS record without data: a session ticket, read here)
            count = sock.recv_into(self._space)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return True
        except OSError:
            return False
        self._take(count)
        return False

    def secured(self, context, hostname, verify, deadline):
        """Steps: this connection's socket wrapped in TLS (SNI ``hostname``): the handshake within the deadline, then
        the certificate's name matched by urllib3 (no common-name fallback); a new Connection over it."""
        tls = context.wrap_socket(self.sock, server_hostname=hostname, do_handshake_on_connect=False)
        try:
            tls.setblocking(False)
            while True:  # each wait given what is left of the deadline: a handshake that drips in ends at it
                try:
                    tls.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    yield from _until(tls, False, deadline)
                except ssl.SSLWantWriteError:
                    yield from _until(tls, True, deadline)
            if verify is not False:
                check_name(tls.getpeercert(), hostname)
        except BaseException:
            tls.close()
            raise
        return Connection(tls)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class _CookiePolicy(http.cookiejar.DefaultCookiePolicy):
    """The standard library's policy, bounded: a cookie is kept only while the jar holds fewer than MAX_COOKIES
    whose Cookie line stays within MAX_COOKIE_LINE, when its name and value are at most MAX_COOKIE_BYTES long and
    hold no control character (it would be sent back raw in the Cookie line)."""

    def __init__(self, jar=None):
        super(_CookiePolicy, self).__init__()
        self.jar = jar

    def set_ok(self, cookie, request):
        text = (cookie.name or "") + (cookie.value or "")
        if len(text) > MAX_COOKIE_BYTES or any(ord(char) < 32 or ord(char) == 127 for char in text):
            return False
        kept = list(self.jar)
        if (
            len(kept) >= MAX_COOKIES
            or sum(len(c.name) + len(c.value or "") + 3 for c in kept) + len(text) > MAX_COOKIE_LINE
        ):
            return False
        return super(_CookiePolicy, self).set_ok(cookie, request)


def check_name(certificate, hostname):
    """Raise ssl.CertificateError unless ``certificate`` (as getpeercert gives it) is for ``hostname``, as urllib3
    matches it (subjectAltName only: a certificate with a common name alone is for no name). The error carries
    the names the certificate is for (``nac_names``)."""
    names = [value for kind, value in certificate.get("subjectAltName", ()) if kind in ("DNS", "IP Address")]
    try:
        if not names:
            raise CertificateError("no appropriate subjectAltName fields were found")
        match_hostname(certificate, hostname)
    except CertificateError as exc:
        error = ssl.SSLCertVerificationError(
            1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: Hostname mismatch, %s" % exc
        )
        error.nac_names = names  # [] for a certificate with a common name alone
        raise error from None


def tls_context(verify):
    """The TLS context of ``verify`` as requests reads it, made as urllib3 makes it (TLS 1.2 at least): True, the
    CA bundle requests ships (certifi); a path, that bundle (a file) or directory of certificates; False, no
    verification. The certificate's name is matched after the handshake (check_name), on the same connection."""
    context = create_urllib3_context()
    context.check_hostname = False
    if verify is False:
        context.verify_mode = ssl.CERT_NONE
        return context
    context.verify_mode = ssl.CERT_REQUIRED
    where = DEFAULT_CA_BUNDLE_PATH if verify is True else verify
    try:
        context.load_verify_locations(**{"capath" if os.path.isdir(where) else "cafile": where})
    except (OSError, ssl.SSLError, ValueError) as error:
        raise ValueError(
            "The CA bundle %s (ca_path, else REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE) cannot be read: %s" % (where, error)
        ) from None
    return context
