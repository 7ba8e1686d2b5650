"""Rod actuation: every axis follows its setpoint through speed, acceleration and jerk limits.

One `AxisBank` holds all axes as numpy arrays (the world has 16: translation and rotation of
8 rods) and advances them together, so one tick costs the same few array operations however
many rods move.

Control law, per axis and tick: the velocity wanted is the largest from which the axis can
still stop at the target under the acceleration and jerk limits (stopping distance
``v^2/2A + vA/2J``, or ``v^1.5/sqrt(J)`` while the acceleration ramp dominates), capped by
the axis's speed limit, the commanded speed and ``|error| / dt`` (no overshoot in one tick);
the acceleration moves towards what reaches that velocity in one tick, by at most ``J dt``.
Within a tick the jerk is constant, so position and velocity are integrated exactly.

An axis can instead be driven externally (`drive_externally`): its position and velocity
are whatever the caller supplies (for example an emulated EtherCAT drive) and the world
interpolates between the supplied states.
"""

from __future__ import annotations

import numpy as np

from foosball.sim.params import AxisLimits


class AxisBank:
    def __init__(self, limits: list[AxisLimits], positions: list[float] | None = None) -> None:
        n = len(limits)
        self.count = n
        self.max_speed = np.array([lim.max_speed for lim in limits], dtype=float)
        self.max_accel = np.array([lim.max_accel for lim in limits], dtype=float)
        self.max_jerk = np.array([lim.max_jerk for lim in limits], dtype=float)
        self.position = np.array(positions if positions is not None else [0.0] * n, float)
        self.velocity = np.zeros(n)
        self.accel = np.zeros(n)
        self.target = self.position.copy()
        self.speed_cap = self.max_speed.copy()
        self.low = np.full(n, -np.inf)
        self.high = np.full(n, np.inf)
        self.external = np.zeros(n, dtype=bool)
        self._ext_position = self.position.copy()
        self._ext_velocity = np.zeros(n)
        # A^2/J: speed above which the acceleration limit (not the jerk) shapes braking
        self._knee = self.max_accel**2 / self.max_jerk
        self._sqrt_jerk = np.sqrt(self.max_jerk)
        self._candidates = np.zeros((3, n))
        self._columns = np.arange(n)

    def set_limits(self, index: int, limits: AxisLimits) -> None:
        self.max_speed[index] = limits.max_speed
        self.max_accel[index] = limits.max_accel
        self.max_jerk[index] = limits.max_jerk
        self.speed_cap[index] = min(self.speed_cap[index], limits.max_speed)
        self._knee[index] = limits.max_accel**2 / limits.max_jerk
        self._sqrt_jerk[index] = np.sqrt(limits.max_jerk)

    def set_travel(self, index: int, low: float, high: float) -> None:
        self.low[index] = low
        self.high[index] = high

    def command(self, index: int, target: float, speed: float = 0.0) -> None:
        """New setpoint; `speed` > 0 caps the speed of this move (0: the axis maximum)."""
        self.target[index] = min(self.high[index], max(self.low[index], target))
        limit = self.max_speed[index]
        self.speed_cap[index] = limit if speed <= 0.0 else min(speed, limit)
        self.external[index] = False

    def drive_externally(self, index: int, position: float, velocity: float) -> None:
        """From now on this axis is where the caller says (e.g. an emulated drive)."""
        self.external[index] = True
        self._ext_position[index] = position
        self._ext_velocity[index] = velocity

    def moving(self) -> bool:
        return bool(
            np.any(self.velocity != 0.0)
            or np.any(self.accel != 0.0)
            or np.any(self.position != self.target)
            or np.any(self.external)
        )

    def _advance(
        self, p: np.ndarray, v: np.ndarray, a: np.ndarray, jerk: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """State after dt at constant jerk (acceleration saturating at its limit)."""
        a_new = np.minimum(np.maximum(a + jerk * dt, -self.max_accel), self.max_accel)
        jerk = (a_new - a) / dt
        v_new = v + a * dt + jerk * (dt * dt / 2)
        p_new = p + v * dt + a * (dt * dt / 2) + jerk * (dt**3 / 6)
        return p_new, v_new, a_new

    def _can_stop(
        self, p: np.ndarray, v: np.ndarray, a: np.ndarray, direction: np.ndarray, dt: float
    ) -> np.ndarray:
        """Whether, from this state, the axis can still stop at (not past) its target and stays
        within its speed cap: the acceleration is first ramped to zero, then the velocity
        braked away (stopping distance v^1.5/sqrt(J), or v^2/2A + vA/2J above the knee)."""
        jmax = self.max_jerk
        ramp = np.abs(a) / jmax
        v_after = v + a * ramp / 2
        error = self.target - (p + v * ramp + a * ramp * ramp / 3)
        toward = direction * v_after
        # one tick passes before the next decision: keep that much distance in hand
        stop = (
            np.where(
                toward < self._knee,
                np.abs(toward) ** 1.5 / self._sqrt_jerk,
                toward * toward / (2 * self.max_accel) + toward * self.max_accel / (2 * jmax),
            )
            + np.abs(toward) * dt
        )
        return (direction * error >= stop) & (toward <= self.speed_cap)

    def step(self, dt: float) -> None:
        """Advance every axis by dt seconds."""
        if not self.moving():
            return
        p, v, a = self.position, self.velocity, self.accel
        amax, jmax = self.max_accel, self.max_jerk
        error_now = self.target - p
        direction = np.sign(error_now)
        # bang-bang on the jerk: push towards the target if the axis could still stop in time
        # after that, else hold the acceleration if that is safe, else brake. The three
        # candidates are evaluated together as rows of one (3, axes) array.
        jerks = self._candidates
        jerks[0] = direction * jmax
        jerks[2] = -jerks[0]
        cand_p, cand_v, cand_a = self._advance(p, v, a, jerks, dt)
        ok = self._can_stop(cand_p, cand_v, cand_a, direction, dt)
        choice = np.where(ok[0], 0, np.where(ok[1], 1, 2))
        columns = self._columns
        p_new, v_new, a_new = (
            cand_p[choice, columns],
            cand_v[choice, columns],
            cand_a[choice, columns],
        )
        # speed limit and arrival: never faster than the cap, settle when there
        over = np.abs(v_new) > self.speed_cap
        v_new = np.where(over, np.sign(v_new) * self.speed_cap, v_new)
        # a remainder smaller than one tick of jerk cannot be moved any finer: snap to it
        tolerance = np.clip(2 * jmax * dt**3, 1e-5, 0.01)
        settled = (np.abs(self.target - p_new) < tolerance) & (
            np.abs(v_new) < np.maximum(jmax * dt * dt, 0.05 * amax * dt)
        )
        # or the target is reachable within this tick by braking inside the limits: land on it
        lands = (
            (direction * v >= 0)
            & (
                np.abs(error_now)
                <= np.abs(v) * dt
                + np.where(v != 0, amax * dt * dt / 2, np.minimum(amax * dt * dt, jmax * dt**3) / 6)
            )
            & (np.abs(v) <= amax * dt)
            & (np.abs(a) <= jmax * dt)
        )
        settled |= lands
        p_new = np.where(settled, self.target, p_new)
        v_new = np.where(settled, 0.0, v_new)
        a_new = np.where(settled | over, 0.0, a_new)
        p_new = np.minimum(np.maximum(p_new, self.low), self.high)
        ext = self.external
        if ext.any():
            p_new = np.where(ext, self._ext_position, p_new)
            v_new = np.where(ext, self._ext_velocity, v_new)
            a_new = np.where(ext, 0.0, a_new)
            self.target = np.where(ext, self._ext_position, self.target)
        self.position, self.velocity, self.accel = p_new, v_new, a_new
