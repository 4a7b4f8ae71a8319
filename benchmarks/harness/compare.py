# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare the collection's code side by side with a bare ``requests`` + ThreadPoolExecutor client in the same
run, both making the same requests to the NAC API emulator, which runs in a process of its own.

Used by bench_dot1x_status.py (the status batch), bench_nac_device_bulk.py (the bulk creation) and
bench_eda_round.py (the event source's round). Each side's figures are its wall time, its CPU time per
request and the requests the emulator counted during its run; each comparison runs every side once per
repeat, in turns (the order rotates from repeat to repeat), so that both see the same load, and prints
the median and the spread (min-max) of every figure and of the ratios to the bare client, which are
taken run by run (side / bare client of the same repeat).

CPU time, all threads of the process that makes the requests, never the emulator's:

- code run in this process (the bare client, module_utils, the event source's round):
  ``resource.getrusage(RUSAGE_SELF)`` before and after; nothing else runs in this process meanwhile;
- a module run by ``ansible-playbook``: the module's own Python process, RUSAGE_SELF read at its exit by a
  ``sitecustomize`` that the benchmark puts on PYTHONPATH (harness.module.ModuleProcess): the module process with all
  its threads, not ansible-playbook's controller or its workers. Its wall time is that process's lifetime,
  so it includes the interpreter's start-up and AnsiballZ (a fixed cost per task), which the bare client,
  running in this already started process, does not pay.

The emulator's CPU time per request (``/proc/<pid>/stat``) is printed too: on a 2-core machine the
server shares the cores with the client.

Targets are printed PASS/FAIL against the median ratio; a missed target never changes the exit status.
"""

import collections
import statistics
from typing import List, Tuple


def median_spread(values: List[float]) -> Tuple[float, float, float]:
    """Return the median, the lowest and the highest of ``values``."""
    return statistics.median(values), min(values), max(values)


def show(value: List[float], form: str) -> str:
    """Return ``value``'s median [min-max], each number written with ``form``."""
    median, low, high = median_spread(value)
    return (form + " [" + form + "-" + form + "]") % (median, low, high)


def compare(title: str, sides: list, repeat: int = 3, targets: "dict | None" = None) -> dict:
    """Run every side ``repeat`` times in turns and print the figures and the ratios to the first side.

    ``sides``: [(name, run)], ``run(repeat_index)`` returning a Sample; the first is the baseline (the bare
    client). ``targets``: {name: (wall limit, CPU per request limit)}, either None for no target, or {name: (wall
    limit, CPU limit, baseline)}: the target is then held against the side named ``baseline`` (a module's process
    against the bare client's process), and the ratios to it are printed too. Returns {name: [Sample, ...]}."""
    targets = targets or {}
    samples = collections.OrderedDict((name, []) for name, _run in sides)
    baseline = sides[0][0]
    print(title)
    for index in range(repeat):
        turn = sides[index % len(sides) :] + sides[: index % len(sides)]  # who goes first rotates
        for name, run in turn:
            samples[name].append(run(index))
        print(
            "  run %d: %s"
            % (
                index + 1,
                " | ".join(
                    "%s %.2f s, %.3f ms CPU/request" % (name, samples[name][-1].wall, per_request(samples[name][-1]))
                    for name, _run in sides
                ),
            )
        )
    header = "median [min-max] of %d runs" % repeat
    width = max([len(header)] + [len(name) for name in samples])
    print(
        "  %-*s  %-20s  %-23s  %-8s  %s"
        % (width, header, "wall s", "CPU ms/request", "requests", "emulator CPU ms/request")
    )
    for name, runs in samples.items():
        print(
            "  %-*s  %-20s  %-23s  %-8s  %s"
            % (
                width,
                name,
                show([s.wall for s in runs], "%.2f"),
                show([per_request(s) for s in runs], "%.3f"),
                "/".join(sorted(set(str(s.requests) for s in runs))),
                show([s.server_cpu * 1000.0 / max(s.requests, 1) for s in runs], "%.3f"),
            )
        )
    ratios(samples, baseline, width, dict((name, limits[:2]) for name, limits in targets.items() if len(limits) == 2))
    for other in sorted(set(limits[2] for limits in targets.values() if len(limits) > 2)):
        mine = dict((name, limits[:2]) for name, limits in targets.items() if limits[2:] == (other,))
        ratios(samples, other, width, mine, only=mine)
    return samples


def ratios(samples, baseline, width, targets, only=None):
    """Print every side's ratios to ``baseline`` (or only those of ``only``), run by run, with ``targets``."""
    base = samples[baseline]
    print("  ratio to %s, run by run: median [min-max]" % baseline)
    for name, runs in samples.items():
        if name == baseline or (only is not None and name not in only):
            continue
        if any(s.requests != b.requests for s, b in zip(runs, base)):
            print(
                "  NOTE: %s did not make the same number of requests as %s (see the requests column)" % (name, baseline)
            )
        wall = [s.wall / b.wall for s, b in zip(runs, base)]
        cpu = [per_request(s) / per_request(b) for s, b in zip(runs, base)]
        wall_limit, cpu_limit = targets.get(name, (None, None))
        print(
            "  %-*s  wall %sx%s   CPU/request %sx%s"
            % (width, name, show(wall, "%.2f"), verdict(wall, wall_limit), show(cpu, "%.2f"), verdict(cpu, cpu_limit))
        )


def per_request(sample) -> float:
    """Return a sample's CPU milliseconds per request."""
    return sample.cpu * 1000.0 / max(sample.requests, 1)


def verdict(ratios: List[float], limit: "float | None") -> str:
    """Return the target's PASS or FAIL for the median of ``ratios``, or nothing without a target."""
    if limit is None:
        return ""
    return " (target <= %.2fx: %s)" % (limit, "PASS" if statistics.median(ratios) <= limit else "FAIL")
