# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin against pages that shift while they are read (issue 25): a device inserted at the front
or the first one deleted between two pages; every device is a host once, no phantom host, none missing; a
list that shifts again fails the source, saying so."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleError, AnsibleParserError

from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import DEFAULT_CONFIG, Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import inventory_members as members
from ansible_collections.netaccess.nac.tests.unit.helpers import inventory_source as source
from ansible_collections.netaccess.nac.tests.unit.helpers import parse_inventory as parse

ADMIN_KEY = "nac-demo-admin-key"

SHIFTS = ("insert-front", "delete-front")


@pytest.fixture
def emulator():
    with Emulator(config=dict(DEFAULT_CONFIG, seed_devices=15)).start() as emu:  # 20 devices: 4 pages of 5
        emu.settings(page_size=5)
        yield emu


@pytest.mark.parametrize("shift", SHIFTS)
def test_every_device_is_one_host_when_the_pages_shifted(emulator, tmp_path, shift):
    emulator.settings(page_shift=shift)
    inventory = parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY))
    truth = sorted(record["hostname"] for record in emulator.records())
    assert members(inventory, "nac_devices") == truth  # no "<name>_<id>" phantom, none unread
    assert emulator.variant_counts()["shifts"] == 1


def test_a_list_that_shifts_again_fails_the_source(emulator, tmp_path):
    emulator.settings(page_shift="insert-front", page_shifts=2)
    with pytest.raises((AnsibleError, AnsibleParserError)) as raised:
        parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY), cache=False)
    assert "the list changed while its pages were read, and again when it was read once more" in str(raised.value)
