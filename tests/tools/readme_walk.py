# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Walk the README's own paths as a newcomer would, on a fresh copy of the repository.

usage: python tests/tools/readme_walk.py [--venv DIR] [--keep]     (from the repository root; make lint runs it)

Reads three sections of README.md and runs their commands in order, in a copy of the repository's files
(tracked and new ones, as a fresh clone with the working tree's changes would have them): every fenced
``sh`` block line by line in one shell session, each fenced ``yaml`` block that starts with
``# <file name>`` written to that file, each ``text`` block shown as output to expect. The sections:

"### Use it in your own playbooks":
  make env                      exits 0 and prints what the README's next block shows (paths normalised), every
                                line a command or a comment; its export lines are then run, as pasted
  python3 tests/emulator/...    starts the emulator in the background (on a free port instead of 8787)
  export ...                    sets the variables for the next commands ($PWD is the copy)
  ansible-playbook onboard.yml  exits 0: the first run changes something, the second nothing; each warning it
                                prints is one the README shows
  ansible-inventory ... --graph nac_dot1x_unauthenticated
                                exits 0 and shows ws-02, the emulator's device without a MAC
  ansible-playbook ... dot1x_report -e nac_wait_timeout=N ...
                                fails within N + 30 s, naming ws-02, and its CSV report lists ws-02
"## Install", in a new shell (an empty HOME, no ANSIBLE_* variable, ansible-core on PATH), in the copy:
  python3 -m pip install ...    not run (the walk is offline): the packages must be there already
  ansible-galaxy collection install ...
                                each route installs the collection into ~/.ansible/collections (emptied before
                                each), where ansible-doc then finds it from HOME; git+https://github.com/... is
                                a local git repository of the copy; the tarball route also runs from HOME
"### Try it with ansible-rulebook", in the first shell (the emulator still running):
  ansible-rulebook ...          starts the rulebook in the background: it must log its first round
  curl ... UNAUTHENTICATED      the re-query's task must then say what it waits for, within the interval + 60 s
  curl ... clear                the re-query must end saying the device is AUTHENTICATED again, and its JSON
                                report hold the event (auth_method and username null) and both times in UTC

A command the walk does not know fails it: the README and this walk change together. --venv is passed to
make (VENV=...), so that `make env` reuses an existing toolchain instead of installing one. The quick
start of the documentation site must show the same playbook as the README (one text). Prints
"readme walk: N passed, 0 failed" and exits 0 when every step did as expected.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from readme_walk_eda import RulebookSteps, WalkError

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = ("### Use it in your own playbooks", "## Install", "### Try it with ansible-rulebook")
REPOSITORY = "https://github.com/netaccess/nac.git"
CLONE_PLACEHOLDER = "/path/to/a/clone/of/nac"
INSTALLED = ".ansible/collections/ansible_collections/netaccess/nac/MANIFEST.json"
README_PORT = "8787"
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```\n", re.DOTALL | re.MULTILINE)
STAGE = re.compile(r"/[^\s]*/netaccess-nac-[0-9a-f]{8}(?=/ansible_collections)")
# A warning of Python's warnings module, as a library prints it (the line, then the source line it names).
LIBRARY_WARNING = re.compile(r"^\S+\.py:\d+: \w*Warning: .*\n(?:[ \t]+\S.*\n)?", re.MULTILINE)


def without_library_warnings(text):
    """Return ``text`` without the warnings that libraries print through Python's warnings module, and them.

    The walk checks what the project prints: a library's deprecation warning (cryptography's, say) depends on
    which release pip took, which the constraints files pin; a release outside them must not turn the walk red.
    """
    found = [match.group(0).splitlines()[0] for match in LIBRARY_WARNING.finditer(text)]
    return LIBRARY_WARNING.sub("", text), found


def readme_blocks(readme, heading):
    """The fenced blocks of the section under ``heading`` (up to the next heading of its level or above, outside
    fenced blocks), in order: (language, text), dedented."""
    lines = readme[readme.index("\n%s\n" % heading) + 1 :].splitlines(keepends=True)
    level, fenced, end = len(heading.split()[0]), False, len(lines)
    for number, line in enumerate(lines[1:], 1):
        fenced ^= line.lstrip().startswith("```")
        if not fenced and re.match(r"#{1,%d} " % level, line):
            end = number
            break
    return [(lang, textwrap.dedent(body)) for _indent, lang, body in FENCE.findall("".join(lines[:end]))]


def quickstart_playbook():
    """The `# onboard.yml` block of the documentation site's quick start."""
    text = (ROOT / "docs/docsite/rst/quickstart.rst").read_text()
    match = re.search(
        r"\.\. code-block:: yaml\+jinja\n\n((?:   .*\n|\n)*?)(?=\S)", text[text.index("   # onboard.yml") - 40 :]
    )
    return textwrap.dedent(match.group(1)).strip() + "\n"


def fresh_copy(dest):
    """The repository's files as a fresh clone with the working tree's changes has them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, (item.decode() for item in listed)):
        source = ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def local_repository(dest, branches):
    """A git repository of the working tree's files (fresh_copy), committed once, on each branch named."""
    fresh_copy(dest)
    git = ["git", "-C", str(dest), "-c", "user.name=readme_walk", "-c", "user.email=readme_walk@localhost"]
    subprocess.run(git + ["init", "-q", "-b", "work"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "working tree"], check=True)
    for branch in branches:
        subprocess.run(git + ["branch", branch], check=True)
    return dest.as_uri()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def clean_environment():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "NAC_", "MAKE", "VIRTUAL_ENV"))}
    env.pop("MFLAGS", None)
    # No virtual environment on PATH (make puts .venv/bin there): the README's export lines must bring ansible.
    path = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in path if d and not (Path(d).parent / "pyvenv.cfg").is_file())
    env["ANSIBLE_NOCOLOR"] = "1"
    return env


