"""Rod actuation: every axis follows its setpoint through speed, acceleration and jerk limits.

One `AxisBank` holds all axes (the world has 16: translation and rotation of 8 rods) as
plain lists; an axis at rest on its target costs nothing per tick (measured faster than
numpy for 16 axes, whose per-call overhead dominates at this size).

Control law, per axis and tick (bang-bang on the jerk, a discrete time-optimal rule): of the
three candidate jerks +J (towards the target), 0 and -J, take the first after which the axis
can still stop at the target without overshoot and within its speed cap. "Can stop" ramps the
acceleration to zero first, then brakes (stopping distance ``v^1.5/sqrt(J)`` while the jerk
dominates, ``v^2/2A + vA/2J`` above ``v = A^2/J``), keeping one tick of travel in hand.
Within a tick the jerk is constant, so position and velocity are integrated exactly. The
axis lands on the target when the remainder is less than one tick can resolve.

An axis can instead be driven externally (`drive_externally`): its position and velocity
are whatever the caller supplies (for example an emulated EtherCAT drive).

The law runs in C (`_loops.c`, built by the install beside the ball detector's `_band.c`)
where that module is built, else in Python (`AxisBank._advance`): the same operations in
the same order, so the same results to the last bit (tests/sim/test_sim_loops.py).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from foosball.sim.params import AxisLimits

try:  # the law in C (about a tenth of its Python cost); the Python law where not built
    from foosball.sim._loops import advance as _advance_c
except ImportError:  # pragma: no cover - a tree without the built extension
    _advance_c = None

# candidate jerks, as fractions of +J towards the target, in order of preference
_MOVING = (1.0, 0.25, 0.0, -1.0)
_FROM_REST = (1.0, 0.25, 1 / 16, 1 / 64, 0.0, -1.0)
# step lengths whose tick constants are kept before the memo starts again: a step's dt is
# the frame period or a part of it, up to a rounding error of the world's clock
_DTS_KEPT = 64


class _Tick(NamedTuple):
    """An axis's tick in a step of some dt: how many, how long, and its constants."""

    ticks: int
    dt: float
    amax_dt: float
    jmax_dt: float
    land_moving: float
    land_rest: float
    h2: float
    h6: float
    tolerance: float
    snap_speed: float
    # the axis's own (its limits and travel), read with the tick's
    amax: float
    jmax: float
    knee: float
    inv_sqrt_jerk: float
    low: float
    high: float


