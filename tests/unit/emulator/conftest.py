# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fixtures of the emulator's tests: ``emu``, one running emulator per test module, and ``api``, a client of it
with the admin key, the emulator reset before each test."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator, load_config
from ansible_collections.netaccess.nac.tests.unit.emulator.emulator_api import INTEGRATION_CONFIG, Api


@pytest.fixture(scope="module")
def emu():
    with Emulator(load_config(INTEGRATION_CONFIG)).start() as running:
        yield running


@pytest.fixture
def api(emu):
    emu.reset()
    return Api(emu.url)
