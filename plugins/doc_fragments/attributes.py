# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment:
    """Attributes every module of netaccess.nac shares."""

    DOCUMENTATION = r"""
attributes:
  action_group:
    description: Use C(group/netaccess.nac.nac) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - netaccess.nac.nac
"""

    READ_ONLY = r"""
attributes:
  check_mode:
    description: Runs normally in check mode; it only reads.
    support: full
  diff_mode:
    description: Never changes anything, so there is nothing to diff.
    support: N/A
"""

    EXPORT = r"""
attributes:
  check_mode:
    description:
      - Runs in check mode; it only reads the NAC, and with O(dest) it writes nothing where O(dest) is and reports
        whether a run would change that file.
    support: full
  diff_mode:
    description: Never changes anything on the NAC; the file O(dest) is not diffed.
    support: none
"""
