# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress of a module's long work, shown on the controller: the action plugin of ``nac_device`` and
``nac_dot1x_status`` (plugins/action/).

The module counts (module_utils/tasks/progress.py) and appends its progress lines to a file that the action plugin
names in the module's environment (``NAC_PROGRESS_FILE``); the action plugin runs the module exactly as Ansible's
own ``normal`` action does (check mode, results, async unchanged) while a thread shows each new line of that file
with Ansible's display, so that it reaches the terminal and AWX's job output (a ``verbose`` event). Only where
the module runs on the controller itself (a ``local`` connection, as these modules normally do) and not in
``async``: elsewhere the file is not there to read, and nothing changes.

Silenced by ``NAC_PROGRESS=false`` in the controller's environment or the variable ``nac_progress: false``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile
import threading

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action.normal import ActionModule as NormalAction
from ansible.utils.display import Display

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import PROGRESS_FILE

display = Display()

SWITCH_ENV, SWITCH_VAR = "NAC_PROGRESS", "nac_progress"
POLL = 0.5  # seconds between two reads of the progress file
LOCAL = ("local", "ansible.builtin.local")


def wanted(task_vars, environ=None):
    """Whether progress is shown: the variable ``nac_progress``, else ``NAC_PROGRESS``, else yes. A word that is
    not a boolean shows it (a typo never hides what a long task does)."""
    environ = os.environ if environ is None else environ
    value = (task_vars or {}).get(SWITCH_VAR, environ.get(SWITCH_ENV))
    if value is None:
        return True
    try:
        return boolean(value, strict=True)
    except TypeError:
        return True


class Relay:
    """Shows each line appended to ``path`` with ``show`` (a thread reading it every POLL seconds) until ``stop``."""

    def __init__(self, path, show):
        self.path, self.show = path, show
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nac-progress", daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()

    def _run(self):
        with open(self.path, "r") as source:
            pending = ""
            while True:
                stopping = self._stop.wait(POLL)
                pending += source.read()
                lines = pending.split("\n")
                pending = lines.pop()  # a line not yet ended waits for its end
                for line in lines:
                    if line:
                        self.show(line)
                if stopping:
                    return


class ProgressAction(NormalAction):
    """Ansible's ``normal`` action, with the module's progress lines shown on the controller."""

    _nac_progress_path = None

    def run(self, tmp=None, task_vars=None):
        if self._task.async_val or self._connection.transport not in LOCAL or not wanted(task_vars):
            return super(ProgressAction, self).run(tmp, task_vars)
        fd, path = tempfile.mkstemp(prefix="nac-progress-", suffix=".txt")
        os.close(fd)
        host = (task_vars or {}).get("inventory_hostname", "")
        relay = Relay(path, lambda line: display.display("[%s] %s" % (host, line)))
        self._nac_progress_path = path
        relay.start()
        try:
            return super(ProgressAction, self).run(tmp, task_vars)
        finally:
            self._nac_progress_path = None
            relay.stop()
            os.unlink(path)

    def _compute_environment_string(self, raw_environment_out=None):
        """The task's environment, and the progress file's path for the module."""
        if self._nac_progress_path is None:
            return super(ProgressAction, self)._compute_environment_string(raw_environment_out)
        environment = {}
        super(ProgressAction, self)._compute_environment_string(environment)
        environment[PROGRESS_FILE] = self._nac_progress_path
        if isinstance(raw_environment_out, dict):
            raw_environment_out.clear()
            raw_environment_out.update(environment)
        return self._connection._shell.env_prefix(**environment)
