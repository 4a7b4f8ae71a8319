# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""For the unit tests: whether ansible-core would template a string, and rendering a play's own template, on
the ansible-core the tests run on (trusted strings from 2.19, strings not marked unsafe before)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:  # ansible-core 2.19+
    from ansible.template import is_trusted_as_template, trust_as_template

    AnsibleUnsafe = None  # before 2.19 only
    BEFORE_2_19 = False
except ImportError:
    from ansible.utils.unsafe_proxy import AnsibleUnsafe

    BEFORE_2_19 = True


def templatable(text):
    """Whether a play would template this string: trusted on 2.19+, not wrapped unsafe before."""
    return not isinstance(text, AnsibleUnsafe) if BEFORE_2_19 else is_trusted_as_template(text)


def render(template, variables):
    """A play's own template (trusted) rendered with ``variables``."""
    if not BEFORE_2_19:
        template = trust_as_template(template)
    return Templar(loader=DataLoader(), variables=variables).template(template)
