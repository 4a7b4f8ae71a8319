# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the replies of one client's requests say (no Ansible imports): the meter of the pacing (pacing.py).

``Meter`` records each reply, admitted or refused, and when the admitted requests were sent, so that a refusal is
judged by the replies around it (a stray one among many admitted, or one of a limiter's run) and the rate the
service admitted before it can be counted (pace.Pace sets the pace from it).
"""

import collections

RECENT = 1 << 16  # admitted requests remembered at most (those sent in the last WINDOW seconds count)
REPLIES = 256  # replies remembered (when received, whether refused): they tell a stray refusal from a limiter's
STRAY_SAMPLE = 32  # a refusal is judged among the last replies, at most this many (itself counted) ...
STRAY_SHARE = 0.25  # ... and is a limiter's when at least this share of them were refusals, else stray ...
RUN = 4  # ... and at least this many (a quarter of 16: early on, a few replies tell little)
RUN_SHARE = 0.5  # a shared pause paces when at least this share of the replies received during it were refusals
WINDOW = 1.0  # seconds of admitted requests that tell the rate the service admits


class Meter:
    """Record what the replies say, so that a refusal is judged by the replies around it: admitted or refused
    (``replies``), when the admitted requests were sent (``admitted``), how long a request takes (``took``)."""

    def __init__(self):
        self.replies = collections.deque(maxlen=REPLIES)  # (received, refused) of the last replies
        self.admitted = collections.deque(maxlen=RECENT)  # send times of requests answered (in answer order)
        self.took = None  # a request's time, smoothed
        self.refusals = 0  # refusals waited out (each request was sent again after its pause)
        self.strays = 0  # refusals read as stray: their request alone waited (counted in ``refusals`` too)

    def admit(self, now, took=None, started=None):
        """Count a reply received at ``now`` that was no refusal: answered in ``took`` seconds, or broken unanswered
        after it went out at ``started`` (it passed a limiter), or neither (not sent, or not known to be)."""
        self.replies.append((now, False))
        if took is not None:
            self.took = took if self.took is None else 0.8 * self.took + 0.2 * took
            self.admitted.append(now - took)
        elif started is not None:
            self.admitted.append(started)

    def refuse(self, now, stray=False):
        """Count a refusal received at ``now`` (``stray``: its request alone waits)."""
        self.replies.append((now, True))
        self.refusals += 1
        self.strays += stray

    def stray(self):
        """Tell whether a refusal received now is stray: fewer than STRAY_SHARE, or fewer than RUN, of the last
        STRAY_SAMPLE replies (itself counted) were refusals; else it is one of a run."""
        recent = [refused for _at, refused in list(self.replies)[1 - STRAY_SAMPLE :]] + [True]
        refused = sum(recent)
        return refused < RUN or refused < STRAY_SHARE * len(recent)

    def admitted_between(self, since, until):
        """Count the admitted requests sent from ``since`` to before ``until``."""
        return sum(1 for at in list(self.admitted) if since <= at < until)

    def admitted_since(self, since):
        """Tell whether a request sent at ``since`` or later was admitted (answered)."""
        return bool(self.admitted) and self.admitted[-1] >= since

    def mostly_admitted(self, paused_at, run):
        """Tell whether the replies received after ``paused_at`` were mostly admitted (fewer than RUN_SHARE of them
        refusals); none received, the last STRAY_SAMPLE replies before it, when its refusal was one of a ``run``."""
        replies = list(self.replies)
        during = [refused for at, refused in replies if at > paused_at]
        if not during and run:
            during = [refused for at, refused in replies if at <= paused_at][-STRAY_SAMPLE:]
        return bool(during) and sum(during) < RUN_SHARE * len(during)

    def sustained(self, resumed, sent):
        """Measure the rate admitted from ``resumed`` to ``sent``; None when not all of it is remembered."""
        if len(self.admitted) >= RECENT and self.admitted[0] >= resumed:
            return None
        return self.admitted_between(resumed, sent) / (sent - resumed)
