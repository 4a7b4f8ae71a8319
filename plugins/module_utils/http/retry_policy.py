# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decide what follows each attempt of a request (no Ansible imports): ``RetryPolicy``, one value object per request
whose one method says send again now, back off, wait for the service, or give up, so that transport.Transport's
loop only carries it out. Beside it, what it reads: the statuses retried, jittered backoff, ``Retry-After``, the
quota a reply states (``quota``: the RateLimit headers), and what a failed exchange (common.errors.ExchangeError)
tells of the service (never reached, uncertain, or unreachable altogether). The policy itself is stated once, in
words, in the table "Retries and outcomes" of the API guide (docs/docsite/rst/api.rst).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import email.utils
import random
import re
import time
from typing import Optional, Tuple

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    CONNECT,
    DECODE,
    EXCHANGE,
    PROXY,
    TLS,
    ExchangeError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import excerpt
from ansible_collections.netaccess.nac.plugins.module_utils.common.tls_trust import tls_failure
from ansible_collections.netaccess.nac.plugins.module_utils.http.outage import RECOVERED
from ansible_collections.netaccess.nac.plugins.module_utils.http.response import (
    OVER_BOUND,
    PROXY_AUTH,
    REFUSED,
    TLS_PORT,
    UNRESOLVED,
)

RETRYABLE_STATUS = frozenset((429, 500, 502, 503, 504))  # reads
WRITE_RETRYABLE_STATUS = frozenset((429,))  # writes: refused before processing
RETRY_AFTER_CAP = 30.0
BACKOFF_BASE = 0.5
BACKOFF_CAP = 10.0
RATE_LIMIT_PATIENCE = 300.0  # seconds one request may be paused by its own refusals in all, its retries untouched
REFUSAL_STATUS = frozenset((429, 503))  # a rate limit's refusals, of reads and writes alike
REFUSAL_PAUSE = 1.0  # a refusal without a usable Retry-After pauses this long until a pace is known (Throttle.pause)
UNSAID = 0.0  # refusal(): no usable Retry-After
REFUSAL_FLOOR = 0.1  # the shortest pause (a Retry-After of 0 would mean sending again at once)
QUOTA_MAX = 1000000  # a quota's limit or remaining above this is not believed (the headers are ignored)
# Kong's X-RateLimit-<unit> headers: the unit's seconds (a window longer than RATE_LIMIT_PATIENCE is not paced by)
QUOTA_UNITS = (("Second", 1), ("Minute", 60), ("Hour", 3600), ("Day", 86400), ("Month", 2592000), ("Year", 31536000))
_COUNT = re.compile(r"^[0-9]{1,9}$")
_LIMIT = re.compile(r"^([0-9]{1,9})(?:\s*;\s*w=([0-9]{1,9}))?(?:\s*,.*)?$")  # "50", "50;w=1", "50, 50;w=1"
_ITEM = re.compile(r"^(limit|remaining|reset)=([0-9]{1,9})$")

Quota = collections.namedtuple("Quota", "limit remaining reset window")


def backoff(attempt: int, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP) -> float:
    """Pick the attempt-th wait of a jittered exponential backoff: between half and all of base*2^(n-1)."""
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    return random.uniform(ceiling / 2, ceiling)


def refusal(status: int, headers) -> Optional[float]:
    """Give the seconds a rate-limit refusal asks every sender of the client to pause, or None for any other reply:
    every ``429`` and every ``503``, of a read or a write, its Retry-After at least REFUSAL_FLOOR, or UNSAID when it has
    no usable one (pacing.Throttle picks the pause then). A write refused with 503 is not sent again blindly: the
    outcome policy looks it up in the list first (apply.py)."""
    if status not in REFUSAL_STATUS:
        return None
    seconds = retry_after(headers.get("Retry-After"))
    return UNSAID if seconds is None else max(REFUSAL_FLOOR, seconds)


