# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment:
    """The option ``hostname`` of the modules that look devices up by a list of names (nac_device_info,
    nac_dot1x_status): its type, and how a name is compared and checked (as notes, since Ansible merges a
    fragment's option with a module's key by key, so a module's own description of the option replaces the
    fragment's whole)."""

    DOCUMENTATION = r"""
options:
  hostname:
    type: list
    elements: raw
notes:
  - Names in O(hostname) are compared as hostnames everywhere in this collection. A device has a hostname when
    both are the same name, that is canonically equivalent Unicode (equal NFC forms) and equal when ASCII letters
    are compared without case (RFC 4343), as M(netaccess.nac.nac_device) compares them. A listed device whose
    name matches a requested one only by a looser rule (Unicode case folding, so C(strasse-01) for
    C(straße-01); compatibility forms, NFKC; surrounding whitespace) is a lookalike, never taken for it, and a
    warning names it with its id.
  - Each item of O(hostname) is one name, a string of at most 253 characters without whitespace or control
    characters; an item that is a list or mapping is refused before any request, rather than turned into text
    (the option takes items of any type, C(raw), and the module checks each).
"""
