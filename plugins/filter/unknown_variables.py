# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: unknown_variables
short_description: Warn about variables of a role's prefix that the role does not know, a misspelled option
version_added: 0.1.0
description:
  - Names in a warning each variable of the input that is neither one of O(options) nor one of O(internal), with
    the option it probably misspells (C(device_onboarding_report_pth), did you mean C(device_onboarding_report_path)?).
    A misspelled optional variable would otherwise be ignored without a word.
  - Returns the unknown names (an empty list when there are none), in the order given.
  - Used by the role P(netaccess.nac.device_onboarding#role) with the names that
    C(query('ansible.builtin.varnames', '^device_onboarding_')) finds.
author:
  - netaccess.nac maintainers (@netaccess)
options:
  _input:
    description:
      - The names of the variables defined, for example those that the lookup C(ansible.builtin.varnames) finds.
    type: list
    elements: str
    required: true
  options:
    description: The role's options (its argument specification); a misspelled name is compared with them.
    type: list
    elements: str
    required: true
  internal:
    description: The names the role sets itself (registered results, facts and task variables).
    type: list
    elements: str
    default: []
  role:
    description: The role's name, for the warning.
    type: str
    default: the role
"""

EXAMPLES = r"""
- name: Name the variables of the role that it does not know
  ansible.builtin.set_fact:
    unknown: >-
      {{ query('ansible.builtin.varnames', '^my_role_')
         | netaccess.nac.unknown_variables(['my_role_path'], role='my_role') }}
# With my_role_pth set: [WARNING]: my_role_pth is not a variable of my_role (did you mean my_role_path?); it is
# ignored.
"""

RETURN = r"""
_value:
  description: The unknown names.
  type: list
  elements: str
"""

import difflib

from ansible.utils.display import Display

display = Display()


def unknown_names(names, options, internal=()):
    """``[(name, closest option or None)]`` for each name neither an option nor internal, in the order given."""
    known = set(options) | set(internal)
    unknown = []
    for name in names:
        if name not in known and name not in [found for found, _close in unknown]:
            close = difflib.get_close_matches(name, list(options), 1, 0.75)
            unknown.append((name, close[0] if close else None))
    return unknown


def warning_text(name, close, role):
    hint = " (did you mean %s?)" % close if close else ""
    return "%s is not a variable of %s%s; it is ignored" % (name, role, hint)


def unknown_variables(names, options, internal=(), role="the role"):
    """Warn about each unknown name; return them."""
    unknown = unknown_names([str(name) for name in names or ()], options or (), internal or ())
    for name, close in unknown:
        display.warning(warning_text(name, close, role))
    return [name for name, _close in unknown]


class FilterModule:
    def filters(self):
        return {"unknown_variables": unknown_variables}