def retry_after(value: Optional[str], cap: float = RETRY_AFTER_CAP, now: Optional[float] = None) -> Optional[float]:
    """Read the seconds a Retry-After header asks to wait (delta-seconds or HTTP date), capped; None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    if re.match(r"^[0-9]+$", value):
        return min(float(value), cap)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), cap)


def quota(headers) -> Optional[Quota]:
    """Read what a reply says of the service's rate-limit quota, or None when it says nothing usable: ``Quota(limit,
    remaining, reset, window)``, the requests a window admits, those left in the current one, the seconds until it
    starts afresh, and the window's seconds (None when not said). Read from the IETF draft's ``RateLimit-Limit``,
    ``RateLimit-Remaining`` and ``RateLimit-Reset`` (its window from ``RateLimit-Policy: 50;w=1`` or a ``;w=`` in the
    limit), its later single field ``RateLimit: limit=50, remaining=7, reset=1``, or Kong's ``X-RateLimit-Limit-Second``
    and ``X-RateLimit-Remaining-Second`` (the window is the unit). The server's values are data: whole numbers only, the
    remaining no more than the limit, the reset no longer than RATE_LIMIT_PATIENCE, none above QUOTA_MAX; anything else
    and the headers are ignored (None), never an error."""
    try:
        if not any("ratelimit" in name.lower() for name in headers):  # the usual reply: one look at each name
            return None
        draft, kong = _draft_quota(headers), _kong_quota(headers)
    except (TypeError, ValueError, AttributeError):  # a value that is not a quota, a header that is not text
        return None
    if draft is None and kong is None:
        return None
    limit, remaining, reset, window = draft or kong
    if window is None and kong is not None and kong[0] == limit:  # Kong sends both: its unit is the window
        window = kong[3]
    if not 0 < limit <= QUOTA_MAX or not 0 <= remaining <= limit:
        return None
    if (reset is not None and reset > RATE_LIMIT_PATIENCE) or (window is not None and not 0 < window <= QUOTA_MAX):
        return None
    if reset is None and window is None:
        return None  # neither when the quota starts afresh nor over how long: nothing to pace by
    return Quota(limit, remaining, reset, window)


def _draft_quota(headers):
    """Read (limit, remaining, reset, window) from the IETF draft's fields, or None."""
    single = headers.get("RateLimit")
    if single is not None:
        items = dict(_ITEM.match(item.strip()).groups() for item in single.split(",") if _ITEM.match(item.strip()))
        if set(items) != {"limit", "remaining", "reset"}:
            return None
        return int(items["limit"]), int(items["remaining"]), int(items["reset"]), None
    limit, remaining, reset = (headers.get("RateLimit-" + name) for name in ("Limit", "Remaining", "Reset"))
    if limit is None or remaining is None or reset is None:
        return None
    limit, remaining, reset = _LIMIT.match(limit.strip()), _COUNT.match(remaining.strip()), _COUNT.match(reset.strip())
    if not (limit and remaining and reset):
        raise ValueError("not a quota")
    window = limit.group(2)
    policy = _LIMIT.match((headers.get("RateLimit-Policy") or "").strip())
    if window is None and policy and policy.group(2) and int(policy.group(1)) == int(limit.group(1)):
        window = policy.group(2)
    return int(limit.group(1)), int(remaining.group(0)), int(reset.group(0)), None if window is None else int(window)


def _kong_quota(headers):
    """Read (limit, remaining, None, window) from Kong's X-RateLimit-Limit-<unit> headers (shortest unit), or None."""
    for unit, seconds in QUOTA_UNITS:
        limit, remaining = headers.get("X-RateLimit-Limit-" + unit), headers.get("X-RateLimit-Remaining-" + unit)
        if limit is not None and remaining is not None:
            if not (_COUNT.match(limit.strip()) and _COUNT.match(remaining.strip())):
                raise ValueError("not a quota")
            return int(limit), int(remaining), None, seconds
    return None


def never_sent(exc: BaseException) -> bool:
    """Tell whether the exchange failed before any byte of the request was written (the connection never made, the
    proxy's tunnel refused): a fact the wire states (common.errors.ExchangeError's ``sent``), never read from its words.
    Any other exception may have been sent."""
    return isinstance(exc, ExchangeError) and not exc.sent


def cause(exc: BaseException) -> Optional[str]:
    """Give what the wire knows of a failure's cause (response.REFUSED, UNRESOLVED, ...), or None."""
    return exc.cause if isinstance(exc, ExchangeError) else None


def final(exc: BaseException) -> bool:
    """Tell whether sending again will not change a failure: a TLS failure, a refused proxy login, a plain http://
    request to a port where the service speaks TLS, a reply that passed a bound of this client (its heads, its interim
    replies, a chunk header or trailer block: a server that floods does so again)."""
    return isinstance(exc, ExchangeError) and (exc.stage == TLS or exc.cause in (PROXY_AUTH, TLS_PORT, OVER_BOUND))


def broke_unanswered(exc: BaseException) -> bool:
    """Tell whether an exchange broke before any byte of its reply came (ExchangeError's ``replied``), neither at its
    deadline after the request went out nor while decoding: what a kept-alive connection the server was closing does."""
    if not isinstance(exc, ExchangeError) or exc.replied or exc.stage == DECODE:
        return False
    return not (exc.sent and exc.timed_out)


