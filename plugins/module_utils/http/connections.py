# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Carry each request on the per-request path (no Ansible imports): HTTP/1.1 on kept-alive connections, each owned by
one request at a time, under transport.Transport. h11, a parser fed bytes as they come and asked for events, writes
every request and reads every reply (its status line, header fields and framing: response.py), each byte parsed once.
One connection, its socket and parser, is connection.Connection; TLS is made as urllib3 makes it (tls.py); the cookies
kept are bounded (cookies.py). requests gives what it merges from the environment (proxies, ``NO_PROXY``, the CA bundle
variables). What this room holds: which request owns which connection, the proxy's tunnel, when a connection may carry
another request, and the typed facts of a failure (response.failure: common.errors.ExchangeError), which retry_policy.py
reads.

``Wire(base_url, headers, settings, pool_size)``: ``send_steps(method, path, body, deadline, fresh=False)`` sends
one request on an idle kept-alive connection (or a new one; always a new one when ``fresh``) and returns a
response.Answer once the final reply's head has come; the body is read with ``Answer.read_steps(deadline, budget)``.
Both are steps (loop.py): one exchange driven in its own thread (loop.run), or many in one (loop.Loop).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import collections
import json
import socket
import ssl
import time
from typing import Generator
from urllib.parse import unquote, urlsplit

from ansible_collections.netaccess.nac.plugins.module_utils.http.connection import (
    Connection,
    final_reply,
    open_socket,
    request_bytes,
    time_left,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.cookies import cookie_jar, cookie_line, keep_cookies
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Blocking, run
from ansible_collections.netaccess.nac.plugins.module_utils.http.response import (
    PROXY_AUTH,
    PROXY_REFUSED,
    TLS_PORT,
    Answer,
    Unframed,
    failure,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.tls import tls_context

try:
    from requests.utils import requote_uri, select_proxy
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    select_proxy = None

try:
    import h11
except ImportError:  # the client reports h11 missing (transport.HAS_H11)
    h11 = None

TARGETS = 256  # request targets kept per client, one per path (quoted once)
DEFAULT_PORTS = {"http": 80, "https": 443}
_JSON = json.JSONEncoder(allow_nan=False)  # json.dumps(body, allow_nan=False), its encoder made once


class Wire:
    """Hold one client's connections to the service at ``base_url``. ``headers``: (name, value) pairs sent with every
    request; ``settings``: what requests merges from the environment (``proxies``, ``verify``), merged once by the
    caller; at most ``pool_size`` idle connections are kept."""

    def __init__(self, base_url: str, headers: list, settings: dict, pool_size: int):
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
        self.cookies = cookie_jar()  # what the service set (a load balancer's affinity, say), bounded (cookies.py)
        self.closed = False

    def target(self, path: str) -> bytes:
        """Give the request line's target of ``path`` (under base_url's path; through an http proxy, the absolute URL),
        quoted as requests quotes it: once per path."""
        found = self._targets.get(path)
        if found is None:
            if len(self._targets) >= TARGETS:
                self._targets.clear()
            found = requote_uri(self.prefix + path)
            if self._via is not None and self._tunnel is None:
                found = self.origin + found
            found = self._targets[path] = found.encode("ascii", "replace")
        return found

    def send(self, method: str, path: str, body, deadline: float, fresh: bool = False) -> Answer:
        """Drive ``send_steps`` in this thread (loop.run) and return the Answer."""
        return run(self.send_steps(method, path, body, deadline, fresh))

    def send_steps(self, method: str, path: str, body, deadline: float, fresh: bool = False) -> Generator:
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
            fields = fields + cookie_line(self.cookies, self.origin + self.prefix + path)
        connection.uses += 1
        try:
            request = connection.request(method.encode("ascii"), self.target(path), fields, data)
            yield from connection.send_steps(request, deadline)  # the head and body in one segment
            response = yield from final_reply(connection, deadline)
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
            keep_cookies(self.cookies, answer, self.origin + self.prefix + path)
        return answer

    def _speaks_tls(self, deadline):
        """Tell whether an http:// service's port answers a TLS handshake (checked once a plain request there got no
        byte back): the handshake alone, no certificate checked, no request sent."""
        if self.scheme != "http" or self._via is not None or deadline - time.monotonic() <= 0:
            return False
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        try:
            with socket.create_connection((self.host, self.port), timeout=min(time_left(deadline), 2.0)) as sock:
                with context.wrap_socket(sock, server_hostname=self.host):
                    return True
        except (OSError, ValueError):
            return False

    def _connection(self, deadline):
        """Take, as steps, an idle connection on which nothing is waiting (the service did not close it or send on it
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
        """Open, as steps, a new connection to the service (through the proxy: an http service's requests sent to it, an
        https service's tunnelled with CONNECT), its TLS handshake done and the certificate's name matched, all within
        the deadline. A failure here sent no byte of the request (response.failure: ``sent`` False). A host name is
        resolved on a helper thread (loop.Blocking; an address at once); the connection is made without blocking."""
        scheme, host, port = self._via or (self.scheme, self.host, self.port)
        connection = None
        try:
            sock = yield from open_socket(host, port, deadline)
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
        """Send, as steps, CONNECT through the proxy, its reply read by h11 as any reply is (every read checked against
        the deadline, its heads bounded); raise when it refused."""
        target, fields = self._tunnel
        yield from connection.send_steps(connection.request(b"CONNECT", target, fields, None), deadline)
        reply = yield from final_reply(connection, deadline)
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

    def kept(self, connection: Connection) -> None:
        """Put a connection whose last reply was read whole back with the idle ones (at most pool_size)."""
        if self.closed or len(self._idle) >= self.pool_size:
            connection.close()
        else:
            self._idle.append(connection)

    def probe(self, path: str, timeout: float) -> None:
        """Send GET ``path`` on a new connection and close it, its body never read; raise as ``send_steps`` does."""
        deadline = time.monotonic() + timeout
        run(self._probe_steps(path, deadline)).close()

    def _probe_steps(self, path, deadline):
        connection = yield from self._connect_steps(deadline)
        return (yield from self._exchange(connection, "GET", path, None, deadline))

    def close(self) -> None:
        """Close the idle connections and keep no more: the client is done."""
        self.closed = True
        while self._idle:
            self._idle.pop().close()


def _fields(pairs):
    """Encode (name, value) pairs of text as the bytes h11 is given (latin-1, as http.client wrote them)."""
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in pairs]


def _written(method, target, fields, data):
    """Write the bytes of a request with h11, on a parser of its own (ValueError when it refuses a field)."""
    try:
        return request_bytes(h11.Connection(h11.CLIENT), method, target, fields, data)
    except h11.LocalProtocolError as exc:
        raise ValueError("a request header cannot be sent: %s" % exc) from None