class Walk(RulebookSteps):
    def __init__(self, clone, venv, port, readme):
        self.clone = clone
        self.venv = venv
        self.port = port
        self.readme = readme
        self.env = dict(clean_environment(), PWD=str(clone))
        self.shell = None  # the first shell's environment, while the Install section runs in a new one
        self.emulator = None
        self.rulebook = None
        self.stage = None
        self.passed = 0
        self.onboard_runs = 0

    def ok(self, what):
        self.passed += 1
        print("    ok: %s" % what, flush=True)

    def run(self, command, timeout=120, cwd=None):
        started = time.monotonic()
        result = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd or self.clone,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return result.returncode, result.stdout + result.stderr, time.monotonic() - started

    def expect(self, condition, command, message, output=""):
        if not condition:
            raise WalkError("%s: %s\n%s" % (command, message, output[-3000:]))

    def step(self, command, following):
        """Run one README command; ``following`` is the block after the command's own (for make env)."""
        shown = command.replace(":" + README_PORT, ":" + self.port).replace(
            "--port " + README_PORT, "--port " + self.port
        )
        words = shlex.split(shown, comments=True)
        if words == ["make", "env"]:
            args = ["make", "--no-print-directory"] + (["VENV=%s" % self.venv] if self.venv else []) + ["env"]
            rc, out, _ = self.run(shlex.join(args), timeout=600)
            self.expect(rc == 0, command, "exit status %d" % rc, out)
            out, noise = without_library_warnings(out)
            for line in sorted(set(noise)):
                print("    note: a library printed (not checked): %s" % line, flush=True)
            match = STAGE.search(out)
            self.stage = match and match.group(0)
            self.expect(
                self.normalise(out) == self.normalise(following),
                command,
                "prints other lines than the README shows:\n" + out,
            )
            pasted = [line for line in out.splitlines() if line.strip() and not line.startswith(("#", "export "))]
            self.expect(not pasted, command, "prints lines that are neither a command nor a comment", out)
            self.ok("%s prints the lines the README shows, each a command or a comment" % command)
            for line in out.splitlines():  # pasted into the shell, as the README says
                if line.startswith("export "):
                    self.step(line.replace(":" + self.port, ":" + README_PORT), "")
        elif words[:2] == ["python3", "tests/emulator/nac_emulator.py"]:
            self.emulator = subprocess.Popen(
                ["bash", "-c", "exec " + shown],
                cwd=self.clone,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            line = self.emulator.stdout.readline().strip()
            self.expect(
                line == "NAC emulator listening on http://127.0.0.1:%s" % self.port, command, "printed %r" % line
            )
            self.ok("%s: %s" % (command.split("#")[0].strip(), line))
        elif words[:4] == ["python3", "-m", "pip", "install"]:
            probe = (
                "ansible-rulebook --version" if "ansible-rulebook" in words else "python3 -c 'import ansible, requests'"
            )
            rc, out, _ = self.run(probe)
            self.expect(rc == 0, command, "not run (offline), and `%s` fails" % probe, out)
            self.ok("%s: not run (offline); already there (%s)" % (command, probe))
        elif words[:3] == ["ansible-galaxy", "collection", "install"]:
            self.install_route(command, shown)
        elif words[:1] == ["ansible-rulebook"]:
            self.start_rulebook(command, shown)
        elif words[:1] == ["curl"] and "/_emulator/dot1x" in shown:
            self.force_status(command, shown)
        elif words[0] == "export":
            for assignment in words[1:]:
                name, _, value = assignment.partition("=")
                self.env[name] = re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: self.env.get(m[1] or m[2], ""), value)
            self.ok("export " + " ".join(w.partition("=")[0] for w in words[1:]))
        elif words == ["ansible-playbook", "onboard.yml"]:
            rc, out, _ = self.run(shown)
            self.onboard_runs += 1
            self.expect(rc == 0, command, "exit status %d" % rc, out)
            changed = re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", out)
            self.expect(changed is not None, command, "no play recap", out)
            self.expect(
                (int(changed[1]) > 0) == (self.onboard_runs == 1),
                command,
                "changed=%s on run %d" % (changed[1], self.onboard_runs),
                out,
            )
            warnings = [line for line in out.splitlines() if line.startswith("[WARNING]")]
            unexplained = [line for line in warnings if line not in self.readme]
            self.expect(not unexplained, command, "warnings the README does not show: %s" % unexplained, out)
            self.ok(
                "%s (run %d: changed=%s; %d warnings, as the README shows)"
                % (command.split("#")[0].strip(), self.onboard_runs, changed[1], len(warnings))
            )
        elif words[:1] == ["ansible-inventory"] and "nac_dot1x_unauthenticated" in words:
            rc, out, _ = self.run(shown)
            self.expect(rc == 0 and "ws-02" in out, command, "exit status %d, ws-02 not shown" % rc, out)
            self.ok(command)
        elif words[:1] == ["ansible-playbook"] and "netaccess.nac.dot1x_report" in words:
            values = dict(w.partition("=")[::2] for w in words if "=" in w and not w.startswith("-"))
            self.expect(
                "nac_wait_timeout" in values, command, "the README's report command gives no short nac_wait_timeout"
            )
            wait = int(values["nac_wait_timeout"])
            rc, out, seconds = self.run(shown, timeout=wait + 60)
            self.expect(
                rc != 0 and "ws-02" in out, command, "exit status %d: expected a failure naming ws-02" % rc, out
            )
            self.expect(seconds < wait + 30, command, "took %.0f s with nac_wait_timeout=%d" % (seconds, wait), out)
            self.expect("nac_report_path" in values, command, "the README's report command gives no nac_report_path")
            report = Path(values["nac_report_path"].replace("$PWD", str(self.clone))) / "dot1x_report.csv"
            self.expect(report.is_file() and "ws-02" in report.read_text(), command, "%s lists no ws-02" % report, out)
            shown_origin = re.search(r"Origin: \.\.\.(/playbooks/dot1x_report\.yml:\d+:\d+)", self.readme)
            self.expect(
                shown_origin and shown_origin[1] in out, command, "the failure's Origin is not the README's", out
            )  # ansible-core 2.19 and later show it (the walk runs the newest)
            self.ok(
                "%s: failed after %.0f s naming ws-02, %s lists it" % (command, seconds, report.relative_to(self.clone))
            )
        else:
            raise WalkError(
                "%s: a command this walk does not know; update tests/tools/readme_walk.py with the README" % command
            )

    def new_shell(self, home):
        """The Install section: a new shell, an empty HOME, ansible-core on PATH, none of make env's variables."""
        self.shell = self.env
        self.env = dict(clean_environment(), HOME=str(home), PWD=str(self.clone))
        self.env["PATH"] = self.shell["PATH"].split(os.pathsep)[0] + os.pathsep + self.env["PATH"]
        self.repository = local_repository(home.parent / "repository", ["main"])

    def install_route(self, command, shown):
        """One ansible-galaxy route into ~/.ansible/collections, from the copy; the tarball's also from HOME."""
        home = Path(self.env["HOME"])
        shown = shown.replace(CLONE_PLACEHOLDER, str(self.clone)).replace("git+" + REPOSITORY, "git+" + self.repository)
        places = [(self.clone, shown)]
        if ".tar.gz" in shown:  # the tarball's path as given from wherever one is
            places.append((home, re.sub(r"(?<= )(build/netaccess-nac-\S+\.tar\.gz)", str(self.clone) + r"/\1", shown)))
        for cwd, line in places:
            shutil.rmtree(home / ".ansible", ignore_errors=True)
            rc, out, _ = self.run(line, timeout=300, cwd=cwd)
            self.expect(rc == 0 and (home / INSTALLED).is_file(), command, "installs nothing into ~ (%d)" % rc, out)
            rc, doc, _ = self.run("ansible-doc netaccess.nac.nac_device", cwd=home)
            self.expect(rc == 0, command, "ansible-doc does not find the installed collection", doc)
            where = "the copy" if cwd == self.clone else "HOME"
            self.ok(
                "install from %s (run in %s): in ~/.ansible/collections, found by ansible-doc"
                % (line.split("#")[0].split()[-1], where)
            )

    def normalise(self, text):
        text = STAGE.sub("/tmp/netaccess-nac-1a2b3c4d", text)
        if self.venv:
            text = text.replace(str(Path(self.venv) / "bin"), str(self.clone / ".venv/light/bin"))
        text = text.replace(str(self.clone), "$PWD")
        return [line.rstrip() for line in text.strip().splitlines()]

    def close(self):
        if self.rulebook and self.rulebook.poll() is None:
            os.killpg(self.rulebook.pid, signal.SIGTERM)
            self.rulebook.wait(timeout=30)
        if self.emulator:
            self.emulator.terminate()
            self.emulator.wait(timeout=10)
        if self.stage and Path(self.stage).name.startswith("netaccess-nac-"):
            shutil.rmtree(self.stage, ignore_errors=True)