def unreachable(exc: BaseException) -> Optional[str]:
    """Say why a failed attempt (``exc``) may mean that the service cannot be reached at all, or None: a connection
    refused or timed out, a name not resolved, no reply. outage.Outage decides whether it is an outage."""
    if not isinstance(exc, ExchangeError):
        return None
    if exc.stage == CONNECT and exc.timed_out:
        return "connections time out"
    if not exc.sent and not final(exc):
        return "connection refused" if exc.cause == REFUSED else connect_reason(exc)
    if exc.timed_out:
        return "no reply"
    return None


def connect_reason(exc: BaseException, secrets=()) -> str:
    """Say why a connection could not be made, by the failure's cause (its text quoted, masked, when none is known)."""
    known = {
        UNRESOLVED: "the host name could not be resolved",
        REFUSED: "connection refused (is the service running and the port right?)",
        PROXY_AUTH: "the proxy refused the credentials (407 Proxy Authentication Required): check the user and "
        "password in the proxy's URL (HTTPS_PROXY / HTTP_PROXY)",
    }.get(cause(exc))
    return known or excerpt(str(exc), 200, secrets)


def uncertain(exc: ExchangeError) -> bool:
    """Tell whether a failed exchange (``exc``, an ExchangeError) may have reached the server and been processed:
    sent and then timed out or broken off. A TLS failure, a connection never made, a proxy that refused the
    tunnel and a plain request to a TLS port were never processed."""
    if exc.stage == TLS or (exc.stage == CONNECT and exc.timed_out):
        return False
    if exc.timed_out:
        return True
    if not exc.sent or exc.cause == TLS_PORT:
        return False
    return exc.stage == EXCHANGE


def connection_failure(
    exc: ExchangeError, method: str, path: str, url: str, base_url: str, verify, timeout: float, secrets=()
) -> Tuple[str, bool]:
    """Word what a failed exchange (``exc``, an ExchangeError, of ``method path`` to the service at ``url``) says, and
    whether the request may have reached the server: ``(text, outcome_unknown)``. The exception's text is quoted with
    every form of the client's ``secrets`` masked before it is cut (server_text.excerpt)."""
    if exc.stage == TLS:
        return tls_failure(exc, url, base_url, verify, timeout), False
    if exc.stage == CONNECT and exc.timed_out:
        return "Timed out connecting to the NAC API at %s (timeout %ss)" % (url, timeout), False
    if exc.timed_out:
        return "No reply from the NAC API at %s within %ss to %s %s" % (url, timeout, method, path), True
    if exc.stage == PROXY and not exc.sent:  # the tunnel or proxy: nothing reached the service
        reason = connect_reason(exc, secrets)
        return "Could not connect to the NAC API at %s through the proxy: %s" % (url, reason), False
    if not exc.sent:
        return "Could not connect to the NAC API at %s: %s" % (url, connect_reason(exc, secrets)), False
    if exc.cause == TLS_PORT:
        text = "The NAC API at %s answered %s %s with TLS: the service speaks TLS on that port (try https://)" % (
            url,
            method,
            path,
        )
        return text, False
    if exc.stage == EXCHANGE:
        text = "The connection to the NAC API at %s broke off during %s %s: %s" % (
            url,
            method,
            path,
            excerpt(str(exc), 200, secrets),
        )
        return text, True
    return "Request %s %s to %s failed: %s" % (method, path, url, excerpt(str(exc), 200, secrets)), False


# -- the retry policy: one value object per request ------------------------------------------------------------

SEND_NOW, BACK_OFF, WAIT_FOR_SERVICE, GIVE_UP = "send now", "back off", "wait for the service", "give up"
NOT_WAITED = object()  # decide(): no WAIT_FOR_SERVICE carried out yet for this attempt


class Decision(collections.namedtuple("Decision", "action seconds error reason attempts refused stale policy")):
    """Say what follows one attempt: ``action`` (SEND_NOW, BACK_OFF, WAIT_FOR_SERVICE or GIVE_UP) and what it needs.

    ``seconds``: how long to back off (BACK_OFF). ``error``: the failed exchange given up on (an ExchangeError; None
    when the reply read is the answer). ``reason``: why the service seems unreachable (WAIT_FOR_SERVICE).
    ``attempts``: the requests sent, to state on a reply given up on (None: a refused write, whose count stays as
    read). ``refused``: a request not safe to repeat refused with 503 by a rate limit (the list decides whether
    it is sent again, apply.py). ``stale``: it broke before any byte of its reply on a kept-alive connection the
    server was closing, and is not safe to repeat (its later kind go out on new connections). ``policy``: the
    policy of the next attempt."""

    __slots__ = ()


