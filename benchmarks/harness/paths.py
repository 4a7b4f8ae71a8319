# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Locate the work tree and make the collection importable, so that every script measures this checkout."""

import atexit
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
EMULATOR_DIR = os.path.join(ROOT, "tests", "emulator")
EMULATOR = os.path.join(EMULATOR_DIR, "nac_emulator.py")
ADMIN_KEY = "nac-demo-admin-key"  # the emulator's fake demo credential
FIRE_PATH = "/api/intent/dot1x_status/fire"


def collections_path(workdir: "str | None" = None) -> str:
    """Return a directory from which ``ansible_collections.netaccess.nac`` imports as this work tree.

    Use the work tree's own parents when it already sits at .../ansible_collections/netaccess/nac; else link it
    into ``workdir`` (or a temporary directory removed at exit: the link goes, never the work tree behind it)."""
    parts = ROOT.split(os.sep)
    if parts[-3:-1] == ["ansible_collections", "netaccess"] and parts[-1] == "nac":
        return os.sep.join(parts[:-3])
    if workdir is None:
        workdir = tempfile.mkdtemp(prefix="nac-bench-")
        atexit.register(shutil.rmtree, workdir, True)
    link = os.path.join(workdir, "ansible_collections", "netaccess", "nac")
    if not os.path.islink(link):  # made once per workdir
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(ROOT, link)
    return workdir


_IMPORTABLE = []


def import_collection() -> str:
    """Put this work tree on ``sys.path`` as ``ansible_collections.netaccess.nac`` once; return the directory."""
    if not _IMPORTABLE:
        _IMPORTABLE.append(collections_path())
        sys.path.insert(0, _IMPORTABLE[0])
    return _IMPORTABLE[0]


def import_emulator() -> None:
    """Put ``tests/emulator`` on ``sys.path`` so that ``nac_emulator`` imports as the emulator's script does."""
    if EMULATOR_DIR not in sys.path:
        sys.path.insert(0, EMULATOR_DIR)
