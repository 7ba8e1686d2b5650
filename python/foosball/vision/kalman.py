"""Kalman filter on the ball state [x, y, vx, vy] (seed), table frame, metres and seconds.

The motion model is constant velocity with white-noise acceleration. With a measurement
noise that is the same on both axes the x and y halves never couple, so the filter runs as
two 2-state filters in plain floats: a dozen multiplications per axis, no numpy call, no
allocation. The prediction reflects the ball off the side walls and off the end walls
outside the goal mouth (restitution from the configuration, its uncertainty added to the
velocity variance), so a bounce during an occlusion is followed instead of lost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from foosball.vision.config import FilterConfig


@dataclass(frozen=True, slots=True)
class Walls:
    """Where the ball centre turns back: field half sizes minus the ball radius."""

    x_limit: float
    y_limit: float
    goal_half_width: float  # |y| below this the end wall is the goal mouth

    @staticmethod
    def of_table(half_length: float, half_width: float, goal_width: float,
                 ball_radius: float) -> Walls:
        return Walls(half_length - ball_radius, half_width - ball_radius, goal_width / 2)


class Axis:
    """One coordinate: position p, velocity v, covariance [[a, b], [b, c]]."""

    __slots__ = ("a", "b", "c", "p", "v")

    def __init__(self) -> None:
        self.p = self.v = 0.0
        self.a = self.c = 1.0
        self.b = 0.0

    def start(self, p: float, v: float, p_var: float, v_var: float) -> None:
        self.p, self.v, self.a, self.b, self.c = p, v, p_var, 0.0, v_var

    def predict(self, dt: float, q: float, limit: float | None, restitution: float,
                restitution_var: float) -> bool:
        """Advance by dt; returns True if it bounced off +-limit (None: no wall here)."""
        a, b, c = self.a, self.b, self.c
        # F = [[1, dt], [0, 1]]; Q for piecewise-constant white acceleration of variance q.
        dt2 = dt * dt
        a = a + 2 * dt * b + dt2 * c + q * dt2 * dt2 * 0.25
        b = b + dt * c + q * dt2 * dt * 0.5
        c = c + q * dt2
        p = self.p + self.v * dt
        v = self.v
        bounced = False
        if limit is not None and abs(p) > limit:
            # Mirror the overshoot and the velocity: p' = 2L - p, v' = -e v (L signed).
            wall = limit if p > 0 else -limit
            p = 2 * wall - p
            # Jacobian of (p, v) -> (2L - p, -e v) applied to the covariance.
            b = restitution * b
            c = restitution * restitution * c + restitution_var * v * v
            v = -restitution * v
            bounced = True
        self.p, self.v, self.a, self.b, self.c = p, v, a, b, c
        return bounced

    def update(self, z: float, r: float) -> None:
        a, b, c = self.a, self.b, self.c
        s = a + r
        k_p, k_v = a / s, b / s
        innovation = z - self.p
        self.p += k_p * innovation
        self.v += k_v * innovation
        self.a = (1 - k_p) * a
        self.b = (1 - k_p) * b
        self.c = c - k_v * b


class BallFilter:
    def __init__(self, cfg: FilterConfig, walls: Walls):
        self.cfg = cfg.validate()
        self.walls = walls
        self.x = Axis()
        self.y = Axis()
        self.time_ns = 0
        self._q = cfg.acceleration_sigma ** 2
        self._restitution_var = 0.2 ** 2  # walls differ: restitution +- 0.2 (facts: 0.4-0.9)

    def start(self, x: float, y: float, vx: float, vy: float, time_ns: int,
              position_sigma: float, velocity_sigma: float) -> None:
        p_var, v_var = position_sigma ** 2, velocity_sigma ** 2
        self.x.start(x, vx, p_var, v_var)
        self.y.start(y, vy, p_var, v_var)
        self.time_ns = time_ns

    def predict(self, time_ns: int) -> bool:
        """Advance to `time_ns` (never backwards); True if a wall bounce was predicted."""
        dt = (time_ns - self.time_ns) * 1e-9
        if dt <= 0.0:
            return False
        self.time_ns = time_ns
        cfg, walls = self.cfg, self.walls
        bounced_y = self.y.predict(dt, self._q, walls.y_limit, cfg.wall_restitution,
                                   self._restitution_var)
        # The end wall turns back a ball that reaches it beside the mouth; a ball already past
        # its line is in the goal, where nothing sends it back (whatever its y does next).
        beside_mouth = abs(self.y.p) > walls.goal_half_width
        x_wall = walls.x_limit if beside_mouth and abs(self.x.p) <= walls.x_limit else None
        bounced_x = self.x.predict(dt, self._q, x_wall, cfg.wall_restitution,
                                   self._restitution_var)
        return bounced_x or bounced_y

    def normalised_innovation(self, zx: float, zy: float, sigma: float) -> float:
        r = sigma * sigma
        dx, dy = zx - self.x.p, zy - self.y.p
        return dx * dx / (self.x.a + r) + dy * dy / (self.y.a + r)

    def update(self, zx: float, zy: float, sigma: float) -> None:
        r = sigma * sigma
        self.x.update(zx, r)
        self.y.update(zy, r)

    @property
    def position_sigma(self) -> float:
        return math.sqrt(max(self.x.a, self.y.a))

    def state(self) -> tuple[float, float, float, float]:
        return self.x.p, self.y.p, self.x.v, self.y.v
