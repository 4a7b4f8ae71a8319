# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: device_input
short_description: Devices as an operator has them, read and checked as nac_device checks its devices
version_added: 0.1.0
description:
  - Reads devices given as a list, as YAML or JSON text (an AWX survey answer arrives as text), or from a file,
    and checks each one with the words of M(netaccess.nac.nac_device) (an item that is not a mapping, a key of no
    option with a guess at the one meant, a bad hostname, MAC or IP address, a hostname, MAC or IP given twice).
  - The file (O(path)) is CSV when its name ends with C(.csv) (or C(.txt)), else YAML or JSON (a list of devices,
    or a mapping with one key whose value is that list, as a variables file). A CSV file has a header row naming
    its columns (C(hostname,group,profile,macs,ips), in any order, C(hostname) required, and the O(keys) given);
    several MACs or IPs in one cell are separated by spaces or semicolons. A byte order mark, CRLF line ends,
    spaces around a cell and empty lines are ignored, as a spreadsheet writes them.
  - Returns C(devices), the list (those of the input, then those of the file), each device a mapping whose MACs
    and IPs are lists, and C(error), one line saying what is wrong (naming O(name), or the file with its line and
    column), or an empty text. It never fails itself, so that the task that reads C(error) fails with that line
    alone.
  - Used by the role P(netaccess.nac.device_onboarding#role) and the playbook C(netaccess.nac.onboard_devices).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description: The devices, a list of mappings or YAML or JSON text that spells one; none or empty text for none.
    type: raw
    required: true
  name:
    description: The name of the variable that holds the input, for the messages.
    type: str
    required: true
  path:
    description:
      - A file of devices, read after the input; none when empty.
      - A relative path is looked for in the current directory, then in O(base).
    type: str
    default: ""
  base:
    description: The directory of a relative O(path) that is not in the current directory, for example C(playbook_dir).
    type: str
    default: ""
  keys:
    description:
      - The keys a device may have besides those of M(netaccess.nac.nac_device), for example C(expected_status).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Read the devices of a survey answer or a CSV file
  ansible.builtin.set_fact:
    devices_read: >-
      {{ nac_devices | default(none) | netaccess.nac.device_input('nac_devices', path=nac_devices_file | default('')) }}

- name: Fail naming what is wrong with them
  ansible.builtin.fail:
    msg: "{{ devices_read.error }}"
  when: devices_read.error | length > 0
# A survey answer '- cam-01' fails with: nac_devices[0] is the string 'cam-01', not a device. Each item of
# nac_devices is one device, a mapping with the keys hostname, group, profile, macs, ips (hostname required), ...
"""

RETURN = r"""
_value:
  description: C(devices), the list of devices, and C(error), what is wrong with them or an empty text.
  type: dict
"""

import os

from ansible.module_utils.common.text.converters import to_native

from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_input import (
    DEVICE_KEYS,
    checked_devices,
    file_devices,
    text_devices,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import InvalidRequest


def device_input(value, name, path="", base="", keys=()):
    """{devices, error}: the devices of ``value`` and of the file ``path``, checked; ``error`` names what is
    wrong, or is empty."""
    allowed = DEVICE_KEYS + tuple(key for key in keys or () if key not in DEVICE_KEYS)
    try:
        devices = checked_devices(_plain(text_devices(_plain(value), name)), name, allowed)
        if path:
            devices += file_devices(_located(to_native(path), base), allowed)
            checked_devices(devices, name, allowed)  # none given twice across the input and the file
    except InvalidRequest as error:
        return dict(devices=[], error=str(error))
    return dict(devices=devices, error="")


def _plain(value):
    """Ansible's own text, list and mapping types as Python's, so that they are checked as nac_device checks them."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return dict((_plain(key), _plain(item)) for key, item in value.items())
    return value


def _located(path, base):
    if os.path.isabs(path) or os.path.exists(path) or not base:
        return path
    return os.path.join(base, path)


class FilterModule:
    def filters(self):
        return {"device_input": device_input}
