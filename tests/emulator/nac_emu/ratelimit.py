# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A rate limiter in front of the emulated API (README, "Rate limit"): one limiter shared by every client, of the
shapes real deployments put in front of an API (``shape``):

- ``token``: a token bucket. ``rate`` tokens a second flow into a bucket that holds at most ``burst``; a request
  takes one; a request that finds none is refused.
- ``leaky``: nginx's ``limit_req`` (ngx_http_limit_req_module, with ``nodelay``): a request is admitted when the
  excess of the requests admitted (each adds one, ``rate`` drain away a second) stays at most ``burst`` (0: the
  requests must come ``1 / rate`` seconds apart); a refusal changes nothing. nginx sends no Retry-After.
- ``penalty``: a penalty box. Over ``rate`` requests admitted in the last second, every request is refused for
  ``retry_after`` seconds.
- ``window``: a fixed window (Kong's rate-limiting plugin): ``rate`` requests a clock second; Retry-After: the
  seconds left of the window. With ``quota_headers`` every reply (admitted or refused) states the quota as Kong
  does: ``RateLimit-Limit``, ``RateLimit-Remaining``, ``RateLimit-Reset`` (the seconds left of the window, rounded
  up: 1 all through a second's window), ``X-RateLimit-Limit-Second`` and ``X-RateLimit-Remaining-Second``;
  ``quota_headers: "draft"`` states it as the IETF draft does instead: ``RateLimit-Limit``, ``RateLimit-Remaining``,
  ``RateLimit-Reset`` and ``RateLimit-Policy: <limit>;w=1``, without Kong's own headers.
- ``drf``: Django REST framework's throttle: ``rate`` requests admitted in any second (a sliding log); Retry-After:
  the seconds until one is free, as DRF reckons them (what is left of the oldest, shared among those free then).

A refusal is answered with ``status`` (429 or 503), nothing processed, and ``Retry-After: retry_after`` (for
``window`` and ``drf`` their own figure), unless ``retry_after`` is null: no Retry-After. ``close_after`` (seconds,
0: never) makes the server close each kept-alive connection that long after its reply, without
``Connection: close`` (server.py): a client that reuses it then finds it closing. ``rate`` 0 turns the limiter
off. The refusals sent are counted (GET /_emulator/rate_limit)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import math
import threading
import time

from .common import is_int, is_number, json_reply

SHAPES = ("token", "leaky", "penalty", "window", "drf")
RATE_LIMIT_DEFAULTS = {
    "rate": 0.0,
    "burst": 1,
    "retry_after": 1,
    "shape": "token",
    "status": 429,
    "close_after": 0.0,
    "quota_headers": False,
}


def rate_limit_problems(settings):
    """{key: problem} for rate-limit settings that are unknown or not usable."""
    problems = dict((key, "unknown key (known: %s)" % ", ".join(RATE_LIMIT_DEFAULTS)) for key in settings)
    for key in RATE_LIMIT_DEFAULTS:
        problems.pop(key, None)
    if "rate" in settings and (not is_number(settings["rate"]) or settings["rate"] < 0):
        problems["rate"] = "must be a number of requests a second, 0 or more (0: no limit)"
    if "burst" in settings and (not is_int(settings["burst"]) or settings["burst"] < 0):
        problems["burst"] = "must be a whole number of requests, 0 or more (a token bucket: 1 or more)"
    retry_after = settings.get("retry_after")
    if retry_after is not None and (not is_int(retry_after) or retry_after < 0):
        problems["retry_after"] = "must be a whole number of seconds, 0 or more, or null (no Retry-After)"
    if "shape" in settings and settings["shape"] not in SHAPES:
        problems["shape"] = "must be one of: %s" % ", ".join(SHAPES)
    if "status" in settings and settings["status"] not in (429, 503):
        problems["status"] = "must be 429 or 503"
    if "close_after" in settings and (not is_number(settings["close_after"]) or settings["close_after"] < 0):
        problems["close_after"] = "must be a number of seconds, 0 or more (0: connections are kept alive)"
    if "quota_headers" in settings and not (
        isinstance(settings["quota_headers"], bool) or settings["quota_headers"] == "draft"
    ):
        problems["quota_headers"] = (
            'must be true, false or "draft" (the quota stated on every reply as Kong does, or as the IETF draft does)'
        )
    return problems


class RateLimit:
    """The limiter (thread-safe). ``clock`` is a monotonic clock in seconds (tests pass their own)."""

    def __init__(self, settings=None, clock=time.monotonic):
        self.clock = clock
        self.lock = threading.Lock()
        self.initial = dict(RATE_LIMIT_DEFAULTS)
        if settings is not None and not isinstance(settings, dict):
            raise ValueError("rate_limit: must be an object with rate, burst and retry_after")
        self.initial.update(settings or {})
        problems = self._problems(self.initial)
        if problems:
            raise ValueError("rate_limit: " + "; ".join("%s %s" % item for item in sorted(problems.items())))
        self.reset()

    @staticmethod
    def _problems(settings):
        problems = rate_limit_problems(settings)
        if not problems and settings["shape"] == "token" and settings["burst"] < 1:
            problems["burst"] = "must be 1 or more for a token bucket"
        if not problems and settings["quota_headers"] and settings["shape"] != "window":
            problems["quota_headers"] = "only with shape window (Kong's fixed window)"
        return problems

    def reset(self):
        """Back to the configured settings, a full bucket and no refusals counted."""
        with self.lock:
            self.settings = dict(self.initial)
            self._restart()
            self.refused = 0
            self.admitted = 0

    def _restart(self):
        """The limiter's state afresh (lock held): a full bucket, nothing admitted, no penalty."""
        self.tokens = float(self.settings["burst"])
        self.last = self.clock()
        self.excess = None  # leaky: the excess of the last request admitted (None: none yet)
        self.log = collections.deque()  # penalty, drf: the times of the requests admitted in the last second
        self.penalty_until = 0.0
        self.window = (None, 0)  # window: (the clock second, requests admitted in it)

    def configure(self, changes):
        """Change some settings (ValueError-free: returns {key: problem} and changes nothing on a problem).
        The limiter starts afresh; the counts are kept."""
        problems = rate_limit_problems(changes)
        if not problems:
            with self.lock:
                settings = dict(self.settings, **changes)
                problems = self._problems(settings)
                if not problems:
                    self.settings = settings
                    self._restart()
        return problems

    def snapshot(self):
        with self.lock:
            return dict(self.settings, refused=self.refused, admitted=self.admitted)

    def close_after(self):
        """Seconds after a reply that the server closes the connection (0: kept alive)."""
        return self.settings["close_after"]

    def admit(self):
        """None if the request may go on (admitted, or no limit), else the refusal to send instead."""
        return self.admit_stating()[0]

    def admit_stating(self):
        """(None, headers) if the request may go on, its reply to carry ``headers`` (the quota's, with
        ``quota_headers``), else (the refusal to send instead, ())."""
        with self.lock:
            settings = self.settings
            if not settings["rate"]:
                return None, ()
            now = self.clock()
            wait = getattr(self, "_" + settings["shape"])(now, settings["rate"], settings["burst"])
            stated = self._stated(now) if settings["quota_headers"] else []
            if wait is None:
                self.admitted += 1
                return None, tuple(stated)
            self.refused += 1
            status, retry_after = settings["status"], settings["retry_after"]
        if retry_after is not None and wait is not True:
            retry_after = max(1, int(math.ceil(wait - 1e-9)))
        headers = stated + ([] if retry_after is None else [("Retry-After", str(retry_after))])
        title = "Too many requests" if status == 429 else "Service temporarily unavailable"
        message = "Rate limit exceeded" + ("" if retry_after is None else ", retry in %d s" % retry_after)
        return json_reply(status, {"error": title, "message": message}, headers=headers), ()

    def _stated(self, now):
        """The quota headers for the window at ``now``, Kong's or the IETF draft's (lock held)."""
        limit = int(math.ceil(self.settings["rate"]))
        remaining = str(max(0, limit - self.window[1]))
        reset = str(max(1, int(math.ceil(math.floor(now) + 1 - now - 1e-9))))
        stated = [("RateLimit-Limit", str(limit)), ("RateLimit-Remaining", remaining), ("RateLimit-Reset", reset)]
        if self.settings["quota_headers"] == "draft":
            return stated + [("RateLimit-Policy", "%d;w=1" % limit)]
        return stated + [("X-RateLimit-Limit-Second", str(limit)), ("X-RateLimit-Remaining-Second", remaining)]

    # Each shape: None when the request is admitted (its state updated), else True (refused: Retry-After as set)
    # or the seconds it reckons the client should wait (its own Retry-After).

    def _token(self, now, rate, burst):
        self.tokens = min(float(burst), self.tokens + (now - self.last) * rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return None
        return True

    def _leaky(self, now, rate, burst):
        if self.excess is not None:
            excess = max(0.0, self.excess - (now - self.last) * rate + 1.0)
            if excess > burst + 1e-9:
                return True
        else:
            excess = 0.0
        self.excess, self.last = excess, now
        return None

    def _since(self, now, seconds=1.0):
        while self.log and now - self.log[0] >= seconds:
            self.log.popleft()

    def _penalty(self, now, rate, _burst):
        if now < self.penalty_until:
            return True
        self._since(now)
        if len(self.log) >= rate:
            self.penalty_until = now + self.settings["retry_after"] if self.settings["retry_after"] else now + 30.0
            return True
        self.log.append(now)
        return None

    def _window(self, now, rate, _burst):
        second, count = self.window
        if second != math.floor(now):
            second, count = math.floor(now), 0
        if count >= rate:
            return second + 1 - now
        self.window = (second, count + 1)
        return None

    def _drf(self, now, rate, _burst):
        self._since(now)
        if len(self.log) >= rate:
            remaining = 1.0 - (now - self.log[0])
            return remaining / max(1.0, rate - len(self.log) + 1)
        self.log.append(now)
        return None
