# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: hostnames_by_status
short_description: Hostnames grouped by the 802.1x status each device is expected to reach
version_added: 0.1.0
description:
  - Groups the hostnames to query by the 802.1x status that each device must reach, for one
    M(netaccess.nac.nac_dot1x_status) query per expected status (its O(netaccess.nac.nac_dot1x_status#module:wait_for)).
  - A device's expected status is its own C(expected_status) when that is given and not empty, else
    O(default_status); either is trimmed and upper-cased.
  - Used by the role P(netaccess.nac.device_onboarding#role).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description: The devices, each a mapping with C(hostname) and optionally C(expected_status).
    type: list
    elements: dict
    required: true
  default_status:
    description: The status of a device without its own C(expected_status).
    type: str
    required: true
  hostnames:
    description:
      - The hostnames to group, in lower case, each the hostname of one of the devices (compared in lower case).
      - The groups keep their order; the statuses come in the order of their first hostname.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: One status query per expected status
  netaccess.nac.nac_dot1x_status:
    hostname: "{{ by_status[item] }}"
    wait_for: "{{ item }}"
  loop: "{{ by_status | list }}"
  vars:
    by_status: "{{ devices | netaccess.nac.hostnames_by_status('AUTHENTICATED', hostnames) }}"
    hostnames: "{{ devices | map(attribute='hostname') | map('lower') | list }}"
    devices:
      - hostname: cam-01
      - hostname: PRN-NOMAC-01
        expected_status: unauthenticated
# by_status is {"AUTHENTICATED": ["cam-01"], "UNAUTHENTICATED": ["prn-nomac-01"]}
"""

RETURN = r"""
_value:
  description: "{expected status: [hostnames]}, each hostname as given in O(hostnames)."
  type: dict
"""

from ansible.errors import AnsibleFilterError


def hostnames_by_status(devices, default_status, hostnames):
    """{expected status: [hostnames]} of ``hostnames`` (lower case), in their order."""
    expected = {}
    for device in devices:
        status = device.get("expected_status") or default_status
        expected[str(device.get("hostname")).lower()] = str(status).strip().upper()
    by_status = {}
    for hostname in hostnames:
        if hostname not in expected:
            raise AnsibleFilterError("hostnames_by_status: %r is not the hostname of any of the devices" % (hostname,))
        by_status.setdefault(expected[hostname], []).append(hostname)
    return by_status


class FilterModule:
    def filters(self):
        return {"hostnames_by_status": hostnames_by_status}
