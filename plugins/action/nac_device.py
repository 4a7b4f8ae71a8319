# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action of nac_device: the module as Ansible runs it, with its progress shown on the controller
(plugin_utils/progress.py), and a failed bulk told readably: its counts and its first failures, one a line, before
Ansible prints the whole result (every item's outcome stays in the result's ``devices``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.plugin_utils.progress import ProgressAction, display

FIRST_FAILURES = 5


def failed_bulk_lines(result, limit=FIRST_FAILURES):
    """The lines telling a failed bulk result: its counts, then its first ``limit`` failures; none for another
    result."""
    entries = result.get("devices")
    if not result.get("failed") or not isinstance(entries, list) or not entries:
        return []
    failed = [entry for entry in entries if isinstance(entry, dict) and entry.get("error")]
    lines = [
        "nac_device: %d of %d devices failed (%s created, %s existing); the first %d:"
        % (len(failed), len(entries), result.get("created", 0), result.get("existing", 0), min(limit, len(failed)))
    ]
    for entry in failed[:limit]:
        lines.append("  - %s: %s" % (shown(entry.get("hostname")), shown(entry["error"], 300)))
    lines.append("  every device's outcome is in the result's devices (register the task to read them)")
    return lines


class ActionModule(ProgressAction):
    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        host = (task_vars or {}).get("inventory_hostname", "")
        for line in failed_bulk_lines(result):
            display.display("[%s] %s" % (host, line), color="red")
        return result
