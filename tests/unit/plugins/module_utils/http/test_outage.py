# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The outage state machine (outage.Outage) on a fake clock: who waits, who probes, when it ends; and the
transport riding out an outage through it (scripted replies, no network, no sleeping)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.http.outage import (
    PROBE_CAP,
    RECHECK,
    RECOVERED,
    UP,
    Outage,
    Unreachable,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    NacClient,
    NacConfigError,
    NacConnectionError,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import CUT, SILENT, Scripted, mounted, refused

REFUSED = "connection refused"


class Clock:
    """A fake monotonic clock; ``sleep`` advances it."""

    def __init__(self):
        self.now = 1000.0
        self.sleeps = []
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        with self.lock:
            self.sleeps.append(seconds)
            self.now += seconds


class Probe:
    """A scripted probe: each call takes ``cost`` seconds of the fake clock and answers the next item of
    ``script`` (None: answered, a string: why not); the last item repeats. ``calls``: (clock, timeout)."""

    def __init__(self, clock, *script, cost=0.0):
        self.clock, self.script, self.cost = clock, list(script), cost
        self.calls = []
        self.threads = set()
        self.gate = None  # a threading.Event the probe waits on before answering, when set

    def __call__(self, timeout):
        self.calls.append((self.clock.now, timeout))
        self.threads.add(threading.current_thread())
        if self.gate is not None:
            assert self.gate.wait(10)
        self.clock.now += self.cost
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]


def outage(*script, bound=60.0, cost=0.0, probe_timeout=30.0):
    clock = Clock()
    probe = Probe(clock, *script, cost=cost)
    return Outage(bound, probe, probe_timeout, clock, clock.sleep, jitter=lambda low, high: high), clock, probe


def answered_at(state, clock, seconds_ago=1.0):
    """The service answered a request ``seconds_ago``; returns when the next attempt is sent."""
    clock.now -= seconds_ago
    state.answered(clock())
    clock.now += seconds_ago
    return clock.now


# -- when there is no outage to wait out ---------------------------------------------------


def test_a_service_never_answered_is_left_to_the_ordinary_retries():
    state, clock, probe = outage(None)
    assert state.after_failure(REFUSED, clock()) is None
    assert probe.calls == [] and state.before_send() == clock()


def test_a_failure_after_another_request_was_answered_is_no_outage():
    state, clock, probe = outage(None)
    sent = clock()
    clock.now += 2
    state.answered(clock())  # a request sent after the failed attempt was answered: the service answers
    assert state.after_failure("no reply", sent) is None and probe.calls == []


class Untakeable:
    """A lock that fails the test when it is taken."""

    def __enter__(self):
        raise AssertionError("the outage's lock was taken")

    def __exit__(self, *exc_info):
        return False


def test_with_no_outage_a_request_takes_no_lock_and_its_reply_is_still_noted():
    state, clock, probe = outage(None)
    kept, state._cond = state._cond, Untakeable()  # every request of the client would contend for it
    sent = clock()
    assert state.before_send() == sent
    clock.now += 2
    state.answered(clock())  # noted: a failure of a request sent before it is no outage
    state._cond = kept
    assert state.after_failure("no reply", sent) is None and probe.calls == []


def test_unreachable_timeout_0_never_waits():
    state, clock, probe = outage(None, bound=0)
    sent = answered_at(state, clock)
    assert state.after_failure(REFUSED, sent) is None and probe.calls == []


def test_a_late_reply_to_a_request_sent_before_the_failure_neither_prevents_nor_ends_the_outage():
    """A reply read after the failure, to a request sent before it (a restart between), says nothing of the service
    now: the failure is waited out, and the same reply read while the outage is probed ends nothing."""
    clock = Clock()
    early = clock()  # a request sent before the restart; its reply is read late
    clock.now += 1
    sent = clock()  # a request sent after the restart, refused
    calls = []

    def probe(timeout):
        calls.append(clock())
        if len(calls) == 1:
            state.answered(early)  # (the late reply again, read while the first probe is out)
            return REFUSED
        return None

    state = Outage(60.0, probe, 30.0, clock, clock.sleep, jitter=lambda low, high: high)
    clock.now += 1
    state.answered(early)  # read after the refused attempt was sent
    assert state.after_failure(REFUSED, sent) == RECOVERED and len(calls) == 2  # probed until the service answered
    assert state.after_failure(REFUSED, early - 1) is None  # a request sent after this one was answered: no outage


