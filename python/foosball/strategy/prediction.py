"""Ball prediction: FC Portugal's free-ball model with wall bounces.

FC Portugal (seed 001) models a free ball with a drag force proportional to its speed:
``v(t) = v0 exp(-k t / m)``, ``x(t) = x0 + v0 (m / k) (1 - exp(-k t / m))``. A table-soccer
ball also rolls, so we add a constant rolling deceleration ``a``: ``ds/dt = -c s - a`` with
``c = k / m``. Both are fitted to the simulator's ball (``foosball strategy fit-ball``).

Between bounces the ball runs straight; a side wall (or an end wall outside the goal mouth)
reflects the normal velocity times the restitution and Coulomb friction takes up to
``mu (1 + e) |v_n|`` off the tangential one. Frame: any
frame whose origin is the field centre (the robot frame of a controller, or the table frame).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from foosball.geometry import Table
from foosball.strategy.params import PredictionParams

_EPS = 1e-9
_FIRST_RUN_MARGIN = 1e-6  # m: a look ahead ending this far before the first wall needs no bounce


class BallPoint(NamedTuple):  # tuples: a step makes dozens of points and segments
    t: float  # s after the state the prediction started from
    x: float
    y: float
    vx: float
    vy: float

    @property
    def speed(self) -> float:
        return math.hypot(self.vx, self.vy)


class Segment(NamedTuple):
    """A straight run between two events (start, bounce, stop, goal, horizon)."""

    t0: float
    x0: float
    y0: float
    ux: float  # unit direction
    uy: float
    s0: float  # speed at t0
    duration: float
    length: float


class SpeedModel:
    """Speed and distance of a free ball under drag (rate c) and rolling deceleration a."""

    def __init__(self, drag_rate: float, rolling_deceleration: float) -> None:
        if drag_rate < 0 or rolling_deceleration < 0:
            raise ValueError("drag_rate and rolling_deceleration must be >= 0")
        # below 1e-6 1/s the closed form cancels catastrophically; the drag-free form is exact
        self.c = drag_rate if drag_rate > 1e-6 else 0.0
        self.a = rolling_deceleration if rolling_deceleration > 1e-9 else 0.0  # avoid denormals
        self._stop_for = (-1.0, 0.0)  # (s0, stop time): a prediction asks for one s0 often

    def stop_time(self, s0: float) -> float:
        if s0 <= 0:
            return 0.0
        known, t_stop = self._stop_for
        if s0 == known:
            return t_stop
        c, a = self.c, self.a
        if c < _EPS:
            t_stop = s0 / a if a > 0 else math.inf
        elif a <= 0:
            t_stop = math.inf
        else:
            t_stop = math.log((s0 + a / c) / (a / c)) / c
        self._stop_for = (s0, t_stop)
        return t_stop

    def speed(self, s0: float, t: float) -> float:
        # conditionals that pick exactly what min() and max() would: they run thousands of
        # times a second
        t_stop = self.stop_time(s0)
        t = t_stop if t_stop < t else t
        c, a = self.c, self.a
        s = s0 - a * t if c < _EPS else (s0 + a / c) * math.exp(-c * t) - a / c
        return s if s > 0.0 else 0.0

    def distance(self, s0: float, t: float) -> float:
        t = 0.0 if t < 0.0 else t
        t_stop = self.stop_time(s0)
        t = t_stop if t_stop < t else t
        c, a = self.c, self.a
        if c < _EPS:
            return s0 * t - 0.5 * a * t * t
        return (s0 + a / c) * (1.0 - math.exp(-c * t)) / c - (a / c) * t

    def time_to_distance(self, s0: float, d: float) -> float | None:
        """Time to roll `d` metres, or None if the ball stops first. Newton from below: the
        distance is concave in t, so the iterates rise monotonically to the root."""
        if d <= 0:
            return 0.0
        if s0 <= 0:
            return None
        t_stop = self.stop_time(s0)
        c, a = self.c, self.a
        if c < _EPS:  # constant deceleration: the root in closed form
            if a <= 0:
                return d / s0
            if s0 * t_stop - 0.5 * a * t_stop * t_stop < d - 1e-12:
                return None
            root = s0 * s0 - 2 * a * d
            return min(t_stop, (s0 - math.sqrt(max(0.0, root))) / a)
        # every iterate stays below t_stop, so distance and speed need no clamping there
        k = s0 + a / c
        a_c = a / c
        exp = math.exp
        if k * (1.0 - exp(-c * t_stop)) / c - a_c * t_stop < d - 1e-12:
            return None
        t = d / s0
        for _ in range(30):
            if t > t_stop:
                t = t_stop
            decay = exp(-c * t)
            f = k * (1.0 - decay) / c - a_c * t - d
            slope = k * decay - a_c
            if abs(f) < 1e-9 or slope <= _EPS:
                break
            t = min(t - f / slope, t_stop)
        return t


class BallPredictor:
    def __init__(self, table: Table, params: PredictionParams) -> None:
        self.params = params
        self.model = SpeedModel(params.drag_rate, params.rolling_deceleration)
        radius = table.ball.radius
        self.y_wall = table.field.half_width - radius
        self.x_wall = table.field.half_length - radius
        self.goal_half = table.field.goal_width / 2
        # a strategy asks about one ball state several times a step (crossings of each rod)
        self._last_key: tuple[float, float, float, float] | None = None
        self._last_segments: list[Segment] = []

    def segments(self, x: float, y: float, vx: float, vy: float) -> list[Segment]:
        """The straight runs of the ball from this state until it stops, enters a goal, has
        bounced max_bounces times, or the horizon ends (the caller must not change the list)."""
        key = (x, y, vx, vy)
        if key != self._last_key:
            self._last_segments = self._segments(x, y, vx, vy, self.params.horizon)
            self._last_key = key
        return self._last_segments

    def _segments(self, x: float, y: float, vx: float, vy: float, until: float) -> list[Segment]:
        """The runs up to the one under way at `until` (the horizon: all of them)."""
        out: list[Segment] = []
        t = 0.0
        horizon = self.params.horizon
        for _ in range(self.params.max_bounces + 1):
            speed = math.hypot(vx, vy)
            if speed < 1e-6 or t >= horizon:
                break
            ux, uy = vx / speed, vy / speed
            remaining = horizon - t
            run = self.model.distance(speed, remaining)
            hit: str | None = None
            to_wall = math.inf
            if uy > _EPS:
                to_wall = (self.y_wall - y) / uy
                hit = "y"
            elif uy < -_EPS:
                to_wall = (-self.y_wall - y) / uy
                hit = "y"
            if ux > _EPS and (self.x_wall - x) / ux < to_wall:
                to_wall, hit = (self.x_wall - x) / ux, "x"
            elif ux < -_EPS and (-self.x_wall - x) / ux < to_wall:
                to_wall, hit = (-self.x_wall - x) / ux, "x"
            to_wall = max(0.0, to_wall)
            if to_wall >= run:  # stops or reaches the horizon first
                duration = min(remaining, self.model.stop_time(speed))
                out.append(Segment(t, x, y, ux, uy, speed, duration, run))
                break
            dt = self.model.time_to_distance(speed, to_wall)
            assert dt is not None  # to_wall < run, so the ball gets there
            out.append(Segment(t, x, y, ux, uy, speed, dt, to_wall))
            x, y = x + ux * to_wall, y + uy * to_wall
            s1 = self.model.speed(speed, dt)
            vx, vy = ux * s1, uy * s1
            t += dt
            if t >= until:
                break  # the caller wants nothing later
            e, mu = self.params.wall_restitution, self.params.wall_friction
            if hit == "x" and abs(y) <= self.goal_half:
                break  # into the goal: nothing more to predict
            normal, tangent = (vy, vx) if hit == "y" else (vx, vy)
            # Coulomb friction takes up to mu (1 + e) |v_n| off the tangential speed
            slowed = max(0.0, abs(tangent) - mu * (1 + e) * abs(normal))
            tangent = math.copysign(slowed, tangent)
            normal = -e * normal
            vx, vy = (tangent, normal) if hit == "y" else (normal, tangent)
        return out

    def state_at(self, x: float, y: float, vx: float, vy: float, t: float) -> BallPoint:
        """Where the ball is `t` seconds after this state (it rests where it stopped)."""
        if t <= 0:
            return BallPoint(0.0, x, y, vx, vy)
        if t < self.params.horizon:
            point = self._on_first_run(x, y, vx, vy, t)
            if point is not None:
                return point
            segments = self._segments(x, y, vx, vy, t)  # a short look ahead: only its runs
        else:
            segments = self.segments(x, y, vx, vy)
        if not segments:
            return BallPoint(t, x, y, 0.0, 0.0)
        for seg in segments:
            if t <= seg.t0 + seg.duration or seg is segments[-1]:
                dt = min(t - seg.t0, seg.duration)
                d = self.model.distance(seg.s0, dt)
                s = self.model.speed(seg.s0, dt)
                x1, y1 = seg.x0 + seg.ux * d, seg.y0 + seg.uy * d
                return BallPoint(t, x1, y1, seg.ux * s, seg.uy * s)
        raise AssertionError("unreachable")

    def _on_first_run(self, x: float, y: float, vx: float, vy: float,
                      t: float) -> BallPoint | None:
        """`state_at` for a look ahead that ends well before the first wall (most do), without
        the time to that wall (`_segments` finds it by Newton's method). The same numbers:
        the first run, as `_segments` makes it, and the same arithmetic on it. None when the
        ball may reach a wall within `t` (or is at rest): then `_segments` decides."""
        speed = math.hypot(vx, vy)
        if speed < 1e-6:
            return None
        ux, uy = vx / speed, vy / speed
        to_wall = math.inf
        if uy > _EPS:
            to_wall = (self.y_wall - y) / uy
        elif uy < -_EPS:
            to_wall = (-self.y_wall - y) / uy
        if ux > _EPS and (self.x_wall - x) / ux < to_wall:
            to_wall = (self.x_wall - x) / ux
        elif ux < -_EPS and (-self.x_wall - x) / ux < to_wall:
            to_wall = (-self.x_wall - x) / ux
        to_wall = max(0.0, to_wall)
        model = self.model
        if model.distance(speed, t) >= to_wall - _FIRST_RUN_MARGIN:
            return None
        if to_wall >= model.distance(speed, self.params.horizon):
            # the run ends where the ball stops or at the horizon: its duration as there
            dt = min(t - 0.0, min(self.params.horizon, model.stop_time(speed)))
        else:
            # the run ends at the wall, later than t: Newton's iterates rise to the wall's
            # time from below and stop within 1e-9 m of it, far more than the margin after t
            dt = t - 0.0
        d = model.distance(speed, dt)
        s = model.speed(speed, dt)
        return BallPoint(t, x + ux * d, y + uy * d, ux * s, uy * s)

    def crossing(self, x: float, y: float, vx: float, vy: float, line_x: float) -> BallPoint | None:
        """First time the ball reaches the line x = line_x (a rod line), or None."""
        if abs(x - line_x) < 1e-12:
            return BallPoint(0.0, x, y, vx, vy)
        for seg in self.segments(x, y, vx, vy):
            if abs(seg.ux) < _EPS:
                continue
            d = (line_x - seg.x0) / seg.ux
            if d < 0 or d > seg.length + 1e-12:
                continue
            dt = self.model.time_to_distance(seg.s0, d)
            if dt is None:
                return None
            s = self.model.speed(seg.s0, dt)
            return BallPoint(seg.t0 + dt, line_x, seg.y0 + seg.uy * d, seg.ux * s, seg.uy * s)
        return None

    def compensate(self, x: float, y: float, vx: float, vy: float, age: float) -> BallPoint:
        """The ball state when a command sent now takes effect: advance the (old) ball state
        by its age plus the actuation latency."""
        return self.state_at(x, y, vx, vy, max(0.0, age) + self.params.actuation_latency)
