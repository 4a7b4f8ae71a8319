# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Serve scripted replies at the wire, so that every unit test reads them through the production path.

Each connection the client makes is one end of a socket pair; the other end is the fake service (``Far``), which
reads the request with h11 (as a server reads it) and writes the scripted reply as HTTP/1.1 bytes (wire_replies.py).
The real connections.Connection and response.Answer read those bytes: h11 frames them, and the body, size and
decoding rules are the client's own. No thread serves: the service answers once the request is written whole, and
writes the next piece of its reply each time the client's socket has nothing left to read, so that one exchange
driven in the caller's thread (loop.run) and many on the loop (loop.Loop, engine.ordered_steps) work alike.
tests/unit/helpers.py re-exports the names the tests use; ``wire_of`` there is the one place that names where a
client keeps its wire.
"""

import json
import select
import socket
import threading
import time

import h11
from requests.structures import CaseInsensitiveDict

from ansible_collections.netaccess.nac.plugins.module_utils.common import errors
from ansible_collections.netaccess.nac.plugins.module_utils.http import connections, response
from ansible_collections.netaccess.nac.tests.unit.wire_replies import (
    PIECE,
    AtConnect,
    Canned,
    Cut,
    Request,
    Silent,
    reply,
)

# -- the two ends of a connection ---------------------------------------------------------------------------------


class Far:
    """Serve one connection from the service's end of a socket pair: read the request with h11 as a server, ask the
    fake for its reply, and write it a piece at a time (``pump``). Once the reply is written whole, keep the
    connection alive for the next request, as a service does, unless the reply's end is the connection's end or its
    head says ``Connection: close``."""

    def __init__(self, fake, sock, origin):
        sock.setblocking(False)
        self.fake, self.sock, self.origin, self.closed, self.silent = fake, sock, origin, False, False
        self._next_request()

    def _next_request(self):
        """Wait for the next request on this connection (h11 as a server, afresh: one request at a time)."""
        self.parser = h11.Connection(h11.SERVER)
        self.request, self.asked, self.body, self.canned = None, None, bytearray(), None
        self.pending, self.written = b"", 0

    def drain(self):
        """Read what the client has written so far; answer once the request has come whole."""
        while not self.closed:
            try:
                data = self.sock.recv(PIECE)
            except BlockingIOError:
                break
            self.parser.receive_data(data)
            if not data:
                break
        while self.canned is None and not self.closed and not self.silent:
            event = self.parser.next_event()
            if event is h11.NEED_DATA:
                return
            if isinstance(event, h11.Request):
                self.request = event
            elif isinstance(event, h11.Data):
                self.body += event.data
            elif isinstance(event, h11.EndOfMessage):
                self.asked = self._read()
                self._answer(self.asked)

    def _read(self):
        event = self.request
        target = event.target.decode("latin-1")
        headers = CaseInsensitiveDict((n.decode("latin-1"), v.decode("latin-1")) for n, v in event.headers.raw_items())
        body = bytes(self.body) or None
        return Request(event.method.decode("ascii"), self.origin + target, target, headers, body)

    def _answer(self, request):
        item = self.fake.take(request)
        if isinstance(item, (AtConnect, BaseException)):
            self.close()
        if isinstance(item, AtConnect):  # (too late for the connection: the typed failure the wire raises)
            raise response.failure(item.error, "fake", sent=False) from None
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Cut):
            self.close()
        elif isinstance(item, Silent):
            self.silent = True
        else:
            self.canned = item if isinstance(item, Canned) else reply(*item)
            self.pending = self.canned.head

    def pump(self, client):
        """Write the reply's next piece unless the client (its socket: ``client``) has bytes left to read."""
        if self.silent:
            raise socket.timeout("timed out")  # (as the wire's deadline raises it, without the wait)
        if self.canned is None or self.closed or _readable(client):
            return
        if not self.pending:
            self.pending = next(self.canned.pieces, None)
            if self.pending is None:
                self._done(False)  # (a body framed by the connection's end ends here)
                return
        try:
            sent = self.sock.send(self.pending)
        except BlockingIOError:
            sent = 0
        self.pending, self.written = self.pending[sent:], self.written + sent
        if self.written == self.canned.total:
            self._done(b"\r\nconnection: close\r\n" not in self.canned.head.lower())

    def _done(self, alive):
        """Tell the fake (``written``) that the reply is written whole; wait for the next request when ``alive``,
        else close the connection."""
        asked = self.asked
        if alive:
            self._next_request()
        else:
            self.close()
        self.fake.written(asked)

    def close(self):
        self.closed = True
        self.sock.close()