# -- riding it out -----------------------------------------------------------------------------


def test_an_outage_is_probed_with_backoff_until_the_service_answers():
    state, clock, probe = outage(REFUSED, REFUSED, REFUSED, REFUSED, REFUSED, REFUSED, None)
    sent = answered_at(state, clock)
    assert state.after_failure(REFUSED, sent) == RECOVERED
    assert clock.sleeps == [0.5, 1.0, 2.0, 4.0, PROBE_CAP, PROBE_CAP]  # the first probe at once, then backing off
    assert [round(when - sent, 3) for when, timeout in probe.calls] == [0, 0.5, 1.5, 3.5, 7.5, 12.5, 17.5]
    assert state.before_send() == clock()  # over: requests are sent at once again


def test_a_service_that_answers_the_first_probe_is_up():
    state, clock, probe = outage(None)
    sent = answered_at(state, clock)
    assert state.after_failure("no reply", sent) == UP and len(probe.calls) == 1 and clock.sleeps == []


def test_the_bound_ends_the_waiting_with_a_last_probe_at_the_bound():
    state, clock, probe = outage(REFUSED, bound=20)
    sent = answered_at(state, clock)
    with pytest.raises(Unreachable) as raised:
        state.after_failure(REFUSED, sent)
    assert probe.calls[-1][0] == sent + 20 and sum(clock.sleeps) == 20
    assert raised.value.seconds == 20 and raised.value.reason == REFUSED
    assert raised.value.limit == "the limit of unreachable_timeout (20 s)"


def test_once_given_up_requests_fail_at_once_and_a_probe_at_most_every_recheck():
    state, clock, probe = outage(REFUSED, bound=10)
    sent = answered_at(state, clock)
    with pytest.raises(Unreachable):
        state.after_failure(REFUSED, sent)
    probes = len(probe.calls)
    with pytest.raises(Unreachable) as raised:
        state.before_send()  # not sent: no probe within RECHECK of the last one
    assert len(probe.calls) == probes and raised.value.seconds == 10
    with pytest.raises(Unreachable):
        state.after_failure(REFUSED, clock())  # a request that was sent anyway fails at once, no probe
    assert len(probe.calls) == probes
    clock.now += RECHECK
    with pytest.raises(Unreachable) as raised:
        state.before_send()  # one probe, refused
    assert len(probe.calls) == probes + 1 and raised.value.seconds == 10 + RECHECK
    clock.now += RECHECK
    probe.script = [None]
    assert state.before_send() == clock()  # the probe was answered: the outage is over
    assert state.before_send() == clock() and len(probe.calls) == probes + 2


def test_a_reply_to_any_request_ends_the_outage():
    state, clock, probe = outage(REFUSED, bound=10)
    sent = answered_at(state, clock)
    with pytest.raises(Unreachable):
        state.after_failure(REFUSED, sent)
    state.answered(clock())
    assert state.before_send() == clock() and state.after_failure(REFUSED, clock() - 1) is None


def test_a_flapping_service_gets_one_bound_in_all_until_a_request_is_answered():
    """Each outage ends at its first probe, but the requests keep being refused: the outages add up."""
    state, clock, probe = outage(None, bound=30)
    sent = answered_at(state, clock)
    started = clock()
    results = []
    with pytest.raises(Unreachable) as raised:
        for _flap in range(1000):
            results.append(state.after_failure(REFUSED, sent))
            sent = clock()
    assert results[0] == UP and set(results[1:]) == {RECOVERED}
    assert clock() - started >= 30 and raised.value.seconds >= 30 and len(results) < 20
    state.answered(clock())  # a request answered: the next outage is a new one
    assert state.after_failure(REFUSED, clock() - 0.001) is None  # a reply came after that request was sent
    clock.now += 1
    assert state.after_failure(REFUSED, clock()) == UP


def test_a_probe_that_hangs_is_given_only_the_time_left():
    state, clock, probe = outage("no reply", bound=10, cost=4.0, probe_timeout=30)
    sent = answered_at(state, clock)
    with pytest.raises(Unreachable) as raised:
        state.after_failure("no reply", sent)
    assert [timeout for when, timeout in probe.calls][0] == 10  # the bound left, not the 30 s of the option
    assert all(timeout >= 1.0 for when, timeout in probe.calls) and raised.value.reason == "no reply"


