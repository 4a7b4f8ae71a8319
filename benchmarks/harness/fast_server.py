# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Serve the status batch's three reads of the NAC API on aiohttp's event loop (an llhttp parser in C), an
independent test server far faster than the emulator's threads, so that a client's own cost shows in the wall time
(bench_engine.py --server fast). It answers GET /api/intent, GET /api/device (``--devices`` devices), POST
/api/intent/dot1x_status/fire after ``--latency`` seconds, and counts them at GET /_emulator/requests as the
emulator does. Its own CPU is read from /proc by the benchmark (FastServerProcess.cpu).

    python benchmarks/harness/fast_server.py --port 0 --port-file FILE --devices 5000 --latency 0.02
"""

import argparse
import asyncio
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def application(devices, latency):
    from aiohttp import web

    counts = collections.Counter()
    listing = json.dumps([{"id": n, "hostname": "dev-%05d" % n} for n in range(1, devices + 1)]).encode()
    intents = json.dumps([{"tag": "dot1x_status", "name": "Check 802.1x"}]).encode()
    result = json.dumps({"status": "AUTHENTICATED", "authMethod": "EAP-TLS", "username": "u", "message": None})

    async def device(request):
        counts["GET /api/device"] += 1
        return web.Response(body=listing, content_type="application/json")

    async def intent(request):
        counts["GET /api/intent"] += 1
        return web.Response(body=intents, content_type="application/json")

    async def fire(request):
        counts["POST /api/intent/dot1x_status/fire"] += 1
        await request.read()
        await asyncio.sleep(latency)
        return web.Response(text=result, content_type="application/json")

    async def requests_counted(request):
        return web.json_response(dict(counts))

    async def reset(request):
        counts.clear()
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/api/device", device)
    app.router.add_get("/api/intent", intent)
    app.router.add_post("/api/intent/dot1x_status/fire", fire)
    app.router.add_get("/_emulator/requests", requests_counted)
    app.router.add_post("/_emulator/reset", reset)
    return app


class FastServerProcess:
    """This server as a process of its own, like harness.emulator.EmulatorProcess: ``url``, ``cpu()``, ``stop()``."""

    def __init__(self, devices: int, latency: float) -> None:
        self.devices, self.latency = devices, latency
        self.process = self.url = None

    def __enter__(self):
        workdir = tempfile.mkdtemp(prefix="nac-bench-fast-")
        port_file = os.path.join(workdir, "port")
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--port-file", port_file]
            + ["--devices", str(self.devices), "--latency", str(self.latency)]
        )
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise SystemExit("the fast server did not start")
            time.sleep(0.05)
        with open(port_file) as handle:
            self.url = "http://127.0.0.1:%s" % handle.read().strip()
        return self

    def __exit__(self, *exc_info):
        from harness.emulator import stop_process  # here: the server's own process runs this file without harness

        stop_process(self.process)

    def cpu(self) -> float:
        """CPU seconds of the server process so far."""
        with open("/proc/%d/stat" % self.process.pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def main():
    from aiohttp import web

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--devices", type=int, default=5000)
    parser.add_argument("--latency", type=float, default=0.02)
    args = parser.parse_args()

    async def serve():
        runner = web.AppRunner(application(args.devices, args.latency), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # pylint: disable=protected-access
        if args.port_file:
            with open(args.port_file + ".tmp", "w") as handle:
                handle.write(str(port))
            os.rename(args.port_file + ".tmp", args.port_file)
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
