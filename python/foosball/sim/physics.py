# Over 500 lines: one World stepping the ball, the walls, the goals and 8 rods' men in the
# order of an integration step; the hot loops' C twins are in _loops.c, tested bit for bit.
"""Table physics: the ball, the walls and goals, and the men on 8 actuated rods.

World frame = the table frame of `foosball.geometry` (origin at the field centre, x towards
the human's goal, metres). Rods are kept in the order of the geometry file.

Ball. A point at height r (the ball's radius) that rolls in straight lines between contacts
under the FC Portugal free-ball model with a rolling term: dv/dt = -a_roll v/|v| - k v, whose
speed has the closed form v(t) = (v0 + a/k) e^(-kt) - a/k until it stops. No spin. Within a
slice between contacts the ray runs at the slice's mean velocity (the exact distance over the
exact time), and the speed at its end comes from the closed form.

Collisions, by ray casting (the SSL simulation seed): every obstacle is grown by the ball's
radius so the ball is a point, and the point's path within a time slice is a ray tested
against planes (segments) and cylinders (circles, vertical axis):
- side walls y = +-(W/2 - r); end walls x = +-(L/2 - r) outside the goal mouth;
- goal posts: circles of radius r around the mouth corners, and the mouth's side walls;
- a goal when the point crosses x = +-(L/2 + r) inside the mouth (the ball is fully across);
- men: at the ball's height a man's leg (a capsule from the rod axis to the foot tip, as thick
  as the foot) cuts an interval in x that depends on the rod angle (empty when the feet are
  lifted: the ball passes), and the foot is `foot_width` wide along the rod. Grown by r this is
  a rounded box (4 segments + 4 corner circles) that moves during a slice; the slice is cut
  so the rod turns at most `MAX_SLICE_ANGLE`, the box's bounds move linearly within it, and
  the ray is cast in the moving faces' frames (relative velocity), so nothing tunnels.
Contacts reflect the normal relative velocity with the surface's restitution and remove
tangential relative velocity up to the Coulomb limit (spin-free friction). Men are driven
(their motion is imposed): a struck ball leaves with the foot's velocity at the contact,
``omega * (rod_height - contact height)`` along x and the rod's translation speed along y,
plus restitution. At most `_MAX_CONTACTS_PER_STEP` contacts are resolved per step (a ball
squeezed between a moving man and a wall); the rest of that step the ball waits.

The ray cast against a rod's men runs in C (`_loops.c`, `World._rod_hit_compiled`) where
that module is built, else in Python (`World._rod_hit`): the same operations in the same
order, so the same hits to the last bit (tests/sim/test_sim_loops.py).

Use without the match runner::

    world = World(default_table(), SimParams())
    world.place_ball(0.1, 0.0, -2.0, 0.3)
    world.command_rod(world.rod_index("robot_goalkeeper"), translation=0.05, rotation=0.0)
    world.drive_rod_externally(i, translation, rotation, v_t, v_r)   # e.g. emulated drives
    events = world.step(0.005)                                        # any dt
    state = world.state()                                             # WorldState snapshot
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from foosball.geometry import Rod, Table
from foosball.recording.format import WorldState
from foosball.sim.drives import AxisBank
from foosball.sim.params import AxisLimits, SimParams

try:  # the ray cast against a rod's men in C (_loops.c); `World._rod_hit` where not built
    from foosball.sim._loops import rod_hit as _rod_hit_c
except ImportError:  # pragma: no cover - a tree without the built extension
    _rod_hit_c = None

MAX_SLICE_ANGLE = 0.08  # rad a rod may turn within one collision slice near the ball
_EPS = 1e-9
_MAX_CONTACTS_PER_STEP = 32
_UNKNOWN = object()
_INTERVALS_KEPT = 4096  # man_interval results kept (by angle) before the memo starts again


@dataclass(frozen=True, slots=True)
class Contact:
    """Something the ball touched: a wall, a post, a man, or a goal line."""

    time_ns: int
    kind: str  # "wall" | "post" | "man" | "goal"
    rod: int = -1  # rod index for "man"
    man: int = -1
    team: str = ""  # the man's team, or for "goal" the team that scored
    speed_before: float = 0.0
    speed_after: float = 0.0
    vx_after: float = 0.0
    vy_after: float = 0.0


@dataclass(slots=True)
class _Hit:
    time: float
    normal_x: float
    normal_y: float
    kind: str
    rod: int = -1
    man: int = -1
    surface_vx: float = 0.0  # material velocity of the struck surface
    surface_vy: float = 0.0
    face_speed: float = 0.0  # speed of the struck face along the normal (for separation)
    depth: float = 0.0  # how far the ball started inside the obstacle (pushed out)


@dataclass(slots=True)
class _Pose:
    """A rod's pose at the two ends of the current step (cubic Hermite in between)."""

    t0: float = 0.0
    r0: float = 0.0
    vt0: float = 0.0
    vr0: float = 0.0
    t1: float = 0.0
    r1: float = 0.0
    vt1: float = 0.0
    vr1: float = 0.0


