# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hostile or sloppy servers of issue 31 against the collection's request path, one line per case: what the
client reported, the writes the server received, seconds, and memory where it matters. Run it against the
collection on ANSIBLE_COLLECTIONS_PATH (``make bench`` builds it):

    python benchmarks/hostile_framing.py

Its servers are the raw-socket ones of tests/unit/plugins/module_utils/http/test_connections_hostile.py, on loopback."""

from __future__ import absolute_import, division, print_function

import gzip
import os
import resource
import socket
import sys
import threading
import time

for where in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if where and where not in sys.path:
        sys.path.append(where)

# pylint: disable=wrong-import-position
from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacError  # noqa: E402
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import device_specs, ensure_devices  # noqa: E402
from ansible_collections.netaccess.nac.tests.unit.plugins.module_utils.http import test_connections_hostile as hostile  # noqa: E402

KEY = hostile.KEY


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def client_of(url, **kwargs):
    from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient

    return NacClient(url, api_key=KEY, **dict(dict(timeout=3.0, max_retries=3, sleep=time.sleep), **kwargs))


def outcome(call):
    """(what the client reported, seconds)."""
    started = time.monotonic()
    try:
        said = "ok: %r" % (call(),)
    except NacError as error:
        said = "%s (outcome unknown: %s)" % (error, getattr(error, "outcome_unknown", None))
    except Exception as error:  # pylint: disable=broad-except
        said = "%s: %s" % (type(error).__name__, error)
    return said, time.monotonic() - started


def creation_through(first_get):
    """A bulk of one device: the list answered with ``first_get`` (its bytes), the POST refused with 409."""
    server = hostile.Scripted(lambda method, number: first_get if method == "GET" else hostile.CONFLICT)
    client = client_of(server.url, max_retries=0)

    def run():
        specs = device_specs([dict(hostname="cam-02", group="Cameras", profile="Camera")], name="devices")
        results = ensure_devices(specs, client.list_devices, client.create_device, 1, False, settle_timeout=1)
        return [(item.state, item.id, str(item.error or "")[:160]) for item in results]

    said, seconds = outcome(run)
    return said, server.count("POST"), seconds


def case_forged():
    return creation_through(hostile.reply(hostile.LIST) + hostile.FORGED)


def case_crlf():
    return creation_through(hostile.reply(hostile.LIST) + b"\r\n")


def case_words():
    server = hostile.Scripted(lambda method, number: b"HTTP/1.1 2xx Connection refused NameResolutionError\r\n\r\n")
    client = client_of(server.url, unreachable_timeout=0)
    said, seconds = outcome(lambda: client.request("POST", "/api/device", body={"hostname": "a"}))
    return said, server.count("POST"), seconds


def case_cn_only():
    paths = hostile.certificate("cn_only")
    servers = []
    server, url = hostile.tls_server(lambda *a, **k: servers.append(hostile.Scripted(*a, **k)) or servers[-1], paths)
    client = client_of(url, ca_path=paths[0])
    said, seconds = outcome(lambda: client.request("GET", "/api/device"))
    return said, server.count("GET"), seconds


def case_connect_drip():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def drip():
        while True:
            try:
                conn = listener.accept()[0]
            except OSError:
                return
            conn.recv(65536)
            try:
                for _ in range(200):
                    conn.sendall(b"H")
                    time.sleep(0.5)
            except OSError:
                pass

    threading.Thread(target=drip, daemon=True).start()
    os.environ["HTTPS_PROXY"] = "http://127.0.0.1:%d" % listener.getsockname()[1]
    try:
        client = client_of("https://nac.example.com", timeout=2, max_retries=0, unreachable_timeout=0)
        said, seconds = outcome(lambda: client.request("GET", "/api/device"))
    finally:
        del os.environ["HTTPS_PROXY"]
        listener.close()
    return said, 0, seconds


def case_cookies():
    cookies = b"".join(b"Set-Cookie: c%d=%s; Path=/\r\n" % (n, b"v" * 8192) for n in range(90))
    server = hostile.Scripted(lambda method, number: hostile.reply(hostile.LIST, fields=cookies))
    client = client_of(server.url)
    before = rss_mib()

    def run():
        for _ in range(100):
            client.request("GET", "/api/device")
        return "%d cookies kept, peak memory grew %.0f MiB" % (
            len(getattr(client.wire, "cookies", ())),
            rss_mib() - before,
        )

    said, seconds = outcome(run)
    return said, 0, seconds


def case_masking():
    shown = []
    for offset in range(0, 200, 7):
        line = b"HTTP/1.1 2000 " + b"x" * offset + KEY.encode() + b" " + b"y" * 300 + b"\r\n\r\n"
        server = hostile.Scripted(lambda method, number, line=line: line)
        said = outcome(lambda url=server.url: client_of(url, max_retries=0).request("GET", "/api/device"))[0]
        shown.append(
            max(
                (n for n in range(1, len(KEY) + 1) for s in range(len(KEY) - n + 1) if KEY[s : s + n] in said),
                default=0,
            )
        )
        server.close()
    return "most key characters shown in one run: %d of %d" % (max(shown), len(KEY)), 0, 0.0


def case_endless_gzip():
    member = gzip.compress(b"")
    sent = [0]

    def script(method, number):
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        head += b"Transfer-Encoding: chunked\r\n\r\n"
        piece = b"%x\r\n%s\r\n" % (len(member) * 4096, member * 4096)
        sent[0] = len(piece) * 400
        return head + piece * 400  # about 33 MB of empty gzip members

    server = hostile.Scripted(script)
    client = client_of(server.url, max_reply_mb=1, max_retries=0, timeout=20)
    said, seconds = outcome(lambda: client.request("GET", "/api/device"))
    return said, 0, seconds


def case_cut_gzip():
    server = hostile.Scripted(lambda method, number: hostile.compressed(gzip.compress(hostile.LIST)[:-8]))
    client = client_of(server.url, max_retries=0)
    said, seconds = outcome(lambda: client.request("GET", "/api/device"))
    return said, 0, seconds


def case_http_to_tls():
    paths = hostile.certificate("address")
    servers = []
    server, url = hostile.tls_server(lambda *a, **k: servers.append(hostile.Scripted(*a, **k)) or servers[-1], paths)
    client = client_of(url.replace("https://", "http://"), max_retries=3, sleep=time.sleep)
    said, seconds = outcome(lambda: client.request("GET", "/api/device"))
    return said, 0, seconds


CASES = [
    ("1 forged second reply, then a POST refused 409", case_forged),
    ("2 'Connection refused' in a POST's broken reply", case_words),
    ("3 one stray CRLF after the list, then a POST refused 409", case_crlf),
    ("4 certificate with a common name alone", case_cn_only),
    ("5 proxy dripping its CONNECT reply, timeout 2", case_connect_drip),
    ("6 90 cookies of 8 KiB per reply, 100 requests", case_cookies),
    ("7 key echoed in a broken status line", case_masking),
    ("8a endless empty gzip stream, max_reply_mb 1", case_endless_gzip),
    ("8b gzip body cut before its trailer", case_cut_gzip),
    ("9 http:// to a TLS port", case_http_to_tls),
]


def main():
    wanted = sys.argv[1:]
    for name, case in CASES:
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        said, writes, seconds = case()
        print("%s\n    writes received: %s, %.1f s\n    reported: %s" % (name, writes, seconds, said[:300]))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
