# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a failed exchange says, and how long to wait before the next attempt (no Ansible imports): the
statuses retried, jittered backoff, ``Retry-After``, and what a requests exception tells of the service
(never reached, or unreachable altogether). transport.Transport applies them; the policy itself is stated
once, in the table "Retries and outcomes" of the API guide (docs/docsite/rst/api.rst).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import email.utils
import random
import re
import time

try:
    import requests
except ImportError:  # the client reports requests missing (transport.HAS_REQUESTS)
    requests = None

from ansible_collections.netaccess.nac.plugins.module_utils.replies import excerpt
from ansible_collections.netaccess.nac.plugins.module_utils.tls import tls_failure

RETRYABLE_STATUS = frozenset((429, 500, 502, 503, 504))  # reads
WRITE_RETRYABLE_STATUS = frozenset((429,))  # writes: refused before processing
RETRY_AFTER_CAP = 30.0
BACKOFF_BASE = 0.5
BACKOFF_CAP = 10.0
RATE_LIMIT_PATIENCE = 300.0  # seconds one request may be paused by its own refusals in all, its retries untouched
REFUSAL_STATUS = frozenset((429, 503))  # a rate limit's refusals, of reads and writes alike
REFUSAL_PAUSE = 1.0  # a refusal without a usable Retry-After pauses this long, until the requests are paced
UNSAID = 0.0  # refusal(): no usable Retry-After
REFUSAL_FLOOR = 0.1  # the shortest pause (a Retry-After of 0 would mean sending again at once)


def backoff(attempt, base=BACKOFF_BASE, cap=BACKOFF_CAP):
    """Jittered exponential backoff: the attempt-th wait, between half and all of base*2^(n-1)."""
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    return random.uniform(ceiling / 2, ceiling)


def refusal(status, headers):
    """Seconds a rate-limit refusal asks every sender of the client to pause, or None for any other reply: every
    ``429`` and every ``503``, of a read or a write, its Retry-After at least REFUSAL_FLOOR, or UNSAID when it has
    no usable one (engine.Throttle picks the pause then). A write refused with 503 is not sent again blindly: the
    outcome policy looks it up in the list first (apply.py)."""
    if status not in REFUSAL_STATUS:
        return None
    seconds = retry_after(headers.get("Retry-After"))
    return UNSAID if seconds is None else max(REFUSAL_FLOOR, seconds)


def retry_after(value, cap=RETRY_AFTER_CAP, now=None):
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date), capped; None if absent/bad."""
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


def refused_before_sending(exc):
    """True when the connection was never made (refused, DNS failure), so nothing was sent."""
    text = repr(exc)
    return any(
        word in text
        for word in (
            "NewConnectionError",
            "NameResolutionError",
            "Connection refused",
            "Name or service not known",
            "nodename nor servname",
        )
    )


def broke_unanswered(exc):
    """True when an exchange failed before any byte of its reply came (``nac_replied``, set by wire.Wire on the
    requests exception of a failed exchange): what a kept-alive connection the server was closing does."""
    return isinstance(exc, requests.exceptions.ConnectionError) and not getattr(exc, "nac_replied", False)


def refused_by_proxy(exc):
    """True when the proxy refused the credentials of the tunnel (HTTP 407 to CONNECT): no attempt changes that."""
    return isinstance(exc, requests.exceptions.ProxyError) and "407" in str(exc)


def unreachable(exc):
    """Why a failed attempt (``exc``) may mean that the service cannot be reached at all, or None: a connection
    refused or timed out, a name not resolved, no reply. outage.Outage decides whether it is an outage."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "connections time out"
    if isinstance(exc, requests.exceptions.ConnectionError) and refused_before_sending(exc):
        reason = connect_reason(exc)
        return "connection refused" if reason.startswith("connection refused") else reason
    if isinstance(exc, requests.exceptions.Timeout):
        return "no reply"
    return None


def connect_reason(exc):
    text = str(exc)
    if "NameResolutionError" in text or "Name or service not known" in text or "nodename nor servname" in text:
        return "the host name could not be resolved"
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused (is the service running and the port right?)"
    return excerpt(text, 200)


def connection_failure(exc, method, path, url, base_url, verify, timeout, secrets=()):
    """What a failed exchange (``exc``, a requests exception, of ``method path`` to the service at ``url``) says,
    and whether the request may have reached the server: ``(text, outcome_unknown)``. The exception's text is
    quoted with every form of the client's ``secrets`` masked before it is cut (replies.excerpt)."""
    exceptions = requests.exceptions
    if isinstance(exc, exceptions.SSLError):
        return tls_failure(exc, url, base_url, verify, timeout), False
    if isinstance(exc, exceptions.ConnectTimeout):
        return "Timed out connecting to the NAC API at %s (timeout %ss)" % (url, timeout), False
    if isinstance(exc, exceptions.Timeout):
        return "No reply from the NAC API at %s within %ss to %s %s" % (url, timeout, method, path), True
    if isinstance(exc, exceptions.ProxyError):  # raised while connecting (wire.py): nothing reached the service
        reason = connect_reason(exc) if refused_before_sending(exc) else excerpt(str(exc), 200, secrets)
        return "Could not connect to the NAC API at %s through the proxy: %s" % (url, reason), False
    if isinstance(exc, exceptions.ConnectionError) and refused_before_sending(exc):
        return "Could not connect to the NAC API at %s: %s" % (url, connect_reason(exc)), False
    if isinstance(exc, exceptions.ConnectionError):
        text = "The connection to the NAC API at %s broke off during %s %s: %s" % (
            url,
            method,
            path,
            excerpt(str(exc), 200, secrets),
        )
        return text, True
    return "Request %s %s to %s failed: %s" % (method, path, url, excerpt(str(exc), 200, secrets)), False
