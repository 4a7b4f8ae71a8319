# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Share the benchmarks' instruments, so that no benchmark script imports another.

Every script of ``benchmarks/`` imports what it shares from here, and from nowhere else in ``benchmarks/``:

- ``paths``: the work tree, the emulator's script and the collection importable as ``ansible_collections``;
- ``emulator``: the NAC API emulator as a process of its own, its request counts and its CPU time;
- ``nac``: the emulator configuration of N settled devices and the collection's client as a module builds it;
- ``bare`` and ``aio``: the reference clients (``requests`` with a thread pool, and aiohttp);
- ``rusage`` and ``module``: a module's own process measured under ``ansible-playbook``;
- ``compare``: sides run in turns, their medians, spreads, ratios and targets printed as a table;
- ``rates``: the rate-limit shapes and their targets; ``fast_server``: an independent server on aiohttp;
- ``soak``: the soak's emulator, its playbook runner and the judges of its reports; ``soak_writes``,
  ``soak_lists``, ``soak_crowds`` and ``soak_servers``: the scenarios that soak_faults.py runs.

The modules import one another only downwards (paths first), never a script, and nothing from ``tests/`` but the
emulator (``tests/emulator``, the product's test server).
"""
