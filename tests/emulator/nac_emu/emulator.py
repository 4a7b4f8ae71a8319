# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NAC API emulator as one object: the model behind a server, started and stopped, and what tests ask of it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ssl
import threading

from .common import ApiError, describe
from .model import NacModel
from .outage import OutageMixin, start_outage
from .server import serve, stop_serving


class Emulator(OutageMixin):
    """The NAC API emulator: ``Emulator(config, latency, state_path).start()``; see the README."""

    def __init__(
        self,
        config=None,
        latency=0.0,
        state_path=None,
        verbose=False,
        tls_cert=None,
        tls_key=None,
        faults=None,
        outage=None,
        hostile=None,
        framing=None,
    ):
        self.model = NacModel(config, state_path, faults, hostile, framing)
        self.latency = float(latency)
        self.verbose = verbose
        self.tls = None
        if tls_cert:  # HTTPS with this PEM certificate (and key, unless the certificate file holds it)
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(tls_cert, tls_key)
        if outage:  # scheduled at start: {"seconds", "mode", "delay", "after_requests"} (README, "Outages")
            outage = start_outage(outage)
        self._start_outage = outage
        self.host = None
        self._port = None
        self._server = None
        self._thread = None
        self._running = False
        self._stats = dict(connections=0, delayed=0, delaying=0, most_delaying=0)
        self._stats_lock = threading.Lock()
        self._lock = threading.RLock()  # the listening server and the outage
        self._init_outage()

    def start(self, host="127.0.0.1", port=0):
        with self._lock:
            if self._running:
                raise RuntimeError("the emulator is already running")
            self._listen(host, port)
            self.host, self._port, self._running = host, self._server.server_address[1], True
        if self._start_outage:
            self.outage(**self._start_outage)
        return self

    def _listen(self, host, port):
        """Bind, listen and serve in a thread (call with the lock held)."""
        self._server, self._thread = serve((host, port), self, self.tls)

    @property
    def port(self):
        return self._port if self._running else None

    @property
    def url(self):
        return "%s://%s:%s" % ("https" if self.tls else "http", self.host, self._port) if self._running else None

    def request_counts(self):
        return self.model.request_counts()

    def server_stats(self):
        """{connections: accepted so far, delayed: /api requests delayed by the latency,
        most_delaying: the most of them delayed at the same moment} (since start, across restarts)."""
        with self._stats_lock:
            stats = dict(self._stats)
        del stats["delaying"]
        return stats

    def reset(self):
        self.model.reset()

    def faults(self, **changes):
        """Change the fault settings (as POST /_emulator/faults) and return the snapshot (as its GET)."""
        if changes:
            self.model.faults.configure(changes)
        return self.model.faults.snapshot()

    def settings(self, **changes):
        """Change server-variant settings (as POST /_emulator/settings) and return them all (as its GET)."""
        problems = self.model.configure(changes)
        if problems:
            raise ValueError("settings: " + describe(problems))
        return self.model.settings_snapshot()

    def rate_limit(self, **changes):
        """Change the token bucket (as POST /_emulator/rate_limit) and return its settings and counts (as its GET)."""
        problems = self.model.rate_limit.configure(changes)
        if problems:
            raise ValueError("rate_limit: " + describe(problems))
        return self.model.rate_limit.snapshot()

    def hostile(self, **changes):
        """Change the hostile settings (as POST /_emulator/hostile) and return the snapshot (as its GET)."""
        try:
            return self.model.set_hostile(changes)
        except ApiError as exc:
            raise ValueError("hostile: %s" % exc.reply[2].decode("utf-8")) from None

    def seed(self, records):
        """Insert raw records as given (as POST /_emulator/devices); returns their ids."""
        try:
            return self.model.seed_records(records)
        except ApiError as exc:
            raise ValueError("seed: %s" % exc.reply[2].decode("utf-8")) from None

    def seed_bulk(self, count, prefix="bulk-", start=1):
        """Add ``count`` bulk devices (as POST /_emulator/devices {"count": N}); returns (first id, last id)."""
        return self.model.seed_bulk(count, prefix, start)

    def variant_counts(self):
        """What the servers that confirm nothing did since start/reset (as GET /_emulator/variants): twins
        created, redirects answered, page shifts, lists capped, lists that lagged."""
        return self.model.variant_counts()

    def records(self):
        """Every device record, whole (never paginated nor padded)."""
        return self.model.records()

    def advance_clock(self, seconds):
        return self.model.advance_clock(seconds)

    def stop(self):
        with self._lock:
            self._running = False
            self._stop_outages()
            server, thread, self._server, self._thread = self._server, self._thread, None, None
        if server is not None:
            stop_serving(server, thread)
        self.model.close()

    def __enter__(self):
        if not self._running:
            self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()
