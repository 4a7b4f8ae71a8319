# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 5 of 5, ansible_glue: what only Ansible needs. Module parameters to a client, errors to fail_json,
check mode and diff once for every module, results masked (module); whether the controller that started a module
is still there (controller_alive); which server strings Ansible must never run as templates (template_guard,
also used by the inventory plugin and the event source).

May import: common, http, nac, tasks, this layer, and Ansible (module only)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
