# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTTP side of the NAC API emulator: the threaded server, and the handler that routes a request to the
admin endpoints, the outage endpoint or the API (through the faults), and sends the reply."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .common import ApiError, Stream, error, json_reply, server_error

HOST_HEADER_RE = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")
MAX_BODY = 1024 * 1024


def serve(address, emulator, tls=None):
    """(server, thread): ``emulator``'s server bound to ``address``, serving in a thread of its own."""
    server = _Server(address, emulator)
    if tls:
        # The handshake happens in the connection's own thread, on its first read.
        server.socket = tls.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="nac-emulator", daemon=True
    )
    thread.start()
    return server, thread


def stop_serving(server, thread):
    """Stop ``server`` (of serve()): no new connections, the open ones cut, its ``thread`` joined."""
    server.shutdown()
    server.close_connections()
    server.server_close()
    thread.join(5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024  # the listen backlog: 256 clients connecting at once are all accepted

    def __init__(self, address, emulator):
        self.emulator = emulator
        self.connections = set()
        self.connections_lock = threading.Lock()
        # What tests check instead of timings: connections accepted, /api requests delayed by the latency,
        # and the most of them delayed at the same moment. Kept by the emulator: they outlive a restart.
        self.stats, self.stats_lock = emulator._stats, emulator._stats_lock
        ThreadingHTTPServer.__init__(self, address, _Handler)

    def server_bind(self):
        # HTTPServer.server_bind would resolve the host name (getfqdn), which can stall.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request, client_address):
        """A connection the client reset, or a TLS handshake it refused (a client that does not trust the
        certificate): what a server sees of real clients, said in one line on stderr, not as a traceback.
        Anything else is a fault of the emulator: its traceback, as socketserver prints it."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, ssl.SSLError)):
            sys.stderr.write("nac-emulator: connection from %s:%s ended: %s\n" % (client_address[:2] + (exc,)))
            return
        ThreadingHTTPServer.handle_error(self, request, client_address)

    def close_connections(self):
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "NAC-Emulator/1.0"
    sys_version = ""
    timeout = 300

    def setup(self):
        BaseHTTPRequestHandler.setup(self)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)
        with self.server.stats_lock:
            self.server.stats["connections"] += 1

    def finish(self):
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        BaseHTTPRequestHandler.finish(self)

    def dispatch(self):
        emulator = self.server.emulator
        self.framed = None
        self.connection.settimeout(self.timeout)  # a request came in time: the usual timeout for the rest of it
        if emulator.refusing():  # a restart under way: this connection dies with the old process
            self._abort()
            return
        path, _sep, query = self.path.partition("?")
        after, stated = None, ()
        try:
            body = self._read_body()
            if path == "/_emulator/outage":
                reply, after = emulator.admin_outage(self.command, body)
            elif path.startswith("/_emulator/"):
                reply = emulator.model.handle_admin(self.command, path, body)
            elif path == "/api" or path.startswith("/api/"):
                if emulator.silenced():  # accepted, never answered: dropped when the outage ends
                    emulator.wait_silence()
                    self.close_connection = True
                    return
                emulator.model.count(self.command, path)
                if emulator.model.framing_mode != "none":  # hostile framing (framing.py): the request it answers
                    self.framed = (self.command, path, body)
                after = emulator.api_request_counted()
                refusal, stated, fault = self._limit_and_fault(path)
                if emulator.latency > 0:
                    self._delay(emulator.latency)
                reply = refusal or self._api(fault, path, query, body)
            else:
                raise error(404, "Not found", "No such path %s" % path)
        except ApiError as exc:
            reply = exc.reply
        except Exception as exc:  # pylint: disable=broad-except
            traceback.print_exc()
            reply = json_reply(500, {"error": "Internal error", "message": str(exc)})
        if stated and reply is not None:  # the quota's headers (Kong's), on every reply to a request it admitted
            reply = reply[:3] + (tuple(reply[3]) + stated,)
        if reply is not None:
            self._send(reply)
        closing = emulator.model.rate_limit.close_after()
        if closing and not self.close_connection:  # closed that long after the reply (no Connection: close said)
            self.connection.settimeout(closing)  # the next request line is waited for that long at most
        if after is not None:
            after()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = dispatch
    framed = None

    def _limit_and_fault(self, path):
        """(the limiter's refusal or None, its stated headers, the fault drawn or None): by default the limiter
        is in front of the faults (a refused request draws none); with the fault setting ``in_front`` the faults
        are in front of it (a faulty request never reaches it: not counted, not refused)."""
        model = self.server.emulator.model
        front = model.faults.in_front()
        fault = model.faults.draw(self.command, path) if front else None
        refusal, stated = (None, ()) if fault else model.rate_limit.admit_stating()
        if not front and not refusal:
            fault = model.faults.draw(self.command, path)
        return refusal, stated, fault

    def _abort(self):
        """Close the connection with a TCP RST (SO_LINGER 0), no reply."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def _base(self):
        """scheme://host[:port] of this request, for the absolute links of a paginated list."""
        emulator = self.server.emulator
        host = (self.headers.get("Host") or "").strip()
        if not HOST_HEADER_RE.match(host):
            host = "%s:%d" % (emulator.host, emulator.port)
        return "%s://%s" % ("https" if emulator.tls else "http", host)

    def _api(self, fault, path, query, body):
        """The reply to an /api request under ``fault`` (README, "Faults"); None: no reply at all."""
        model = self.server.emulator.model
        if fault in ("500", "502", "503", "429"):  # answered in front of the service: nothing processed
            return model.faults.reply(fault)
        if fault == "reset":  # aborted before processing: a TCP RST (SO_LINGER 0), no reply
            self._abort()
            return None
        method, headers, base = self.command, self.headers, self._base()

        def process():
            return model.handle_api(method, path, headers, body, query=query, base=base)

        if fault in ("commit_drop", "commit_500") and model.faults.commit_delay() > 0:
            model.faults.later(process)  # the reply is lost now; the commit lands commit_delay seconds later
            if fault == "commit_drop":
                self.close_connection = True
                return None
            return server_error().reply
        if fault == "slow":  # held past the client's timeout, processed (committed) only then
            model.faults.hold()
        try:
            reply = process()
        except ApiError as exc:
            reply = exc.reply
        if fault == "commit_drop":  # processed, then the connection is closed without a reply
            self.close_connection = True
            return None
        return server_error().reply if fault == "commit_500" else reply

    def _delay(self, seconds):
        """Sleep never under a lock, so that latency does not serialise requests."""
        stats, lock = self.server.stats, self.server.stats_lock
        with lock:
            stats["delayed"] += 1
            stats["delaying"] += 1
            stats["most_delaying"] = max(stats["most_delaying"], stats["delaying"])
        try:
            time.sleep(seconds)
        finally:
            with lock:
                stats["delaying"] -= 1

    def _read_body(self):
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise error(411, "Length required", "Send the body with a Content-Length, not chunked")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            raise error(413 if length > MAX_BODY else 400, "Bad request", "Invalid or too large Content-Length")
        return self.rfile.read(length) if length else b""

    def _send(self, reply):
        status, content_type, body, headers = reply
        stream = body if isinstance(body, Stream) else None
        framing = "Transfer-Encoding: chunked" if stream and stream.chunked else "Content-Length: %d" % len(body)
        lines = [
            "%s %d %s" % (self.protocol_version, status, self.responses.get(status, ("",))[0]),
            "Server: " + self.server_version,
            "Date: " + self.date_time_string(),
            "Content-Type: " + content_type,
            framing,
        ]
        lines.extend("%s: %s" % header for header in headers)
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if self.framed is not None and stream is None:
            fields = [line for line in lines[1:] if line != framing]
            head, body = b"", self.server.emulator.model.framed(self.framed, lines[0], fields, body)
            self.framed = None
        try:
            if stream is None:
                self.wfile.write(head + body)  # one send per reply
            else:  # piece by piece: the emulator never holds a padded reply whole
                self.wfile.write(head)
                for piece in stream.pieces():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if stream.chunked else piece)
                if stream.chunked:
                    self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client is gone (it gave up on a slow or large reply, for one)
            self.close_connection = True
            return
        self.log_request(status, len(body))

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        if self.server.emulator.verbose:  # the request line only; headers (Authorization) are never logged
            BaseHTTPRequestHandler.log_message(self, format, *args)
