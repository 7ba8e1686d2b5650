"""The I/O half's two guards against a noisy LAN: a rate budget per authenticated sender,
and the watch on frames that fail the MAC or overflow the socket."""

from __future__ import annotations

import math
from collections import Counter

from foosball.wire.catalogue import Agent


class SenderBudget:
    """A token bucket per authenticated sender: one chatty (or compromised) peer spends its
    own budget, never another's."""

    def __init__(self, rate_hz: float, burst: int) -> None:
        self.rate_hz = rate_hz
        self.burst = float(burst)
        self._tokens: dict[Agent, tuple[float, float]] = {}  # sender -> (tokens, at)
        self.refused: Counter[str] = Counter()

    def spend(self, sender: Agent, now_s: float) -> bool:
        last = self._tokens.get(sender)  # (once a frame: no default tuple, no min() call)
        if last is None:
            tokens = self.burst
        else:
            tokens = last[0] + (now_s - last[1]) * self.rate_hz
            if tokens > self.burst:
                tokens = self.burst
        if tokens < 1.0:
            self._tokens[sender] = (tokens, now_s)
            self.refused[sender.name.lower()] += 1
            return False
        self._tokens[sender] = (tokens - 1.0, now_s)
        return True


class FloodWatch:
    """Frames on our LAN that fail the MAC (or are not COSE at all), and frames the kernel
    dropped unread because they came faster than this agent reads, counted in windows: more
    than `limit_hz` of them is a flood, a cause for `hold_s` after the last such window.
    Such frames cost every agent CPU however fast they are dropped; above a few hundred a
    second nothing on the LAN is healthy (a board with a wrong key, a broadcast storm, an
    attack), and what is uncertain stops the motors (RESTART is refused until it is over).
    The drops count because an agent flooded past what its CPU reads sees only the share
    it reads: at 10,000 frames/s on a busy board that share can sit at the limit itself,
    and the frames it never reads may be its peers' heartbeats and alarms."""

    WINDOW_S = 0.1

    def __init__(self, limit_hz: float, hold_s: float) -> None:
        self.limit = limit_hz * self.WINDOW_S
        self.hold_s = hold_s
        self._window_start = -math.inf
        self._count = 0
        self.rate_hz = 0.0  # of the last window over the limit
        self.last_s = -math.inf  # when a window went over the limit

    def count(self, now_s: float, frames: int = 1) -> None:
        if now_s - self._window_start >= self.WINDOW_S:
            self._window_start, self._count = now_s, 0
        self._count += frames
        if self._count > self.limit:
            self.rate_hz = self._count / self.WINDOW_S
            self.last_s = now_s

    def present(self, now_s: float) -> bool:
        return now_s - self.last_s < self.hold_s
