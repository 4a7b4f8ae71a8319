#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Simulate the rate-limit cases of bench_engine.py (issue 33) in a clock of their own: the collection's own Throttle
(http/pacing.py) in front of the emulator's own limiter (tests/emulator/nac_emu/ratelimit.py), with no sockets
and no sleeping, so that a change to the pacing can be tried on every shape, concurrency and phase in seconds.

Each case is the status batch of bench_engine's SHAPES (the same limits, devices and resets): ``--concurrency``
workers each take the next device and send it through the Throttle as the transport does (``send_steps``, then
``answered`` with the reply; each loop.Sleep moves the simulated clock on); the limiter answers ``--latency``
later. ``--per-slot`` N runs N workers an in-flight slot, as engine.ordered_steps' ``per_slot`` does: a worker
holds a slot from its start or its send (loop.SENDING) until its next wait that is not the network's (the gate's
pause or pace, a stray refusal's own pause) or its device's end, so that a request that waits hands its place on
(by default the engine's own number, engine.steps_per_slot: 1 up to 8 in flight, each worker keeping its place,
else 2). The client's work is one ``--cost`` of CPU a send
(the sends queue on it, as on one thread); each way of the network adds up to ``--jitter`` at random, so that
requests sent close together may reach the limiter out of order, as they do a threaded server. A refused device is
sent again after the pause (a stray refusal's own pause first, as the transport waits it); a reset (the storm's
share of requests, never answered: admitted and counted by the limiter, or never seen by it when the shape's faults
are ``in_front``) raises what the wire raises for a request that went out and broke before any byte of its reply,
and is sent again at once. A quota the limiter states on its replies (the
``kong`` shape) is read as the transport reads it (retry_policy.quota).

It prints, per shape and concurrency, the time over the ideal (devices / rate): the median [min-max] over
``--seeds`` runs, each starting at another phase of the clock second (a fixed window's). The figures follow the
measured ones of bench_engine's rate table closely (the API guide's rate-limit section), but they are a model:
a claim about speed is measured with bench_engine.py.

    .venv/bin/python benchmarks/sim_throttle.py [--shapes token window ...] [--concurrency 8 32 128] [--seeds 7]
        [--scale 1] [--latency 0.02] [--cost 0.0002] [--jitter 0.0002] [--per-slot N]
