# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action of nac_dot1x_status: the module as Ansible runs it, with its progress shown on the controller
(plugin_utils/progress.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.netaccess.nac.plugins.plugin_utils.progress import ProgressAction


class ActionModule(ProgressAction):
    pass
