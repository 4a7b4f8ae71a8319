# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pace of one client's requests under a rate limit (no Ansible imports): the controller of the pacing
(pacing.py). ``Pace`` sets the pace from the meter (meter.Meter) after a refusal in a run, lowers it on each
further one, and probes it faster again while nothing is refused.
"""

from ansible_collections.netaccess.nac.plugins.module_utils.http.meter import WINDOW
from ansible_collections.netaccess.nac.plugins.module_utils.http.retry_policy import REFUSAL_PAUSE, RETRY_AFTER_CAP


class Pace:
    """Set the pace of the requests from the meter after a refusal in a run, and probe it faster again while
    nothing is refused; ``version`` counts its changes (each restarts the spacing of the requests at ``restart``).

    The first refusal of a shared pause sets the pace once the pause is over (``after_pause``), from the requests
    admitted that were sent in the WINDOW seconds before the refused one: their count over the WINDOW (a limiter
    that admitted ten and then refused everything admits ten a window), at most the pace refused, times BELOW. The
    task's first refusal, when it asks a pause of a WINDOW or less and came less than a WINDOW after the first
    request, counts them over the time since that request instead, at least PARTIAL of a WINDOW (``_partial``: a
    limiter that refills within a second admitted them in that time; 20 in 30 ms is not 20 a second);
    each further refusal again (multiplicative decrease). Only when refusals came together, though: the first
    pause of an unpaced client sets no pace when the replies received during it were mostly admitted
    (Meter.mostly_admitted). A refused probe falls back to the pace that held its probe period (``good_rate``)
    instead, the rate admitted being only the pace probed towards: a count that straddles the start of a fixed
    window, or takes in a refilled burst, overstates what the service admits, a pace that held does not. A probe
    halfway up refused (``_halving``) goes back no faster than the rate admitted since the last pause ended
    (Meter.sustained). A first refusal without Retry-After is read as the rate they were admitted at instead:
    their count over the time they were sent in, at least a request's time. Nothing admitted: the pace refused,
    times BELOW (not paced until something is).

    While nothing is refused the pace is probed faster: doubled (PROBE_FAST) after the pause last asked (half a
    WINDOW after a pause of a WINDOW or less) as long as no pace was refused, then halfway to the rate admitted
    before the last refusal (``ceiling``, or the pace refused when lower) after HALVING_PAUSES of those pauses (at
    least two WINDOW), then by PROBE_STEP after PROBE_PAUSES of them (at least 10 s): the longer the pauses asked,
    the more slowly. A quota the service states (retry_policy.quota) of a window of QUOTA_PACED seconds or less
    paces the requests at once, QUOTA_BELOW its limit a window, and no pace goes past it (``quota_rate``)."""

    BELOW = 0.9  # a refusal sets the pace this much below the rate admitted (each further one: again)
    PROBE_FAST = 2.0  # until a pace is refused, it is probed this much faster after a pause's time
    HALVING_PAUSES = 2  # then halfway to the pace refused (or rate admitted) after this many pauses' time (>= 2 s)
    PROBE_STEP = 1.03  # and once there, this much faster ...
    PROBE_PAUSES = 30  # ... after this many pauses' time without a refusal (at least 10 s)
    MIN_RATE = 0.1  # requests a second: the slowest pace
    USED = 0.8  # a pace is probed faster only once this share of its starts were taken since it last changed
    QUOTA_BELOW = 0.95  # a quota the service states is paced this much below its limit a window ...
    QUOTA_PACED = 10.0  # ... when its window is this many seconds or shorter (a longer one is spent, then waited out)
    PARTIAL = 0.25  # a first refusal's count over the time since the first request: at least this share of a WINDOW

    def __init__(self):
        self.rate = None  # requests a second once paced (None: not paced)
        self.gap = 0.0  # seconds between two requests' starts once paced (0: not paced)
        self.refused_rate = None  # the pace of the last refusal (None: refused before any pace)
        self.good_rate = None  # the fastest pace that held a whole probe period without a refusal since
        self.ceiling = None  # the rate admitted when the pace was last set from a refusal: probed towards, then past
        self.quota_rate = None  # the pace a quota stated by the service allows (None: none stated)
        self.quota = None  # the last quota stated (retry_policy.Quota): a change is heeded, the same one is not
        self.version, self.restart = 0, 0.0  # changes of the pace; when the last one restarts the spacing
        self.probe_at = 0.0  # the pace is probed faster at this clock time
        self.started = self._started_then = 0  # requests started at the pace in all, and when it last changed
        self._window_start = None  # when a reply said its request was the first its window admitted (received)
        self._asked = REFUSAL_PAUSE  # seconds the last refusal paused for
        self._unsaid = False  # the last refusal named no Retry-After
        self._changed = None  # when the pace last changed (or the last pause ended)
        self._resumed = None  # when the last pause ended (the pace was set from a refusal)
        self._halving = False  # the last refusal came while probing halfway up to a pace refused before

    def refused(self, asked, unsaid):
        """Note the first refusal of a shared pause, which asked ``asked`` seconds (``unsaid``: no Retry-After)."""
        self._halving = self.refused_rate is not None  # a pace was refused before: probed halfway up
        self.refused_rate = self.rate
        if self.rate is not None and self.good_rate is not None and self.rate <= self.good_rate:
            self.good_rate = None  # a pace that held was refused: the service admits less now
        self._unsaid, self._asked = unsaid, asked

    def after_pause(self, now, sent, first_sent, meter, paused_at, run):
        """Set the pace at ``now``, the pause over, from the requests admitted before the refused one (sent at
        ``sent``); return False when the replies during the pause were mostly admitted: no pace, calm again."""
        changed, resumed = self._changed or first_sent, self._resumed
        self._changed = self._resumed = now
        if self.rate is None and self.quota_rate is None and meter.mostly_admitted(paused_at, run):
            return False
        if self._unsaid:  # no Retry-After: the rate admitted since the pace last changed (at least a request's time)
            since = max(sent - WINDOW, changed if changed is not None else sent)
            span = max(sent - since, meter.took or 0.0, 1e-3)
        elif self._partial(sent, first_sent):  # a short pause asked before a WINDOW of sending: over that time
            since, span = first_sent, max(sent - first_sent, self.PARTIAL * WINDOW)
        else:  # a pause asked: what the whole window admitted (a penalty box's count is its limit)
            since, span = sent - WINDOW, WINDOW
        admitted = meter.admitted_between(since, sent)
        if admitted:
            rate = admitted / span if self.refused_rate is None else min(admitted / span, self.refused_rate)
        elif self.refused_rate is not None:
            rate = self.refused_rate
        else:
            return True  # nothing admitted yet: not paced until a refusal tells a rate
        sustained = None
        if self._halving and resumed is not None and sent - resumed > WINDOW:
            sustained = meter.sustained(resumed, sent)  # a refilled burst weighs less over the longer time
        self.ceiling = rate = rate if sustained is None else min(rate, sustained)
        if self._unsaid and self.refused_rate is None:  # a rate admitted while sending faster: probed towards, not
            self.refused_rate = rate  # doubled past (a window's count, when a pause was asked, may be a part of it)
        # a probe refused: back to the pace that held (the rate admitted is only probed towards); else below it
        pace = self.good_rate or rate * self.BELOW
        rate = max(pace if sustained is None else min(pace, rate), self.MIN_RATE)
        self.pace_at(rate if self.quota_rate is None else min(rate, self.quota_rate), now)
        return True

    def _partial(self, sent, first_sent):
        """Tell whether the first refusal, asking a pause of a WINDOW or less, came less than a WINDOW after the
        first request (sent at ``first_sent``): the requests admitted were then sent in that shorter time, and
        counting them over a whole WINDOW understates the rate a limiter that refills so soon admits. A large burst
        overstates it instead: the pace is refused, which costs one more pause of a WINDOW at most, and the next
        refusal counts over the WINDOW before it (a pause asked longer, a penalty box's, could cost much more)."""
        return (
            self.refused_rate is None
            and self._asked <= WINDOW
            and first_sent is not None
            and sent - WINDOW < first_sent < sent
        )

    def heed(self, stated, now):
        """Heed the quota ``stated`` by a reply received at ``now``: a window of QUOTA_PACED seconds or less paces
        the requests at QUOTA_BELOW its limit a window, at once, and is never probed past. Return the clock time no
        request starts before once none is left (its reset, or sooner the next start of a window from when a reply
        said its request was the first of its window, never past RETRY_AFTER_CAP), else None."""
        self.quota, window = stated, stated.window
        if window is not None and stated.remaining == stated.limit - 1:
            self._window_start = now  # the window started before this reply was received: never too early
        if window is not None and window <= self.QUOTA_PACED:
            rate = max(stated.limit * self.QUOTA_BELOW / window, self.MIN_RATE)
            if rate != self.quota_rate:
                self.quota_rate = rate
                if self.rate is None or self.rate > rate:
                    self.pace_at(rate, now)
        if stated.remaining:
            return None
        until = now + (stated.reset if stated.reset is not None else window)
        if window is not None and self._window_start is not None:
            until = min(until, now + window - (now - self._window_start) % window)
        return min(until, now + RETRY_AFTER_CAP)

    def pace_at(self, rate, now):
        """Start the requests ``1 / rate`` apart from ``now`` on; probed faster a period later."""
        self.rate, self.gap = rate, 1.0 / rate
        self._changed = now
        self.probe_at = now + self._probe_period()
        self._changed_now(now)

    def probe_if_due(self, now):
        """Probe a faster pace when its probe period passed without a refusal, it is below any quota stated, and
        the requests kept up with it (not a pace that requests waiting hid)."""
        if (
            now >= self.probe_at
            and (self.quota_rate is None or self.rate < self.quota_rate)
            and self.started - self._started_then >= self.USED * (now - self._changed) * self.rate
        ):
            self._probe(now)

    def _changed_now(self, now):
        self._started_then, self.version, self.restart = self.started, self.version + 1, now

    def _target(self):
        """The pace probed towards: the pace refused, or the rate admitted when the pace was set, when lower."""
        return min(self.refused_rate, self.ceiling or self.refused_rate)

    def _probe_period(self):
        if self.refused_rate is None:  # doubling: after a pause's time, half a WINDOW after a pause of a WINDOW or less
            return self._asked if self._asked > WINDOW else WINDOW / 2.0
        if self.rate * self.PROBE_STEP < self._target():  # halfway to the pace refused (or the rate admitted)
            return max(2 * WINDOW, self.HALVING_PAUSES * self._asked)
        return max(10.0, self.PROBE_PAUSES * self._asked)

    def _probe(self, now):
        """Nothing refused for a probe period at this pace: it held (``good_rate``); a faster one: doubled until a
        pace is refused, then halfway to the pace refused, then PROBE_STEP beyond it."""
        self.good_rate = self.rate
        if self.refused_rate is None:
            self.rate *= self.PROBE_FAST
        else:
            self.rate = max(self.rate * self.PROBE_STEP, (self.rate + self._target()) / 2.0)
        self.rate = min(self.rate, self.quota_rate or self.rate)
        self.gap = 1.0 / self.rate
        self.probe_at = now + self._probe_period()
        self._changed = now
        self._changed_now(now)
