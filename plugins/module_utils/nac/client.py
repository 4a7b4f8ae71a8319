# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure client of the NAC API (the API guide: docs/docsite/rst/api.rst).

No Ansible imports: modules, an inventory plugin, an event source, scripts and unit tests all use it.
``NacClient`` is the API's endpoints and what the API's replies mean, over the HTTP exchange of
transport.py. Errors are raised as NacError subclasses (errors.py) carrying method, path, HTTP
status and the server's own reason; no message ever contains a credential.

Which failures are retried, and what becomes of a failed write: the table "Retries and outcomes"
of the API guide, the one place that states the policy.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time
from operator import attrgetter
from typing import Generator, Optional

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    NacAuthError,
    NacConfigError,
    NacConnectionError,
    NacError,
    NacHTTPError,
    NacNotFound,
    NacResponseError,
    NacServerError,
    ReadOnlyViolation,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import strip_userinfo
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import CONNECTION_OPTIONS, MAX_CONCURRENCY
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import (
    excerpt,
    json_type,
    shown,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import run
from ansible_collections.netaccess.nac.plugins.module_utils.http.transport import (
    H11_IMPORT_ERROR,
    HAS_H11,
    HAS_REQUESTS,
    MIB,
    REQUESTS_IMPORT_ERROR,
    Transport,
    request_facts,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import Device, ListDecoder, device_keeper
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import HOSTNAME_MAX
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import (
    MAX_PAGES,
    LinkError,
    Page,
    Records,
    envelope_keys,
    next_links,
    partial_sign,
    path_under,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.statuses import http_error

# The names other code imports from here: the client, its errors, and the options it takes.
__all__ = (
    "CONNECTION_OPTIONS",
    "DOT1X_INTENT",
    "DOT1X_INTENT_NAMES",
    "H11_IMPORT_ERROR",
    "HAS_H11",
    "HAS_REQUESTS",
    "MAX_CONCURRENCY",
    "REQUESTS_IMPORT_ERROR",
    "NacAuthError",
    "NacClient",
    "NacConfigError",
    "NacConnectionError",
    "NacError",
    "NacHTTPError",
    "NacNotFound",
    "NacResponseError",
    "NacServerError",
    "ReadOnlyViolation",
)

DOT1X_INTENT = "dot1x_status"
DOT1X_INTENT_NAMES = "'Check 802.1x' / '802.1x status'"  # what the NAC's user interface calls the intent
# What an account needs to fire an intent the API guide names (statuses.ACCESS_NEEDED: any other request).
INTENT_ACCESS_NEEDED = "the privilege public_api and access to the intent %s (%s)"
INTENT_NAMES = {DOT1X_INTENT: DOT1X_INTENT_NAMES}  # the intents the API guide names, by tag


def _forwarded(name, doc, settable=False):
    """Make a property that reads (and, when ``settable``, sets) the transport's attribute ``name``: the client shows
    the few settings its callers read, not the transport's whole surface."""
    put = (lambda self, value: setattr(self.transport, name, value)) if settable else None
    return property(attrgetter("transport." + name), put, doc=doc)


class NacClient:
    """Speak the NAC API over a transport it holds (transport.Transport, made from the same arguments; ``read_only``
    refuses locally every request that changes the server), so that callers see the API, not the exchange. What each
    failure means: statuses.http_error and the API guide's "Retries and outcomes"."""

    def __init__(
        self,
        api_url: str,
        pool_size: int = 16,
        read_only: bool = False,
        should_stop=None,
        sleep=time.sleep,
        clock=time.monotonic,
        **given,
    ):
        self.transport = Transport(api_url, pool_size, read_only, sleep, clock, **given)
        # Asked between the pages of a list: a reason to stop (the controller that started the task is gone), or None.
        self.should_stop = should_stop

    # What callers read of the transport (modules, plugins, the glue, the tests), and nothing more.
    base_url = _forwarded("base_url", "The service's address as given (api_url), without a trailing slash.")
    display_url = _forwarded("display_url", "The service's address without its user:password, for messages.")
    timeout = _forwarded("timeout", "The seconds one attempt may take as a whole.")
    max_retries = _forwarded("max_retries", "The retries of one request (at most MAX_RETRIES_CAP).", settable=True)
    max_reply_mb = _forwarded("max_reply_mb", "The size limit of one reply's body, in MiB (as decoded).")
    max_list_items = _forwarded("max_list_items", "The items of one list, all its pages together, at most.")
    max_list_mb = _forwarded("max_list_mb", "The size limit of one list's bodies, all its pages together, in MiB.")
    read_only = _forwarded("read_only", "Whether requests that change the server are refused locally.")
    verify = _forwarded("verify", "The TLS verification as requests reads it: True, a CA path, or False.", True)
    wire = _forwarded("wire", "The connections (connections.Wire); a unit test may put a fake in their place.", True)
    throttle = _forwarded("throttle", "The one pace of the client's requests under a rate limit (pacing.Throttle).")
    secrets = _forwarded("secrets", "Every form of the credentials (masking.hidden_forms), for messages to mask.")
    succeeded = _forwarded("succeeded", "Whether any request of this client has had a successful (2xx) reply.")

    @property
    def refusals(self):
        """Count the rate-limit refusals this client's requests waited out (pacing.Throttle; each was sent again)."""
        return self.transport.throttle.refusals

    def limit_waiting(self, seconds: float, why: str):
        """Bound the wait for an unreachable service to ``seconds`` within the context it returns
        (transport.Transport.limit_waiting), so that a caller with an interval of its own keeps it."""
        return self.transport.limit_waiting(seconds, why)

    def scrubbed(self, error: Exception) -> Exception:
        """Mask every form of the credentials in ``error`` (transport.Transport.scrubbed) before it is raised."""
        return self.transport.scrubbed(error)

    def close(self):
        """Close the transport's connections: the client sends nothing more."""
        self.transport.close()

    def request(self, method: str, path: str, **options):
        """Send one request and return its JSON: ``request_steps`` driven in this thread (loop.run), with its
        ``options`` (body, changes, repeatable, decoder, needs, limit)."""
        return run(self.request_steps(method, path, **options))

    def request_steps(
        self,
        method: str,
        path: str,
        body=None,
        changes: Optional[bool] = None,
        repeatable: Optional[bool] = None,
        decoder=None,
        needs: Optional[str] = None,
        limit=None,
    ) -> Generator:
        """Steps (http/loop.py): send one request (transport.Transport.exchange_steps, retried as the policy says;
        ``changes``, ``repeatable`` and ``limit`` as it takes them) and return its JSON (None for an empty body; a JSON
        array as a pagination.Page, which keeps the reply's headers, address and size for the next page). A reply that
        is not a success is raised as the NacError ``http_error`` makes of it; ``needs``: what the account needs to be
        allowed the request, for the message of a refusal."""
        changes, repeatable = request_facts(method, changes, repeatable)
        exchange = self.transport.exchange_steps(method, path, body, changes, repeatable, decoder, limit)
        reply = yield from exchange
        if reply.status_code >= 300:
            error = http_error(self, method, path, reply, changes=changes, attempts=reply.attempts, needs=needs)
            error.refused = reply.refused
            raise error
        value = self.transport.decoded(method, path, reply, changes=changes, decoder=decoder)
        if isinstance(value, list):  # a Page already when its decoder made one (device_export.PageSink)
            value = value if isinstance(value, Page) else Page(value)
            value.headers, value.url, value.size = reply.headers, reply.url, reply.size
        return value

    # -- the API (API guide section 4, docs/docsite/rst/api.rst) -----------------------

    def list_intents(self):
        """GET /api/intent: the intents the account may use (each has a ``tag``), every page of them."""
        return self._records("/api/intent", "tag", str, "intents")

    def has_intent(self, tag=DOT1X_INTENT):
        return any(intent["tag"] == tag for intent in self.list_intents())

    def list_devices(self, compact=False, keep_whole=None, into=None):
        """GET /api/device: every device, every page of them; each record has at least ``id`` and ``hostname``.

        ``compact``: each record held as a device_list.Device (its id and hostname only; about a seventh of the
        memory of a record), except those ``keep_whole(record)`` is true of, kept whole. ``into``: where the
        records go instead of a list (device_export.DeviceFile: a file, written as the pages are decoded, with
        its ``decoder``); it is returned, the list read and checked."""
        decoder = into.decoder if into is not None else ListDecoder(device_keeper(keep_whole)) if compact else None
        return self._records("/api/device", "id", int, "devices", name="hostname", decoder=decoder, into=into)

    def create_device(self, body):
        """POST /api/device: a write, re-sent only when it provably was not processed. Any other failure
        is raised, stating ``outcome_unknown``. Returns the reply's JSON object, or None when the reply
        carries none (its body is not documented)."""
        reply = self.request("POST", "/api/device", body=body, changes=True, repeatable=False)
        return reply if isinstance(reply, dict) else None

    def fire_intent(self, target_id, tag=DOT1X_INTENT):
        """POST /api/intent/<tag>/fire with ``additionalPayload`` {json: true}: ask for one device's status.

        Firing ``dot1x_status`` queries the 802.1x status of one device (the API guide, 4.4): the reply comes at
        once and carries that status. The guide's table "Retries and outcomes" treats it as a read, so it is sent
        as one although its method is POST: it does not change the server (check mode and ``read_only`` send it)
        and it is safe to repeat (retried as a read is)."""
        return run(self.fire_intent_steps(target_id, tag))

    def fire_intent_steps(self, target_id, tag=DOT1X_INTENT):
        """``fire_intent`` as steps (http/loop.py): many of them run at once by engine.ordered_steps."""
        path = "/api/intent/%s/fire" % tag
        needs = INTENT_ACCESS_NEEDED % (tag, INTENT_NAMES[tag]) if tag in INTENT_NAMES else None
        body = {"targetId": target_id, "additionalPayload": {"json": True}}
        reply = yield from self.request_steps("POST", path, body=body, changes=False, repeatable=True, needs=needs)
        if not isinstance(reply, dict):
            raise self._shape_error(
                "POST", path, "expected a JSON object for target %s, got %s" % (target_id, json_type(reply))
            )
        return reply

    # -- what the API's replies mean ----------------------------------------------------

    def _records(self, path, key, key_type, noun, name=None, decoder=None, into=None):
        """The records of a list endpoint, each with its ``key`` (and its string ``name`` when given) checked
        in one pass: the whole list, or a NacResponseError. ``decoder``: how each page is decoded (device_list.py);
        ``into``: where the records go (``_read_pages``)."""
        collected = into if into is not None else Records(key)
        reply = self._read_list(path, noun, decoder, collected)
        for index, record in collected.indexed():
            if isinstance(record, Device):  # kept compactly: it had both (device_list.device_keeper)
                if len(record.hostname) > HOSTNAME_MAX:
                    raise self._implausible(path, index, record.id, record.hostname)
                continue
            value = record.get(key) if isinstance(record, dict) else None
            if not isinstance(value, key_type) or isinstance(value, bool):
                raise self._shape_error(
                    "GET",
                    path,
                    "item %d has no %s %r: %s"
                    % (index, key_type.__name__, key, excerpt(json.dumps(record, default=str), 80, self.secrets)),
                )
            if name is not None and not isinstance(record.get(name), str):
                raise self._shape_error("GET", path, "item %d (%s %s) has no string %r" % (index, key, value, name))
            if name is not None and len(record[name]) > HOSTNAME_MAX:
                raise self._implausible(path, index, value, record[name])
        return reply

    def _implausible(self, path, index, ident, hostname):
        """The error of a listed device whose hostname is no plausible name (longer than a DNS name may be)."""
        return self._shape_error(
            "GET",
            path,
            "item %d (id %s) has a hostname of %d characters, more than the %d a hostname may have (%s): not a "
            "device name, so the list is not used" % (index, ident, len(hostname), HOSTNAME_MAX, shown(hostname, 40)),
        )

    def _read_list(self, path, noun, decoder, records):
        """GET ``path`` and every page after it (``_read_pages``). A list whose pages shifted while they were
        read (pagination.Shifts: the same record on two pages, a count that changed) is read again from the start,
        once: a list that shifts again is a NacResponseError saying so."""
        shifted = None
        while True:
            shift = self._read_pages(path, noun, decoder, records)
            if shift is None:
                return records.result()
            records.restart()  # nothing held while the list is read again
            if shifted is not None:
                raise self._partial(
                    path,
                    "the list changed while its pages were read, and again when it was read once more (%s; then %s): "
                    "another client is changing the devices meanwhile, try again later" % (shifted, shift),
                )
            shifted = shift

    def _read_pages(self, path, noun, decoder, records):
        """GET ``path`` and every page after it, each page's array added to ``records`` (pagination.Records, or a
        device_export.DeviceFile): None, or what shows that the pages shifted while they were read (pagination.Shifts).

        A page names the next one with an RFC 8288 ``Link: <...>; rel="next"`` header; it is followed
        when it is on api_url's origin and under its path, for at most pagination.MAX_PAGES pages, never to a
        page read before. Any other sign that the list goes on (pagination.partial_sign, or an object where the
        array is expected) is a NacResponseError naming it: a list is used whole, or not at all.

        The whole list, all its pages together, is bounded: at most ``max_list_items`` items and ``max_list_mb``
        MiB of replies (each page read with what is left of it as its limit), else a NacResponseError naming the
        option. Between two pages, ``should_stop`` is asked: a reason stops the listing (NacError)."""
        seen, pages_read, size = set(), 0, 0
        budget = self.max_list_mb * MIB
        while True:
            seen.add(path)
            left = "max_list_mb allows %d MiB for the whole list, %s" % (
                self.max_list_mb,
                "%d bytes of which were read in %d pages before" % (size, pages_read)
                if pages_read
                else "its pages together",
            )
            page = self.request("GET", path, decoder=decoder, limit=(budget - size, left))
            pages_read += 1
            if not isinstance(page, Page):
                raise self._not_a_list(path, page)
            size += page.size
            if len(records) + len(page) > self.max_list_items:
                raise self._partial(
                    path,
                    "the list has more than %d items (max_list_items) after %d pages: if the service really lists "
                    "that many, raise max_list_items (or NAC_MAX_LIST_ITEMS)" % (self.max_list_items, pages_read),
                )
            following = self._next_page(path, page, seen, pages_read)
            shift = records.add(page, pages_read, page.headers, following is None)
            if shift:
                return shift
            reason = self.should_stop() if following is not None and self.should_stop is not None else None
            if reason:
                raise self.scrubbed(
                    NacError(
                        "GET %s: stopped listing after %d pages: %s" % (path, pages_read, reason),
                        method="GET",
                        path=path,
                        url=self.display_url,
                    )
                )
            if following is None:
                sign = partial_sign(page.headers, len(records), pages_read, noun)
                if sign:
                    raise self._partial(path, "%s, but listed %d and gave no next link" % (sign, len(records)))
                return None
            path = following

    def _next_page(self, path, page, seen, pages_read):
        """The path of the page after ``page`` (read from ``path``), None after the last one."""
        try:
            links = next_links(page.headers, page.url)
        except LinkError as error:
            quoted = excerpt(page.headers.get("Link"), 120, self.secrets)
            raise self._partial(path, "the reply's Link header cannot be read (%s: %s)" % (error, quoted)) from None
        if not links:
            return None
        if len(links) > 1:
            quoted = ", ".join(strip_userinfo(link) for link in links)
            raise self._partial(path, "the reply's Link header names %d next pages: %s" % (len(links), quoted))
        following = path_under(links[0], self.base_url)
        if following is None:
            raise self._partial(
                path,
                "the next page is at %s, on another origin (scheme, host, port) or outside api_url %s: not followed, "
                "so that no credential is sent there" % (strip_userinfo(links[0]), self.display_url),
            )
        if following in seen:
            raise self._partial(path, "the next link leads back to %s, a page already read (a loop)" % following)
        if pages_read >= MAX_PAGES:
            raise self._partial(
                path, "the reply still names a next page after %d pages, the most read of one list" % pages_read
            )
        return following

    def _not_a_list(self, path, reply):
        what = "expected a JSON array, got %s" % json_type(reply)
        keys = envelope_keys(reply)
        if keys:  # {"items": [...], "next": ...}: maybe one page of a list, maybe the whole of it: never guessed
            what += " with %s, the shape of a page of a paginated list: not read as the list" % ", ".join(
                repr(key) for key in keys
            )
        return self._shape_error("GET", path, what)

    def _partial(self, path, what):
        return self.scrubbed(
            NacResponseError(
                "GET %s: %s: refusing to use an incomplete list (see 'Pagination and reply sizes' in the API guide)"
                % (path, what),
                method="GET",
                path=path,
                url=self.display_url,
            )
        )

    def _shape_error(self, method, path, what):
        return self.scrubbed(
            NacResponseError(
                "%s %s: unexpected reply from %s: %s" % (method, path, self.display_url, what),
                method=method,
                path=path,
                url=self.display_url,
            )
        )
