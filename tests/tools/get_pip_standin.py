# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for the get-pip bootstrap script that ansible-test downloads.

ansible-test creates an empty virtual environment for each sanity test and
bootstraps pip into it by running a ``get-pip.py`` script that it downloads
once into ``~/.ansible/test/cache/get_pip_<pip version>.py``. That download
host is not reachable from CI, so ``make sanity`` copies this file to that
cache path when it is absent. ansible-test then runs it (through its
``quiet_pip.py`` wrapper, as ``__main__``) with arguments such as::

    --disable-pip-version-check pip==24.2 --no-setuptools --no-wheel

It bootstraps pip with the interpreter's own ``ensurepip`` and then lets that
pip install the requested packages from the package index, which is
reachable. ``--no-setuptools`` and ``--no-wheel`` are get-pip options that pip
itself does not know, so they are dropped.
"""

from __future__ import annotations

import subprocess
import sys

GET_PIP_ONLY_OPTIONS = frozenset(("--no-setuptools", "--no-wheel"))


def main(argv):
    """Bootstrap pip, then install what ansible-test asked for."""
    args = [arg for arg in argv if arg not in GET_PIP_ONLY_OPTIONS]

    # Works in a venv created with --without-pip; harmless when pip exists.
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])

    if args:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--upgrade"] + args)

    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
