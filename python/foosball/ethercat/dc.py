"""Distributed clocks: the master's cycle steered to the drives' reference clock.

With SYNC0 the drives latch their setpoints on the reference clock's edges (multiples of
the cycle in its time). The master wakes on the board's own clock, which drifts from the
drives' by tens of ppm: left alone, its frames would walk through the SYNC0 edge, and a
frame arriving just as it fires lands in one cycle or the next. Each cycle's frame brings
back the reference time as the frame passed the drives; `PhaseLock` turns its phase within
the cycle into a correction of the master's next wake-up (proportional and integral, as
SOEM's own examples steer it), holding the frames half a cycle from the edge.
"""

from __future__ import annotations

from collections import deque

import numpy as np


class PhaseLock:
    def __init__(self, cycle_s: float, target_fraction: float = 0.5, gain: float = 0.1,
                 integral_gain: float = 0.005, limit_fraction: float = 0.05,
                 window: int = 2000) -> None:
        self.cycle_ns = round(cycle_s * 1e9)
        self.target_ns = round(target_fraction * self.cycle_ns)
        self.gain = gain
        self.integral_gain = integral_gain
        self.limit_ns = limit_fraction * self.cycle_ns  # at most this much a cycle
        self.integral_ns = 0.0
        # the latest cycles' errors, from the first within the limit on (the pull-in from
        # wherever the first frame fell is counted in cycles instead)
        self.errors_ns: deque[float] = deque(maxlen=window)
        self.cycles_to_lock: int | None = None
        self._cycles = 0

    def error_ns(self, reference_ns: int) -> float:
        """How far the frame passed the drives from the target phase, in (-cycle/2, cycle/2]:
        positive when it came late in the cycle."""
        error = (reference_ns - self.target_ns) % self.cycle_ns
        return float(error - self.cycle_ns if error > self.cycle_ns // 2 else error)

    def correction_s(self, reference_ns: int) -> float:
        """The change to the next wake-up (s): earlier when the frame came late."""
        if reference_ns <= 0:
            return 0.0  # no reference time in the frame (not yet, or no answer)
        error = self.error_ns(reference_ns)
        self._cycles += 1
        if self.cycles_to_lock is None and abs(error) <= self.limit_ns:
            self.cycles_to_lock = self._cycles
        if self.cycles_to_lock is not None:
            self.errors_ns.append(error)
        if abs(error) <= self.limit_ns:
            # the drift is learnt near the target only: integrated through the pull-in,
            # the error would overshoot it by as much again (wind-up)
            self.integral_ns += error
            integral_limit = self.limit_ns / self.integral_gain
            self.integral_ns = max(-integral_limit, min(integral_limit, self.integral_ns))
        step = -(self.gain * error + self.integral_gain * self.integral_ns)
        return max(-self.limit_ns, min(self.limit_ns, step)) * 1e-9

    def percentiles_us(self) -> tuple[float, float, float]:
        """|phase error| p50, p95 and p99 over the latest cycles since the lock, in
        microseconds."""
        if not self.errors_ns:
            return 0.0, 0.0, 0.0
        errors = np.abs(np.fromiter(self.errors_ns, float))
        p50, p95, p99 = np.percentile(errors, (50, 95, 99))
        return float(p50) * 1e-3, float(p95) * 1e-3, float(p99) * 1e-3
