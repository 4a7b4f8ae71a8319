# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the requests the collection makes with ``requests`` and a thread pool, nothing more, as the baseline.

Imported by the benchmarks, and run as a process of its own (``python nac_bench_bare.py status|bulk URL
CONCURRENCY [BODIES.json]``, a copy named so that harness/rusage.py's sitecustomize logs it) so that a module's
process can be compared with a bare client's process, each paying its own interpreter start-up and imports:
this file imports nothing beyond ``requests`` and a few modules of the standard library.
"""

import json
import sys
from concurrent.futures import ThreadPoolExecutor

import requests
from requests.adapters import HTTPAdapter

# Its own copies of harness.paths' names: this file also runs alone, as nac_bench_bare.py.
ADMIN_KEY = "nac-demo-admin-key"  # the emulator's fake demo credential
FIRE_PATH = "/api/intent/dot1x_status/fire"


class BareClient:
    """The least a client does: one ``requests.Session`` whose keep-alive pool holds ``concurrency``
    connections, the API key as a header, a ThreadPoolExecutor of ``concurrency`` threads for the many
    requests, each reply's status checked and its JSON decoded. No retries, no deadline, no shaping."""

    def __init__(self, url, concurrency, api_key=ADMIN_KEY, timeout=30):
        self.url, self.concurrency, self.timeout = url, concurrency, timeout
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=1, pool_maxsize=concurrency)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers.update({"Authorization": "Bearer " + api_key, "Accept": "application/json"})

    def get(self, path):
        reply = self.session.get(self.url + path, timeout=self.timeout)
        reply.raise_for_status()
        return reply.json()

    def post(self, path, body):
        reply = self.session.post(self.url + path, json=body, timeout=self.timeout)
        reply.raise_for_status()
        return reply.json()

    def post_all(self, path, bodies):
        """POST every body to ``path``, ``concurrency`` at a time; the decoded replies in order."""
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda body: self.post(path, body), bodies))

    def fire_all(self, ids):
        """The dot1x_status intent fired for every device id (as the collection fires it)."""
        return self.post_all(FIRE_PATH, ({"targetId": ident, "additionalPayload": {"json": True}} for ident in ids))

    def status_round(self, check_intent=False):
        """What a status batch needs: (the intent list,) the device list, one fire per device."""
        if check_intent:
            self.get("/api/intent")
        return self.fire_all([record["id"] for record in self.get("/api/device")])

    def close(self):
        self.session.close()


def bare_status_batch(url: str, concurrency: int, check_intent: bool = True) -> list:
    """One status batch by a fresh bare client (a new session, as each run of the module has)."""
    client = BareClient(url, concurrency)
    try:
        return client.status_round(check_intent)
    finally:
        client.close()


def bare_bulk(url: str, concurrency: int, bodies: list) -> list:
    """What a bulk creation needs: the device list, one POST per body whose hostname is not listed."""
    client = BareClient(url, concurrency)
    try:
        listed = set(record["hostname"].lower() for record in client.get("/api/device"))
        return client.post_all("/api/device", [body for body in bodies if body["hostname"].lower() not in listed])
    finally:
        client.close()


def main(argv):
    kind, url, concurrency = argv[0], argv[1], int(argv[2])
    if kind == "status":
        replies = bare_status_batch(url, concurrency)
    else:
        with open(argv[3]) as handle:
            replies = bare_bulk(url, concurrency, json.load(handle))
    print(len(replies))


if __name__ == "__main__":
    main(sys.argv[1:])
