# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 1 of 5, common: what every layer says the same way. The one table of the connection options and their
bounds (options), the errors and their structured failures (errors), the one masking of credentials in every
form (masking), a server's text as messages show it (server_text), TLS trust: ca_path and what a failed handshake
means (tls_trust), and a server value as a CSV cell (csv_cells).

May import: the standard library, and this layer. No Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