# -- the other requests wait on it -----------------------------------------------------------


def wait_for_waiters(state, count):
    deadline = time.monotonic() + 10
    while len(state._cond._waiters) < count:  # pylint: disable=protected-access
        assert time.monotonic() < deadline, "the requests did not wait"
        time.sleep(0.001)


def run_threads(functions):
    results = [None] * len(functions)

    def run(index, function):
        try:
            results[index] = function()
        except Unreachable as gone:
            results[index] = gone

    threads = [threading.Thread(target=run, args=(i, f)) for i, f in enumerate(functions)]
    for thread in threads:
        thread.start()
    return threads, results


@pytest.mark.parametrize("answer", [None, REFUSED])
def test_one_request_probes_the_others_wait_and_all_resume_together(answer):
    state, clock, probe = outage(answer, bound=5)
    sent = answered_at(state, clock)
    probe.gate = threading.Event()  # the leader's first probe waits until the others wait
    leader, leader_result = run_threads([lambda: state.after_failure(REFUSED, sent)])
    while not probe.calls:
        time.sleep(0.001)
    threads, results = run_threads(
        [lambda: state.after_failure(REFUSED, sent)] * 3 + [state.before_send] * 3  # failed ones, and unsent ones
    )
    wait_for_waiters(state, 6)
    probe.gate.set()
    for thread in leader + threads:
        thread.join(10)
    assert probe.threads == set(leader)  # only the first request probed
    if answer is None:
        assert leader_result == [UP] and results == [RECOVERED] * 3 + [clock()] * 3
    else:  # given up: everyone fails, saying so, and only the leader probed
        assert all(isinstance(result, Unreachable) for result in leader_result + results)
        assert sum(clock.sleeps) == 5


def test_a_waiting_request_takes_over_when_the_prober_leaves():
    state, clock, probe = outage(REFUSED, REFUSED, REFUSED, REFUSED, None)
    sent = answered_at(state, clock)
    with state.limit_waiting(3, "a test's limit"):
        with pytest.raises(Unreachable):
            state.after_failure(REFUSED, sent)  # the prober left at the limit, the outage is still on
    with state.limit_waiting(3, "a test's limit"):
        assert state.before_send() == clock()  # the next request probes it: answered
    assert len(probe.calls) == 5


# -- limit_waiting (the event source's rounds) -------------------------------------------------


def test_limit_waiting_ends_the_waiting_once_nothing_answered_for_that_long():
    state, clock, probe = outage(REFUSED, bound=60)
    sent = answered_at(state, clock, seconds_ago=2)
    with state.limit_waiting(10, "the interval of the event source"):
        with pytest.raises(Unreachable) as raised:
            state.after_failure(REFUSED, sent)
    assert clock() == sent + 10  # counted from the round's start here (later than the last reply)
    assert raised.value.limit == "nothing has answered for 10 s (the interval of the event source)"
    round_two = clock()
    with state.limit_waiting(10, "the interval of the event source"):
        with pytest.raises(Unreachable):
            state.before_send()  # the next round waits on, one interval again
    assert clock() == round_two + 10
    for _round in range(5):
        with state.limit_waiting(10, "the interval of the event source"):
            with pytest.raises(Unreachable) as raised:
                state.before_send()
    assert raised.value.limit == "the limit of unreachable_timeout (60 s)" and raised.value.seconds >= 60


def test_limit_waiting_counts_from_the_last_reply_when_that_is_later():
    state, clock, probe = outage(REFUSED, bound=60)
    with state.limit_waiting(10, "the interval"):
        clock.now += 25  # a long round that kept getting replies: never cut short
        sent = answered_at(state, clock, seconds_ago=1)
        with pytest.raises(Unreachable):
            state.after_failure(REFUSED, sent)
        assert clock() == sent - 1 + 10


def test_once_given_up_a_rounds_probe_is_given_only_the_rest_of_its_limit():
    state, clock, probe = outage(REFUSED, bound=10, probe_timeout=30)
    sent = answered_at(state, clock)
    with pytest.raises(Unreachable):
        state.after_failure(REFUSED, sent)  # given up after 10 s
    clock.now += RECHECK
    with state.limit_waiting(4, "the interval"):
        with pytest.raises(Unreachable):
            state.before_send()
    assert probe.calls[-1] == (clock(), 4)