def walk(venv, keep):
    readme = (ROOT / "README.md").read_text()
    workdir = Path(tempfile.mkdtemp(prefix="readme-walk-"))
    clone = workdir / "nac"
    clone.mkdir()
    fresh_copy(clone)
    walker = Walk(clone, venv, free_port(), readme)
    started = time.monotonic()
    files = {}
    try:
        for heading in SECTIONS:
            print("  %s" % heading, flush=True)
            if heading == "## Install":
                (workdir / "home").mkdir()
                walker.new_shell(workdir / "home")
            walk_section(walker, readme_blocks(readme, heading), files)
            if heading == "## Install":
                walker.env = walker.shell  # back to the first shell
        walker.expect(
            files.get("onboard.yml") == quickstart_playbook(),
            "onboard.yml",
            "the quick start shows another playbook than the README",
        )
        walker.ok("the documentation site's quick start shows the same onboard.yml")
        walker.expect(walker.onboard_runs == 2, "ansible-playbook onboard.yml", "expected two runs")
    finally:
        walker.close()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print("readme walk: %d passed, 0 failed (%.0f s)" % (walker.passed, time.monotonic() - started))


def walk_section(walker, blocks, files):
    skip = False
    for index, (lang, text) in enumerate(blocks):
        if skip:
            skip = False
            continue
        if lang == "yaml" and text.startswith("# "):
            name = text.splitlines()[0].lstrip("# ").strip()
            (walker.clone / name).write_text(text)
            files[name] = text
            walker.ok("wrote %s" % name)
        elif lang == "sh":
            for line in filter(None, (line.strip() for line in text.splitlines())):
                if line.startswith("#"):
                    continue
                following = blocks[index + 1][1] if index + 1 < len(blocks) else ""
                walker.step(line, following)
                skip = line == "make env"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", help="VENV for make (an existing toolchain)")
    parser.add_argument("--keep", action="store_true", help="keep the copy of the repository")
    args = parser.parse_args()
    try:
        walk(args.venv, args.keep)
    except (WalkError, subprocess.TimeoutExpired) as error:
        print("readme walk: FAILED: %s" % error, file=sys.stderr)
        print("readme walk: 0 passed, 1 failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
