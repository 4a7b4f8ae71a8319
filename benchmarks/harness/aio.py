# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the requests with aiohttp, as a Python engineer writes them (issue 26's reference client: aiohttp is the
fastest well-known HTTP client of Python), for the benchmarks to compare the collection with. aiohttp is a
development requirement only (requirements-dev.txt), never a dependency of the collection.

One ``aiohttp.ClientSession`` whose connector holds ``concurrency`` keep-alive connections, the API key as a
header, ``concurrency`` requests in flight (an asyncio.Semaphore), each reply's status checked and its JSON
decoded, results in the order of the requests. A ``429`` is waited out (its ``Retry-After``, one second if
absent) and sent again, so that it finishes against a rate limit too; no other retries, no deadline."""

import asyncio

import aiohttp

from harness.paths import ADMIN_KEY, FIRE_PATH


class AiohttpClient:
    def __init__(self, url, concurrency, api_key=ADMIN_KEY):
        self.url, self.concurrency = url, concurrency
        self.headers = {"Authorization": "Bearer " + api_key, "Accept": "application/json"}
        self.session = self.gate = None
        self.refused = 0

    async def __aenter__(self):
        connector = aiohttp.TCPConnector(limit=self.concurrency)
        self.session = aiohttp.ClientSession(connector=connector, headers=self.headers)
        self.gate = asyncio.Semaphore(self.concurrency)
        return self

    async def __aexit__(self, *exc_info):
        await self.session.close()

    async def call(self, method, path, body=None):
        async with self.gate:
            while True:
                async with self.session.request(method, self.url + path, json=body) as reply:
                    if reply.status == 429:
                        self.refused += 1
                        await asyncio.sleep(float(reply.headers.get("Retry-After") or 1))
                        continue
                    reply.raise_for_status()
                    return await reply.json()

    async def call_all(self, method, path, bodies):
        return await asyncio.gather(*(self.call(method, path, body) for body in bodies))


async def _status(url, concurrency):
    async with AiohttpClient(url, concurrency) as client:
        await client.call("GET", "/api/intent")
        ids = [record["id"] for record in await client.call("GET", "/api/device")]
        bodies = [{"targetId": ident, "additionalPayload": {"json": True}} for ident in ids]
        return await client.call_all("POST", FIRE_PATH, bodies)


async def _status_listed(url, concurrency):
    async with AiohttpClient(url, concurrency) as client:
        await client.call("GET", "/api/intent")
        devices = await client.call("GET", "/api/device")
        bodies = [{"targetId": record["id"], "additionalPayload": {"json": True}} for record in devices]
        return devices, await client.call_all("POST", FIRE_PATH, bodies)


async def _bulk(url, concurrency, bodies):
    async with AiohttpClient(url, concurrency) as client:
        listed = set(record["hostname"].lower() for record in await client.call("GET", "/api/device"))
        wanted = [body for body in bodies if body["hostname"].lower() not in listed]
        return await client.call_all("POST", "/api/device", wanted)


def aiohttp_status_batch(url: str, concurrency: int) -> list:
    """The status batch (intent list, device list, one fire per device); the replies in the devices' order."""
    return asyncio.run(_status(url, concurrency))


def aiohttp_status_listed(url: str, concurrency: int) -> tuple:
    """The status batch as ``aiohttp_status_batch``: (the device list, the replies in its order)."""
    return asyncio.run(_status_listed(url, concurrency))


def aiohttp_bulk(url: str, concurrency: int, bodies: list) -> list:
    """The bulk creation (device list, one POST per body whose hostname is not listed); the replies."""
    return asyncio.run(_bulk(url, concurrency, bodies))
