# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exchange requests and replies with the NAC service (no Ansible imports): kept-alive connections (connections.py,
HTTP/1.1 over the standard library's, with the environment's settings as requests reads them), authentication (auth.py's
one hook), the retry loop carrying out what the retry policy decides (retry_policy.RetryPolicy), a reply read against a
deadline and a size limit, and transport failures turned into NacConnectionError. ``exchange`` returns what was read
(response.Reply), whatever its status; what a status means for this API is the nac layer's alone (nac/statuses.py).

Which failures are retried, and what becomes of a failed write: the table "Retries and outcomes"
of the API guide (docs/docsite/rst/api.rst), the one place that states the policy.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import threading
import time
import traceback
from typing import Callable, Generator, Optional, Tuple

try:
    import requests
except ImportError:
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None

try:
    import h11  # noqa: F401  # pylint: disable=unused-import  # (the parser connections.py and response.py drive)
except ImportError:
    HAS_H11 = False
    H11_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_H11 = True
    H11_IMPORT_ERROR = None

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    TLS,
    ExchangeError,
    NacConfigError,
    NacConnectionError,
    NacResponseError,
    ReadOnlyViolation,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import hidden_forms, strip_userinfo
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    CONNECTION_DEFAULTS as DEFAULTS,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    MAX_CONCURRENCY,
    MAX_RETRIES_CAP,
    boolean,
    check_connection,
    check_unreachable_timeout,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import decode_json, excerpt
from ansible_collections.netaccess.nac.plugins.module_utils.http.auth import from_options as authentication
from ansible_collections.netaccess.nac.plugins.module_utils.http.connections import Wire
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Sleep, run
from ansible_collections.netaccess.nac.plugins.module_utils.http.outage import Outage, Unreachable
from ansible_collections.netaccess.nac.plugins.module_utils.http.pacing import Throttle
from ansible_collections.netaccess.nac.plugins.module_utils.http.response import Reply, TooLarge
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    BACK_OFF,
    GIVE_UP,
    WAIT_FOR_SERVICE,
    RetryPolicy,
    connection_failure,
    uncertain,
    unreachable,
)

MIB = 1024 * 1024
USER_AGENT = "netaccess.nac-ansible-collection"
PROBE_PATH = "/api/intent"  # what an outage is probed with: a cheap read every account may send
SAFE_METHODS = frozenset(("GET", "HEAD", "OPTIONS", "TRACE"))  # RFC 9110 9.2.1: they change nothing on the server
IDEMPOTENT_METHODS = SAFE_METHODS | frozenset(("PUT", "DELETE"))  # RFC 9110 9.2.2: sending twice is sending once


def request_facts(method: str, changes: Optional[bool] = None, repeatable: Optional[bool] = None) -> Tuple[bool, bool]:
    """Give the two facts of a request, (changes the server, safe to repeat), each the one given, else the method's
    as RFC 9110 says (GET is safe and idempotent, PUT and DELETE idempotent, POST neither), so that a request
    whose method misleads (a POST that only asks) says so once, where it is sent."""
    method = method.upper()
    changes = method not in SAFE_METHODS if changes is None else changes
    repeatable = method in IDEMPOTENT_METHODS if repeatable is None else repeatable
    return changes, repeatable