def _readable(sock):
    """Tell whether ``sock`` has bytes (or its end) to read now: the client has not read all the service wrote."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class FakeConnection(connections.Connection):
    """Read a connection as connections.Connection does, its far end served by a ``Far`` in the same thread: each
    request is written in pieces that the service reads as they come, and each read first lets it write."""

    __slots__ = ("far",)

    def __init__(self, sock, far):
        super().__init__(sock)
        self.far = far

    def send_steps(self, data, deadline):
        """Write ``data`` as the real connection does, a piece at a time, the service reading each piece."""
        for start in range(0, len(data), PIECE):
            yield from super().send_steps(data[start : start + PIECE], deadline)
            self.far.drain()

    def receive_steps(self, deadline):
        """Read as the real connection does, once the service has written what it has next."""
        self.far.pump(self.sock)
        return (yield from super().receive_steps(deadline))


# -- the fake service ---------------------------------------------------------------------------------------------


class FakeTransport:
    """Answer each request the client writes with ``self.answer(request)``: a ``(status, body[, headers])`` tuple, a
    ``reply(...)``, CUT, SILENT, an AtConnect (``refused()``...) or an exception to raise. Keep every request in
    ``sent`` (as ``self.record(request)`` makes it), what the client gave each send in ``sends`` (``timeout``,
    ``verify``, ``fresh``), the last ``verify``, the sends that asked for a new connection in ``fresh_sends``, each
    connection made in ``connections`` and each ExchangeError the wire raised in ``failures``.
    ``at_connect(request)`` may fail a connection before the request is written (an AtConnect)."""

    def __init__(self):
        self.sent, self.sends, self.requests, self.verify, self.fresh_sends = [], [], [], None, 0
        self.connections, self.failures = [], []  # (each connection made; each ExchangeError the wire raised)
        self._lock = threading.RLock()
        self._pending = threading.local()

    def record(self, request):
        return request

    def answer(self, request):
        raise AssertionError("no answer for %s %s" % (request.method, request.url))

    def at_connect(self, request):
        return None

    def written(self, request: Request) -> None:
        """Note that the reply to ``request`` has been written whole (a service may restart after it, say)."""

    def drop(self) -> None:
        """Close every connection from the service's end, as a service that restarts does."""
        with self._lock:
            for connection in self.connections:
                connection.far.close()

    def take(self, request: Request) -> object:
        """Keep ``request`` and return what answers it."""
        with self._lock:
            self.requests.append(request)
            self.sent.append(self.record(request))
            return self.answer(request)

    def attach(self, wire: connections.Wire) -> None:
        """Put this service under ``wire`` (a connections.Wire): its connections are socket pairs served here."""
        sending, probe = wire.send_steps, wire.probe

        def send_steps(method, path, body, deadline, fresh=False):
            with self._lock:
                self.sends.append(dict(timeout=deadline - time.monotonic(), verify=wire.verify, fresh=fresh))
                self.verify, self.fresh_sends = wire.verify, self.fresh_sends + bool(fresh)
            try:
                return (yield from self._as((method, path, body), sending(method, path, body, deadline, fresh=fresh)))
            except errors.ExchangeError as exc:
                self.failures.append(exc)
                raise

        def probing(path, timeout):
            self._pending.request = ("GET", path, None)
            return probe(path, timeout)

        def connect_steps(deadline):
            try:
                if deadline <= time.monotonic():  # (the deadline passed already: as the wire times out)
                    raise socket.timeout("timed out")
                with self._lock:
                    item = self.at_connect(self._stub(wire))
                if item is not None:
                    raise item.error if isinstance(item, AtConnect) else item
            except Exception as exc:  # typed as the wire types a connection that failed (nothing sent)
                raise response.failure(exc, wire.host, sent=False, proxy=wire._via) from None
            near, far = socket.socketpair()
            connection = FakeConnection(near, Far(self, far, wire.origin))
            self.connections.append(connection)
            return connection
            yield  # pylint: disable=unreachable  # (steps that wait for nothing)

        wire.send_steps, wire.probe, wire._connect_steps = send_steps, probing, connect_steps

    def _as(self, request, steps):
        """Drive ``steps`` with ``request`` as the one about to be written each time they run: exchanges interleave on
        a loop's thread, so the request a connection is made for is the one whose steps are running."""
        value, error = None, None
        while True:
            self._pending.request = request
            try:
                wait = steps.send(value) if error is None else steps.throw(error)
            except StopIteration as stop:
                return stop.value
            try:
                value, error = (yield wait), None
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # (what the wait raised, thrown in by the driver)
                value, error = None, exc

    def _stub(self, wire):
        """The request about to be written, as the client gives it (for a connection that fails before it is)."""
        method, path, body = getattr(self._pending, "request", ("GET", "/", None))
        target = wire.target(path).decode("ascii")
        headers = CaseInsensitiveDict((n.decode("latin-1"), v.decode("latin-1")) for n, v in wire._head)
        data = None if body is None else json.dumps(body).encode("utf-8")
        return Request(method, wire.origin + target, target, headers, data)

    def refuse(self, request: Request, item: object) -> object:
        """Keep ``request`` as sent and return ``item``, a failure of its connection."""
        self.requests.append(request)
        self.sent.append(self.record(request))
        return item

    def close(self):
        pass


