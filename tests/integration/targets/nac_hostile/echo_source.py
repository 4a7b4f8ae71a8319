# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One round of the event source netaccess.nac.dot1x_status, run as ansible-rulebook runs it (``main(queue, args)``
of the installed file, the connection from the NAC_* environment), for the device id given: prints each event and
lets the source's log go to stderr, then stops.

usage: echo_source.py DEVICE_ID
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import asyncio
import importlib.util
import json
import logging
import os
import sys


def source():
    for root in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
        path = os.path.join(
            root, "ansible_collections/netaccess/nac/extensions/eda/plugins/event_source/dot1x_status.py"
        )
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("dot1x_status", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise SystemExit("the event source is not installed on ANSIBLE_COLLECTIONS_PATH")


class Queue:
    def __init__(self):
        self.events = []

    async def put(self, event):
        self.events.append(event)
        print(json.dumps(event, ensure_ascii=True), flush=True)


async def one_round(main, device_id):
    queue = Queue()
    task = asyncio.ensure_future(main(queue, {"interval": 30, "initial": True, "hostname": None}))
    for _tick in range(600):
        if queue.events or task.done():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    if not any(event.get("nac_dot1x", {}).get("id") == device_id for event in queue.events):
        raise SystemExit("no event for device %d" % device_id)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    asyncio.run(one_round(source().main, int(sys.argv[1])))
