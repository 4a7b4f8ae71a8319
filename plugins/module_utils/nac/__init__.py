# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 3 of 5, nac: what the NAC API means. Its endpoints and what each HTTP status means for them (client:
NacClient, the one mapping of a status to an error), device lists held compactly as they are decoded
(device_list), their pages: RFC 8288 Link and every sign of a partial list (pagination), and hostnames as a
device's identity (hostnames).

May import: common, http, and this layer. No Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