class Transport:
    """Send requests to the NAC service, again as the retry policy says; ``read_only`` refuses locally every request
    that changes the server.

    Exactly one credential scheme: ``api_key`` (Bearer), or ``username`` + ``password`` (Basic).
    ``tenant`` is sent as ``X-Tenant``. ``timeout`` bounds each attempt as a whole: connecting,
    sending and receiving the complete reply. The connection options (options.CONNECTION_OPTIONS) are given
    by name; one not given is its record's default.
    """

    def __init__(
        self,
        api_url: str,
        pool_size: int = 16,
        read_only: bool = False,
        sleep: Callable = time.sleep,
        clock: Callable = time.monotonic,
        **given,
    ):
        if not HAS_REQUESTS:
            raise NacConfigError("the Python library 'requests' is required")
        if not HAS_H11:
            raise NacConfigError("the Python library 'h11' is required (it reads the service's replies)")
        check_connection(api_url, **given)  # a name that is no connection option is a TypeError, as for any call
        option = dict(DEFAULTS, **given)
        timeout, max_retries, ca_path = option["timeout"], option["max_retries"], option["ca_path"]
        validate_certs = boolean(option["validate_certs"], "validate_certs")
        self.base_url = api_url.rstrip("/")
        self.display_url = strip_userinfo(self.base_url)
        self.timeout = timeout
        self.max_retries = min(max_retries, MAX_RETRIES_CAP)
        self.max_reply_mb = option["max_reply_mb"]  # the size limit of one reply's body, in MiB (as decoded)
        self.max_list_items = option["max_list_items"]  # the items of one list, all its pages together, at most
        self.max_list_mb = option["max_list_mb"]  # the size limit of one list's bodies, all its pages together, in MiB
        self.read_only = read_only
        self.throttle = Throttle(clock, sleep)  # every request passes it: one pause for all after a refusal
        self._fresh_writes = False  # writes go out on new connections (a reused one broke under a write)
        self._succeeded = threading.Event()  # set by the first 2xx reply; shared by the client's threads
        self._sleep = sleep
        # A service that stops answering mid-task is waited for, by all the client's threads at once (outage.py).
        self._outage = Outage(
            check_unreachable_timeout(option["unreachable_timeout"]), self._probe, timeout, clock, sleep
        )
        auth = authentication(option)  # the one hook of the credentials (auth.py): its header, its secrets
        # The client's own verify (the insecure-TLS warning is the entry point's, once: options.INSECURE_TLS).
        self.verify = (ca_path or True) if validate_certs else False
        # Sent with every request; the credential is the one given, never a ~/.netrc entry.
        headers = [
            ("User-Agent", USER_AGENT),
            ("Accept-Encoding", "gzip, deflate"),
            ("Accept", "application/json"),
            ("Connection", "keep-alive"),
        ]
        auth.apply(headers)
        if option["tenant"]:
            headers.append(("X-Tenant", option["tenant"]))
        # What requests merges from the environment into a request (Session.request): the proxies (HTTP(S)_PROXY,
        # NO_PROXY) and, where verification is left at its default, REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE. They
        # depend on the URL's scheme and host alone, so they are merged once, here, not read per request.
        merger = requests.Session()
        settings = merger.merge_environment_settings(self.base_url + "/", {}, True, self.verify, None)
        merger.close()
        # Every form of the credentials: the key, the password and the Basic token, and a proxy's password and token.
        proxies = (settings.get("proxies") or {}).values()
        self._secrets = hidden_forms(auth.values, basic=auth.basic, proxies=proxies)
        try:
            self.wire = Wire(self.base_url, headers, settings, min(max(pool_size, 1), MAX_CONCURRENCY))
        except ValueError as exc:  # a CA bundle, a proxy, a header field that cannot be used
            raise self.scrubbed(NacConfigError(str(exc))) from None

    @property
    def secrets(self):
        """Give every form of the client's credentials (masking.hidden_forms), which a message quoting the server masks
        before it cuts or collapses the server's text (server_text.excerpt)."""
        return self._secrets

    @property
    def succeeded(self):
        """Tell whether any request of this client has had a successful (2xx) reply."""
        return self._succeeded.is_set()

    def exchange(self, method: str, path: str, **options) -> Reply:
        """Send one request and return the last reply read: ``exchange_steps`` driven in this thread (loop.run),
        with its ``options`` (body, changes, repeatable, decoder, limit)."""
        return run(self.exchange_steps(method, path, **options))

    def exchange_steps(
        self,
        method: str,
        path: str,
        body=None,
        changes: Optional[bool] = None,
        repeatable: Optional[bool] = None,
        decoder=None,
        limit=None,
    ) -> Generator:
        """Send one request as steps (loop.py), again as the retry policy says (retry_policy.RetryPolicy); return the
        last reply read (a response.Reply, whatever its status: client.NacClient.request reads it). ``changes``: the
        request changes the server, so a read-only client refuses it; ``repeatable``: it is safe to send again after an
        uncertain failure; either left None is the method's (``request_facts``). ``decoder`` says how a JSON array reply
        is decoded (as it arrives, see device_list.ListDecoder); None: whole (``decoded``). ``limit``: (bytes, why) when
        the reply may be no larger than that, for the reason ``why`` (what is left of a list's max_list_mb), where that
        is less than max_reply_mb. While the service cannot be reached at all, the request waits for it (outage.py)
        without spending its retries."""
        changes, repeatable = request_facts(method, changes, repeatable)
        if changes and self.read_only:
            raise ReadOnlyViolation(
                "refusing to send %s %s: the client is read-only (check mode)" % (method, path),
                method=method,
                path=path,
            )
        # Once a kept-alive connection broke under a request not safe to repeat, such requests take new ones.
        policy = RetryPolicy(self.max_retries, repeatable, fresh=not repeatable and self._fresh_writes)
        paused = []  # the seconds of this request's refusals waited out
        while True:
            sent_at = yield from self._waited(self._outage.before_send_steps, method, path, False)
            outcome, refused = yield from self._attempt_steps(
                method, path, body, decoder, limit, policy, paused, sent_at
            )
            decision = policy.decide(outcome, refused)
            if decision.action == WAIT_FOR_SERVICE:
                waited = yield from self._waited(
                    self._outage.after_failure_steps, method, path, uncertain(outcome), decision.reason, sent_at
                )
                decision = policy.decide(outcome, refused, waited)
            if decision.stale:  # the server was closing a kept-alive connection: later such requests take new ones
                self._fresh_writes = True
            if decision.action == GIVE_UP:
                return self._given_up(method, path, outcome, decision)
            if decision.action == BACK_OFF:
                yield Sleep(decision.seconds, self._sleep)
            policy = decision.policy

    def _attempt_steps(self, method, path, body, decoder, limit, policy, paused, sent_at):
        """Send one attempt (let through by the outage at ``sent_at``) as steps through the pace (pacing.Throttle) and
        return (the reply, or the ExchangeError it failed with; for a reply the rate limit refused, the seconds its
        request waits alone, else None)."""
        try:
            reply, started = yield from self.throttle.send_steps(
                self._send_steps, method, path, body, decoder, limit, policy.fresh
            )
        except ExchangeError as exc:
            return exc, None
        self._outage.answered(sent_at)
        refused = self.throttle.answered(reply, started, paused)
        if refused is None and reply.status_code < 300 and not self._succeeded.is_set():  # set() takes a lock: once
            self._succeeded.set()
        return reply, refused

    def _given_up(self, method, path, outcome, decision):
        """Return the reply given up on, stating its attempts (or that a rate limit refused it), or raise the
        NacConnectionError of the failed exchange: what the caller reads is the last attempt's."""
        if decision.error is None:
            if decision.refused:
                outcome.refused = True
            else:
                outcome.attempts = decision.attempts
            return outcome
        error = self.connection_error(method, path, decision.error)
        error.stale = decision.stale  # the server was closing it: looked up at once (apply)
        raise error from None

    def limit_waiting(self, seconds: float, why: str):
        """Return a context in which waiting for an unreachable service ends once nothing has answered for ``seconds``
        (``why``: what that limit is, for messages); see outage.Outage.limit_waiting."""
        return self._outage.limit_waiting(seconds, why)

    def _waited(self, wait, method, path, sent, *args):
        """Run ``wait(*args)`` (steps), turning an Unreachable into the NacConnectionError of ``method path`` (``sent``:
        the attempt was sent and failed, else it never was)."""
        try:
            return (yield from wait(*args))
        except Unreachable as gone:
            seconds = ("%.0f" if gone.seconds >= 10 else "%.1f") % gone.seconds
            text = "The NAC API at %s could not be reached for %s s (%s): %s %s %s, as %s. See %s." % (
                self.display_url,
                seconds,
                gone.reason,
                method,
                path,
                "got no reply" if sent else "was not sent",
                gone.limit,
                "'Retries and outcomes' in the API guide",
            )
            failure = NacConnectionError(text, outcome_unknown=sent, method=method, path=path, url=self.display_url)
            raise self.scrubbed(failure) from None

    def _probe(self, timeout):
        """Send one cheap request (GET PROBE_PATH, its body never read) and return None when the service answered (any
        status; a TLS failure is an answer too), else why it could not be reached."""
        try:
            self.wire.probe(PROBE_PATH, timeout)
        except ExchangeError as exc:
            return None if exc.stage == TLS else unreachable(exc) or "the connection broke off"
        return None

    def _send_steps(self, method, path, body, decoder=None, list_limit=None, fresh=False):
        """Make one exchange as steps (connections.Wire), bounded as a whole by ``timeout``: connecting, sending, and
        the reply read as it arrives, each read given only what is left of the deadline, so that a reply that drips in
        slowly ends as a ReadTimeout once the deadline passes, never later than one read after it. Redirects are not
        followed (a POST would be re-sent as a GET, and X-Tenant to any host). Returns the Reply: the body as read, or,
        for a list that ``decoder`` read as it arrived, its items.

        A body larger than ``max_reply_mb`` is never read whole: a Content-Length above the limit fails at once, a body
        of unknown length as soon as what arrived passes it (NacResponseError, not retried). ``fresh``: on a new
        connection, never an idle one."""
        deadline = time.monotonic() + self.timeout
        limit, why = self.max_reply_mb * MIB, None
        if list_limit is not None and list_limit[0] < limit:
            limit, why = list_limit
        answer = yield from self.wire.send_steps(method, path, body, deadline, fresh=fresh)
        announced = (answer.headers.get("Content-Length") or "").strip()
        if announced.isdigit() and announced.isascii() and int(announced) > limit:
            answer.close()
            raise self._too_large(method, path, "is %s bytes long (Content-Length)" % announced, "it was not read", why)
        content = io.BytesIO()  # grown in place, then handed over without a copy (getvalue)
        # A list read with a decoder is decoded as it arrives, its body and text never held whole.
        streamed = decoder.reader(answer) if decoder is not None and method == "GET" else None
        size = 0
        try:
            while True:
                chunk = yield from answer.read_steps(deadline, limit)
                if chunk is None:
                    break
                size += len(chunk)
                if size > limit:
                    answer.close()
                    raise TooLarge()
                content.write(chunk if streamed is None else streamed.feed(chunk))
        except TooLarge:  # decoded, or as it came on the wire (compressed)
            grew = "grew past the limit as it arrived"
            raise self._too_large(method, path, grew, "reading stopped there", why) from None
        if streamed is not None:
            content.write(streamed.finish())
            streamed = streamed if streamed.streaming else None  # its items, for ``decoded``
        # getvalue: the body as read, without a copy; size: its bytes as read (decoded), towards a list's max_list_mb
        return Reply(answer, content.getvalue(), streamed, size=size)

    def _too_large(self, method, path, what, done, why=None):
        """Make the error of a reply over ``max_reply_mb`` (or over what is left of a list's ``max_list_mb``: ``why``
        says so). A request other than GET was answered, so it may have been processed (``outcome_unknown``): a creation
        is then looked for in the list, never re-sent blindly."""
        allows = why or "max_reply_mb allows %d MiB for one reply" % self.max_reply_mb
        raise_it = "raise max_list_mb (or NAC_MAX_LIST_MB)" if why else "raise max_reply_mb (or NAC_MAX_REPLY_MB)"
        return self.scrubbed(
            NacResponseError(
                "%s %s: the reply %s, and %s: %s. If the service really sends %s, %s."
                % (method, path, what, allows, done, "lists this large" if why else "replies this large", raise_it),
                method=method,
                path=path,
                url=self.display_url,
                outcome_unknown=method not in ("GET", "HEAD"),
            )
        )

    def decoded(self, method: str, path: str, reply: Reply, changes: bool = False, decoder=None):
        """Decode the JSON of a successful ``reply`` (None for an empty body): a list decoded as it arrived (its
        ``items``), or the body decoded whole, by ``decoder`` when given. A body that is not JSON is a NacResponseError,
        but for a request that ``changes`` the server (its reply body is not documented: None, and the caller
        re-reads)."""
        streamed = reply.items  # a list decoded as it arrived (device_list.ArrayReader)
        if streamed is None and (not reply.content or reply.content.isspace()):  # (strip() would copy)
            return None
        try:
            if streamed is not None:
                return streamed.result()
            return decode_json(reply) if decoder is None else decoder.decode(reply)
        except ValueError:
            if changes:
                return None
            raise self.scrubbed(
                NacResponseError(
                    "%s %s: expected a JSON reply but got %s: %r"
                    % (
                        method,
                        path,
                        reply.headers.get("Content-Type", "no content type"),
                        excerpt(reply.text if streamed is None else streamed.head, secrets=self._secrets),
                    ),
                    method=method,
                    path=path,
                    status=reply.status_code,
                    url=self.display_url,
                )
            ) from None

    def connection_error(self, method: str, path: str, exc: ExchangeError) -> NacConnectionError:
        """Make the NacConnectionError of a failed exchange (``exc``, an ExchangeError), stating whether the request may
        have reached the server (``outcome_unknown``): retry_policy.connection_failure says which."""
        url = self.display_url
        text, unknown = connection_failure(
            exc, method, path, url, self.base_url, self.verify, self.timeout, self._secrets
        )
        return self.scrubbed(NacConnectionError(text, outcome_unknown=unknown, method=method, path=path, url=url))

    def scrubbed(self, error: Exception) -> Exception:
        """Mask every credential in an error, in every form (masking.hidden_forms): belt and braces."""
        return error.masked(self._secrets)

    def close(self) -> None:
        """Close the idle connections; the client sends nothing more."""
        self.wire.close()
