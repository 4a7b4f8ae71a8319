#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nac_intent_info
short_description: List the intents the NAC account may fire
version_added: 0.1.0
description:
  - Lists the intents (named actions such as C(dot1x_status), "Check 802.1x") that the account
    of the credentials may fire. The service lists only those.
  - Use it to check an account's access before work that needs an intent, as the role
    C(netaccess.nac.device_onboarding) does.
  - Never changes anything.
author:
  - netaccess.nac maintainers (@netaccess)
options: {}
extends_documentation_fragment:
  - netaccess.nac.connection
  - netaccess.nac.attributes
  - netaccess.nac.attributes.read_only
"""

EXAMPLES = r"""
- name: List the intents of the account
  netaccess.nac.nac_intent_info:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
  register: nac_intents

- name: Make sure the account may query 802.1x status
  ansible.builtin.assert:
    that: "'dot1x_status' in nac_intents.tags"
    fail_msg: The account needs access to the intent dot1x_status ("Check 802.1x")
"""

RETURN = r"""
intents:
  description: The intent records as the service lists them; each has at least C(tag).
  returned: success
  type: list
  elements: dict
  sample:
    - tag: dot1x_status
      name: Check 802.1x
tags:
  description: The tags of those intents.
  returned: success
  type: list
  elements: str
  sample: ["dot1x_status", "ping"]
api_url:
  description:
    - The address of the NAC that listed them (O(api_url) without a trailing slash), for reports that say
      which NAC they are about, as the role P(netaccess.nac.device_onboarding#role) does.
  returned: success
  type: str
  sample: https://nac.example.com
"""

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import NacModule


def list_intents(nac):
    intents = nac.client.list_intents()
    return dict(intents=intents, tags=[intent["tag"] for intent in intents], api_url=nac.client.display_url)


def main():
    NacModule(argument_spec={}, read_only=True).run(list_intents)


if __name__ == "__main__":
    main()
