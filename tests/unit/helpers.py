# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one helper module of the unit tests, what several test files share. The fakes: a fake service at the wire under
the real client (``FakeTransport`` and its ways of answering, each a small subclass, from wire_fakes.py, whose
replies, from wire_replies.py, are bytes on a socket that the client's own parser reads) and a fake client in place of
the real one (``FakeClient``, whose methods have NacClient's signatures: tests/unit/plugins/module_utils/
test_fakes.py fails when they drift apart); the errors and pages that several tests read; and running an entry
point as Ansible does (a module's main(), the inventory plugin's parse()). No test file imports another; each
imports from here (the emulator's tests from tests/unit/emulator/emulator_api.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import asyncio
import importlib.util
import json
import os
import threading

import pytest
from ansible.module_utils import basic

from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Blocking
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    DOT1X_INTENT,
    NacClient,
    NacConnectionError,
    NacServerError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import device_keeper
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_export import PageSink

# The fakes at the wire, under the names the tests use (they import them from here).
from ansible_collections.netaccess.nac.tests.unit.wire_fakes import (  # noqa: F401  # pylint: disable=unused-import
    FakeTransport,
    NothingMayBeSent,
    Routes,
    Scripted,
    Site,
    raw,
)
from ansible_collections.netaccess.nac.tests.unit.wire_replies import (  # noqa: F401  # pylint: disable=unused-import
    CUT,
    SILENT,
    AtConnect,
    connect_timeout,
    never_sent,
    refused,
    reply,
    tls_rejected,
)

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19

    def patch_module_args(args):
        from unittest import mock

        return mock.patch.object(basic, "_ANSIBLE_ARGS", json.dumps(dict(ANSIBLE_MODULE_ARGS=args)).encode())


URL = "https://nac.example.com"
KEY = "k3y-that-must-never-show"
NOWHERE = "http://127.0.0.1:9"  # the api_url of a module run that must fail before any request
COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVENT_SOURCE = os.path.join(COLLECTION, "extensions", "eda", "plugins", "event_source", "dot1x_status.py")

# -- the fakes at the wire: a scripted service on the far end of a socket pair (wire_fakes.py) ----------------


def wire_of(client: NacClient) -> object:
    """Return the connections.Wire under ``client`` (a NacClient): the one line that names where a client keeps it."""
    return client.wire


def mounted(client: NacClient, transport: FakeTransport) -> NacClient:
    """Put ``transport`` (a wire_fakes.FakeTransport) under ``client`` (a NacClient): each connection its wire makes
    is a socket pair that the fake serves, read by the real connections and replies."""
    transport.attach(wire_of(client))
    return client


def site_client(routes, base=URL, **kwargs):
    """A NacClient at ``base`` over a ``Site`` of ``routes``, without retries or sleeping: (client, site)."""
    site = Site(routes)
    client = NacClient(base, api_key=KEY, max_retries=0, sleep=lambda seconds: None, **kwargs)
    return mounted(client, site), site


# -- the documentation the tests hold to the code ------------------------------------------------------------


def guide_section(start, end):
    """The text of the API guide (docs/docsite/rst/api.rst) from ``start`` to ``end``, its whitespace collapsed (a
    heading reads "8.3. Connections ^^^")."""
    with open(os.path.join(COLLECTION, "docs", "docsite", "rst", "api.rst"), encoding="utf-8") as handle:
        text = " ".join(handle.read().split())
    return text[text.index(start) : text.index(end)]


# -- a paginated device list (the API guide's 'Pagination and reply sizes') -------------------------------------

DEVICES = [{"id": n, "hostname": "dev-%03d" % n} for n in range(1, 151)]
PAGE1, PAGE2 = DEVICES[:100], DEVICES[100:]


def link(url, rel="next"):
    return '<%s>; rel="%s"' % (url, rel)


def paged(base=URL, relative=False, headers=None):
    """Two pages of DEVICES: page 1 at /api/device (no query, as the first request), page 2 after it."""
    second = "/api/device?page=2" if relative else base + "/api/device?page=2"
    extra = list((headers or {}).items())
    return {
        base + "/api/device": (200, PAGE1, [("Link", link(second))] + extra),
        base + "/api/device?page=2": (200, PAGE2, [("Link", link(base + "/api/device", "first"))] + extra),
    }


# Each sign of a partial list a reply's headers may give, and what the error says of it.
SIGNS = [
    (
        {"X-Total-Count": "150"},
        "the server says 150 devices (X-Total-Count: 150), but listed 100 and gave no next link",
    ),
    ({"X-Pagination-Total-Count": "150"}, "150 devices (X-Pagination-Total-Count: 150)"),
    ({"X-Total": "150"}, "150 devices (X-Total: 150)"),
    ({"X-Pagination-Page-Count": "2"}, "the server says 2 pages (X-Pagination-Page-Count: 2) where 1 was read"),
    ({"X-Total-Pages": "2"}, "2 pages (X-Total-Pages: 2)"),
    ({"X-Next-Page": "2"}, "names a next page (X-Next-Page: 2)"),
    ({"Content-Range": "items 0-99/150"}, "the server says 150 devices (Content-Range: items 0-99/150)"),
    ({"Content-Range": "items 0-99/*"}, "a range of a list of unknown length (Content-Range: items 0-99/*)"),
    ({"Content-Range": "bytes 0-999/5000"}, "a part of a larger body (Content-Range: bytes 0-999/5000)"),
    ({"Content-Range": "records=0-99"}, "in a form the collection does not read (Content-Range: records=0-99)"),
    ({"X-Pagination": '{"TotalCount": 150, "PageSize": 100}'}, "150 devices (X-Pagination: "),
    ({"X-Pagination": '{"has_next": true}'}, "names a next page (X-Pagination: "),
]

# -- the errors of a creation, as the client raises them ----------------------------------------------------


def server_fault(status=500):
    return NacServerError(
        "The NAC API failed on POST /api/device with HTTP %d: a fault of the server" % status,
        outcome_unknown=True,
        method="POST",
        path="/api/device",
        status=status,
    )


def dropped():
    return NacConnectionError(
        "The connection to the NAC API at https://nac broke off during POST /api/device: reset",
        outcome_unknown=True,
        method="POST",
        path="/api/device",
    )


# -- the fake client: NacClient's endpoints answered from memory --------------------------------------------


def status_reply(target_id, status):
    """The reply of a status query for ``target_id`` with ``status``."""
    return {"status": status, "authMethod": "EAP-TLS", "username": "u%d" % target_id, "message": None}


class FakeClient:
    """NacClient's endpoints answered from memory, with NacClient's signatures, recording every call.

    ``records``: the device list (copied; a creation adds to it). ``replies`` {id: what a status query of that
    id answers}: a reply dict, a status (``status_reply``), an exception to raise, or a list of those played in
    order whose last repeats; ``default_reply(id)`` answers the ids not in it. ``intents``: the tags the
    account may use. ``list_error``: raised by ``list_devices``. ``on_fire(id)``: called by each status query.
    ``compact_only``: every list must be compact and keep nothing whole (a status query's)."""

    def __init__(
        self,
        records=(),
        replies=None,
        default_reply=None,
        intents=(DOT1X_INTENT,),
        list_error=None,
        on_fire=None,
        compact_only=False,
    ):
        self.records = [dict(record) for record in records]
        self.replies = dict(replies or {})
        self.default_reply = default_reply
        self.intents, self.list_error, self.on_fire, self.compact_only = intents, list_error, on_fire, compact_only
        self.calls, self.fired, self.bodies = [], [], []
        self.refusals = 0  # rate-limit refusals waited out (NacClient.refusals): a scripted test may set it
        self.lock = threading.Lock()

    def list_intents(self):
        self.calls.append("list_intents")
        return [{"tag": tag} for tag in self.intents]

    def has_intent(self, tag=DOT1X_INTENT):
        self.calls.append("has_intent")
        return tag in self.intents

    def list_devices(self, compact=False, keep_whole=None, into=None):
        if self.compact_only:
            assert (compact or into is not None) and keep_whole is None  # a status query keeps only ids and hostnames
        self.calls.append("list_devices")
        if self.list_error:
            raise self.list_error
        records = [dict(record) for record in self.records]
        if into is not None:  # one page, its records written as NacClient's decoder writes them
            page = PageSink(into)
            page.extend(into.keep(record) for record in records)
            into.add(page, 1, {}, True)
            return into
        return [device_keeper(keep_whole)(record) for record in records] if compact else records

    def create_device(self, body):
        self.calls.append("create_device")
        self.bodies.append(body)
        record = dict(body, id=100 + len(self.bodies))
        self.records.append(record)
        return record

    def fire_intent(self, target_id, tag=DOT1X_INTENT):
        assert tag == DOT1X_INTENT
        with self.lock:
            self.fired.append(target_id)
            given = self.replies[target_id] if target_id in self.replies else self.default_reply(target_id)
            if isinstance(given, list):
                given = given.pop(0) if len(given) > 1 else given[0]
        if self.on_fire:
            self.on_fire(target_id)
        if isinstance(given, BaseException):
            raise given
        return status_reply(target_id, given) if isinstance(given, str) else dict(given)

    def fire_intent_steps(self, target_id, tag=DOT1X_INTENT):
        """``fire_intent`` as the status batch drives it (http/loop.py): a call that may block (``on_fire`` may wait
        for the other queries), run on a helper thread of the batch's loop as a real client's blocking waits are."""
        return (yield Blocking(self.fire_intent, target_id, tag))

    def close(self):
        pass


# -- running an entry point as Ansible does ----------------------------------------------------------------


def run_module(main, **args):
    """Run a module's main() with these arguments (``api_url`` NOWHERE unless given); it prints its result and
    exits."""
    args.setdefault("api_url", NOWHERE)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            main()


def printed(capsys):
    """The result a module printed, decoded and as text."""
    out = capsys.readouterr().out
    return json.loads(out), out


def inventory_source(tmp_path, name="test.nac.yml", **options):
    """The path of an inventory source file for the plugin netaccess.nac.nac with these options."""
    lines = ["plugin: netaccess.nac.nac"] + ["%s: %s" % (key, value) for key, value in options.items()]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def parse_inventory(path, cache=True):
    """The InventoryData the plugin netaccess.nac.nac makes of the source at ``path``."""
    # Imported here: the controller's code, which the module_utils tests (ansible-test's module context) lack.
    from ansible.inventory.data import InventoryData
    from ansible.parsing.dataloader import DataLoader
    from ansible.plugins.loader import inventory_loader

    inventory = InventoryData()
    plugin = inventory_loader.get("netaccess.nac.nac")
    plugin.parse(inventory, DataLoader(), path, cache=cache)
    if getattr(plugin, "_cache", None) is not None:
        plugin.update_cache_if_changed()
    return inventory


def inventory_members(inventory, group):
    """The names of the hosts of ``group``, sorted."""
    return sorted(host.name for host in inventory.groups[group].get_hosts())


def load_source():
    """The event source netaccess.nac.dot1x_status, loaded from its file as ansible-rulebook loads it."""
    spec = importlib.util.spec_from_file_location("dot1x_status_source", EVENT_SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ListQueue:
    """The queue ansible-rulebook hands the source, keeping every event put."""

    def __init__(self):
        self.events = []

    async def put(self, event):
        self.events.append(event)


def run_source(args, steps, timeout=30.0):
    """Run the source's main until each step ``(condition(events), then)`` has been met in turn
    (``then`` runs once its condition holds); return the events. Fails after ``timeout`` seconds."""
    main = load_source().main

    async def scenario():
        queue = ListQueue()
        task = asyncio.ensure_future(main(queue, args))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            for condition, then in steps:
                while not condition(queue.events):
                    if task.done():
                        task.result()
                        raise AssertionError("the source ended: %s" % queue.events)
                    assert loop.time() < deadline, "timed out; events so far: %s" % queue.events
                    await asyncio.sleep(0.02)
                if then:
                    then()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        return queue.events

    return asyncio.run(scenario())
