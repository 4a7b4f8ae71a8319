# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drive the pacing (http/pacing.py) on a clock the test controls, so that the pacing tests wait no real second:
a fake clock, and requests admitted, refused or sent through the gate at the times a test gives.
"""

import collections
import threading

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import CONNECT, EXCHANGE, ExchangeError
from ansible_collections.netaccess.nac.plugins.module_utils.http.loop import Sleep, run
from ansible_collections.netaccess.nac.plugins.module_utils.http.meter import WINDOW
from ansible_collections.netaccess.nac.plugins.module_utils.http.pacing import Throttle
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import UNSAID


class Clock:
    """A fake clock that a fake sleep advances; every sleep is recorded with its thread's name."""

    def __init__(self):
        self.now, self.sleeps = 0.0, []
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        with self.lock:
            self.sleeps.append((threading.current_thread().name, seconds))
            self.now += seconds


def answered(throttle, clock, took=0.02):
    throttle.enter()
    start = clock.now
    clock.now += took
    throttle.leave(took=took)
    return start


def sending_for_a_window(throttle, clock, seconds=WINDOW):
    """A first request, never answered (counted nowhere), ``seconds`` ago: a first refusal from then on is counted
    over the WINDOW before it, not over the time since the first request (Pace._partial)."""
    throttle.enter()
    throttle.leave(took=None)
    clock.now += seconds


Reply = collections.namedtuple("Reply", "status_code headers")


def sent_through_the_gate(throttle, clock, outcome):
    """One request through ``send_steps`` as the transport sends it, 3 ms after the last: answered (200),
    ``reset`` (written, broken before any byte of its reply, as connections.Wire marks it) or ``unsent``
    (the connection never made)."""

    def send():
        yield Sleep(0.003, clock.sleep)
        if outcome == "answered":
            return Reply(200, {})
        sent = outcome != "unsent"
        raise ExchangeError("connection reset by peer", EXCHANGE if sent else CONNECT, sent=sent, replied=False)

    try:
        answer = run(throttle.send_steps(send))
    except ExchangeError:
        return None
    assert throttle.answered(answer[0], answer[1], []) is None
    return answer[1]


def replies(throttle, clock, statuses, took=0.01):
    """Each status in turn, as the reply of a request sent through the gate ``took`` seconds earlier: what
    ``answered`` returned for each (429s ask Retry-After 1)."""
    returned = []
    for status in statuses:
        throttle.enter()
        started = clock.now
        clock.now += took
        headers = {"Retry-After": "1"} if status == 429 else {}
        returned.append(throttle.answered(Reply(status, headers), started, []))
    return returned


def refused_as_nginx_does():
    """nginx without burst at 50 r/s, no Retry-After: three sent one at a time admitted (20 ms each), then one of
    eight sent at once admitted, the seven others refused. (clock, throttle) at the end."""
    clock = Clock()
    throttle = Throttle(clock, clock.sleep)
    for _request in range(3):  # one at a time, 20 ms each: admitted
        answered(throttle, clock)
    start = clock.now
    for _request in range(8):
        throttle.enter()
    clock.now += 0.02
    throttle.leave(took=0.02)
    for _request in range(7):
        throttle.leave(refused_for=UNSAID, started=start)
    return clock, throttle
