# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tie the table "Retries and outcomes" of the API guide to the retry policy (http/retry_policy.py): every row of
the table has its cases here, and each case is what ``RetryPolicy.decide`` says, for a read (safe to repeat) and
for a device creation (not safe to repeat). A row added to the table without a case, or a case whose row is gone,
fails the first test."""

import os
import re

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    CONNECT,
    EXCHANGE,
    PROXY,
    TLS,
    ExchangeError,
    NacResponseError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.outage import RECOVERED, UP
from ansible_collections.netaccess.nac.plugins.module_utils.http.response import (
    OVER_BOUND,
    PROXY_AUTH,
    REFUSED,
    TIMED_OUT,
    UNRESOLVED,
)
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import (
    BACK_OFF,
    GIVE_UP,
    SEND_NOW,
    WAIT_FOR_SERVICE,
    RetryPolicy,
)

GUIDE = os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "docs", "docsite", "rst", "api.rst")
READ, CREATE = True, False  # repeatable: a read (and a status query) is safe to repeat, a creation is not


class Answered:
    """A reply as the policy reads it: its status and headers."""

    def __init__(self, status, headers=None):
        self.status_code, self.headers = status, headers or {}


def broke(stage=EXCHANGE, sent=True, replied=False, reused=False, cause=None):
    return ExchangeError("test", stage, sent, replied=replied, reused=reused, cause=cause)


def table_rows():
    """The first column (the failure) of every row of the table, its whitespace collapsed."""
    with open(GUIDE, encoding="utf-8") as handle:
        text = handle.read()
    section = text[text.index("7.1. Retries and outcomes\n^^^") : text.index("A rate limit\n~~~")]
    table = section[section.index(".. list-table::") :]
    rows = re.findall(r"^   \* - (.*(?:\n {7}(?!- ).*)*)", table, re.MULTILINE)
    return [" ".join(row.split()) for row in rows[1:]]  # (the first row is the header)


def decided(repeatable, outcome, refused=None):
    """What the policy of a fresh request with 3 retries says after its first attempt."""
    return RetryPolicy(3, repeatable).decide(outcome, refused)


# Each row of the table, by the start of its first column: (outcome, refused, read's action, creation's action).
ROWS = {
    "HTTP 429 and HTTP 503 (a rate limit)": [
        (Answered(429), 0.0, SEND_NOW, SEND_NOW),  # every request paused by the shared pause: sent again, paced
        (Answered(429), 1.5, BACK_OFF, BACK_OFF),  # a stray refusal: its own request waits its pause alone
        (Answered(503), 0.0, SEND_NOW, GIVE_UP),  # a creation's 503: looked for in the device list first
    ],
    "the connection could not be made": [
        (broke(CONNECT, sent=False, cause=REFUSED), None, WAIT_FOR_SERVICE, WAIT_FOR_SERVICE),
        (broke(CONNECT, sent=False, cause=TIMED_OUT), None, WAIT_FOR_SERVICE, WAIT_FOR_SERVICE),
        (broke(CONNECT, sent=False, cause=UNRESOLVED), None, WAIT_FOR_SERVICE, WAIT_FOR_SERVICE),
    ],
    "HTTP 500": [(Answered(500), None, BACK_OFF, GIVE_UP)],
    "HTTP 502, 504": [
        (Answered(502), None, BACK_OFF, GIVE_UP),
        (Answered(504), None, BACK_OFF, GIVE_UP),
        (Answered(503), None, BACK_OFF, GIVE_UP),  # past the 300 s of pauses the throttle no longer takes it
    ],
    "the connection was reset or dropped after sending": [
        (broke(reused=True), None, SEND_NOW, GIVE_UP),  # a kept-alive connection the server was closing
        (broke(replied=True), None, BACK_OFF, GIVE_UP),  # broke off during the reply
        (broke(cause=TIMED_OUT), None, WAIT_FOR_SERVICE, GIVE_UP),  # no complete reply within timeout
    ],
    "TLS (certificate not trusted": [
        (broke(TLS, sent=False), None, GIVE_UP, GIVE_UP),
        (broke(PROXY, sent=False, cause=PROXY_AUTH), None, GIVE_UP, GIVE_UP),
    ],
    "a redirect (HTTP 3xx)": [(Answered(302), None, GIVE_UP, GIVE_UP), (Answered(303), None, GIVE_UP, GIVE_UP)],
    "HTTP 401, 403": [(Answered(401), None, GIVE_UP, GIVE_UP), (Answered(403), None, GIVE_UP, GIVE_UP)],
    "any other HTTP 4xx": [(Answered(status), None, GIVE_UP, GIVE_UP) for status in (400, 404, 409)],
    # Raised by the read itself (transport._too_large: a NacResponseError, no ExchangeError): never retried.
    "a reply larger than": [],
    "a reply whose heads pass 64 KiB": [(broke(replied=True, cause=OVER_BOUND), None, GIVE_UP, GIVE_UP)],
    # A success (the list's pages are the client's to judge): the reply is the answer, never sent again.
    "a list that is not whole": [(Answered(200), None, GIVE_UP, GIVE_UP)],
}
CASES = [(row, case) for row, cases in ROWS.items() for case in cases]


def test_every_row_of_the_table_has_its_cases_and_every_case_its_row():
    rows = table_rows()
    assert len(rows) == len(ROWS), rows
    for start in ROWS:
        assert [row for row in rows if row.startswith(start)], "no row of the table starts with %r" % start


@pytest.mark.parametrize("row, case", CASES, ids=["%s-%d" % (row[:24], n) for n, (row, _c) in enumerate(CASES)])
def test_the_policy_decides_each_row_as_the_table_says(row, case):
    outcome, refused, read, create = case
    assert decided(READ, outcome, refused).action == read
    assert decided(CREATE, outcome, refused).action == create


def test_a_reply_too_large_is_no_failed_exchange_so_the_loop_never_retries_it():
    assert not issubclass(NacResponseError, ExchangeError)


def test_a_request_is_tried_at_most_one_plus_max_retries_times_with_jittered_backoff():
    policy, waits = RetryPolicy(3, True), []
    while True:
        decision = policy.decide(Answered(502))
        if decision.action == GIVE_UP:
            break
        waits.append(decision.seconds)
        policy = decision.policy
    assert decision.attempts == 4 and len(waits) == 3
    for n, seconds in enumerate(waits, 1):  # between half and all of 0.5 s doubling
        assert 0.5 * 2 ** (n - 1) / 2 <= seconds <= 0.5 * 2 ** (n - 1)


def test_retry_after_is_heeded_and_capped_at_30_seconds():
    assert RetryPolicy(3).decide(Answered(503, {"Retry-After": "7"})).seconds == 7.0
    assert RetryPolicy(3).decide(Answered(503, {"Retry-After": "300"})).seconds == 30.0


def test_rate_limit_pauses_and_a_closing_connection_spend_no_retry():
    assert RetryPolicy(3).decide(Answered(429), 1.5).policy.attempt == 0
    again = RetryPolicy(3).decide(broke(reused=True))
    assert again.policy.attempt == 0 and again.policy.fresh  # at once, on a new connection
    assert RetryPolicy(3, fresh=True).decide(broke(reused=True)).action == BACK_OFF  # once only


def test_a_creation_that_broke_on_a_closing_connection_is_stale():
    decision = RetryPolicy(3, False).decide(broke(reused=True))
    assert decision.action == GIVE_UP and decision.stale and decision.error is not None


def test_a_creation_not_sent_on_a_closing_connection_goes_again_and_later_ones_take_new_connections():
    """Nothing of it was written, so it is sent again at once on a new connection; the connection the server was
    closing still says that later creations must not take an idle one (stale: the transport's _fresh_writes)."""
    decision = RetryPolicy(3, False).decide(broke(sent=False, reused=True))
    assert decision.action == SEND_NOW and decision.stale and decision.policy.fresh
    assert not RetryPolicy(3, True).decide(broke(sent=False, reused=True)).stale  # a read is safe to repeat


def test_after_waiting_for_the_service_a_request_goes_again_as_the_table_says():
    refused = broke(CONNECT, sent=False, cause=REFUSED)
    assert RetryPolicy(3, False).decide(refused, waited=RECOVERED).action == SEND_NOW
    assert RetryPolicy(3, False).decide(refused, waited=UP).action == SEND_NOW  # nothing was sent: again at once
    assert RetryPolicy(3, False).decide(refused, waited=None).action == BACK_OFF  # no outage: retried with backoff
    assert RetryPolicy(0, False).decide(refused, waited=None).action == GIVE_UP
    silent = broke(cause=TIMED_OUT)
    assert RetryPolicy(3).decide(silent, waited=UP).action == BACK_OFF  # it may have been processed: a retry spent
    assert RetryPolicy(3).decide(silent, waited=RECOVERED).action == SEND_NOW


def test_a_refused_creation_states_it_and_leaves_its_attempts_as_read():
    decision = RetryPolicy(3, False).decide(Answered(503), 0.0)
    assert decision.refused and decision.attempts is None
