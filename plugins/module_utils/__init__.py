# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's client of the NAC API and its Ansible glue, in five layers, each a package that may import
only the layers below it (tests/unit/plugins/module_utils/test_layers.py checks it), from the bottom:

- common: what every layer says the same way (the option table, the errors, masking credentials, a server's
  text in messages, TLS trust, CSV cells);
- http: the HTTP exchange (connections, one reply as http.client reads it, retries, pacing, outages);
- nac: what the NAC API means (its endpoints and statuses, device lists and their pages, hostnames);
- tasks: the work of each task (ensuring devices, the 802.1x status, the list to a file, progress);
- ansible_glue: what only Ansible needs (module parameters to a client, errors to results).

Nothing below ansible_glue imports Ansible: the inventory plugin, the event source, the benchmarks and the unit
tests use the client without it. The developer guide (docs/docsite/rst/developing.rst) maps every file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
