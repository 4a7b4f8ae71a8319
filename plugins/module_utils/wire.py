# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-request path (no Ansible imports): HTTP/1.1 over the standard library's connections, each owned by one
request at a time, under transport.Transport.

Why not requests' own send: measured against an aiohttp client (5,000 status queries, 20 ms latency; issue 26),
requests cost 3.4-5.2x its CPU per request and fell behind past 32 in flight, urllib3 used directly 1.3-2.7x, a
stdlib ``http.client`` connection per worker 0.75-1.06x at the same wall time. requests stays where it serves:
what it merges from the environment (proxies, ``NO_PROXY``, ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE``), its CA
bundle (certifi), how it reads a Content-Type's charset, and its exceptions, which retries.py reads.

``Wire(base_url, headers, settings, pool_size)``: ``send(method, path, body, deadline)`` sends one request on an
idle kept-alive connection (or a new one) and returns a framing.Answer once its status and headers have come; the
body is read with ``Answer.chunks(deadline, budget)``, each read given only the time left. A failure is raised as
the requests exception requests would have raised (ConnectTimeout, ReadTimeout, SSLError, ProxyError,
ConnectionError; framing.failure), its text as urllib3 words it: retries.py decides from those what it means.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import collections
import http.client
import http.cookiejar
import io
import json
import os
import select
import socket
import ssl
import time
import urllib.request
from urllib.parse import unquote, urlsplit

from ansible_collections.netaccess.nac.plugins.module_utils.framing import Answer, failure

try:
    import requests
    from requests.utils import DEFAULT_CA_BUNDLE_PATH, requote_uri, select_proxy
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    requests = None

READ_BUFFER = 65536  # bytes a connection's reader takes from the socket at most in one read
TARGETS = 256  # request targets kept per client, one per path (quoted once)
DEFAULT_PORTS = {"http": 80, "https": 443}


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
        self._tunnel = None  # (host, port, headers) of a CONNECT through the proxy, for an https service
        self._via = None  # (scheme, host, port) of the proxy an http service is reached through
        if self.proxy:
            proxied = urlsplit(self.proxy if "://" in self.proxy else "http://" + self.proxy)
            if proxied.scheme not in ("http", "https") or (proxied.scheme == "https" and self.scheme == "https"):
                raise requests.exceptions.InvalidProxyURL(
                    "The proxy %s://%s is not supported: give an http:// proxy (HTTPS_PROXY / HTTP_PROXY)"
                    % (proxied.scheme, proxied.hostname)
                )
            credentials = []
            if proxied.username is not None:
                token = "%s:%s" % (unquote(proxied.username), unquote(proxied.password or ""))
                credentials = [("Proxy-Authorization", "Basic " + base64.b64encode(token.encode("latin-1")).decode())]
            where = (proxied.hostname, proxied.port or DEFAULT_PORTS[proxied.scheme])
            if self.scheme == "https":
                self._tunnel = (self.host, self.port, dict(credentials))
            else:
                fixed += credentials
            self._via = (proxied.scheme,) + where
        if self.scheme == "https" or (self._via is not None and self._via[0] == "https"):
            self.context = tls_context(self.verify)  # the proxy verified as the service would be (as requests does)
        self._head = "".join("%s: %s\r\n" % pair for pair in fixed).encode("latin-1")
        self._targets = {}
        self._idle = collections.deque()  # kept-alive connections no request is using (popped, appended: atomic)
        self.pool_size = max(1, pool_size)
        self.cookies = http.cookiejar.CookieJar()  # what the service set (a load balancer's affinity, say)
        self.closed = False

    def target(self, path):
        """The request line's target of ``path`` (under base_url's path; through an http proxy, the absolute
        URL), quoted as requests quotes it: once per path."""
        found = self._targets.get(path)
        if found is None:
            if len(self._targets) >= TARGETS:
                self._targets.clear()
            found = requote_uri(self.prefix + path)
            if self._via is not None:
                found = self.origin + found
            found = self._targets[path] = found.encode("ascii", "replace")
        return found

    def send(self, method, path, body, deadline):
        """Send ``method path`` with ``body`` (a JSON value, or None) and read the reply's status and headers, all
        before ``deadline`` (time.monotonic): an Answer, whose body is still to be read (Answer.chunks)."""
        return self._exchange(self._connection(deadline), method, path, body, deadline)

    def _exchange(self, connection, method, path, body, deadline):
        data = b"" if body is None else json.dumps(body, allow_nan=False).encode("utf-8")
        head = b"%s %s HTTP/1.1\r\n%s" % (method.encode("ascii"), self.target(path), self._head)
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(data)
        elif method not in ("GET", "HEAD"):
            head += b"Content-Length: 0\r\n"
        if len(self.cookies):
            head += self._cookie_line(path)
        try:
            connection.raw.deadline = deadline  # every read of the reply, its head too, within the deadline
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("timed out")
            connection.sock.settimeout(left)
            connection.sock.sendall(head + b"\r\n" + data)
            answer = Answer(self, connection, method, self.url + path)
        except BaseException as exc:
            connection.close()
            raise failure(exc, self.host) from None
        if answer.set_cookies:
            self.cookies.extract_cookies(answer, urllib.request.Request(self.origin + self.prefix + path))
        return answer

    def _cookie_line(self, path):
        request = urllib.request.Request(self.origin + self.prefix + path)
        self.cookies.add_cookie_header(request)
        cookie = request.get_header("Cookie")
        return ("Cookie: %s\r\n" % cookie).encode("latin-1", "replace") if cookie else b""

    def _connection(self, deadline):
        """An idle connection that the service has not closed meanwhile, else a new one."""
        while True:
            try:
                connection = self._idle.pop()
            except IndexError:
                return self._connect(deadline)
            if connection.usable():
                return connection
            connection.close()

    def _connect(self, deadline):
        left = max(deadline - time.monotonic(), 0.001)
        if self._via is not None:
            scheme, host, port = self._via
        else:
            scheme, host, port = self.scheme, self.host, self.port
        if scheme == "https" or self._tunnel is not None:
            made = http.client.HTTPSConnection(host, port, timeout=left, context=self.context)
        else:
            made = http.client.HTTPConnection(host, port, timeout=left)
        if self._tunnel is not None:
            made.set_tunnel(*self._tunnel)
        try:
            made.connect()
        except BaseException as exc:
            made.close()
            raise failure(exc, self.host, connecting=True, proxy=self._via) from None
        made.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return Connection(made.sock)

    def kept(self, connection):
        """A connection whose last reply was read whole goes back to the idle ones (at most pool_size)."""
        if self.closed or len(self._idle) >= self.pool_size:
            connection.close()
        else:
            self._idle.append(connection)

    def probe(self, path, timeout):
        """GET ``path`` on a new connection, its body never read, the connection closed: raises as ``send``."""
        deadline = time.monotonic() + timeout
        self._exchange(self._connect(deadline), "GET", path, None, deadline).close()

    def close(self):
        self.closed = True
        while self._idle:
            self._idle.pop().close()


