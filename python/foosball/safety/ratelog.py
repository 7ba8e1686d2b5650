"""Repeated log lines, rate-limited with a count: a flapping condition must not flood the
journal (a lost frame once logged the same line 44 times in 10 minutes), yet no repeat may
go unnoticed."""

from __future__ import annotations

import logging
import math


class RateLimitedLog:
    """At most one line per key every `interval_s`; the next line that gets through says
    how many were held back since the last one."""

    def __init__(self, logger: logging.Logger, interval_s: float) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def log(self, now_s: float, level: int, key: str, message: str, *args: object) -> bool:
        """True when the line was written. Time is passed in (the agents' cores are pure)."""
        now = now_s
        if now - self._last.get(key, -math.inf) < self.interval_s:
            self._held[key] = self._held.get(key, 0) + 1
            return False
        held = self._held.pop(key, 0)
        self._last[key] = now
        if held:
            message += " (and %d more like it since the last one)"
            args = (*args, held)
        self.logger.log(level, message, *args, stacklevel=2)  # the caller's line
        return True
