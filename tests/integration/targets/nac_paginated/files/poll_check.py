# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One round of the event source's logic (dot1x_events.poll_once, initial: every device's status) against
the emulator; prints {"statuses": devices with a status event, "ids": distinct ids, "errors": [messages]}.

usage: poll_check.py API_URL (the API key from NAC_API_KEY)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
while os.path.basename(here) != "ansible_collections" and os.path.dirname(here) != here:
    here = os.path.dirname(here)
sys.path.insert(0, os.path.dirname(here))

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import poll_once  # noqa: E402  pylint: disable=wrong-import-position

client = NacClient(sys.argv[1], api_key=os.environ["NAC_API_KEY"], read_only=True)
events = poll_once(client, initial=True).events
changes = [event["nac_dot1x"] for event in events if "nac_dot1x" in event]
print(
    json.dumps(
        dict(
            statuses=len(changes),
            ids=len(set(change["id"] for change in changes)),
            errors=[event["nac_dot1x_error"]["message"] for event in events if "nac_dot1x_error" in event],
        )
    )
)
