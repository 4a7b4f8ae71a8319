# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resolve the collection sources that AWX projects, execution and decision environments are told to use, offline.

usage: python tests/tools/galaxy_sources.py      (from the repository root; make lint runs it)

netaccess.nac is not published on Galaxy, so every file that tells ansible-galaxy where to get it must name a
source that works without Galaxy: the repository's git address (type git), or a tarball (type url or file).
For each file below, this reads its list of collections, refuses an entry that would ask Galaxy for
netaccess.nac, points the repository's address at a local git repository made from the working tree (the
same files, committed on a branch of the same name), and installs the list with
``ansible-galaxy collection install --offline -r`` into an empty directory: the collection must land there,
with its MANIFEST.json. An execution or decision environment with a git source must install git before
ansible-builder's galaxy stage (additional_build_steps.prepend_galaxy). Prints one
line per file and "galaxy sources: N passed, N failed"; exits 1 on a failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from readme_walk import local_repository  # the same fresh copy of the working tree, committed

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "https://github.com/netaccess/nac.git"  # as in readme_walk.py
# file: where its list of collections is (a key path); the AWX guide includes extensions/awx/requirements.yml.
FILES = {
    "extensions/awx/requirements.yml": ("collections",),
    "execution-environment.yml": ("dependencies", "galaxy", "collections"),
    "extensions/eda/decision-environment.yml": ("dependencies", "galaxy", "collections"),
}


def entries(path, keys):
    data = yaml.safe_load((ROOT / path).read_text())
    for key in keys:
        data = data[key]
    return [item if isinstance(item, dict) else {"name": item} for item in data]


def check(path, keys, workdir):
    """None when the file's collections install offline from the local repository, else what went wrong."""
    listed = entries(path, keys)
    ours = [e for e in listed if e.get("type") in ("git", "url", "file") or str(e["name"]).startswith("netaccess.")]
    if not ours:
        return "lists no source of netaccess.nac"
    for entry in ours:
        if entry.get("type") not in ("git", "url", "file"):
            return "takes %s from Galaxy, where it is not published: give a git or tarball source" % entry["name"]
        if entry["type"] == "git" and entry["name"] != REPOSITORY:
            return "a git source other than the repository, %s: %s" % (REPOSITORY, entry["name"])
    if any(e["type"] == "git" for e in ours) and keys[0] == "dependencies":
        # ansible-builder installs the collections in its galaxy stage, before the system dependencies.
        steps = yaml.safe_load((ROOT / path).read_text()).get("additional_build_steps", {}).get("prepend_galaxy", [])
        if not any(re.search(r"\binstall\b.*\bgit(-core)?\b", str(step)) for step in steps):
            return "a git source, but no step that installs git before the galaxy stage (prepend_galaxy)"
    repository = local_repository(
        Path(tempfile.mkdtemp(dir=workdir)), sorted({str(e.get("version")) for e in ours if e["type"] == "git"})
    )
    resolved = [dict(e, name=repository) for e in ours if e["type"] == "git"]
    if not resolved:
        return None  # tarballs only: nothing to resolve offline (a url is fetched at build time)
    requirements = Path(workdir) / "requirements.yml"
    requirements.write_text(yaml.safe_dump({"collections": resolved}))
    target = Path(tempfile.mkdtemp(dir=workdir))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=str(target), HOME=str(workdir), ANSIBLE_NOCOLOR="1")  # no ansible.cfg
    result = subprocess.run(
        ["ansible-galaxy", "collection", "install", "--offline", "-r", str(requirements), "-p", str(target)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    manifest = target / "ansible_collections/netaccess/nac/MANIFEST.json"
    if result.returncode != 0 or not manifest.is_file():
        return "ansible-galaxy did not install it (exit status %d):\n%s" % (
            result.returncode,
            (result.stdout + result.stderr)[-2000:],
        )
    info = json.loads(manifest.read_text())["collection_info"]
    if (info["namespace"], info["name"]) != ("netaccess", "nac"):
        return "installed %s.%s, not netaccess.nac" % (info["namespace"], info["name"])
    return None


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="galaxy-sources-") as workdir:
        for path, keys in FILES.items():
            problem = check(path, keys, workdir)
            if problem:
                failed += 1
                print("    FAILED: %s: %s" % (path, problem), file=sys.stderr)
            else:
                passed += 1
                print("    ok: %s: netaccess.nac installs from %s (offline, a local copy)" % (path, REPOSITORY))
    print("galaxy sources: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
