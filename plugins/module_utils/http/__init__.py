# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 2 of 5, http: the HTTP exchange, from one request to its reply. Kept-alive connections over the standard
library's http.client, TLS made as urllib3 makes it (connections), one reply as http.client reads it and the
typed facts of a failed exchange (framing, reply), which failures are retried and after how long (retry_policy),
many requests at once and one pace under a rate limit (scheduler), a service that cannot be reached at all
(unreachable), and the exchange as a whole: authentication, retries, deadlines, size limits (transport). It knows
HTTP, not what the NAC API's statuses mean.

May import: common, and this layer. No Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
