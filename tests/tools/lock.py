# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resolve one virtual environment afresh and write what it installed as a constraints file.

usage: python tests/tools/lock.py --python PYTHON --out constraints/NAME.txt [--drift] -- PIP_INSTALL_ARGS...

Creates a throw-away virtual environment with PYTHON, runs ``pip install PIP_INSTALL_ARGS`` in it without any
constraint (so pip takes the newest releases that the requirement files allow), and writes ``pip freeze`` to
OUT with a header naming the command. `make lock` runs it for every environment of the matrix; the Makefile
installs each environment with ``-c`` that file, so that a fresh clone builds the environment that was tested
and a new release elsewhere changes nothing until someone runs `make lock` on purpose.

With --drift it writes nothing: it prints each package whose newest release differs from OUT's pin
("cryptography 50.0.2 -> 51.0.1"), or "no drift", and exits 0 either way (`make test-latest` reports it).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)")


def resolve(python, args):
    """Return the ``pip freeze`` lines of a new virtual environment after ``pip install ARGS``."""
    with tempfile.TemporaryDirectory(prefix="nac-lock-") as folder:
        venv = Path(folder, "venv")
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        env = {name: value for name, value in os.environ.items() if name != "PIP_CONSTRAINT"}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        subprocess.run(pip + ["install", "--quiet"] + args, check=True, env=env)
        frozen = subprocess.run(pip + ["freeze", "--all"], check=True, env=env, capture_output=True, text=True)
    kept = [line for line in frozen.stdout.splitlines() if PIN.match(line)]
    return sorted((line for line in kept if not line.startswith(("pip==", "setuptools=="))), key=str.lower)


def pins(lines):
    """Map each pinned package's normalised name to its version."""
    found = {}
    for line in lines:
        match = PIN.match(line)
        if match:
            found[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = match.group(2)
    return found


def drift(old, new):
    """List the packages whose version differs between two pin maps, as readable lines."""
    lines = []
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            lines.append("%s %s -> %s" % (name, old.get(name, "(none)"), new.get(name, "(none)")))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the interpreter of the environment")
    parser.add_argument("--out", required=True, type=Path, help="the constraints file")
    parser.add_argument("--drift", action="store_true", help="print what changed since OUT; write nothing")
    parser.add_argument("pip_args", nargs="+", help="what to pip install (after --)")
    options = parser.parse_args(argv)
    frozen = resolve(options.python, options.pip_args)
    if options.drift:
        old = pins(options.out.read_text(encoding="utf-8").splitlines()) if options.out.exists() else {}
        changes = drift(old, pins(frozen))
        print("    %s: %s" % (options.out, "; ".join(changes) if changes else "no drift"))
        return 0
    version = subprocess.run(
        [options.python, "-c", "import platform; print(platform.python_version())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    header = [
        "# Written by `make lock` (tests/tools/lock.py): what pip resolved on Python %s for" % version,
        "#   pip install %s" % " ".join(options.pip_args),
        "# The Makefile installs with -c this file. Do not edit by hand: run `make lock` and commit the result.",
    ]
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text("\n".join(header + frozen) + "\n", encoding="utf-8")
    print("    %s: %d pins" % (options.out, len(frozen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