def _decision(action, policy, seconds=0.0, error=None, reason=None, attempts=None, refused=False, stale=False):
    return Decision(action, seconds, error, reason, attempts, refused, stale, policy)


class RetryPolicy(collections.namedtuple("RetryPolicy", "total repeatable attempt fresh")):
    """Decide, after each attempt of one request, whether to send it again now, back off, wait for the service, or
    give up, so that the whole policy is one value and the transport's loop only carries it out.

    One value object per request, as urllib3's ``Retry`` is: ``decide`` never changes it, it returns the policy of
    the next attempt in its Decision. ``total``: the retries allowed (max_retries). ``repeatable``: the request is
    safe to send again after an uncertain failure (RFC 9110: GET, PUT, DELETE; a creation is not). ``attempt``: the
    retries spent. ``fresh``: the next attempt goes out on a new connection, never an idle one. The table
    "Retries and outcomes" of the API guide (docs/docsite/rst/api.rst) states this policy in words; a unit test
    (test_retry_policy.py) ties each of its rows to ``decide``."""

    __slots__ = ()

    def __new__(cls, total: int, repeatable: bool = True, attempt: int = 0, fresh: bool = False):
        return super(RetryPolicy, cls).__new__(cls, total, repeatable, attempt, fresh)

    def decide(self, outcome, refused=None, waited=NOT_WAITED) -> Decision:
        """Say what follows an attempt whose ``outcome`` is a reply (its ``status_code`` and ``headers``) or a failed
        exchange (an ExchangeError). ``refused``: for a reply the rate limit refused, the seconds its request waits
        alone (0.0: the shared pause holds it; pacing.Throttle.answered). ``waited``: what waiting for the service
        ended with (outage.UP, RECOVERED, or None when the outage policy saw no outage to wait out), once a
        WAIT_FOR_SERVICE was carried out."""
        if isinstance(outcome, ExchangeError):
            return self._after_failure(outcome, waited)
        return self._after_reply(outcome.status_code, outcome.headers, refused)

    def _after_reply(self, status, headers, refused):
        """Decide after a reply: a refusal waited out is sent again (a refused creation goes back to the list), a
        retryable status backs off for its Retry-After or the backoff, and any other status is the answer."""
        if refused is not None:  # waited out (all paused, or a stray one alone) and sent again, no retry spent
            if not self.repeatable and status == 503:  # looked up in the list, then sent again (apply.py)
                return _decision(GIVE_UP, self, refused=True)
            return _decision(BACK_OFF if refused else SEND_NOW, self, seconds=refused)
        retryable = RETRYABLE_STATUS if self.repeatable else WRITE_RETRYABLE_STATUS
        if status not in retryable or self.attempt >= self.total:
            return _decision(GIVE_UP, self, attempts=self.attempt + 1)
        following = self._replace(attempt=self.attempt + 1)
        delay = retry_after(headers.get("Retry-After"))
        return _decision(BACK_OFF, following, seconds=delay if delay is not None else backoff(following.attempt))

    def _after_failure(self, exc, waited):
        """Decide after a failed exchange: give up on a final failure, or on an uncertain one not safe to repeat; send
        again at once on a new connection when a kept-alive one was closing; wait for an unreachable service; else
        back off while retries are left."""
        broke = broke_unanswered(exc)  # its next attempt goes out on a new connection (the idle ones may be closing)
        closing = broke and exc.reused  # on a kept-alive connection: the server was closing it
        stale = closing and not self.repeatable  # whether it was processed stays the list's to decide
        following = self._replace(fresh=self.fresh or broke)
        unknown = uncertain(exc)
        if final(exc) or (unknown and not self.repeatable):  # no attempt changes a final failure
            return _decision(GIVE_UP, following, error=exc, stale=stale)
        if closing and not self.fresh:  # sent again at once on a new connection, once, its retries untouched, as
            return _decision(SEND_NOW, following, stale=stale)  # a browser or Go's client does
        if waited is NOT_WAITED:
            reason = unreachable(exc)
            if reason is not None:
                return _decision(WAIT_FOR_SERVICE, self, reason=reason)
        elif waited == RECOVERED or (waited and not unknown):  # the service answers again: sent at once, retries kept
            return _decision(SEND_NOW, following, stale=stale)
        if self.attempt >= self.total:
            return _decision(GIVE_UP, following, error=exc, stale=stale)
        following = following._replace(attempt=self.attempt + 1)
        return _decision(BACK_OFF, following, seconds=backoff(following.attempt), stale=stale)
