# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault injection of the NAC API emulator: what a faulty network or load balancer in front of the service does
to a request (README, "Faults")."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import random
import re
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler

from .common import ApiError, ProblemsError, is_int, is_number, json_reply, server_error

FAULT_MODES = ("500", "502", "503", "429", "reset", "commit_drop", "commit_500", "slow")
FAULT_DEFAULTS = {
    "rate": 0.0,
    "modes": list(FAULT_MODES),
    "seed": None,
    "retry_after": 1,
    "slow": 31.0,
    "only": None,
    "limit": None,
    "commit_delay": 0.0,
    "in_front": False,
}
FAULT_ONLY_RE = re.compile(r"^[A-Z]+ /\S*$")
GATEWAY_HTML = (
    b"<html><head><title>%d %s</title></head><body><center><h1>%d %s</h1></center>"
    b"<hr><center>nginx</center></body></html>"
)


def fault_settings(current, changes):
    """(``current`` updated with ``changes``, {key: problem}) for the fault settings of FAULT_DEFAULTS."""
    problems = dict(
        (key, "unknown setting (known: %s)" % ", ".join(FAULT_DEFAULTS)) for key in changes if key not in FAULT_DEFAULTS
    )
    settings = dict(current)
    settings.update((key, value) for key, value in changes.items() if key in FAULT_DEFAULTS)
    modes = settings["modes"]
    if not is_number(settings["rate"]) or not 0 <= settings["rate"] <= 1:
        problems["rate"] = "must be a number from 0 to 1"
    if not isinstance(modes, list) or not modes or not all(isinstance(m, str) and m in FAULT_MODES for m in modes):
        problems["modes"] = "must be a non-empty list of: %s" % ", ".join(FAULT_MODES)
    else:
        settings["modes"] = list(collections.OrderedDict.fromkeys(modes))
    if settings["seed"] is not None and not is_int(settings["seed"]):
        problems["seed"] = "must be an integer or null"
    if not is_int(settings["retry_after"]) or settings["retry_after"] < 0:
        problems["retry_after"] = "must be a whole number of seconds, 0 or more"
    if not is_number(settings["slow"]) or settings["slow"] < 0:
        problems["slow"] = "must be a number of seconds, 0 or more"
    only = settings["only"]
    if only is not None and (
        not isinstance(only, list)
        or not only
        or not all(isinstance(item, str) and FAULT_ONLY_RE.match(item) for item in only)
    ):
        problems["only"] = (
            "must be null (every /api request) or a non-empty list of 'METHOD /path' such as 'POST /api/device'"
        )
    if settings["limit"] is not None and (not is_int(settings["limit"]) or settings["limit"] < 0):
        problems["limit"] = "must be null (no limit) or a whole number of faults, 0 or more"
    if not is_number(settings["commit_delay"]) or settings["commit_delay"] < 0:
        problems["commit_delay"] = "must be a number of seconds, 0 or more"
    if not isinstance(settings["in_front"], bool):
        problems["in_front"] = "must be true (faults in front of the rate limiter) or false (behind it)"
    return settings, problems


class FaultSettingsError(ProblemsError):
    """Fault settings that are not usable; ``problems`` maps each bad key to what is wrong."""

    what = "fault settings"


class Faults:
    """Fault injection in front of the API (README, "Faults"); thread-safe.

    Each /api request (of ``only``, when given) draws once from a seeded generator: with probability
    ``rate`` it gets one of ``modes``, evenly chosen, until ``limit`` faults were injected.
    reset() returns to the settings given at construction.
    """

    def __init__(self, settings=None):
        self.initial, problems = fault_settings(FAULT_DEFAULTS, settings or {})
        if problems:
            raise FaultSettingsError(problems)
        self.lock = threading.Lock()
        self.generation = 0  # bumped by reset(): a late commit of an earlier generation is dropped
        self.reset()

    def reset(self):
        with self.lock:
            self._apply(self.initial, reseed=True)
            self.injected = collections.Counter()
            self.holding = 0
            self.generation += 1

    def _apply(self, settings, reseed):
        """Call with the lock held. A null seed is replaced by a random one, shown by snapshot()."""
        self.settings = dict(settings)
        if reseed:
            if self.settings["seed"] is None:
                self.settings["seed"] = random.SystemRandom().randrange(2**32)
            self.random = random.Random(self.settings["seed"])

    def configure(self, changes):
        """Change some settings (keys of FAULT_DEFAULTS); a given seed restarts the generator."""
        with self.lock:
            settings, problems = fault_settings(self.settings, changes)
            if problems:
                raise FaultSettingsError(problems)
            self._apply(settings, reseed="seed" in changes)

    def draw(self, method=None, path=None):
        """The fault mode for the next /api request (``method`` ``path``, query stripped), or None."""
        with self.lock:
            rate, only, limit = self.settings["rate"], self.settings["only"], self.settings["limit"]
            if rate <= 0:
                return None
            if only and "%s %s" % (method, path) not in only:
                return None
            if limit is not None and sum(self.injected.values()) >= limit:
                return None
            if self.random.random() >= rate:
                return None
            mode = self.random.choice(self.settings["modes"])
            self.injected[mode] += 1
            return mode

    def reply(self, mode):
        """The reply of a fault answered in front of the service (500, 502, 503, 429)."""
        if mode == "500":
            return server_error().reply
        if mode == "429":
            seconds = self.settings["retry_after"]
            return json_reply(
                429,
                {"error": "Too many requests", "message": "Rate limit exceeded, retry in %d s" % seconds},
                headers=[("Retry-After", str(seconds))],
            )
        status = int(mode)
        reason = BaseHTTPRequestHandler.responses[status][0]
        return (status, "text/html", GATEWAY_HTML % (status, reason.encode(), status, reason.encode()), ())

    def hold(self):
        """Hold a slow request for ``slow`` seconds (never under the lock)."""
        with self.lock:
            seconds = self.settings["slow"]
            self.holding += 1
            generation = self.generation
        try:
            time.sleep(seconds)
        finally:
            with self.lock:
                if generation == self.generation:
                    self.holding -= 1

    def commit_delay(self):
        with self.lock:
            return self.settings["commit_delay"]

    def in_front(self):
        """Whether faults are drawn in front of the rate limiter (a faulty request never reaches it)."""
        with self.lock:
            return self.settings["in_front"]

    def later(self, action):
        """Run ``action`` (a late commit) ``commit_delay`` seconds from now in its own thread; counted in
        ``holding`` until it has run. Dropped when reset() comes first."""
        with self.lock:
            seconds = self.settings["commit_delay"]
            self.holding += 1
            generation = self.generation

        def run():
            time.sleep(seconds)
            with self.lock:
                current = generation == self.generation
            try:
                if current:
                    action()
            except ApiError:
                pass  # processed late and refused (a conflict, say): nobody hears of it, as with any lost reply
            except Exception:  # pylint: disable=broad-except
                traceback.print_exc()
            finally:
                with self.lock:
                    if generation == self.generation:
                        self.holding -= 1

        threading.Thread(target=run, name="nac-emulator-late-commit", daemon=True).start()

    def snapshot(self):
        """The settings, the faults injected by mode since start/reset, and the requests held now (slow, late
        commits)."""
        with self.lock:
            injected = dict((mode, self.injected[mode]) for mode in FAULT_MODES)
            settings = dict(self.settings, modes=list(self.settings["modes"]))
            if settings["only"] is not None:
                settings["only"] = list(settings["only"])
            return dict(settings, injected=injected, total=sum(injected.values()), holding=self.holding)
