# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hold the house metrics of CONTRIBUTING.md, so that a file or a function grows long only with a reason.

- No file of plugins/ or extensions/ is over 400 lines, and no function there over 60, unless a line says why: a
  comment ``# house: long because ...`` among a file's first lines, or on a function's ``def`` line (or the line
  just above it). PENDING names those that other work splits now.
- No test module imports another test module.
- No benchmark script imports another benchmark script, nothing of tests/ but the emulator (tests/emulator, the
  product's test server), and the benchmarks (their harness included) import one another without a cycle.

The benchmarks are not part of the built collection (galaxy.yml's build_ignore): their rules run from the
repository (``.venv/bin/pytest tests/unit/test_house.py``) and are skipped, saying so, in the installed copy.
"""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
MEASURED = ("plugins", "extensions")
FILE_LINES = 400
FUNCTION_LINES = 60
HEAD_LINES = 12  # where a file's reason line must be
REASON = re.compile(r"#\s*house:\s*long because \S")
COLLECTION = "ansible_collections.netaccess.nac."
EMULATOR = ("tests.emulator", "nac_emulator", "nac_emu")
# The long files and functions that other work of issue 51 splits now (each its own branch): held here, so that
# the rules fail on every other one; test_every_pending_entry_is_still_long fails once one is fixed, to remove it.
PENDING = {}
# Modules of tests/ that a benchmark may import besides the emulator, each with the reason.
TEST_TOOLS = {
    "cdp": "the integration target html_report's Chromium driver: a tool the tests use, not a test module",
}


def sources(*folders, suffix=".py"):
    """Yield (path relative to ROOT, text) of every file under ``folders`` whose name ends with ``suffix``."""
    for top in folders:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(name for name in dirs if name not in ("output", "__pycache__"))
            for name in sorted(files):
                if name.endswith(suffix):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8") as handle:
                        yield os.path.relpath(path, ROOT), handle.read()


def imported(source):
    """Return every module a Python source imports (``from X import a`` counts X and X.a: a may be a module)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names.extend("%s.%s" % (node.module, alias.name) for alias in node.names)
    return names


def long_file(relative, text):
    """Return the violation of a file over FILE_LINES lines without a reason among its first lines, or None."""
    lines = text.splitlines()
    if len(lines) <= FILE_LINES or any(REASON.search(line) for line in lines[:HEAD_LINES]):
        return None
    return "%s: %d lines (over %d, no '# house: long because' line at its top)" % (relative, len(lines), FILE_LINES)


def long_functions(relative, text):
    """Return the violations of the functions over FUNCTION_LINES lines without a reason on or above their def."""
    lines, found = text.splitlines(), []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = node.end_lineno - node.lineno + 1
        first = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
        near = lines[max(first - 2, 0) : node.lineno]  # the line above, the decorators and the def line
        if length > FUNCTION_LINES and not any(REASON.search(line) for line in near):
            found.append(
                "%s:%d: %s() is %d lines (over %d, no reason)"
                % (relative, node.lineno, node.name, length, FUNCTION_LINES)
            )
    return found


def pending_key(problem):
    """Return the key of PENDING that a violation would have: the file's path, or ``path:function``."""
    match = re.match(r"([^:]+):[0-9]+: (\w+)\(\)", problem)
    return "%s:%s" % match.groups() if match else problem.split(":", 1)[0]


def long_ones():
    """Return every violation of the size rules in plugins/ and extensions/, PENDING ones included."""
    found = [long_file(relative, text) for relative, text in sources(*MEASURED, suffix="")]
    for relative, text in sources(*MEASURED):
        found.extend(long_functions(relative, text))
    return [problem for problem in found if problem]


def test_no_file_or_function_of_plugins_or_extensions_is_long_without_a_reason():
    assert [problem for problem in long_ones() if pending_key(problem) not in PENDING] == []


def test_every_pending_entry_is_still_long():
    still = set(pending_key(problem) for problem in long_ones())
    assert ["%s is no longer long: remove it from PENDING" % key for key in sorted(PENDING) if key not in still] == []


def test_no_test_module_imports_another():
    found = []
    for relative, text in sources("tests"):
        if os.path.basename(relative).startswith("test_"):
            found.extend(
                "%s imports %s" % (relative, module)
                for module in imported(text)
                if module.split(".")[-1].startswith("test_")
            )
    assert found == []


def benchmark_modules():
    """Return {dotted name: (path relative to ROOT, text)} of the scripts and the harness of benchmarks/."""
    if not os.path.isdir(BENCHMARKS):
        pytest.skip("benchmarks/ is not in the built collection: run this test from the repository")
    modules = {}
    for relative, text in sources("benchmarks"):
        dotted = os.path.relpath(os.path.join(ROOT, relative), BENCHMARKS)[:-3].replace(os.sep, ".")
        modules[dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted] = (relative, text)
    return modules


def benchmark_imports(modules, text):
    """Return the names of ``modules`` that a source imports (``from harness import soak`` counts harness.soak)."""
    return sorted(set(name for name in imported(text) if name in modules))


def from_tests(module):
    """Return the part of tests/ a dotted name imports (``tests.unit...``), or None when it is not of tests/."""
    name = module[len(COLLECTION) :] if module.startswith(COLLECTION) else module
    if name.startswith(EMULATOR) or name.split(".")[0] in TEST_TOOLS:
        return None
    return name if name.startswith("tests.") or name.split(".")[-1].startswith("test_") else None


def test_no_benchmark_script_imports_another_or_anything_of_tests_but_the_emulator():
    modules, found = benchmark_modules(), []
    for name, (relative, text) in sorted(modules.items()):
        scripts = [other for other in benchmark_imports(modules, text) if "." not in other and other != "harness"]
        found.extend("%s imports the script %s" % (relative, other) for other in scripts)
        found.extend("%s imports %s of tests/" % (relative, module) for module in imported(text) if from_tests(module))
        if name.startswith("harness.") and scripts:
            found.append("%s (the harness) imports a script" % relative)
    assert found == []


def cycle(graph):
    """Return one import cycle of ``graph`` ({module: [modules it imports]}) as a list of names, or []."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for other in graph.get(node, ()):
            if state.get(other) == "open":
                return path[path.index(other) :] + [other]
            if other not in state:
                found = visit(other, path + [other])
                if found:
                    return found
        state[node] = "done"
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return []


def test_the_benchmarks_import_one_another_without_a_cycle():
    modules = benchmark_modules()
    graph = dict((name, benchmark_imports(modules, text)) for name, (_relative, text) in modules.items())
    assert cycle(graph) == []


@pytest.mark.parametrize(
    "text, wrong",
    [
        ("x = 1\n" * 401, True),
        ("# house: long because it is a table\n" + "x = 1\n" * 401, False),
        ("x = 1\n" * 400, False),
    ],
)
def test_the_file_rule_finds_what_it_must(text, wrong):
    assert bool(long_file("f.py", text)) is wrong


@pytest.mark.parametrize(
    "head, wrong",
    [
        ("def f():\n", True),
        ("def f():  # house: long because it is one table\n", False),
        ("# house: long because it is one table\n@decorated\ndef f():\n", False),
        ("# house: long because of something else\n\ndef f():\n", True),
    ],
)
def test_the_function_rule_finds_what_it_must(head, wrong):
    text = head + "    x = 1\n" * FUNCTION_LINES
    assert bool(long_functions("f.py", text)) is wrong
    assert long_functions("f.py", "def f():\n" + "    x = 1\n" * (FUNCTION_LINES - 1)) == []


def test_a_violation_has_the_key_of_its_pending_entry():
    assert pending_key("a/b.py:12: f() is 70 lines (over 60, no reason)") == "a/b.py:f"
    assert pending_key(long_file("a/b.py", "x = 1\n" * 401)) == "a/b.py"


def test_the_import_rules_find_what_they_must():
    assert cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert cycle({"a": ["b"], "b": ["c"], "c": []}) == []
    assert from_tests(COLLECTION + "tests.unit.plugins.module_utils.http.test_connections") is not None
    assert from_tests("test_connections_hostile") is not None
    assert from_tests(COLLECTION + "tests.emulator.nac_emulator") is None
    assert from_tests("nac_emulator") is None
    assert from_tests("requests") is None
    modules = {"bench_a": ("a", ""), "harness": ("h", ""), "harness.soak": ("s", "")}
    assert benchmark_imports(modules, "from harness import soak\nimport bench_a\nimport os\n") == [
        "bench_a",
        "harness",
        "harness.soak",
    ]