# -- the transport rides it out ---------------------------------------------------------------

URL = "https://nac.example.com"
REFUSAL = refused()  # the connection refused: nothing sent


def scripted_client(script, **kwargs):
    clock = Clock()
    kwargs.setdefault("api_key", "k3y")
    client = NacClient(URL, sleep=clock.sleep, clock=clock, **kwargs)
    transport = Scripted(*script)
    mounted(client, transport)
    return client, transport, clock


def sent(transport):
    return ["%s %s" % (r.method, r.path_url) for r in transport.sent]


def test_a_read_waits_out_a_restart_without_spending_its_retries():
    script = [(200, []), REFUSAL, REFUSAL, REFUSAL, (500, ""), (200, [{"id": 1, "hostname": "a"}])]
    client, transport, clock = scripted_client(script, max_retries=0)
    assert client.list_devices() == []
    assert client.list_devices() == [{"id": 1, "hostname": "a"}]
    assert sent(transport) == ["GET /api/device"] * 2 + ["GET /api/intent"] * 3 + ["GET /api/device"]
    assert len(clock.sleeps) == 2  # the pauses between the probes; any reply (a 500 too) ends the outage


def test_a_creation_that_was_never_sent_is_sent_once_the_service_answers():
    client, transport, clock = scripted_client([(200, []), REFUSAL, REFUSAL, (200, []), (201, {"id": 9})])
    client.list_devices()
    assert client.create_device({"hostname": "a"}) == {"id": 9}
    assert sent(transport)[-1] == "POST /api/device" and sent(transport).count("POST /api/device") == 2


def test_a_creation_cut_off_in_the_restart_is_never_sent_again_blindly():
    client, transport, clock = scripted_client([(200, []), CUT, (201, {"id": 9})])
    client.list_devices()
    with pytest.raises(NacConnectionError) as raised:
        client.create_device({"hostname": "a"})
    assert raised.value.outcome_unknown is True and sent(transport) == ["GET /api/device", "POST /api/device"]


def test_after_the_bound_the_request_fails_saying_what_happened():
    client, transport, clock = scripted_client([(200, []), REFUSAL], unreachable_timeout=15)
    client.list_devices()
    with pytest.raises(NacConnectionError) as raised:
        client.create_device({"hostname": "a"})
    assert str(raised.value) == (
        "The NAC API at https://nac.example.com could not be reached for 15 s (connection refused): "
        "POST /api/device was not sent, as the limit of unreachable_timeout (15 s). "
        "See 'Retries and outcomes' in the API guide."
    )
    assert raised.value.outcome_unknown is False
    with pytest.raises(NacConnectionError, match="could not be reached for 15 s .* GET /api/device was not sent"):
        client.list_devices()  # the next request fails at once, unsent, while the outage goes on


def test_a_service_that_never_answered_fails_after_the_ordinary_retries():
    client, transport, clock = scripted_client([REFUSAL], max_retries=2)
    with pytest.raises(NacConnectionError, match="Could not connect to the NAC API at https://nac.example.com"):
        client.list_devices()
    assert sent(transport) == ["GET /api/device"] * 3 and len(clock.sleeps) == 2  # no probe, no waiting


def test_reads_with_no_reply_while_nothing_answers_wait_for_the_service():
    silence = SILENT  # no reply before the deadline
    script = [(200, []), silence, silence, silence, (200, []), (200, [{"id": 2, "hostname": "b"}])]
    client, transport, clock = scripted_client(script, max_retries=0)
    client.list_devices()
    assert client.list_devices() == [{"id": 2, "hostname": "b"}]
    assert sent(transport)[1:] == ["GET /api/device", "GET /api/intent", "GET /api/intent", "GET /api/intent"] + [
        "GET /api/device"
    ]


@pytest.mark.parametrize("value", [-1, 3601, "60", True, float("nan")])
def test_unreachable_timeout_is_checked(value):
    with pytest.raises(NacConfigError, match="unreachable_timeout must be a number of seconds from 0"):
        NacClient(URL, api_key="k3y", unreachable_timeout=value)
