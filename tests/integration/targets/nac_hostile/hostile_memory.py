# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nac_hostile's memory watch: the peak RSS of the processes under a command that run a module, from /proc."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def watch_memory(process, cap_mb, seconds):
    """(peak RSS in MB of ``process``'s descendants that run nac_device_info, why it was stopped or None):
    polled every 0.1 s; stopped (killed) over ``cap_mb`` or after ``seconds``."""
    peak, deadline = 0, time.monotonic() + seconds
    while process.poll() is None:
        for pid in descendants(process.pid):
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as handle:
                    if b"nac_device_info" not in handle.read():
                        continue
                with open("/proc/%d/status" % pid) as handle:
                    for line in handle:
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]) // 1024)
            except OSError:
                continue
        if peak >= cap_mb or time.monotonic() > deadline:
            for pid in descendants(process.pid):
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            process.kill()
            return peak, "over %d MB" % cap_mb if peak >= cap_mb else "still listing after %d s" % seconds
        time.sleep(0.1)
    return peak, None
