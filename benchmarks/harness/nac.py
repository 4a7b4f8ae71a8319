# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build what the status and bulk benchmarks share: the emulator's devices and the collection's client.

Importing this module puts the work tree on ``sys.path`` as ``ansible_collections.netaccess.nac``
(harness.paths.import_collection), so that the client measured is this checkout's."""

from harness.paths import ADMIN_KEY, import_collection

COLLECTIONS = import_collection()

from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient  # noqa: E402


def config(devices: int) -> dict:
    """Return the emulator's default accounts plus ``devices`` settled devices; every tenth has no MAC."""
    seeds = []
    for number in range(1, devices + 1):
        seed = dict(
            hostname="bench-%05d" % number,
            group="Bench",
            profile="Bench",
            ips=["10.64.%d.%d" % (number // 250, number % 250 + 1)],
        )
        if number % 10:
            seed["macs"] = ["02:00:00:%02x:%02x:%02x" % (number >> 16 & 255, number >> 8 & 255, number & 255)]
        seeds.append(seed)
    return dict(
        groups=[dict(name="Bench", subnet="10.64.0.0/10")],
        profiles=[dict(name="Bench", max_pairs=1, host_start=1, host_end=4000000)],
        devices=seeds,
    )


def client_for(url: str, concurrency: int) -> NacClient:
    """Return the client as the module builds it (pool_size: its concurrency, at least 8)."""
    return NacClient(url, api_key=ADMIN_KEY, pool_size=max(concurrency, 8))