def connect_stage(item: object) -> bool:
    """Tell whether a scripted ``item`` fails the connection before the request is written."""
    return isinstance(item, AtConnect) or (isinstance(item, errors.ExchangeError) and not item.sent)


class Scripted(FakeTransport):
    """Answer from a script, in order: each item a (status, body[, headers]), a reply, CUT, SILENT, an AtConnect or
    an exception; the last item repeats. A failure of the connection is given when the connection is made."""

    def __init__(self, *script):
        super().__init__()
        self.script = list(script)

    def _next(self):
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def at_connect(self, request):
        return self.refuse(request, self._next()) if connect_stage(self.script[0]) else None

    def answer(self, request):
        item = self._next()
        return tuple(item) if isinstance(item, (list, tuple)) else item


class Site(FakeTransport):
    """Answer by full URL from ``routes`` {url: (status, body, headers)}; 404 for any other URL."""

    def __init__(self, routes):
        super().__init__()
        self.routes = routes

    def answer(self, request):
        status, body, headers = self.routes.get(request.url, (404, {"error": "no such page"}, {}))
        return reply(status, body, headers, json_type=False)

    def urls(self, method="GET"):
        return [request.url for request in self.sent if request.method == method]


class Routes(FakeTransport):
    """Answer per "METHOD /path" from ``routes``: each a list of replies (status, body[, headers]) whose last repeats,
    or a function of the request's JSON body; body as ``reply`` takes it, or ``raw(text, content type)``. ``sent``
    holds the routes requested."""

    def __init__(self, routes):
        super().__init__()
        self.routes = dict((route, given if callable(given) else list(given)) for route, given in routes.items())

    def record(self, request):
        return "%s %s" % (request.method, request.path_url)

    def answer(self, request):
        replies = self.routes[self.sent[-1]]
        given = json.loads(request.body) if request.body else None
        item = replies(given) if callable(replies) else replies.pop(0) if len(replies) > 1 else replies[0]
        if not isinstance(item, (list, tuple)):
            return item
        status, body, headers = (tuple(item) + ({},))[:3]
        content_type = "application/json"
        if isinstance(body, tuple):
            body, content_type = body
        return reply(status, b"" if body is None else body, dict({"Content-Type": content_type}, **headers))

    def count(self, route):
        return self.sent.count(route)


def raw(text: str, content_type: str = "application/json") -> tuple:
    """Return a body for ``Routes``, sent exactly as given (JSON or not), with its Content-Type."""
    return (text, content_type)


class NothingMayBeSent(FakeTransport):
    """Fail any request that reaches the service (a check-mode client must refuse before sending)."""

    def record(self, request):
        return "%s %s" % (request.method, request.path_url)

    def answer(self, request):
        return AssertionError("a request was sent: %s %s" % (request.method, request.path_url))
