# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Declare the rate limits of real deployments and their targets once, so that bench_engine.py, bench_nginx.py and
sim_throttle.py measure or simulate the same shapes against the same targets."""

import collections

RATE_TARGET = 1.25  # wall / ideal against a rate limit (issue 33)
Shape = collections.namedtuple("Shape", "name text rate devices limit faults")
# The limiters of real deployments (tests/emulator/nac_emu/ratelimit.py), each with the devices of its case: the
# status of that many devices, or a bulk creation of that many new ones. rate 0: no limit (the ideal is then the
# time of the same case without the shape).
SHAPES = (
    Shape(
        "nginx",
        "nginx limit_req 50 r/s, no burst, 429, no Retry-After",
        50,
        500,
        dict(shape="leaky", rate=50, burst=0, status=429, retry_after=None),
        None,
    ),
    Shape(
        "nginx503",
        "nginx limit_req 50 r/s burst=20 nodelay, its default 503, no Retry-After",
        50,
        500,
        dict(shape="leaky", rate=50, burst=20, status=503, retry_after=None),
        None,
    ),
    Shape(
        "token",
        "token bucket 100/s, burst 20, 429, Retry-After 1",
        100,
        1000,
        dict(shape="token", rate=100, burst=20, status=429, retry_after=1),
        None,
    ),
    Shape(
        "window",
        "fixed window (Kong) 50 a second, 429, Retry-After: the rest of the window",
        50,
        500,
        dict(shape="window", rate=50, status=429, retry_after=1),
        None,
    ),
    Shape(
        "kong",
        "fixed window (Kong) 50 a second, 429, Retry-After and RateLimit-* / X-RateLimit-*-Second headers",
        50,
        500,
        dict(shape="window", rate=50, status=429, retry_after=1, quota_headers=True),
        None,
    ),
    Shape(
        "drf",
        "DRF throttle 50/s (sliding log), 429, Retry-After as DRF reckons it",
        50,
        500,
        dict(shape="drf", rate=50, status=429, retry_after=1),
        None,
    ),
    Shape(
        "noretry",
        "token bucket 50/s, burst 10, 429 without Retry-After",
        50,
        500,
        dict(shape="token", rate=50, burst=10, status=429, retry_after=None),
        None,
    ),
    Shape(
        "storm",
        "503 storm: token bucket 50/s, burst 50, 503, Retry-After 2; 10 % of requests reset",
        50,
        500,
        dict(shape="token", rate=50, burst=50, status=503, retry_after=2),
        dict(rate=0.1, modes=["reset"]),
    ),
    Shape(
        "stormfront",
        "the same storm, its resets made in front of the limiter (a load balancer): never counted by it",
        50,
        500,
        dict(shape="token", rate=50, burst=50, status=503, retry_after=2),
        dict(rate=0.1, modes=["reset"], in_front=True),
    ),
    Shape(
        "penalty",
        "penalty box: over 10 a second, everything refused 30 s, Retry-After 30",
        10,
        300,
        dict(shape="penalty", rate=10, status=429, retry_after=30),
        None,
    ),
    Shape(
        "closing",
        "no limit; each kept-alive connection closed 5 ms after its reply, no Connection: close",
        0,
        300,
        dict(rate=0, close_after=0.005),
        None,
    ),
)
SHAPE_TARGET = dict(penalty=5.0, nginx503=1.5)  # wall / ideal; every other shape: RATE_TARGET


def wall_text(result: dict) -> str:
    """Return a case's wall time as the tables print it, or how it ended when it did not finish."""
    if "timeout" in result:
        return "> %.0f s (killed)" % result["timeout"]
    if "crashed" in result:
        return "crashed (rc %s)" % result["crashed"]
    return "%.1f s" % result["wall"]
