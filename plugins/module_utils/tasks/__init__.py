# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 4 of 5, tasks: the work of each task, pure logic over a NacClient. Ensuring devices (ensure_devices: plan
against the list; apply: the engine that carries out writes and decides every uncertain one from a list;
device_creation: the creation as one of its operations), the device list written to a file (device_export), the
802.1x status (dot1x_query, its result entries dot1x_results, and the event source's rounds dot1x_events), and
the progress of long work (progress).

May import: common, http, nac, and this layer. No Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
