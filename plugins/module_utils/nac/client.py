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
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import CONNECTION_OPTIONS, MAX_CONCURRENCY
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import (
    json_type,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import run
from ansible_collections.netaccess.nac.plugins.module_utils.http.transport import (
    H11_IMPORT_ERROR,
    HAS_H11,
    HAS_REQUESTS,
    REQUESTS_IMPORT_ERROR,
    Transport,
    request_facts,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import ListDecoder
from ansible_collections.netaccess.nac.plugins.module_utils.nac.listing import ListReader
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import (
    Page,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.resources import CREATE, DEVICE, LIST, Resource
from ansible_collections.netaccess.nac.plugins.module_utils.nac.statuses import http_error, shape_error

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
        return ListReader(self).records("/api/intent", "tag", str, "intents")

    def has_intent(self, tag=DOT1X_INTENT):
        return any(intent["tag"] == tag for intent in self.list_intents())

    def list_devices(self, compact=False, keep_whole=None, into=None):
        """Read GET /api/device: every device, every page of them; each record has at least ``id`` and ``hostname``.

        ``compact``: each record held as a device_list.Device (its id and hostname only; about a seventh of the
        memory of a record), except those ``keep_whole(record)`` is true of, kept whole. ``into``: where the
        records go instead of a list (device_export.DeviceFile: a file, written as the pages are decoded, with
        its ``decoder``); it is returned, the list read and checked."""
        return self.list_records(DEVICE, compact, keep_whole, into)

    def create_device(self, body):
        """Send POST /api/device: a write, re-sent only when it provably was not processed. Any other failure
        is raised, stating ``outcome_unknown``. Returns the reply's JSON object, or None when the reply
        carries none (its body is not documented)."""
        return run(self.create_device_steps(body))

    def create_device_steps(self, body) -> Generator:
        """Steps (http/loop.py) of ``create_device``: the apply engine's writes run on one event loop."""
        return (yield from self.send_steps(DEVICE, CREATE, body=body))

    def list_records(self, resource: Resource, compact: bool = False, keep_whole=None, into=None):
        """Read every record of ``resource`` (its verb LIST), every page of them, each with its integer id and its
        string name checked. ``compact``, ``keep_whole`` and ``into``: as ``list_devices`` says (``compact`` only
        where the resource declares what a compact list keeps, its ``keeper``)."""
        keeper = resource.keeper if compact else None  # any declared resource: resources.py
        decoder = into.decoder if into is not None else ListDecoder(keeper(keep_whole)) if keeper else None
        path = resource.path(LIST)
        return ListReader(self).records(path, resource.key, int, resource.noun, resource.name_field, decoder, into)

    def send(self, resource: Resource, verb: str, body=None, ident=None):
        """Send one request of ``resource``'s ``verb`` (on the record ``ident`` when its path names one), retried as
        the verb's two facts allow, and return the reply's JSON object, or None when it carries none."""
        return run(self.send_steps(resource, verb, body, ident))

    def send_steps(self, resource: Resource, verb: str, body=None, ident=None) -> Generator:
        """Steps (http/loop.py) of ``send``."""
        declared = resource.verb(verb)
        path = resource.path(verb, ident)
        reply = yield from self.request_steps(
            declared.method, path, body=body, changes=declared.changes_server, repeatable=declared.safe_to_repeat
        )
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
            raise shape_error(
                self, "POST", path, "expected a JSON object for target %s, got %s" % (target_id, json_type(reply))
            )
        return reply
