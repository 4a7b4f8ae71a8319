# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hold one kept-alive connection: its socket, which never blocks, and its h11 parser, fed every byte once (no Ansible
imports). connections.Wire owns the connections and lends each to one request at a time; this room holds what
one connection does: open (``open_socket``), send, read against a deadline and a byte bound, make TLS, and tell
whether it may carry another request.
"""

import errno
import http.client
import os
import select
import socket
import ssl
import time
from typing import Generator, Optional

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Blocking, Ready
from ansible_collections.netaccess.nac.plugins.module_utils.http.response import (
    MAX_BLOCK,
    MAX_HEAD,
    MAX_INTERIM,
    OVER_BOUND,
    TooLarge,
    Unframed,
    unframed,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.tls import check_name

try:
    import h11
except ImportError:  # the client reports h11 missing (transport.HAS_H11)
    h11 = None

READ_BUFFER = 65536  # bytes a connection takes from the socket at most in one read
HEAD_OVER = "the reply's heads (its interim replies included) passed %d bytes"


def request_bytes(parser, method: bytes, target: bytes, fields: list, data: Optional[bytes]) -> bytes:
    """Write a request with ``parser``: its head, then its body (not copied but once, onto the head)."""
    head = parser.send(h11.Request(method=method, target=target, headers=fields))
    if not data:
        return head + parser.send(h11.EndOfMessage())
    parts = parser.send_with_data_passthrough(h11.Data(data=data))
    parts.append(parser.send(h11.EndOfMessage()))  # (nothing, for a body framed by its Content-Length)
    return head + parts[0] if len(parts) == 2 and not parts[1] else head + b"".join(parts)


def time_left(deadline: float) -> float:
    """Give the seconds left before ``deadline`` (time.monotonic), or raise socket.timeout once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("timed out")
    return left


def _until(sock, writing, deadline):
    """Wait, as steps, until ``sock`` can be read (or written: ``writing``), at most until ``deadline``
    (time.monotonic): socket.timeout once it has passed. The socket itself never blocks (Connection)."""
    if not (yield Ready(sock, writing, deadline)):
        raise socket.timeout("timed out")


def _ready(sock):
    """Tell whether ``sock`` can be read without waiting (bytes, or its end, have come): one poll that does not wait."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def open_socket(host: str, port: int, deadline: float) -> Generator:
    """Open, as steps, a TCP connection to ``host``:``port``, as socket.create_connection makes one (each address in
    turn, the first failure raised when none answers), its name resolved on a helper thread (an address at once) and
    each connection made without blocking, all within ``deadline``."""
    time_left(deadline)
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


def final_reply(connection: "Connection", deadline: float) -> Generator:
    """Read, as steps, the final reply's head (an h11.Response): interim replies (100, 102, 103) skipped, at most
    MAX_INTERIM of them; a reply that ends before its head raises http.client.RemoteDisconnected, one h11 refuses
    Unframed."""
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
    """Hold one kept-alive socket and its h11 parser (``parser``), used by one request at a time. Each request is
    written by the parser (``request``) and each byte received is fed to it once (``receive_steps``), then asked for
    events (``event_steps``), so that the same reading serves one exchange in its own thread (loop.run) and many in one
    (loop.Loop); a byte sent past a reply stays in the parser and is seen (``idle``) rather than read as the next
    request's reply.

    Every byte read counts (``received``, since the last request was written): the heads of a reply, its interim replies
    included, at most MAX_HEAD; then the reply's own cap (``bound``, response.body_cap); and between two events at most
    MAX_BLOCK (a chunk header with its extensions, a trailer block). A read never takes more than the cap leaves, and
    the deadline is checked before every read, not only before a wait.

    The socket never blocks: a send or read that the socket can take at once is one system call, and a wait is a
    loop.Ready given what is left of the deadline (a poll, or the loop's selector). A socket with a timeout would cost a
    poll before every send and read and a mode switch for every timeout set."""

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

    def request(self, method: bytes, target: bytes, fields: list, data: Optional[bytes]) -> bytes:
        """Write the bytes of a request with the parser (which then expects its reply); its heads bounded by MAX_HEAD
        from here."""
        try:
            written = request_bytes(self.parser, method, target, fields, data)
        except h11.LocalProtocolError as exc:
            raise Unframed("the request could not be written: %s" % exc) from None
        self.received, self._cap, self._over, self._since = 0, MAX_HEAD, Unframed, 0
        return written

    def bound(self, cap: Optional[int], over) -> None:
        """Bound the reply: from here it may have ``cap`` bytes received in all (None: as many as MAX_HEAD more), past
        which its reading raises ``over`` (response.TooLarge for a body)."""
        self._cap = self.received + MAX_HEAD if cap is None else cap
        self._over = over

    def send_steps(self, data: bytes, deadline: float) -> Generator:
        """Write, as steps, ``data`` whole before ``deadline``: at once when the socket takes it all (a request usually
        does), else waiting for room as often as needed, each wait given what is left of the deadline."""
        time_left(deadline)  # the deadline passed already: nothing is written
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

    def event_steps(self, deadline: float) -> Generator:
        """Read, as steps, the parser's next event (an h11 event, never NEED_DATA), bytes read for it as needed.
        Unframed when h11 refuses the reply or MAX_BLOCK bytes came without an event."""
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

    def receive_steps(self, deadline: float) -> Generator:
        """Read, as steps, the next bytes from the socket, fed to the parser (or its end), at most what the reply's cap
        leaves, waiting for them at most until ``deadline``, which is checked first (bytes that keep coming never
        outlast it). The first read of a reply waits before it reads (the reply takes a round trip to come); later ones
        read first, and wait only when nothing has come."""
        time_left(deadline)
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

    def buffered(self) -> bool:
        """Tell whether the parser holds bytes it has not read (past a reply: unasked)."""
        return bool(self.parser.trailing_data[0])

    def next_cycle(self) -> bool:
        """Tell whether the connection may carry another request now that a reply was read whole (h11 says so: neither
        side asked to close it); the parser is readied for it."""
        parser = self.parser
        if parser.our_state is not h11.DONE or parser.their_state is not h11.DONE:
            return False
        parser.start_next_cycle()
        return True

    def idle(self) -> bool:
        """Tell whether nothing is waiting on the connection: no byte past the last reply, received or arrived since
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

    def secured(self, context: ssl.SSLContext, hostname: str, verify, deadline: float) -> Generator:
        """Wrap, as steps, this connection's socket in TLS (SNI ``hostname``): the handshake within the deadline, then
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

    def close(self) -> None:
        """Close the socket; a socket that fails to close is closed enough."""
        try:
            self.sock.close()
        except OSError:
            pass
