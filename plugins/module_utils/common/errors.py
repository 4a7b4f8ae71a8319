# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The errors of the NAC client (no Ansible imports), each with a structured ``failure`` for results.

Every class is built the same way: a message, and what is known of the request (method, path, HTTP
status, the server's own reason, the service's address). ``outcome_unknown`` says whether a request
may have been processed although it failed; whoever raises an error states it when it applies (the
client does for every connection error and for every HTTP error of a write), and ``failure`` then carries it,
``true`` or ``false``. An error that does not state it has no ``outcome_unknown`` in its ``failure``
(a configuration error, say) and is taken as ``outcome_unknown = False``.

Its message and reason are shown safely (server_text.shown) however they were composed: a server's text in them
never brings a raw control character (an escape sequence, a line break) to a terminal or a log.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import mask
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown


class NacError(Exception):
    """Any failure talking to the NAC API. ``failure`` is the structured form for results."""

    def __init__(self, message, method=None, path=None, status=None, reason=None, url=None, outcome_unknown=None):
        message = shown(message)
        super(NacError, self).__init__(message)
        self.message = message
        self.method = method
        self.path = shown(path)  # a next link's path is the server's
        self.status = status
        self.reason = shown(reason)
        self.url = url
        self.outcome_unknown = bool(outcome_unknown)  # true when a write may have been processed although it failed
        self._outcome_stated = outcome_unknown is not None
        # A write a rate limit refused with 503 (the pause taken): looked for in the list at once, and sent again
        # after the pause when the list does not show it, not after the settle window (apply.py).
        self.refused = False
        # A write that broke before any byte of its reply on a kept-alive connection (the server was closing it, most
        # likely, and never read it): looked for in the list at once, and sent again on a new connection after a short
        # pause when the list does not show it, not after the settle window (apply.py).
        self.stale = False
        # What the task still returns beside its failure (a batch's entries): module.NacModule.run merges it into
        # the result, so that every failure of a module, the client's or the task's own, takes one path.
        self.result = {}

    def __str__(self):
        return self.message

    @property
    def failure(self):
        failure = dict(
            type=type(self).__name__,
            method=self.method,
            path=self.path,
            status=self.status,
            reason=self.reason,
            url=self.url,
        )
        failure = dict((k, v) for k, v in failure.items() if v is not None)
        if self._outcome_stated:
            failure["outcome_unknown"] = self.outcome_unknown
        return failure

    def masked(self, secrets):
        """This error with every form of the ``secrets`` (masking.hidden_forms) masked in its message and reason."""
        self.message = mask(self.message, secrets)
        if self.reason:
            self.reason = mask(self.reason, secrets)
        self.args = (self.message,)
        return self


class NacConfigError(NacError):
    """The client settings are not usable (no or two credential schemes, bad URL, an option out of bounds)."""


class NacConnectionError(NacError):
    """The server could not be reached or the exchange broke off.

    ``outcome_unknown`` is true when the request may have reached the server (a timeout or a
    dropped connection after sending): a write's effect must then be checked, never assumed.
    """


class NacAuthError(NacError):
    """Credentials refused (the API's 'Server error'), or a privilege / intent access missing."""


class NacNotFound(NacError):
    """HTTP 404."""


class NacHTTPError(NacError):
    """Any other non-success HTTP status (the server's reason is in ``reason``).

    ``outcome_unknown`` is true for a write answered with a 5xx status: the server may have
    committed it before failing, so its effect must be checked, never assumed.
    """


class NacServerError(NacHTTPError):
    """HTTP 500 (or another 5xx) after every retry, once an earlier request of this client succeeded:
    the credentials were accepted, so it is a fault of the server, not of the credentials."""


class NacResponseError(NacError):
    """A reply that is not what the API documents (not JSON, wrong shape)."""


class ReadOnlyViolation(NacError):
    """A write was attempted on a read-only client (check mode): a bug, never sent."""


# Where an exchange failed (ExchangeError.stage).
CONNECT = "connect"  # making the connection (resolving, connecting): no byte of the request was written
TLS = "tls"  # the TLS handshake or the certificate's name: no byte of the request was written
PROXY = "proxy"  # the proxy, or its tunnel (CONNECT): no byte of the request reached the service
EXCHANGE = "exchange"  # writing the request or reading its reply's head or body
DECODE = "decode"  # decoding the reply's body (gzip, deflate)


class ExchangeError(Exception):
    """One failed exchange with the service, as the wire saw it, before any HTTP status means anything: the
    transport turns it into a NacConnectionError, and the retry policy decides from its facts alone, never its
    words. ``stage``: where it failed (CONNECT, TLS, PROXY, EXCHANGE, DECODE); ``sent``: whether a byte of the
    request may have reached the service (False only when none was written); ``replied``: whether a byte of a
    reply came; ``reused``: whether the connection had carried an earlier request; ``cause``: what is known of
    why (response.REFUSED, UNRESOLVED, TIMED_OUT, TLS_PORT, PROXY_AUTH, PROXY_REFUSED, or None); ``names``: the
    names of a certificate that is for another name ([] for one with a common name alone, None when not read);
    ``error``: the exception beneath, whose text the message quotes."""

    def __init__(self, text, stage, sent, replied=False, reused=False, cause=None, names=None, error=None):
        super(ExchangeError, self).__init__(text)
        self.stage, self.sent, self.replied, self.reused = stage, sent, replied, reused
        self.cause, self.names, self.error = cause, names, error

    @property
    def timed_out(self):
        """Whether the exchange's deadline passed (``timeout``)."""
        return self.cause == "timed out"
