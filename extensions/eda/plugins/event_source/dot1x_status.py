# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""dot1x_status.py: an ansible-rulebook event source for 802.1x status changes of NAC devices.

A thin asyncio loop around ``plugins/module_utils/tasks/dot1x_events.py`` of this collection (the same
client and logic as the modules): every ``interval`` seconds one round runs in a worker thread and
its events are put on the queue.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import asyncio
import logging
import os
import sys

DOCUMENTATION = r"""
---
short_description: Events for the 802.1x status changes of NAC devices
description:
  - An ansible-rulebook event source that polls the 802.1x status of devices through the NAC API,
    with the same client as the modules of C(netaccess.nac).
  - "Each round lists the devices once and fires the C(dot1x_status) intent for the chosen devices,
    O(concurrency) at a time. A device whose status differs from the previous round gives an event
    C({nac_dot1x: {id, hostname, status, previous_status, auth_method, username, message}});
    a newly listed device changes from C(null)."
  - "A round that fails (service unreachable, credentials refused, a bad reply) gives one event
    C({nac_dot1x_error: {message, devices}}) and polling goes on at the next interval. A device
    that alone could not be queried is named in C(devices) (C({id, hostname, error})) and keeps
    its last known status; C(devices) is empty when the round failed as a whole."
  - "A service that stops answering (a restart, a hang) gives its error event within one O(interval)
    of the last reply (or within O(timeout), when that is longer), even in the middle of a round: a round
    waits for an unreachable service only until nothing has answered for O(interval) seconds. The next
    rounds go on waiting, each as long, for up to O(unreachable_timeout) in all; after that each round
    fails at once unless one probe (at most one every 5 s) is answered. The first round after the service
    answers again reports the changes."
  - Rounds start every O(interval) seconds; a round that takes longer is followed at once by the next.
  - A device whose status flips back and forth gives an event at every change.
  - "The source logs (logger C(netaccess.nac.dot1x_status), level INFO, shown by ansible-rulebook also without
    C(-v)) one line when it starts and one per round: C(round 3: 5 devices in 0.21 s (AUTHENTICATED 4,
    UNAUTHENTICATED 1), 1 status change (cam-01 AUTHENTICATED -> UNAUTHENTICATED)), naming the first 3 devices
    that changed and counting the others (C(... and 7 more)); errors and warnings at level WARNING."
  - "A server string that could be a Jinja template (one with a brace, such as C({{ lookup('pipe', ...) }})), or
    that becomes one once normalised (NFKC: full-width braces) or decoded the obvious ways (C(urldecode),
    C(b64decode), HTML entities, C(\\u) escapes), is never run by the playbook that the event reaches through
    ansible-rulebook (whose extra variables ansible-core templates): in the event it is replaced by a template
    of its exact value, C({{ lookup('ansible.builtin.list', '<base64 of the value>') | ansible.builtin.b64decode
    | string }}), which ansible-core renders to the server's text and never templates again. Every other value
    is in the event as the server sent it, so rule conditions such as C(event.nac_dot1x.status ==
    \"AUTHENTICATED\") work as before. See the security page of the collection's documentation, which says what
    is safe on which ansible-core, and O(encode_all_strings)."
  - "No credential appears in any event or log line of the source, in any form (the API key, the password, the
    HTTP Basic token, a proxy's password and token; as given, URL-encoded or JSON-escaped), even when the NAC
    echoes it in a status reply: it is replaced by C(********). ansible-rulebook itself logs the
    arguments of a source at C(-vv), so give credentials with the E(NAC_API_KEY) (or E(NAC_USERNAME),
    E(NAC_PASSWORD)) environment variables rather than as arguments."
  - Needs the Python libraries C(requests) and C(h11) where ansible-rulebook runs (the decision environment).
options:
  api_url:
    description: Base address of the NAC service. If not set, E(NAC_API_URL) is used; one of the two is needed.
    type: str
  api_key:
    description:
      - API key of an account with the privilege C(public_api) and access to the intent C(dot1x_status).
      - If not set, E(NAC_API_KEY) is used (recommended).
    type: str
  username:
    description: Account for HTTP Basic authentication instead of O(api_key). If not set, E(NAC_USERNAME) is used.
    type: str
  password:
    description: Password of O(username). If not set, E(NAC_PASSWORD) is used (recommended).
    type: str
  tenant:
    description: Tenant sent as C(X-Tenant). If not set, E(NAC_TENANT) is used.
    type: str
  validate_certs:
    description:
      - Whether to verify the TLS certificate of the service. If not set, E(NAC_VALIDATE_CERTS) is used.
      - Only Ansible's boolean words are accepted (yes/no, true/false, on/off, 1/0, y/n, t/f, in any case); anything
        else fails the source naming the option. With V(false) the source logs one warning when it starts.
    type: bool
    default: true
  ca_path:
    description: PEM bundle of certificate authorities to trust. If not set, E(NAC_CA_PATH) is used.
    type: path
  timeout:
    description: Seconds to wait for each request (at most 86400). If not set, E(NAC_TIMEOUT) is used.
    type: float
    default: 30
  max_retries:
    description: How often a request that failed in a retryable way is tried again.
    type: int
    default: 3
  unreachable_timeout:
    description:
      - Seconds to wait for a service that stops answering (connections refused or timing out, no reply),
        once it has answered. A round waits at most until nothing has answered for O(interval) seconds,
        then gives its error event; the next rounds wait on. If not set, E(NAC_UNREACHABLE_TIMEOUT) is used.
    type: float
    default: 60
  max_reply_mb:
    description:
      - The largest reply read, in MiB; a larger one fails the round without being read whole.
        If not set, E(NAC_MAX_REPLY_MB) is used.
    type: int
    default: 256
  max_list_items:
    description:
      - The most devices one device list may have, all its pages together; a longer list fails the round.
        If not set, E(NAC_MAX_LIST_ITEMS) is used.
    type: int
    default: 2000000
  max_list_mb:
    description:
      - The most MiB of replies one device list may take, all its pages together; a larger list fails the round.
        If not set, E(NAC_MAX_LIST_MB) is used.
    type: int
    default: 1024
  hostname:
    description:
      - Devices to watch, by hostname (every device with the same name, compared as M(netaccess.nac.nac_device)
        compares names; a listed name that only looks alike is not watched, and a warning names it). Default every
        listed device.
      - A name that matches no device is reported in a C(nac_dot1x_error) event at every round; once
        such a device is created it changes from C(null).
    type: list
    elements: str
  interval:
    description:
      - Seconds from the start of one round to the start of the next, greater than 0 and at most 86400. If not set,
        E(NAC_WATCH_INTERVAL) is used.
    type: float
    default: 60
  concurrency:
    description: Status requests in flight at once (1 to 256).
    type: int
    default: 8
  initial:
    description: Emit the status of every device at the first round (with C(previous_status) null).
    type: bool
    default: false
  encode_all_strings:
    description:
      - Deliver every string field of every event (hostnames, statuses, messages, errors) as a template of its
        exact value, as a string with a brace is delivered by default. A playbook on ansible-core before 2.19
        then gets every server string marked unsafe, whatever it does with it (any filter, C(set_fact), loops);
        use it when the playbooks that the rulebook runs transform event fields in other ways than those
        the default mode covers.
      - The rule engine sees every string field in its encoded form, so a condition can compare only numbers
        (C(id)) and C(null); C(--print-events) shows the encoded forms.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Watch 802.1x
  hosts: localhost
  sources:
    - name: 802.1x status of the cameras
      netaccess.nac.dot1x_status:
        hostname: [cam-01, cam-02]
        interval: 30
        concurrency: 8
  rules:
    - name: A camera lost its authentication
      condition: >-
        event.nac_dot1x.previous_status == "AUTHENTICATED"
        and event.nac_dot1x.status != "AUTHENTICATED"
      action:
        run_playbook:
          name: netaccess.nac.dot1x_requery
"""

