# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A user's filter for the test playbook: NFKC normalisation, as community.general.unicode_normalize does."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import unicodedata


def derived_nfkc(text):
    return unicodedata.normalize("NFKC", text)


class FilterModule:
    def filters(self):
        return {"derived_nfkc": derived_nfkc}
