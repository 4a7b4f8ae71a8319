# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Outages of the NAC API emulator (README, "Outages"): refused connections or silence for some seconds, then back
with the state intact."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import sys
import threading
import time

from .common import ProblemsError, is_int, is_number, json_reply, not_allowed, parse_object, validation_error
from .server import stop_serving

OUTAGE_MODES = ("refuse", "silent")
OUTAGE_KEYS = ("seconds", "mode", "delay", "after_requests")


def outage_problems(seconds, mode, delay, after_requests):
    problems = {}
    if not is_number(seconds) or not 0 < seconds <= 3600:
        problems["seconds"] = "must be a number of seconds, above 0 and at most 3600"
    if mode not in OUTAGE_MODES:
        problems["mode"] = "must be one of %s" % ", ".join(OUTAGE_MODES)
    if not is_number(delay) or delay < 0:
        problems["delay"] = "must be a number of seconds, 0 or more"
    if after_requests is not None and (not is_int(after_requests) or after_requests < 1):
        problems["after_requests"] = "must be null or a whole number of /api requests, 1 or more"
    if after_requests is not None and is_number(delay) and delay > 0:
        problems["after_requests"] = "give delay or after_requests, not both"
    return problems


def start_outage(outage):
    """The outage of Emulator(outage=...), scheduled at start, with its defaults; OutageError if not usable."""
    outage = dict(dict(mode="refuse", delay=0.0, after_requests=None), **outage)
    problems = outage_problems(outage.get("seconds"), outage["mode"], outage["delay"], outage["after_requests"])
    problems.update((key, "unknown key") for key in set(outage) - set(OUTAGE_KEYS))
    if problems:
        raise OutageError(problems)
    return outage


class OutageError(ProblemsError):
    """An outage that cannot be scheduled; ``problems`` maps each bad key to what is wrong."""

    what = "outage"