LOGGER = logging.getLogger("netaccess.nac.dot1x_status")


def _make_collection_importable():
    """ansible-rulebook runs this file by path and does not put the collections path on sys.path:
    add the directory that holds this installed collection's ``ansible_collections``."""
    # .../ansible_collections/netaccess/nac/extensions/eda/plugins/event_source
    here = os.path.dirname(os.path.abspath(__file__))
    collection = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    namespaces = os.path.dirname(os.path.dirname(collection))
    if os.path.basename(namespaces) == "ansible_collections" and os.path.dirname(namespaces) not in sys.path:
        sys.path.insert(0, os.path.dirname(namespaces))


_make_collection_importable()

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.template_guard import inert_event  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import mask  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import (  # noqa: E402 pylint: disable=wrong-import-position
    bug_round,
    log_text,
    poll_once,
    round_summary,
    secret_forms,
    source_options,
    start_warnings,
)


async def main(queue, args):
    """Poll the 802.1x status every ``interval`` seconds and put an event on ``queue`` for each change."""
    client_kwargs, options = source_options(args)
    client = NacClient(**client_kwargs)
    secrets = secret_forms(client_kwargs, client)
    loop = asyncio.get_running_loop()
    if LOGGER.getEffectiveLevel() > logging.INFO:
        # ansible-rulebook shows WARNING and above unless -v is given: the start and one line per round are
        # shown at its default level too, so that a user sees the source polling before any status changes.
        LOGGER.setLevel(logging.INFO)
    for warning in start_warnings(client_kwargs):  # once: TLS not verified
        LOGGER.warning(warning)
    LOGGER.info(
        log_text(
            "polling the 802.1x status of %s at %s every %g s"
            % (", ".join(options["hostname"] or ["every device"]), client.display_url, options["interval"]),
            secrets,
        )
    )
    known, warnings, number = None, [], 0
    try:
        while True:
            started, number = loop.time(), number + 1
            try:
                result = await loop.run_in_executor(
                    None,
                    poll_once,
                    client,
                    options["hostname"],
                    options["concurrency"],
                    options["initial"],
                    known,
                    options["interval"],  # the round's deadline for a service that answers nothing
                )
            except Exception as bug:  # pylint: disable=broad-except
                result = bug_round(bug, known, warnings, secrets)  # a bug must not end the watch
            known = result.known
            for warning in result.warnings if result.warnings != warnings else ():
                LOGGER.warning(log_text(warning, secrets))
            warnings = result.warnings
            for event in result.events:
                if "nac_dot1x_error" in event:
                    LOGGER.warning(log_text(event["nac_dot1x_error"]["message"], secrets))
                # No credential in any form, and a server string never runs in the playbook it reaches.
                await queue.put(inert_event(mask(event, secrets), options["encode_all_strings"]))
            LOGGER.info(log_text(round_summary(number, result, loop.time() - started), secrets))
            await asyncio.sleep(max(0.0, started + options["interval"] - loop.time()))
    finally:
        client.close()


if __name__ == "__main__":
    # Run directly (connection from the NAC_* environment variables): print the events.

    class MockQueue:
        """A fake queue."""

        async def put(self, event):
            """Print the event."""
            print(event)

    asyncio.run(main(MockQueue(), {"interval": 5, "initial": True}))