@dataclass(slots=True)
class _ManShape:
    height: float  # rod axis above the field
    reach: float  # rod axis -> foot tip
    half_thickness: float
    half_width: float  # half the foot width along the rod


@dataclass(slots=True)
class _Ball:
    x: float = 0.0
    y: float = 0.0
    vx: float = 0.0
    vy: float = 0.0
    in_play: bool = False


@dataclass(slots=True)
class _Score:
    robot: int = 0
    human: int = 0
    history: list[tuple[int, str]] = field(default_factory=list)


def human_rod_limits(
    translation: AxisLimits | None = None, rotation: AxisLimits | None = None
) -> tuple[AxisLimits, AxisLimits]:
    """A strong human's hands (scripted opponents narrow these per skill level)."""
    return (
        translation or AxisLimits(max_speed=3.0, max_accel=60.0, max_jerk=20000.0),
        rotation or AxisLimits(max_speed=200.0, max_accel=40000.0, max_jerk=1.5e6),
    )


class World:
    def __init__(self, table: Table, params: SimParams | None = None) -> None:
        self.table = table
        self.params = params or SimParams()
        p = self.params
        man = table.man
        height = p.rod_height if p.rod_height is not None else man.rod_height
        clearance = p.foot_clearance if p.foot_clearance is not None else man.foot_clearance
        self.man = _ManShape(
            height=height,
            reach=height - clearance,
            half_thickness=(p.foot_thickness or man.foot_thickness) / 2,
            half_width=(p.foot_width or man.foot_width) / 2,
        )
        self.radius = table.ball.radius
        self.rods: tuple[Rod, ...] = table.rods
        self._rod_x = [rod.x for rod in self.rods]
        self._men_offsets = [
            [(i - (rod.men - 1) / 2) * rod.spacing for i in range(rod.men)] for rod in self.rods
        ]
        human_t, human_r = human_rod_limits()
        limits: list[AxisLimits] = []
        for rod in self.rods:
            if rod.team == "robot":
                limits += p.robot_limits(rod.metres_per_motor_radian())
            else:
                limits += [human_t, human_r]
        self.axes = AxisBank(limits)
        for i, rod in enumerate(self.rods):
            self.axes.set_travel(2 * i, rod.travel_min, rod.travel_max)
        self.time = 0.0
        self.ball = _Ball()
        self.score = _Score()
        self._poses = [_Pose() for _ in self.rods]
        self._before_p: list[float] = []  # every axis's position and velocity at the step's start
        self._before_v: list[float] = []
        self._posed = 0
        self._contacts: list[Contact] = []
        # x band around each rod where a man can touch the ball (leg + foot thickness + r)
        self._reach_x = self.man.reach + self.man.half_thickness + self.radius + 1e-3
        f = table.field
        self._half_l, self._half_w, self._half_goal = f.half_length, f.half_width, f.goal_width / 2
        self._intervals: dict[float, tuple[float, float] | None] = {}  # man_interval by angle

    # --- set-up and commands -------------------------------------------------------------

    def rod_index(self, name: str) -> int:
        for i, rod in enumerate(self.rods):
            if rod.name == name:
                return i
        raise KeyError(name)

    def set_rod_limits(self, index: int, translation: AxisLimits, rotation: AxisLimits) -> None:
        self.axes.set_limits(2 * index, translation)
        self.axes.set_limits(2 * index + 1, rotation)

    def place_ball(self, x: float, y: float, vx: float = 0.0, vy: float = 0.0) -> None:
        self.ball = _Ball(float(x), float(y), float(vx), float(vy), True)

    def remove_ball(self) -> None:
        self.ball = _Ball(self.ball.x, self.ball.y, 0.0, 0.0, False)

    def command_rod(
        self,
        index: int,
        translation: float | None = None,
        rotation: float | None = None,
        translation_speed: float = 0.0,
        rotation_speed: float = 0.0,
    ) -> None:
        """Setpoints in the table frame; speeds > 0 cap this move (0: the axis maximum)."""
        if translation is not None:
            self.axes.command(2 * index, translation, translation_speed)
        if rotation is not None:
            self.axes.command(2 * index + 1, rotation, rotation_speed)

    def drive_rod_externally(
        self,
        index: int,
        translation: float,
        rotation: float,
        translation_velocity: float = 0.0,
        rotation_velocity: float = 0.0,
    ) -> None:
        """The rod will be at this pose at the end of the next `step` (linear in between):
        for coupling emulated motor drives. `command_rod` hands it back to the setpoints."""
        self.axes.drive_externally(2 * index, translation, translation_velocity)
        self.axes.drive_externally(2 * index + 1, rotation, rotation_velocity)

    def set_rod_pose(self, index: int, translation: float, rotation: float) -> None:
        """Teleport a rod (test set-up); it then holds that pose."""
        self.axes.hold(2 * index, translation)
        self.axes.hold(2 * index + 1, rotation)

    def rod_pose(self, index: int) -> tuple[float, float, float, float]:
        """(translation, rotation, translation velocity, rotation velocity) now."""
        a = self.axes
        return (
            a.position[2 * index],
            a.position[2 * index + 1],
            a.velocity[2 * index],
            a.velocity[2 * index + 1],
        )

    def rod_poses(self, indices: list[int]) -> list[tuple[float, float, float, float]]:
        """`rod_pose` of each of these rods (the match asks for every rod every frame)."""
        position, velocity = self.axes.position, self.axes.velocity
        return [(position[2 * i], position[2 * i + 1], velocity[2 * i], velocity[2 * i + 1])
                for i in indices]

    def state(self) -> WorldState:
        b = self.ball
        pos = self.axes.position
        return WorldState(
            time_ns=round(self.time * 1e9),
            ball_x=b.x,
            ball_y=b.y,
            ball_vx=b.vx,
            ball_vy=b.vy,
            ball_in_play=b.in_play,
            translations=tuple(pos[0::2]),
            rotations=tuple(pos[1::2]),
            score_robot=self.score.robot,
            score_human=self.score.human,
        )

    # --- stepping --------------------------------------------------------------------------

    def step(self, dt: float) -> list[Contact]:
        """Advance the world by dt seconds; returns the contacts that happened."""
        self._contacts = []
        axes = self.axes
        self._before_p = list(axes.position)
        self._before_v = list(axes.velocity)
        axes.step(dt)
        self._posed = 0  # rods whose _Pose is this step's: filled when the ball comes near
        if self.ball.in_play:
            self._advance_ball(dt)
        self.time += dt
        return self._contacts

    def _pose(self, i: int) -> _Pose:
        """Rod i's pose at both ends of the current step."""
        q = self._poses[i]
        if not self._posed >> i & 1:
            before_p, before_v = self._before_p, self._before_v
            after_p, after_v = self.axes.position, self.axes.velocity
            q.t0, q.r0 = before_p[2 * i], before_p[2 * i + 1]
            q.vt0, q.vr0 = before_v[2 * i], before_v[2 * i + 1]
            q.t1, q.r1 = after_p[2 * i], after_p[2 * i + 1]
            q.vt1, q.vr1 = after_v[2 * i], after_v[2 * i + 1]
            self._posed |= 1 << i
        return q

    def _pose_at(self, i: int, s: float, dt: float) -> tuple[float, float, float, float]:
        """Rod i's (translation, rotation, v_t, v_r) at fraction s of the step (Hermite)."""
        q = self._pose(i)
        s2, s3 = s * s, s * s * s
        h00, h10, h01, h11 = 2 * s3 - 3 * s2 + 1, s3 - 2 * s2 + s, -2 * s3 + 3 * s2, s3 - s2
        d00, d10, d01, d11 = 6 * s2 - 6 * s, 3 * s2 - 4 * s + 1, -6 * s2 + 6 * s, 3 * s2 - 2 * s
        t = h00 * q.t0 + h10 * dt * q.vt0 + h01 * q.t1 + h11 * dt * q.vt1
        r = h00 * q.r0 + h10 * dt * q.vr0 + h01 * q.r1 + h11 * dt * q.vr1
        vt = (d00 * q.t0 + d01 * q.t1) / dt + d10 * q.vt0 + d11 * q.vt1
        vr = (d00 * q.r0 + d01 * q.r1) / dt + d10 * q.vr0 + d11 * q.vr1
        return t, r, vt, vr

    # --- ball flight ---------------------------------------------------------------------

    def _displacement(self, speed: float, tau: float) -> tuple[float, float]:
        """Distance rolled in tau seconds from `speed`, and the speed then."""
        a, k = self.params.rolling_decel, self.params.drag
        if speed <= 0.0:
            return 0.0, 0.0
        if k <= 1e-12:
            t_stop = speed / a if a > 0 else math.inf
            t = min(tau, t_stop)
            return speed * t - a * t * t / 2, max(0.0, speed - a * t)
        c = speed + a / k
        t_stop = math.log(c / (a / k)) / k if a > 0 else math.inf
        t = min(tau, t_stop)
        decay = math.exp(-k * t)
        distance = c * (1 - decay) / k - a * t / k
        return distance, max(0.0, c * decay - a / k)

    def _advance_ball(self, dt: float) -> None:
        t = 0.0
        for _ in range(_MAX_CONTACTS_PER_STEP):
            remaining = dt - t
            if remaining <= 1e-12:
                break
            b = self.ball
            speed = math.hypot(b.vx, b.vy)
            distance, speed_end = self._displacement(speed, remaining)
            # the path within the slice is a straight ray at the mean velocity
            if speed > 0.0:
                mean = distance / remaining / speed
                vx, vy = b.vx * mean, b.vy * mean
            else:
                vx = vy = 0.0
            hit = self._first_hit(t, remaining, dt, vx, vy)
            if hit is None:
                b.x += vx * remaining
                b.y += vy * remaining
                if speed > 0.0:
                    scale = speed_end / speed
                    b.vx *= scale
                    b.vy *= scale
                break
            tau = max(0.0, hit.time)
            b.x += vx * tau
            b.y += vy * tau
            if speed > 0.0:
                _, speed_hit = self._displacement(speed, tau)
                scale = speed_hit / speed
                b.vx *= scale
                b.vy *= scale
            t += tau
            self._respond(hit, t)
            if not self.ball.in_play:
                break
        self._keep_inside()

    def _keep_inside(self) -> None:
        """Numerical guard: the ball centre never leaves the grown field (outside the mouth)."""
        b = self.ball
        r = self.radius
        limit_y = self._half_w - r
        if b.y > limit_y:
            b.y, b.vy = limit_y, min(b.vy, 0.0)
        elif b.y < -limit_y:
            b.y, b.vy = -limit_y, max(b.vy, 0.0)
        limit_x = self._half_l - r
        if abs(b.y) > self._half_goal and abs(b.x) > limit_x:
            b.x = math.copysign(limit_x, b.x)
            b.vx = -abs(b.vx) if b.x > 0 else abs(b.vx)

    # --- ray casts -------------------------------------------------------------------------

    def _first_hit(
        self, t_start: float, span: float, dt: float, vx: float, vy: float
    ) -> _Hit | None:
        best = self._static_hit(vx, vy, span)
        horizon = best.time if best is not None else span
        if horizon <= 1e-12:
            return best
        b = self.ball
        x_end = b.x + vx * horizon
        lo_x, hi_x = min(b.x, x_end), max(b.x, x_end)
        reach = self._reach_x
        for i, rod_x in enumerate(self._rod_x):
            if rod_x + reach < lo_x or rod_x - reach > hi_x:
                continue
            hit = (self._rod_hit(i, t_start, horizon, dt, vx, vy) if _rod_hit_c is None
                   else self._rod_hit_compiled(i, t_start, horizon, dt, vx, vy))
            if hit is not None and (best is None or hit.time < best.time):
                best = hit
                horizon = hit.time
                if horizon <= 1e-12:
                    break
        return best

    def _static_hit(self, vx: float, vy: float, span: float) -> _Hit | None:
        b = self.ball
        r = self.radius
        best: _Hit | None = None

        def take(time: float, nx: float, ny: float, kind: str) -> None:
            nonlocal best
            if 0.0 <= time <= span and (best is None or time < best.time):
                best = _Hit(time, nx, ny, kind)

        wall_y = self._half_w - r
        if vy > _EPS:
            take((wall_y - b.y) / vy, 0.0, -1.0, "wall")
        elif vy < -_EPS:
            take((-wall_y - b.y) / vy, 0.0, 1.0, "wall")
        half_goal, half_l = self._half_goal, self._half_l
        end_x = half_l - r
        if abs(vx) > _EPS:
            side = 1.0 if vx > 0 else -1.0
            # end wall outside the mouth
            x_plane = side * end_x
            if side * (x_plane - b.x) >= -1e-12:
                tau = (x_plane - b.x) / vx
                y_at = b.y + vy * tau
                if abs(y_at) >= half_goal:
                    take(tau, -side, 0.0, "wall")
            # goal line: the ball is fully across
            x_goal = side * (half_l + r)
            tau = (x_goal - b.x) / vx
            y_at = b.y + vy * tau
            if abs(y_at) < half_goal - r + 1e-9:
                take(tau, 0.0, 0.0, "goal")
        # the mouth's side walls (beyond the end line), and the posts
        if abs(b.x) > half_l - r - 0.01 or abs(b.x + vx * span) > half_l - r:
            inner = half_goal - r
            for side_x in (1.0, -1.0):
                for side_y in (1.0, -1.0):
                    px, py = side_x * half_l, side_y * half_goal
                    time = _circle_entry(b.x - px, b.y - py, vx, vy, r)
                    if time is not None:
                        hx, hy = b.x + vx * time - px, b.y + vy * time - py
                        norm = math.hypot(hx, hy) or 1.0
                        take(time, hx / norm, hy / norm, "post")
                if side_x * b.x > half_l:
                    if vy > _EPS and b.y < inner:
                        take((inner - b.y) / vy, 0.0, -1.0, "post")
                    elif vy < -_EPS and b.y > -inner:
                        take((-inner - b.y) / vy, 0.0, 1.0, "post")
        return best

    def man_interval(self, rotation: float) -> tuple[float, float] | None:
        """x-interval (relative to the rod) where the ball centre touches a man's leg at this
        rod angle, or None when the feet are lifted clear of the ball."""
        known = self._intervals.get(rotation, _UNKNOWN)
        if known is _UNKNOWN:
            # a rod at rest asks for the same angle again and again
            if len(self._intervals) >= _INTERVALS_KEPT:
                self._intervals.clear()
            known = self._intervals[rotation] = self._man_interval(rotation)
        return known  # type: ignore[return-value]

    def _man_interval(self, rotation: float) -> tuple[float, float] | None:
        m = self.man
        r = self.radius
        rho = r + m.half_thickness
        s, c = math.sin(rotation), math.cos(rotation)
        dz = r - m.height  # ball centre height relative to the rod axis (< 0)
        lo, hi = -math.inf, math.inf
        # the leg's straight part: perpendicular distance <= rho and the foot point between
        # the axis and the tip; both conditions are linear in u = x_ball - x_rod
        if abs(c) > 1e-12:
            a1, a2 = (-rho - dz * s) / c, (rho - dz * s) / c
            lo, hi = max(lo, min(a1, a2)), min(hi, max(a1, a2))
        elif abs(dz * s) > rho:
            lo, hi = 1.0, -1.0
        if abs(s) > 1e-12:
            b1, b2 = (dz * c) / s, (m.reach + dz * c) / s
            lo, hi = max(lo, min(b1, b2)), min(hi, max(b1, b2))
        elif not 0.0 <= -dz * c <= m.reach:
            lo, hi = 1.0, -1.0
        # the rounded tip
        tip_dz = (m.height - m.reach * c) - r
        if abs(tip_dz) <= rho:
            half = math.sqrt(rho * rho - tip_dz * tip_dz)
            tip_x = m.reach * s
            if lo > hi:
                lo, hi = tip_x - half, tip_x + half
            else:
                lo, hi = min(lo, tip_x - half), max(hi, tip_x + half)
        if lo > hi:
            return None
        return lo, hi

    def _rod_hit_compiled(
        self, i: int, t_start: float, horizon: float, dt: float, vx: float, vy: float
    ) -> _Hit | None:
        """`_rod_hit` in C (`_loops.rod_hit`): the same arithmetic, the same hit."""
        q = self._pose(i)
        m = self.man
        b = self.ball
        found = _rod_hit_c(q.t0, q.r0, q.vt0, q.vr0, q.t1, q.r1, q.vt1, q.vr1,  # type: ignore[misc]
                           self._rod_x[i], self._men_offsets[i], b.x, b.y, t_start, horizon,
                           dt, vx, vy, m.height, m.reach, m.half_width, self.radius,
                           self._intervals, self.man_interval)
        if found is None:
            return None
        time, nx, ny, man, surface_vx, surface_vy, face_speed, depth = found
        return _Hit(time, nx, ny, "man", i, man, surface_vx, surface_vy, face_speed, depth)

    def _rod_hit(
        self, i: int, t_start: float, horizon: float, dt: float, vx: float, vy: float
    ) -> _Hit | None:
        """Earliest contact of the ball ray with rod i's men within [0, horizon] of the slice
        that starts at t_start (step time); None if none."""
        q = self._pose(i)
        rod_x = self._rod_x[i]
        m = self.man
        r = self.radius
        b = self.ball
        s_a = t_start / dt
        s_b = (t_start + horizon) / dt
        turn = abs(q.r1 - q.r0) + (abs(q.vr0) + abs(q.vr1)) * dt * 0.25
        pieces = max(1, math.ceil(turn * (s_b - s_a) / MAX_SLICE_ANGLE))
        tr_a, rot_a, vtr_a, vrot_a = self._pose_at(i, s_a, dt)
        known = self._intervals  # man_interval's memo, read here first (twice a piece)
        interval_a = known.get(rot_a, _UNKNOWN)
        if interval_a is _UNKNOWN:
            interval_a = self.man_interval(rot_a)
        half_y = m.half_width + r
        piece = horizon / pieces
        offsets = self._men_offsets[i]
        for k in range(pieces):
            tau_a = k * piece
            tau_b = tau_a + piece
            tr_b, rot_b, vtr_b, vrot_b = self._pose_at(i, (t_start + tau_b) / dt, dt)
            interval_b = known.get(rot_b, _UNKNOWN)
            if interval_b is _UNKNOWN:
                interval_b = self.man_interval(rot_b)
            if interval_a is not None or interval_b is not None:
                if interval_a is None:
                    tip = self.man.reach * math.sin(rot_a)
                    interval_a = (tip, tip)
                if interval_b is None:
                    tip = self.man.reach * math.sin(rot_b)
                    interval_b = (tip, tip)
                bx, by = b.x + vx * tau_a, b.y + vy * tau_a
                best: _Hit | None = None
                for j, offset in enumerate(offsets):
                    ya, yb = tr_a + offset, tr_b + offset
                    if abs(by - ya) > half_y + abs(vy - (yb - ya) / piece) * piece + 1e-3:
                        continue
                    hit = _box_hit(
                        bx,
                        by,
                        vx,
                        vy,
                        piece,
                        (rod_x + interval_a[0], rod_x + interval_a[1], ya - half_y, ya + half_y),
                        (rod_x + interval_b[0], rod_x + interval_b[1], yb - half_y, yb + half_y),
                        r,
                    )
                    if hit is not None and (best is None or hit.time < best.time):
                        hit.man = j
                        best = hit
                if best is not None:
                    f = best.time / piece
                    rot_velocity = vrot_a + (vrot_b - vrot_a) * f
                    rot_hit = rot_a + (rot_b - rot_a) * f
                    tip_z = m.height - m.reach * math.cos(rot_hit)
                    lever = m.height - max(r, tip_z)
                    best.surface_vx = rot_velocity * lever
                    best.surface_vy = vtr_a + (vtr_b - vtr_a) * f
                    best.time += tau_a
                    best.kind = "man"
                    best.rod = i
                    return best
            tr_a, rot_a, vtr_a, vrot_a, interval_a = tr_b, rot_b, vtr_b, vrot_b, interval_b
        return None

    # --- responses -------------------------------------------------------------------------

    def _respond(self, hit: _Hit, t: float) -> None:
        b = self.ball
        speed_before = math.hypot(b.vx, b.vy)
        vx_before, vy_before = b.vx, b.vy
        time_ns = round((self.time + t) * 1e9)
        if hit.kind == "goal":
            scorer = "robot" if b.x > 0 else "human"
            if scorer == "robot":
                self.score.robot += 1
            else:
                self.score.human += 1
            self.score.history.append((time_ns, scorer))
            self._contacts.append(Contact(time_ns, "goal", team=scorer, speed_before=speed_before))
            self.remove_ball()
            return
        p = self.params
        if hit.kind == "wall":
            e, mu = p.wall_restitution, p.wall_friction
        elif hit.kind == "post":
            e, mu = p.post_restitution, p.wall_friction
        else:
            e, mu = p.man_restitution, p.man_friction
        nx, ny = hit.normal_x, hit.normal_y
        rel_x, rel_y = b.vx - hit.surface_vx, b.vy - hit.surface_vy
        vn = rel_x * nx + rel_y * ny
        if vn < 0.0:
            tx, ty = rel_x - vn * nx, rel_y - vn * ny
            vt = math.hypot(tx, ty)
            new_vn = -e * vn
            if vt > 1e-12:
                shrink = max(0.0, vt - mu * (1 + e) * (-vn)) / vt
                tx, ty = tx * shrink, ty * shrink
            rel_x, rel_y = tx + new_vn * nx, ty + new_vn * ny
            b.vx, b.vy = rel_x + hit.surface_vx, rel_y + hit.surface_vy
        # a face that sweeps faster than the material (a turning leg's cut) must not swallow
        # the ball: leave at least at the face's speed
        along = b.vx * nx + b.vy * ny
        if along < hit.face_speed + 1e-4:
            lift = hit.face_speed + 1e-4 - along
            b.vx += lift * nx
            b.vy += lift * ny
        b.x += nx * (hit.depth + 1e-7)
        b.y += ny * (hit.depth + 1e-7)
        if abs(b.vx - vx_before) + abs(b.vy - vy_before) < 1e-6:
            return  # already separating: a graze, not a contact
        if hit.kind == "man":
            team = self.rods[hit.rod].team
            self._contacts.append(
                Contact(
                    time_ns,
                    "man",
                    rod=hit.rod,
                    man=hit.man,
                    team=team,
                    speed_before=speed_before,
                    speed_after=math.hypot(b.vx, b.vy),
                    vx_after=b.vx,
                    vy_after=b.vy,
                )
            )
        else:
            self._contacts.append(
                Contact(
                    time_ns,
                    hit.kind,
                    speed_before=speed_before,
                    speed_after=math.hypot(b.vx, b.vy),
                    vx_after=b.vx,
                    vy_after=b.vy,
                )
            )