class AxisBank:
    def __init__(self, limits: list[AxisLimits], positions: list[float] | None = None) -> None:
        n = len(limits)
        self.count = n
        self.max_speed = [lim.max_speed for lim in limits]
        self.max_accel = [lim.max_accel for lim in limits]
        self.max_jerk = [lim.max_jerk for lim in limits]
        self.position = list(positions) if positions is not None else [0.0] * n
        self.velocity = [0.0] * n
        self.accel = [0.0] * n
        self.target = list(self.position)
        self.speed_cap = list(self.max_speed)
        self.low = [-math.inf] * n
        self.high = [math.inf] * n
        self.external = [False] * n
        self._ext_velocity = [0.0] * n
        self._active = set[int]()
        # per axis, fixed by its limits: the finest tick the jerk allows, the speed where the
        # jerk stops dominating a stop (A^2/J), 1/sqrt(J)
        self._fine = [0.0] * n
        self._knee = [0.0] * n
        self._inv_sqrt_jerk = [0.0] * n
        # by step dt, then by axis (_tick): one lookup of the dt per step, not one per axis
        self._ticks: dict[float, list[_Tick | None]] = {}
        for i in range(n):
            self._derive(i)

    def _derive(self, i: int) -> None:
        self._ticks.clear()  # made of the limits
        self._fine[i] = math.sqrt(0.05 * self.max_speed[i] / self.max_jerk[i])
        self._knee[i] = self.max_accel[i] * self.max_accel[i] / self.max_jerk[i]
        self._inv_sqrt_jerk[i] = 1.0 / math.sqrt(self.max_jerk[i])

    def set_limits(self, index: int, limits: AxisLimits) -> None:
        self.max_speed[index] = limits.max_speed
        self.max_accel[index] = limits.max_accel
        self.max_jerk[index] = limits.max_jerk
        self.speed_cap[index] = min(self.speed_cap[index], limits.max_speed)
        self._derive(index)

    def set_travel(self, index: int, low: float, high: float) -> None:
        self._ticks.clear()  # they carry the travel
        self.low[index] = low
        self.high[index] = high

    def command(self, index: int, target: float, speed: float = 0.0) -> None:
        """New setpoint; `speed` > 0 caps the speed of this move (0: the axis maximum)."""
        # min(high, max(low, target)) and min(speed, limit), written out (the same picks):
        # the match loop commands a few axes every frame
        target, low, high = float(target), self.low[index], self.high[index]
        target = target if target > low else low
        target = target if target < high else high
        limit = self.max_speed[index]
        cap = limit if speed <= 0.0 or limit < speed else speed
        if (
            target == self.target[index]
            and cap == self.speed_cap[index]
            and not self.external[index]
        ):
            return
        self.target[index] = target
        self.speed_cap[index] = cap
        self.external[index] = False
        self._active.add(index)

    def drive_externally(self, index: int, position: float, velocity: float) -> None:
        """At the end of the next step this axis is where the caller says."""
        self.external[index] = True
        self.target[index] = float(position)
        self._ext_velocity[index] = float(velocity)
        self._active.add(index)

    def hold(self, index: int, position: float) -> None:
        """Put the axis at rest at `position` (set-up)."""
        self.position[index] = float(position)
        self.target[index] = float(position)
        self.velocity[index] = 0.0
        self.accel[index] = 0.0
        self.external[index] = False
        self._active.discard(index)

    def moving(self) -> bool:
        return bool(self._active)

    def step(self, dt: float) -> None:
        """Advance every axis by dt seconds."""
        if not self._active:
            return
        done = []
        external = self.external
        ticks = self._ticks
        position, velocity, accel = self.position, self.velocity, self.accel
        target, cap = self.target, self.speed_cap
        advance = _advance_c
        of_dt: list[_Tick | None] | None = None  # this dt's ticks by axis
        for i in sorted(self._active):  # sorted: the same order every run
            if external[i]:
                position[i] = target[i]
                velocity[i] = self._ext_velocity[i]
                accel[i] = 0.0
                continue
            if of_dt is None:
                of_dt = ticks.get(dt)
                if of_dt is None:
                    if len(ticks) >= _DTS_KEPT:
                        ticks.clear()
                    of_dt = ticks[dt] = [None] * self.count
            tick = of_dt[i]
            if tick is None:
                tick = of_dt[i] = self._tick(i, dt)
            if (advance(position, velocity, accel, i, target[i], cap[i], tick)
                    if advance is not None else self._advance(i, tick)):
                done.append(i)
        for i in done:
            self._active.discard(i)

    def _tick(self, i: int, dt: float) -> _Tick:
        """The constants of axis i's ticks in a step of dt (a match steps by two or three
        dts only, so they are worked out once per axis and dt)."""
        fine = self._fine[i]
        # fine substeps where one tick of full jerk would change the speed by more than
        # 5 % of the axis maximum (human hands), so speeds are not quantised coarsely
        substeps = 1 if fine >= dt else math.ceil(dt / fine)
        dt = dt / substeps
        amax, jmax = self.max_accel[i], self.max_jerk[i]
        return _Tick(
            ticks=substeps,
            dt=dt,
            amax_dt=amax * dt,
            jmax_dt=jmax * dt,
            land_moving=amax * dt * dt / 2,
            land_rest=min(amax * dt * dt, jmax * dt**3) / 6,
            h2=dt * dt / 2,
            h6=dt * dt * dt / 6,
            # a remainder smaller than one tick of jerk cannot be moved any finer: snap to it
            tolerance=min(0.01, max(1e-5, 2 * jmax * dt**3)),
            snap_speed=max(jmax * dt * dt, 0.05 * amax * dt),
            amax=amax,
            jmax=jmax,
            knee=self._knee[i],
            inv_sqrt_jerk=self._inv_sqrt_jerk[i],
            low=self.low[i],
            high=self.high[i],
        )

    def _advance(self, i: int, tick: _Tick) -> bool:
        """Up to `tick.ticks` ticks of axis i; True when it has come to rest on its target.

        The tick's constants (which depend on dt and the axis alone: `_tick`) are worked out
        once, and the state is kept in locals in between: the same arithmetic, in the same
        order, as one tick at a time."""
        p, v, a = self.position[i], self.velocity[i], self.accel[i]
        target, cap = self.target[i], self.speed_cap[i]
        (ticks, dt, amax_dt, jmax_dt, land_moving, land_rest, h2, h6, tolerance,
         snap_speed, amax, jmax, knee, inv_sqrt_jerk, low, high) = tick
        two_amax = 2 * amax
        two_jmax = 2 * jmax
        sqrt = math.sqrt
        for _ in range(ticks):
            error = target - p
            direction = 1.0 if error > 0 else -1.0 if error < 0 else 0.0
            # land: the remainder is within what one tick of braking resolves
            if (
                direction * v >= 0
                and abs(v) <= amax_dt
                and abs(a) <= jmax_dt
                and abs(error) <= abs(v) * dt + (land_moving if v != 0 else land_rest)
            ):
                self.position[i], self.velocity[i], self.accel[i] = target, 0.0, 0.0
                return True
            push = direction * jmax
            # a full tick of maximum jerk may be too much (a short move from rest, the top
            # of a ramp into the speed cap): then try gentler pushes before holding
            at_rest = v == 0.0 and a == 0.0
            jerk = 0.0
            p_new = v_new = a_new = 0.0
            # what every candidate adds its jerk's part to (v + a dt + j h2 and
            # p + v dt + a h2 + j h6 add up left to right: the same sums)
            v_coast, p_coast = v + a * dt, p + v * dt + a * h2
            for scale in _FROM_REST if at_rest else _MOVING:
                jerk = push * scale
                a_new = a + jerk * dt
                if a_new > amax:
                    a_new = amax
                elif a_new < -amax:
                    a_new = -amax
                j = (a_new - a) / dt
                v_new = v_coast + j * h2
                p_new = p_coast + j * h6
                if scale < 0.0:
                    break
                ramp = abs(a_new) / jmax
                toward = direction * (v_new + a_new * ramp / 2)
                if toward > cap:
                    continue
                left = direction * (target - (p_new + v_new * ramp + a_new * ramp * ramp / 3))
                if toward <= 0:
                    stop = -toward * dt
                elif toward < knee:
                    stop = toward * sqrt(toward) * inv_sqrt_jerk + toward * dt
                else:
                    stop = toward * toward / two_amax + toward * amax / two_jmax + toward * dt
                if left >= stop:
                    break
            if at_rest and jerk * direction <= 0.0:
                # even the gentlest push would overshoot: what is left is below resolution
                self.position[i], self.velocity[i], self.accel[i] = target, 0.0, 0.0
                return True
            if abs(v_new) > cap:
                v_new = math.copysign(cap, v_new)
                a_new = 0.0
            if (abs(target - p_new) < tolerance and abs(v_new) < snap_speed
                    and abs(a_new) <= jmax_dt):
                self.position[i], self.velocity[i], self.accel[i] = target, 0.0, 0.0
                return True
            p = high if p_new > high else low if p_new < low else p_new
            v, a = v_new, a_new
        self.position[i], self.velocity[i], self.accel[i] = p, v, a
        return False