"""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import heapq
import itertools
import random
import statistics

from harness.nac import COLLECTIONS  # noqa: F401 (this work tree on sys.path)
from harness.rates import RATE_TARGET, SHAPE_TARGET, SHAPES

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import EXCHANGE, ExchangeError
from ansible_collections.netaccess.nac.plugins.module_utils.http.engine import steps_per_slot
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import SENDING, Sleep
from ansible_collections.netaccess.nac.plugins.module_utils.http.pacing import Throttle
from ansible_collections.netaccess.nac.tests.emulator.nac_emu.ratelimit import RateLimit

Reply = collections.namedtuple("Reply", "status_code headers")  # what Throttle.answered reads of a reply


class Simulation:
    """One case in simulated time: ``run()`` returns (seconds, refusals, resets)."""

    def __init__(self, shape, concurrency, args, seed):
        self.concurrency, self.args = concurrency, args
        self.random = random.Random(seed)
        self.now = self.random.random()  # the phase of the clock second the case starts at
        self.limiter = RateLimit(shape.limit, clock=self.clock)
        self.throttle = Throttle(self.clock, self._never)
        self.resets = (shape.faults or {}).get("rate", 0.0)
        self.in_front = (shape.faults or {}).get("in_front", False)  # resets in front of the limiter, or behind it
        self.devices = iter(range(int(shape.devices * args.scale)))
        self.busy = 0.0  # the client's CPU is busy sending until then
        self.refused = self.reset = 0

    def clock(self):
        return self.now

    @staticmethod
    def _never(_seconds):
        raise AssertionError("the simulation moves its clock itself: nothing sleeps")

    def way(self):
        """One way of the network: half the latency, and up to --jitter more (in flight: the slot is kept)."""
        return Flight(self.args.latency / 2.0 + self.random.random() * self.args.jitter)

    def exchange(self):
        """One request's steps, sent through the Throttle's gate (its ``send_steps``): the way there, the limiter's
        answer (a reset: an exception as the wire raises it), the way back. As in the emulator, a reset in front of
        the limiter never reaches it; one behind it is drawn for a request it admitted (and counted)."""
        yield self.way()
        refusal, stated = None, ()
        if not (self.in_front and self.random.random() < self.resets):
            refusal, stated = self.limiter.admit_stating()
            if refusal is not None or self.in_front or self.random.random() >= self.resets:
                yield self.way()
                return Reply(200, dict(stated)) if refusal is None else Reply(refusal[0], dict(refusal[3]))
        yield self.way()
        # what connections.Wire raises on a reset after the write
        raise ExchangeError("reset by the simulated server", EXCHANGE, sent=True, replied=False)

    def worker(self):
        """A worker's steps (each a loop.Sleep): the next device, until it is answered."""
        for _device in self.devices:
            yield SENDING  # each device a step of its own, started holding a slot (engine.ordered_steps)
            paused = []  # the pauses of this request's refusals, as transport.Transport keeps them
            while True:
                slot = max(self.now, self.busy)  # the client's CPU: each send's clock is read in turn
                self.busy = slot + self.args.cost
                yield Flight(slot - self.now)  # (the send's own work: its slot kept)
                try:
                    reply, started = yield from self.throttle.send_steps(self.exchange)
                except ExchangeError:
                    self.reset += 1
                    continue  # sent again at once, as the transport sends a read that broke
                alone = self.throttle.answered(reply, started, paused)
                if alone is None:
                    break
                self.refused += 1
                if alone:  # a stray refusal: this request alone waits (issue 49)
                    yield Sleep(alone)
            yield DONE

    def run(self):
        """Run the workers in simulated time: (seconds, refusals, resets). ``concurrency`` slots, as loop.Loop's
        ``in_flight``: a SENDING takes a free one or queues for it, a wait not in flight (not a Flight) or a
        device's end leaves it to the first worker queued."""
        start, order, timers = self.now, itertools.count(), []
        free, holding, queued = self.concurrency, set(), collections.deque()

        def leave(worker):
            nonlocal free
            if worker in holding:
                holding.discard(worker)
                if queued:
                    holding.add(queued[0])
                    heapq.heappush(timers, (self.now, next(order), queued.popleft()))
                else:
                    free += 1

        per_slot = steps_per_slot(self.concurrency) if self.args.per_slot is None else self.args.per_slot
        for _worker in range(self.concurrency * per_slot):
            heapq.heappush(timers, (self.now, next(order), self.worker()))
        while timers:
            self.now, _order, worker = heapq.heappop(timers)
            for wait in worker:
                if wait is SENDING:
                    if worker not in holding:
                        if not free:
                            queued.append(worker)
                            break
                        free -= 1
                        holding.add(worker)
                    continue
                if wait is DONE or not isinstance(wait, Flight):
                    leave(worker)
                if wait is not DONE:
                    heapq.heappush(timers, (self.now + max(wait.seconds, 0.0), next(order), worker))
                    break
        return self.now - start, self.refused, self.reset


class Flight(Sleep):
    """A way of the network: the request is in flight, its slot kept."""


DONE = object()  # a worker's device is over: its slot is left


def main():
    names = [shape.name for shape in SHAPES if shape.rate]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="+", default=names, choices=names)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--scale", type=float, default=1.0, help="the devices of every shape's case, times this")
    parser.add_argument("--seeds", type=int, default=7, help="runs a case, each at another phase")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds from a send to its answer")
    parser.add_argument("--cost", type=float, default=0.0002, help="the client's CPU seconds a send")
    parser.add_argument("--jitter", type=float, default=0.0002, help="seconds at most added to each way")
    parser.add_argument(
        "--per-slot",
        type=int,
        default=None,
        help="workers an in-flight slot (default: the engine's, engine.steps_per_slot: 1 up to 8 in flight, else 2)",
    )
    args = parser.parse_args()
    print("time over the ideal (devices / rate), median [min-max] of %d runs; refusals, resets (median)" % args.seeds)
    print("  %-10s %s" % ("shape", "".join("%-32s" % ("concurrency %d" % c) for c in args.concurrency)))
    for shape in (shape for shape in SHAPES if shape.name in args.shapes):
        ideal, cells = int(shape.devices * args.scale) / float(shape.rate), []
        for concurrency in args.concurrency:
            runs = [Simulation(shape, concurrency, args, seed).run() for seed in range(args.seeds)]
            ratios = sorted(seconds / ideal for seconds, _refused, _reset in runs)
            refused = statistics.median(run[1] for run in runs)
            reset = statistics.median(run[2] for run in runs)
            cells.append(
                "%.2f [%.2f-%.2f] %4d %3d" % (statistics.median(ratios), ratios[0], ratios[-1], refused, reset)
            )
        target = SHAPE_TARGET.get(shape.name, RATE_TARGET)
        print("  %-10s %s (target %.2fx)" % (shape.name, "".join("%-32s" % cell for cell in cells), target), flush=True)


if __name__ == "__main__":
    main()
