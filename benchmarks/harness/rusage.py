# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Log what a module's own process costs, so that the benchmarks measure the module and not ansible-playbook.

``SITECUSTOMIZE % dict(log=path)`` is the text of a ``sitecustomize.py``: put on PYTHONPATH, it is imported by
every Python process that ansible-playbook starts, and a module's process (AnsiballZ_<module>.py, so
pipelining off) or a bare client's (nac_bench_bare.py: harness.module.ModuleProcess.bare) appends to ``path``
one JSON line at its exit: ``argv``, its CPU time (RUSAGE_SELF: all its threads), its lifetime (``wall``, from
its start time in /proc/self/stat), its peak RSS (``rss``, ru_maxrss) and its RSS when it first connected a
socket (``rss_before``: just before its first request; None if it made none). It adds no process between the
module and Ansible (nac_device's controller watch walks that chain of processes for every POST, at a cost per
process). Not counted: the interpreter's teardown after atexit.
"""

SITECUSTOMIZE = """
import sys
_nac_bench_argv0 = (sys.argv[0] or "") if sys.argv else ""
if "AnsiballZ_" in _nac_bench_argv0 or _nac_bench_argv0.endswith("nac_bench_bare.py"):
    import atexit, json, os, resource, time

    _nac_bench = dict(rss_before=None)

    def _nac_bench_rss():
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _nac_bench_audit(event, args):
        if event == "socket.connect" and _nac_bench["rss_before"] is None:
            _nac_bench["rss_before"] = 0  # (reading /proc is an audit event too)
            _nac_bench["rss_before"] = _nac_bench_rss()

    def _nac_bench_rusage():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with open("/proc/self/stat") as handle:
            started = int(handle.read().rsplit(")", 1)[1].split()[19]) / float(os.sysconf("SC_CLK_TCK"))
        with open(%(log)r, "a") as handle:
            handle.write(json.dumps(dict(argv=sys.argv, cpu=usage.ru_utime + usage.ru_stime, rss=usage.ru_maxrss * 1024,
                                         rss_before=_nac_bench["rss_before"],
                                         wall=time.clock_gettime(time.CLOCK_BOOTTIME) - started)) + "\\n")

    sys.addaudithook(_nac_bench_audit)
    atexit.register(_nac_bench_rusage)  # registered first, so it runs last
"""