class OutageMixin:
    """The outages of Emulator: its listening server is closed and opened again under its lock."""

    def _init_outage(self):
        self._outage = dict(state="none")
        self._outage_token = 0
        self._outage_timers = []
        self._outages = 0
        self._unanswered = 0
        self._silence_over = threading.Event()
        self._silence_over.set()

    def _stop_outages(self):
        """Whatever outage was scheduled or under way ends here (the emulator stops; call with the lock held)."""
        self._outage_token += 1
        if self._outage["state"] in ("scheduled", "active"):
            self._outage = dict(self._outage, state="over", ends=None)
        for timer in self._outage_timers:
            timer.cancel()
        self._outage_timers = []
        self._silence_over.set()

    def outage(self, seconds, mode="refuse", delay=0.0, after_requests=None):
        """Schedule an outage of ``seconds`` (refused connections, or silence) to begin after ``delay`` seconds,
        or once ``after_requests`` more /api requests were counted, or now; returns outage_state()."""
        token, now = self._schedule_outage(seconds, mode, delay, after_requests)
        if now:
            self._begin_outage(token)
        return self.outage_state()

    def _schedule_outage(self, seconds, mode, delay, after_requests):
        """(token, now): ``now`` when the outage is to begin at once (the caller begins it)."""
        problems = outage_problems(seconds, mode, delay, after_requests)
        with self._lock:
            if not self._running:
                problems["state"] = "the emulator is not running"
            elif self._outage["state"] in ("scheduled", "active"):
                problems["state"] = "an outage is already %s" % self._outage["state"]
            if problems:
                raise OutageError(problems)
            self._outage_token += 1
            token = self._outage_token
            threshold = self.model.total_requests() + after_requests if after_requests else None
            self._outage = dict(
                state="scheduled",
                mode=mode,
                seconds=seconds,
                delay=delay,
                after_requests=after_requests,
                threshold=threshold,
                ends=None,
            )
            if delay > 0:
                self._timer(delay, self._begin_outage, token)
            return token, delay <= 0 and threshold is None

    def _timer(self, seconds, function, *args):
        timer = threading.Timer(seconds, function, args)
        timer.daemon = True
        self._outage_timers = [t for t in self._outage_timers if t.is_alive()] + [timer]
        timer.start()

    def api_request_counted(self):
        """Called once each /api request is counted: an outage scheduled after that many requests becomes
        active now (later requests are refused or held); returns what to run once this request's reply is
        sent (closing the listener), or None."""
        with self._lock:
            outage = self._outage
            if outage["state"] != "scheduled" or outage.get("threshold") is None:
                return None
            if self.model.total_requests() < outage["threshold"]:
                return None
            return self._activate(self._outage_token)

    def _begin_outage(self, token):
        cut = self._activate(token)
        if cut is not None:
            cut()

    def _activate(self, token):
        """Mark the outage active (requests from now on are refused or held); returns the callable that
        closes the listening socket and cuts the open connections (refuse mode), or None."""
        with self._lock:
            outage = self._outage
            if token != self._outage_token or outage["state"] != "scheduled" or not self._running:
                return None
            outage.update(state="active", ends=time.monotonic() + outage["seconds"])
            self._silence_over.clear()
            server, thread = (self._server, self._thread) if outage["mode"] == "refuse" else (None, None)
            if server is not None:
                self._server = self._thread = None
            self._timer(outage["seconds"], self._end_outage, token)
        if server is None:
            return None
        return lambda: stop_serving(server, thread)

    def _end_outage(self, token):
        with self._lock:
            outage = self._outage
            if token != self._outage_token or outage["state"] != "active":
                return
            silent_server = None
            if self._running and outage["mode"] == "refuse":
                deadline = time.monotonic() + 10
                while True:  # the same port again (SO_REUSEADDR); another process may hold it a moment
                    try:
                        self._listen(self.host, self._port)
                        break
                    except OSError as exc:
                        if time.monotonic() > deadline:
                            sys.stderr.write(
                                "nac_emulator: cannot listen on port %s again after the outage: %s\n"
                                % (self._port, exc)
                            )
                            self._running = False
                            break
                        time.sleep(0.1)
            elif outage["mode"] == "silent":
                silent_server = self._server
            outage.update(state="over", ends=None)
            self._outages += 1
            self._silence_over.set()
        if silent_server is not None:  # what was held unanswered is dropped, as by a restart
            silent_server.close_connections()

    def cancel_outage(self):
        """Drop a scheduled outage, or end an active one now; returns outage_state()."""
        with self._lock:
            state, token = self._outage["state"], self._outage_token
            if state == "scheduled":
                self._outage_token += 1
                self._outage = dict(state="none")
        if state == "active":
            self._end_outage(token)
        return self.outage_state()

    def refusing(self):
        outage = self._outage
        return outage["state"] == "active" and outage["mode"] == "refuse"

    def silenced(self):
        outage = self._outage
        return outage["state"] == "active" and outage["mode"] == "silent"

    def wait_silence(self):
        """Hold an /api request unanswered until the silent outage ends (or the emulator stops)."""
        with self._lock:
            self._unanswered += 1
        self._silence_over.wait()

    def outage_state(self):
        """{"state": none|scheduled|active|over, "mode", "seconds", "delay", "after_requests", "remaining",
        "outages": outages ended since start, "unanswered": /api requests held unanswered by silent outages}."""
        with self._lock:
            outage = dict(self._outage)
            outage.pop("threshold", None)
            ends = outage.pop("ends", None)
            if outage["state"] == "active" and ends is not None:
                outage["remaining"] = round(max(ends - time.monotonic(), 0.0), 3)
            outage.update(outages=self._outages, unanswered=self._unanswered)
            return outage

    def admin_outage(self, method, body):
        """GET / POST /_emulator/outage: (reply, callable to run once the reply is sent)."""
        if method == "GET":
            return json_reply(200, self.outage_state()), None
        if method != "POST":
            raise not_allowed(method, "/_emulator/outage", ("GET", "POST"))
        data = parse_object(body)
        if data.get("cancel") is True and set(data) == {"cancel"}:
            return json_reply(200, self.cancel_outage()), None
        unknown = sorted(set(data) - set(OUTAGE_KEYS))
        if unknown:
            raise validation_error(
                dict(
                    (key, "unknown key (known: seconds, mode, delay, after_requests; or cancel alone)")
                    for key in unknown
                )
            )
        try:
            token, now = self._schedule_outage(
                data.get("seconds"), data.get("mode", "refuse"), data.get("delay", 0.0), data.get("after_requests")
            )
        except OutageError as exc:
            raise validation_error(exc.problems) from None
        cut = self._activate(token) if now else None  # active before this reply; the listener closes after it
        return json_reply(200, self.outage_state()), cut
