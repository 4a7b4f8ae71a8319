# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter netaccess.nac.hostnames_by_status, rendered by Ansible's own templar, gives the role
device_onboarding exactly what its former Jinja chain (dict / zip / map('extract') / selectattr) gave."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every template

    def trust_as_template(template):
        return template


# The role's former expressions: expected status by lower-case hostname, the {key: hostname, value: status}
# items of the hostnames to query, the loop over the statuses and each query's hostnames.
EXPECTED = (
    "{{ dict(devices | map(attribute='hostname') | map('lower')"
    " | zip(devices | map(attribute='expected_status', default='')"
    " | map('default', default_status, true) | map('trim') | map('upper'))) }}"
)
WANTED = "{{ dict(hostnames | zip(hostnames | map('extract', expected))) | dict2items }}"
LOOP = "{{ wanted | map(attribute='value') | list | unique }}"
QUERY = "{{ wanted | selectattr('value', 'eq', item) | map(attribute='key') | list }}"
FILTER = "{{ devices | netaccess.nac.hostnames_by_status(default_status, hostnames) }}"

FLEETS = [
    (
        [
            dict(hostname="cam-01"),
            dict(hostname="Cam-02", expected_status=" unauthenticated "),
            dict(hostname="prn-03"),
        ],
        "AUTHENTICATED",
        None,
    ),
    (
        [
            dict(hostname="a", expected_status=""),
            dict(hostname="B", expected_status=None),
            dict(hostname="c", expected_status="Quarantine"),
        ],
        "authenticated",
        None,
    ),
    (
        [
            dict(hostname=1234),
            dict(hostname="x-01", expected_status="CONNECTING"),
            dict(hostname="y-01", expected_status="connecting"),
        ],
        "AUTHENTICATED",
        ["x-01", "1234"],
    ),  # the check-mode subset, in another order
    ([], "AUTHENTICATED", None),
]


def render(template, **variables):
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(template))


def former(devices, default_status, hostnames):
    expected = render(EXPECTED, devices=devices, default_status=default_status)
    wanted = render(WANTED, hostnames=hostnames, expected=expected)
    return dict((status, render(QUERY, wanted=wanted, item=status)) for status in render(LOOP, wanted=wanted))


@pytest.mark.parametrize("devices, default_status, hostnames", FLEETS)
def test_the_filter_gives_what_the_former_chain_gave(devices, default_status, hostnames):
    if hostnames is None:
        hostnames = list(dict.fromkeys(str(device["hostname"]).lower() for device in devices))
    grouped = render(FILTER, devices=devices, default_status=default_status, hostnames=hostnames)
    assert grouped == former(devices, default_status, hostnames)
    assert list(grouped) == list(former(devices, default_status, hostnames))  # the statuses in the same order


def test_the_groups_and_their_order():
    devices = [
        dict(hostname="cam-01"),
        dict(hostname="prn-01", expected_status="unauthenticated"),
        dict(hostname="cam-02"),
    ]
    grouped = render(FILTER, devices=devices, default_status="AUTHENTICATED", hostnames=["cam-01", "prn-01", "cam-02"])
    assert grouped == {"AUTHENTICATED": ["cam-01", "cam-02"], "UNAUTHENTICATED": ["prn-01"]}
    assert list(grouped) == ["AUTHENTICATED", "UNAUTHENTICATED"]


def test_a_hostname_of_no_device_is_named():
    with pytest.raises(AnsibleError, match="'ghost' is not the hostname of any of the devices"):
        render(FILTER, devices=[dict(hostname="cam-01")], default_status="AUTHENTICATED", hostnames=["ghost"])