# --- primitive ray casts -------------------------------------------------------------------


def _circle_entry(dx: float, dy: float, wx: float, wy: float, radius: float) -> float | None:
    """First time >= 0 a point at (dx, dy) moving at (wx, wy) enters a circle of `radius`
    at the origin; 0 if it starts inside and moves inwards; None if never."""
    c = dx * dx + dy * dy - radius * radius
    b = dx * wx + dy * wy
    if c <= 0.0:
        return 0.0 if b < 0.0 else None
    if b >= 0.0:
        return None
    a = wx * wx + wy * wy
    disc = b * b - a * c
    if disc < 0.0 or a <= 0.0:
        return None
    return (-b - math.sqrt(disc)) / a


def _box_hit(
    px: float,
    py: float,
    vx: float,
    vy: float,
    span: float,
    box_a: tuple[float, float, float, float],
    box_b: tuple[float, float, float, float],
    radius: float,
) -> _Hit | None:
    """First contact within [0, span] of a point (px, py) moving at (vx, vy) with a rounded
    box whose bounds (x_lo, x_hi, y_lo, y_hi) move linearly from box_a to box_b.

    The bounds already include the ball's radius; corners are rounded with that radius.
    A point that starts inside is pushed out through the nearest face at time 0."""
    xl0, xh0, yl0, yh0 = box_a
    xl1, xh1, yl1, yh1 = box_b
    inv = 1.0 / span
    dxl, dxh, dyl, dyh = (xl1 - xl0) * inv, (xh1 - xh0) * inv, (yl1 - yl0) * inv, (yh1 - yh0) * inv
    # corners are rounded by the ball's radius; for a leg thinner than the ball the two
    # corner circles of a side meet in the middle
    rho = max(0.0, min(radius, (yh0 - yl0) / 2, (yh1 - yl1) / 2))
    mid0 = (xl0 + xh0) / 2
    cxl0, cxh0 = min(xl0 + rho, mid0), max(xh0 - rho, mid0)
    # inside at the start: leave by the shortest way
    if xl0 < px < xh0 and yl0 + rho < py < yh0 - rho:
        if px - xl0 < xh0 - px:
            return _Hit(0.0, -1.0, 0.0, "man", face_speed=max(0.0, -dxl), depth=px - xl0)
        return _Hit(0.0, 1.0, 0.0, "man", face_speed=max(0.0, dxh), depth=xh0 - px)
    qx = min(max(px, cxl0), cxh0)
    qy = min(max(py, yl0 + rho), yh0 - rho)
    ex, ey = px - qx, py - qy
    gap = math.hypot(ex, ey)
    if gap < rho:
        if gap < 1e-12:
            ex, ey, gap = (0.0, 1.0, 1.0) if py >= (yl0 + yh0) / 2 else (0.0, -1.0, 1.0)
        nx, ny = ex / gap, ey / gap
        speed = max(0.0, (dxl if nx < 0 else dxh) * nx + (dyl if ny < 0 else dyh) * ny)
        return _Hit(0.0, nx, ny, "man", face_speed=speed, depth=rho - gap)
    best: _Hit | None = None

    def consider(time: float, nx: float, ny: float, face_speed: float) -> None:
        nonlocal best
        if 0.0 <= time <= span and (best is None or time < best.time):
            best = _Hit(time, nx, ny, "man", face_speed=face_speed)

    # x faces (valid along the straight part of the y extent)
    for x0, dx, normal in ((xl0, dxl, -1.0), (xh0, dxh, 1.0)):
        rel = vx - dx
        gap = px - x0
        if gap * normal >= 0.0 and rel * normal < 0.0:
            time = -gap / rel
            y = py + vy * time
            if yl0 + dyl * time + rho <= y <= yh0 + dyh * time - rho:
                consider(time, normal, 0.0, max(0.0, dx * normal))
    for y0, dy, normal in ((yl0, dyl, -1.0), (yh0, dyh, 1.0)):
        rel = vy - dy
        gap = py - y0
        if gap * normal >= 0.0 and rel * normal < 0.0:
            time = -gap / rel
            x = px + vx * time
            if xl0 + dxl * time + rho <= x <= xh0 + dxh * time - rho:
                consider(time, 0.0, normal, max(0.0, dy * normal))
    if rho > 0.0:
        mid1 = (xl1 + xh1) / 2
        cxl1, cxh1 = min(xl1 + rho, mid1), max(xh1 - rho, mid1)
        for cx0, cdx, sx in ((cxl0, (cxl1 - cxl0) * inv, -1.0), (cxh0, (cxh1 - cxh0) * inv, 1.0)):
            for cy0, cdy, sy in ((yl0 + rho, dyl, -1.0), (yh0 - rho, dyh, 1.0)):
                time = _circle_entry(px - cx0, py - cy0, vx - cdx, vy - cdy, rho)
                if time is None or (best is not None and time >= best.time):
                    continue
                hx = px + vx * time - (cx0 + cdx * time)
                hy = py + vy * time - (cy0 + cdy * time)
                if hx * sx < 0.0 or hy * sy < 0.0:
                    continue  # not in this corner's quadrant: a face handles it
                norm = math.hypot(hx, hy) or 1.0
                nx, ny = hx / norm, hy / norm
                consider(time, nx, ny, max(0.0, cdx * nx + cdy * ny))
    return best
