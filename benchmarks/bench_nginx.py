# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure the request engine behind a real nginx ``limit_req`` (issue 33), not the emulator's imitation of it.

nginx (Debian: ``apt-get install nginx-light``) runs in the foreground on 127.0.0.1 as a reverse proxy in front of
the emulator, with a configuration this script writes in a temporary directory, and is stopped at the end. Three
forms of the limit, one zone for every client, ``--rate`` r/s:

- ``plain-429``: ``limit_req`` without burst, ``limit_req_status 429``;
- ``default-503``: ``limit_req`` without burst, nginx's default status (503);
- ``burst-503``: ``limit_req burst=20 nodelay``, 503.

For each, the status of ``--devices`` devices and a bulk creation of as many new ones, by the reference client that
paces at the true rate (bench_engine.paced_case) and by the collection at each ``--concurrency``: the wall time
against the ideal (devices / rate), the refusals nginx logged, the devices in error and the duplicates. Without
nginx it says so and exits 0 (a skip).
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import requests
from harness.emulator import EmulatorProcess, stop_process
from harness.nac import config
from harness.rates import RATE_TARGET, SHAPE_TARGET, wall_text

HERE = os.path.abspath(os.path.dirname(__file__))
FORMS = (
    ("plain-429", "", 429),
    ("default-503", "", 503),
    ("burst-503", " burst=20 nodelay", 503),
)
CONFIG = """daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    limit_req_zone $server_name zone=api:1m rate={rate}r/s;
    upstream emulator {{ server 127.0.0.1:{upstream}; keepalive 256; }}
    server {{
        listen 127.0.0.1:{port};
        server_name nac;
        location / {{
            limit_req zone=api{burst};
            limit_req_status {status};
            limit_req_log_level warn;
            proxy_pass http://emulator;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
        }}
    }}
}}
"""


def nginx_binary():
    return shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(path, os.X_OK)), None
    )


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Nginx:
    """nginx in the foreground with a configuration of its own in a temporary directory; stopped on exit."""

    def __init__(self, binary, upstream, rate, burst, status):
        self.binary, self.tmp = binary, tempfile.mkdtemp(prefix="nac-bench-nginx-")
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        with open(os.path.join(self.tmp, "nginx.conf"), "w") as handle:
            handle.write(
                CONFIG.format(tmp=self.tmp, rate=rate, upstream=upstream, port=self.port, burst=burst, status=status)
            )
        self.process = None

    def __enter__(self):
        conf = os.path.join(self.tmp, "nginx.conf")
        self.process = subprocess.Popen([self.binary, "-p", self.tmp, "-c", conf, "-e", os.path.join(self.tmp, "e")])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit("nginx did not start: %s" % self.errors())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.__exit__()
        raise SystemExit("nginx did not listen on port %d" % self.port)

    def __exit__(self, *exc_info):
        stop_process(self.process)
        shutil.rmtree(self.tmp, True)

    def errors(self):
        try:
            with open(os.path.join(self.tmp, "error.log")) as handle:
                return handle.read()[-2000:]
        except OSError:
            return ""

    def refusals(self):
        """The requests limit_req refused so far (each logged once: "limiting requests")."""
        try:
            with open(os.path.join(self.tmp, "error.log")) as handle:
                return sum(1 for line in handle if "limiting requests" in line)
        except OSError:
            return 0


def run(nginx, emulator, kind, count, concurrency, rate, timeout):
    """(result, refusals, duplicates) of one case through nginx, on a reset emulator."""
    emulator.reset()
    before = nginx.refusals()
    command = [sys.executable, os.path.join(HERE, "bench_engine.py"), "--case", kind, nginx.url, str(count)]
    try:
        done = subprocess.run(
            command + [str(concurrency), str(rate)], stdout=subprocess.PIPE, timeout=timeout, universal_newlines=True
        )
        lines = done.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if done.returncode == 0 and lines else dict(crashed=done.returncode)
    except subprocess.TimeoutExpired:
        result = dict(timeout=timeout)
    names = {}
    for record in requests.get(emulator.url + "/_emulator/devices", timeout=60).json():
        key = record["hostname"].lower()
        names[key] = names.get(key, 0) + 1
    return result, nginx.refusals() - before, sum(n - 1 for n in names.values() if n > 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=500)
    parser.add_argument("--rate", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--forms", nargs="+", default=[form[0] for form in FORMS], choices=[form[0] for form in FORMS])
    parser.add_argument("--timeout-factor", type=float, default=6.0, help="kill a case after this many ideals")
    parser.add_argument("--quick", action="store_true", help="150 devices, concurrency 8 and 128")
    args = parser.parse_args()
    if args.quick:
        args.devices, args.concurrency = 150, [8, 128]
    binary = nginx_binary()
    if binary is None:
        print("SKIP: nginx is not installed (Debian: apt-get install nginx-light); nothing was measured")
        return 0
    version = subprocess.run([binary, "-v"], stderr=subprocess.PIPE, universal_newlines=True).stderr.strip()
    ideal = args.devices / float(args.rate)
    timeout = max(30.0, args.timeout_factor * ideal)
    print(
        "nginx limit_req (%s) at %d r/s in front of the emulator (%.0f ms latency): %d devices, ideal %.1f s"
        % (version, args.rate, args.latency * 1000, args.devices, ideal)
    )
    print(
        "  %-12s %-6s %-5s %-18s %-9s %-9s %-9s %-7s %-5s"
        % ("form", "kind", "conc.", "wall", "/ ideal", "/ paced", "refusals", "errors", "dupl.")
    )
    emulator_config = config(args.devices)
    emulator_config["allow_duplicate_hostnames"] = True
    with EmulatorProcess(emulator_config, args.latency) as emulator:
        upstream = emulator.url.rsplit(":", 1)[1]
        for name, burst, status in FORMS:
            if name not in args.forms:
                continue
            target = SHAPE_TARGET["nginx503"] if burst else RATE_TARGET
            with Nginx(binary, upstream, args.rate, burst, status) as nginx:
                for kind in ("status", "bulk"):
                    paced, refused, dupl = run(nginx, emulator, "pace-" + kind, args.devices, 32, args.rate, timeout)
                    reference = paced.get("wall")
                    show(name, "paced", 32, paced, ideal, reference, refused, dupl, None)
                    for concurrency in args.concurrency:
                        result, refused, dupl = run(nginx, emulator, kind, args.devices, concurrency, 0, timeout)
                        show(name, kind, concurrency, result, ideal, reference, refused, dupl, target)
    return 0


def show(name, kind, concurrency, result, ideal, reference, refused, duplicates, target):
    wall = result.get("wall")
    verdict = ""
    if target is not None:
        ok = wall is not None and wall <= target * ideal and not result.get("errors") and not duplicates
        verdict = "%s (<= %.2fx, 0 errors, 0 duplicates)" % ("PASS" if ok else "FAIL", target)
    print(
        "  %-12s %-6s %-5d %-18s %-9s %-9s %-9d %-7s %-5d %s"
        % (
            name,
            kind,
            concurrency,
            wall_text(result),
            "%.2fx" % (wall / ideal) if wall else "-",
            "%.2fx" % (wall / reference) if wall and reference else "-",
            refused,
            result.get("errors", "-"),
            duplicates,
            verdict,
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
