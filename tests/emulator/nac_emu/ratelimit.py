# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A rate limiter in front of the emulated API (README, "Rate limit"): one token bucket shared by every client.

``rate`` tokens a second flow into a bucket that holds at most ``burst``; an /api request takes one token, and a
request that finds none is refused with ``429 Too Many Requests`` and ``Retry-After: retry_after`` (nothing
processed). ``rate`` 0 turns the limiter off. The refusals sent are counted (GET /_emulator/rate_limit)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

from .common import is_int, is_number, json_reply

RATE_LIMIT_DEFAULTS = {"rate": 0.0, "burst": 1, "retry_after": 1}


def rate_limit_problems(settings):
    """{key: problem} for rate-limit settings that are unknown or not usable."""
    problems = dict((key, "unknown key (known: rate, burst, retry_after)") for key in settings)
    for key in RATE_LIMIT_DEFAULTS:
        problems.pop(key, None)
    if "rate" in settings and (not is_number(settings["rate"]) or settings["rate"] < 0):
        problems["rate"] = "must be a number of requests a second, 0 or more (0: no limit)"
    if "burst" in settings and (not is_int(settings["burst"]) or settings["burst"] < 1):
        problems["burst"] = "must be a whole number of requests, 1 or more"
    if "retry_after" in settings and (not is_int(settings["retry_after"]) or settings["retry_after"] < 0):
        problems["retry_after"] = "must be a whole number of seconds, 0 or more"
    return problems


class RateLimit:
    """The token bucket (thread-safe). ``clock`` is a monotonic clock in seconds (tests pass their own)."""

    def __init__(self, settings=None, clock=time.monotonic):
        self.clock = clock
        self.lock = threading.Lock()
        self.initial = dict(RATE_LIMIT_DEFAULTS)
        if settings is not None and not isinstance(settings, dict):
            raise ValueError("rate_limit: must be an object with rate, burst and retry_after")
        self.initial.update(settings or {})
        problems = rate_limit_problems(self.initial)
        if problems:
            raise ValueError("rate_limit: " + "; ".join("%s %s" % item for item in sorted(problems.items())))
        self.reset()

    def reset(self):
        """Back to the configured settings, a full bucket and no refusals counted."""
        with self.lock:
            self.settings = dict(self.initial)
            self.tokens = float(self.settings["burst"])
            self.last = self.clock()
            self.refused = 0
            self.admitted = 0

    def configure(self, changes):
        """Change some settings (ValueError-free: returns {key: problem} and changes nothing on a problem).
        The bucket starts full again; the counts are kept."""
        problems = rate_limit_problems(changes)
        if not problems:
            with self.lock:
                self.settings.update(changes)
                self.tokens = float(self.settings["burst"])
                self.last = self.clock()
        return problems

    def snapshot(self):
        with self.lock:
            return dict(self.settings, refused=self.refused, admitted=self.admitted)

    def admit(self):
        """None if the request may go on (a token taken, or no limit), else the 429 reply to send instead."""
        with self.lock:
            rate = self.settings["rate"]
            if not rate:
                return None
            now = self.clock()
            self.tokens = min(float(self.settings["burst"]), self.tokens + (now - self.last) * rate)
            self.last = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                self.admitted += 1
                return None
            self.refused += 1
            seconds = self.settings["retry_after"]
        return json_reply(
            429,
            {"error": "Too many requests", "message": "Rate limit exceeded, retry in %d s" % seconds},
            headers=[("Retry-After", str(seconds))],
        )
