# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Emulator of the NAC API described in the API guide (docs/docsite/rst/api.rst), standard library only.

Importable (``Emulator``, ``DEFAULT_CONFIG``, ``load_config``) and runnable as a script;
see tests/emulator/README.md for the CLI, the config format and the admin endpoints.
This file is the entry point; the emulator itself is the package nac_emu next to it:

- common.py: replies and error replies, checks of JSON values, streamed bodies
- config.py: the built-in config, config files, the server-variant settings
- model.py: devices, accounts, the 802.1x model and the /api endpoints; creation.py: the creation rules
- variants.py: hostname rules, paginated and padded lists, seeded records; admin.py: /_emulator endpoints
- unconfirmed.py: servers that confirm nothing (capped, lagging and shifting lists, stored names, twins, redirects)
- store.py: the --state file; faults.py: fault injection; outage.py: outages; hostile.py: hostile mode
- server.py: the HTTP server and handler; emulator.py: Emulator; cli.py: the command line
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import sys

if __package__:  # ansible_collections.netaccess.nac.tests.emulator.nac_emulator (unit tests, ansible-test)
    from .nac_emu import cli, common, config, emulator, faults, model, outage, ratelimit, server, unconfirmed, variants
else:  # run as a script, or imported with tests/emulator on sys.path (benchmarks)
    from nac_emu import cli, common, config, emulator, faults, model, outage, ratelimit, server, unconfirmed, variants

# What other code imports from this module.
DEFAULT_CONFIG = config.DEFAULT_CONFIG
complete_config = config.complete_config
load_config = config.load_config
SETTINGS = config.SETTINGS
HOSTNAME_MATCHES = config.HOSTNAME_MATCHES
HOSTNAME_CHARS = config.HOSTNAME_CHARS
PAGE_STYLES = config.PAGE_STYLES
STORED_HOSTNAMES = config.STORED_HOSTNAMES
CREATION_REDIRECTS = config.CREATION_REDIRECTS
PAGE_SHIFTS = config.PAGE_SHIFTS
VARIANT_EVENTS = unconfirmed.EVENTS
stored_hostname = unconfirmed.stored_hostname
hostname_key = variants.hostname_key
ApiError = common.ApiError
Stream = common.Stream
FAULT_MODES = faults.FAULT_MODES
FAULT_DEFAULTS = faults.FAULT_DEFAULTS
Faults = faults.Faults
FaultSettingsError = faults.FaultSettingsError
OUTAGE_MODES = outage.OUTAGE_MODES
OutageError = outage.OutageError
NacModel = model.NacModel
RateLimit = ratelimit.RateLimit
_Handler = server._Handler  # pylint: disable=protected-access
Emulator = emulator.Emulator
main = cli.main

if __name__ == "__main__":
    sys.exit(main())
