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
    server_reason,
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
# What an account needs to be allowed a request, for the message of a refusal (HTTP 401/403): a request that
# needs more names it (``request``'s ``needs``), as firing an intent the API guide names does.
ACCESS_NEEDED = "the privilege public_api (and the feature's own privilege)"
INTENT_ACCESS_NEEDED = "the privilege public_api and access to the intent %s (%s)"
INTENT_NAMES = {DOT1X_INTENT: DOT1X_INTENT_NAMES}  # the intents the API guide names, by tag


class NacClient(Transport):
    """The NAC API over kept-alive connections (connections.py; see transport.Transport for the arguments;
    ``read_only`` refuses writes locally). What each failure means: ``http_error`` and the API guide's
    "Retries and outcomes"."""

    @property
    def refusals(self):
        """Rate-limit refusals this client's requests waited out so far (pacing.Throttle; each was sent again)."""
        return self.throttle.refusals

    def request(self, method, path, body=None, write=False, decoder=None, needs=None, limit=None):
        """``request_steps`` driven in this thread (loop.run)."""
        return run(self.request_steps(method, path, body, write, decoder, needs, limit))

    def request_steps(self, method, path, body=None, write=False, decoder=None, needs=None, limit=None):
        """Steps (http/loop.py): send one request (transport.Transport.exchange_steps, retried as the policy says;
        ``limit`` as it takes it) and return its JSON (None for an empty body; a JSON array as a pagination.Page,
        which keeps the reply's headers, address and size for the next page). A reply that is not a success is raised
        as the NacError ``http_error`` makes of it; ``needs``: what the account needs to be allowed the request, for
        the message of a refusal."""
        reply = yield from self.exchange_steps(method, path, body=body, write=write, decoder=decoder, limit=limit)
        if reply.status_code >= 300:
            error = self.http_error(method, path, reply, write=write, attempts=reply.attempts, needs=needs)
            error.refused = reply.refused
            raise error
        value = self.decoded(method, path, reply, write=write, decoder=decoder)
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
        return run(self.create_device_steps(body))

    def create_device_steps(self, body):
        """``create_device`` as steps (http/loop.py): the apply engine's writes run on one event loop."""
        reply = yield from self.request_steps("POST", "/api/device", body=body, write=True)
        return reply if isinstance(reply, dict) else None

    def fire_intent(self, target_id, tag=DOT1X_INTENT):
        """POST /api/intent/<tag>/fire with ``additionalPayload`` {json: true}: a read, retried."""
        return run(self.fire_intent_steps(target_id, tag))

    def fire_intent_steps(self, target_id, tag=DOT1X_INTENT):
        """``fire_intent`` as steps (http/loop.py): many of them run at once by engine.ordered_steps."""
        path = "/api/intent/%s/fire" % tag
        needs = INTENT_ACCESS_NEEDED % (tag, INTENT_NAMES[tag]) if tag in INTENT_NAMES else None
        body = {"targetId": target_id, "additionalPayload": {"json": True}}
        reply = yield from self.request_steps("POST", path, body=body, needs=needs)
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

    def http_error(self, method, path, reply, write=False, attempts=1, needs=None):
        """The NacError of a non-success reply (a response.Reply, after ``attempts`` requests), as the API guide
        reads each status. A write's error states ``outcome_unknown``: true for a server fault or a redirect (it may
        have been committed). ``needs``: what the account needs to be allowed the request (ACCESS_NEEDED)."""
        status = reply.status_code
        reason = server_reason(reply, self.secrets)
        where = "%s %s" % (method, path)
        said = " The server said: %s" % reason if reason else ""
        tries = " (%d attempts)" % attempts if attempts > 1 else ""
        details = dict(method=method, path=path, status=status, reason=reason, url=self.display_url)
        credentials_accepted = self.succeeded  # read once: another thread may be answered meanwhile
        if write:
            # A redirect may answer a write that was processed (a 303 says it was): its outcome is unknown.
            details["outcome_unknown"] = status < 400 or (status >= 500 and (status != 500 or credentials_accepted))
        if status < 400:
            error = NacHTTPError(
                "The NAC API answered %s with a redirect (HTTP %d) to %s, which is not followed%s: set api_url to the "
                "address the service redirects to (https:// instead of http://, for example)."
                % (
                    where,
                    status,
                    strip_userinfo(reply.headers.get("Location") or "nowhere"),
                    " (the write may have been processed all the same)" if write else "",
                ),
                **details,
            )
        elif status == 500 and not credentials_accepted:
            error = NacAuthError(
                "The NAC API answered 'Server error' (HTTP 500) to %s%s. The API gives this reply for an invalid "
                "or missing API key (or a wrong username, password or tenant): check api_key / NAC_API_KEY, or "
                "username, password and tenant. If the credentials are right, the server itself failed.%s"
                % (where, tries, said),
                **details,
            )
        elif status >= 500:
            accepted = ""
            if status == 500:
                accepted = " (not of the credentials: an earlier request of this task was answered)"
            error = NacServerError(
                "The NAC API failed on %s with HTTP %d%s: a fault of the server or of a proxy in front of it%s.%s"
                % (where, status, tries, accepted, said),
                **details,
            )
        elif status in (401, 403):
            error = NacAuthError(
                "Access refused (HTTP %d) to %s: the account needs %s.%s"
                % (status, where, needs or ACCESS_NEEDED, said),
                **details,
            )
        elif status == 404:
            error = NacNotFound("Not found (HTTP 404): %s.%s" % (where, said), **details)
        else:
            error = NacHTTPError("The NAC API refused %s with HTTP %d.%s" % (where, status, said), **details)
        return self.scrubbed(error)