class Connection:
    """One kept-alive socket and its buffered reader, used by one request at a time: each read from the socket is
    given only the time left until the exchange's deadline (``raw.deadline``), so that a reply whose head or body
    drips in ends at the deadline, not a timeout per read later."""

    __slots__ = ("sock", "raw", "fp", "_poll")

    def __init__(self, sock):
        self.sock, self.raw = sock, _Deadlined(sock)
        self.fp = io.BufferedReader(self.raw, READ_BUFFER)
        self._poll = None

    def usable(self):
        """False when the service closed the idle connection (or sent on it unasked): readable before a request."""
        if self._poll is None:
            self._poll = select.poll()
            self._poll.register(self.sock, select.POLLIN)
        try:
            return not self._poll.poll(0)
        except (OSError, ValueError):
            return False

    def close(self):
        for part in (self.fp, self.sock):
            try:
                part.close()
            except OSError:
                pass


class _Deadlined(io.RawIOBase):
    """A socket read against a deadline (time.monotonic): each read's timeout is what is left of it."""

    def __init__(self, sock):
        super(_Deadlined, self).__init__()
        self.sock, self.deadline = sock, 0.0

    def readable(self):
        return True

    def readinto(self, buffer):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out")
        self.sock.settimeout(left)
        return self.sock.recv_into(buffer)


def tls_context(verify):
    """The TLS context of ``verify`` as requests reads it: True, the CA bundle requests ships (certifi); a path,
    that bundle (a file) or directory of certificates; False, no verification."""
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    where = DEFAULT_CA_BUNDLE_PATH if verify is True else verify
    try:
        return ssl.create_default_context(**{"capath" if os.path.isdir(where) else "cafile": where})
    except (OSError, ssl.SSLError, ValueError) as error:
        raise ValueError(
            "The CA bundle %s (ca_path, else REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE) cannot be read: %s" % (where, error)
        ) from None
