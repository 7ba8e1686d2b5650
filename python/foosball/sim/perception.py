"""What the rig's tracker would report, made from the simulated world's ground truth.

Per camera frame: the ball's visible fraction from above (the men and rods hide it; a
geometric top view, the renderer measures the same from pixels), then a BallState as the
ball tracker would send it: DETECTED when enough of the ball shows (noisy positions through
the ball tracker's own filter and decisions, `foosball.vision.track`), else PREDICTED (the
filter's prediction) and LOST after `lost_after`. The scripted human opponents see through
`HumanSight` instead (the earlier alpha-beta model, unchanged: their levels were set with it).
Times: `capture_time` is the frame's exposure middle; the runner delivers the state
`exposure / 2 + tracker_latency` later.

`mirror_*` turn table-frame values into the human side's own frame (and back): rotation by
180 deg about the vertical axis.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from foosball.geometry import Rod, Table
from foosball.recording.format import WorldState
from foosball.sim.params import SimParams
from foosball.vision.config import FilterConfig
from foosball.vision.kalman import Walls
from foosball.vision.track import REJECTED, BallTrack
from foosball.wire.catalogue import (
    BallState,
    BallStatus,
    HumanRod,
    HumanRods,
    RodId,
    RodPosition,
    RodStatus,
    RodTarget,
)

# man body seen from above: a profile in the rod's x-z plane (rod axis at the origin):
# torso/head from 0.052 above the axis to the foot tip, 24 mm thick; 34 mm wide along y
MAN_HALF_THICKNESS = 0.012
MAN_TOP = 0.052
MAN_HALF_WIDTH = 0.017
ROD_RADIUS = 0.008
ROD_IDS = tuple(RodId)


def man_x_extent(rotation: float, reach: float) -> tuple[float, float]:
    """x-range (relative to the rod) a man covers seen from straight above."""
    c, s = math.cos(rotation), math.sin(rotation)
    xs = [
        x * c - z * s for x in (-MAN_HALF_THICKNESS, MAN_HALF_THICKNESS) for z in (-reach, MAN_TOP)
    ]
    return min(xs), max(xs)


def _disc_samples(count_rings: int = 4) -> np.ndarray:
    """Points spread evenly over the unit disc (equal-area rings)."""
    points = [(0.0, 0.0)]
    for ring in range(1, count_rings + 1):
        radius = ring / count_rings
        n = 6 * ring
        for k in range(n):
            angle = 2 * math.pi * (k + 0.5 * (ring % 2)) / n
            points.append((radius * math.cos(angle), radius * math.sin(angle)))
    return np.array(points)


_DISC = _disc_samples()


class _TopView:
    """What `visible_fraction` works out from the table alone (once per table, not frame)."""

    def __init__(self, table: Table, reach: float, camera_height: float) -> None:
        self.table, self.key = table, (reach, camera_height)
        r = table.ball.radius
        man = table.man
        # scale from a height z to the ball's centre plane, as the camera sees it
        self.rod_scale = (camera_height - r) / (camera_height - man.rod_height)
        self.man_scale = (camera_height - r) / (camera_height - (man.rod_height - 0.02))
        self.near = r + (reach + MAN_HALF_THICKNESS) * self.man_scale  # a man may hide it
        self.rods = [(i, rod, rod.x * self.man_scale) for i, rod in enumerate(table.rods)]
        # each man's y relative to the rod's translation (as `Rod.men_y` adds them)
        self.offsets = [rod.men_y(0.0) for rod in table.rods]
        self._extents: list[dict[float, tuple[float, float]]] = [{} for _ in table.rods]
        self.reach = reach

    def extent(self, i: int, rotation: float) -> tuple[float, float]:
        """x-range rod i's men cover as the camera sees them at the ball's centre plane, by
        angle (a rod at rest shows the same one frame after frame)."""
        known = self._extents[i].get(rotation)
        if known is None:
            if len(self._extents[i]) >= 4096:
                self._extents[i].clear()
            lo, hi = man_x_extent(rotation, self.reach)
            x, scale = self.table.rods[i].x, self.man_scale
            known = self._extents[i][rotation] = ((x + lo) * scale, (x + hi) * scale)
        return known


_TOP_VIEWS: dict[int, _TopView] = {}


def _top_view(table: Table, reach: float, camera_height: float) -> _TopView:
    view = _TOP_VIEWS.get(id(table))
    if view is None or view.table is not table or view.key != (reach, camera_height):
        view = _TOP_VIEWS[id(table)] = _TopView(table, reach, camera_height)
    return view


def visible_fraction(
    table: Table, state: WorldState, reach: float | None = None, camera_height: float = 1.05
) -> float:
    """Fraction of the ball's top view not hidden by rods and men, seen from a camera
    `camera_height` above the field centre (parallax: what is higher looks further out)."""
    if not state.ball_in_play:
        return 0.0
    r = table.ball.radius
    reach = reach if reach is not None else table.man.foot_reach
    view = _top_view(table, reach, camera_height)
    rod_scale, man_scale = view.rod_scale, view.man_scale
    bx, by = state.ball_x, state.ball_y
    # the disc is sampled only once something overlaps it (most frames nothing does)
    hidden: np.ndarray | None = None
    xs = ys = _DISC[:, 0]
    near = view.near
    for i, rod, man_x in view.rods:
        if abs(bx - man_x) > near:
            continue
        rod_x = rod.x * rod_scale
        if abs(bx - rod_x) < r + ROD_RADIUS * rod_scale:
            if hidden is None:
                hidden, xs, ys = _disc_at(bx, by, r)
            hidden |= np.abs(xs - rod_x) < ROD_RADIUS * rod_scale
        lo, hi = view.extent(i, state.rotations[i])
        if not lo - r < bx < hi + r:
            continue
        half_width = MAN_HALF_WIDTH * man_scale
        translation = state.translations[i]
        for offset in view.offsets[i]:
            y_seen = (translation + offset) * man_scale
            if abs(by - y_seen) < r + half_width:
                if hidden is None:
                    hidden, xs, ys = _disc_at(bx, by, r)
                hidden |= (xs > lo) & (xs < hi) & (np.abs(ys - y_seen) < half_width)
    # the share of hidden samples as np.mean would give it (an integer count over 61),
    # without its per-call overhead
    return 1.0 if hidden is None else 1.0 - int(np.count_nonzero(hidden)) / len(hidden)


def _disc_at(x: float, y: float, r: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nothing hidden yet, and the sample points of a ball of radius r at (x, y)."""
    return np.zeros(len(_DISC), dtype=bool), x + _DISC[:, 0] * r, y + _DISC[:, 1] * r


class TrackerModel:
    """Turns ground truth into the BallStates the tracker would send, frame by frame.

    Like the rig's tracker it measures only positions (ground truth plus Gaussian noise of
    `position_noise`), and it decides about them with the rig's own code
    (`foosball.vision.track.BallTrack`: the Kalman filter, its gate, restarts, candidates and
    manoeuvre detection), configured with the product's filter settings but for the
    measurement noise, which it takes as `position_noise` (a rig's settings are made for its
    camera). So the reported velocity is noisy and lags a kick or a bounce exactly as the
    board's would. A ball not detected is predicted (PREDICTED) until the track gives up
    (LOST, after `lost_after`); a ball taken off the table is LOST after 20 ms."""

    def __init__(self, table: Table, params: SimParams, rng: np.random.Generator,
                 filter_cfg: FilterConfig | None = None) -> None:
        self.table = table
        self.params = params
        self.rng = rng
        self.frame = 0
        f = table.field
        walls = Walls.of_table(f.half_length, f.half_width, f.goal_width, table.ball.radius)
        base = filter_cfg or FilterConfig()
        self.filter_cfg = replace(base, measurement_sigma=params.position_noise,
                                  partial_measurement_sigma=params.position_noise,
                                  max_prediction_s=params.lost_after)
        self.track = BallTrack(self.filter_cfg, walls)
        self._sigma = params.position_noise

    def observe(self, state: WorldState, fraction: float) -> BallState:
        p = self.params
        self.frame += 1
        t = state.time_ns
        track = self.track
        if track.tracking:
            track.filter.predict(t)
        if state.ball_in_play and fraction >= p.detect_fraction:
            noise = self.rng.normal(0.0, p.position_noise, 2).tolist()
            zx, zy = state.ball_x + noise[0], state.ball_y + noise[1]
            if not track.tracking:
                track.acquire(zx, zy, self._sigma, t)
                return self._state(t, BallStatus.DETECTED)
            if track.measure(zx, zy, self._sigma, t) != REJECTED:
                return self._state(t, BallStatus.DETECTED)
        if not track.tracking:
            return _lost(t, self.frame)
        if not state.ball_in_play and (t - track.last_detection_ns) * 1e-9 > 0.02:
            track.stop()  # taken off the table (a goal): nothing left to predict
            return _lost(t, self.frame)
        if track.lost_by(t):
            return _lost(t, self.frame)
        return self._state(t, BallStatus.PREDICTED)

    def _state(self, t: int, status: BallStatus) -> BallState:
        x, y = self.track.filter.x, self.track.filter.y
        return BallState(
            capture_time=t,
            frame=self.frame,
            x=_clip(x.p),
            y=_clip(y.p),
            vx=_clip50(x.v),
            vy=_clip50(y.v),
            covariance=(x.a, y.a, x.c, y.c),
            status=status,
        )


class HumanSight:
    """What the scripted human opponents see, frame by frame: the simulator's earlier model
    of the tracker, kept as it was so that the opponents play as they were made to (their
    levels were set seeing through it); the robot sees through `TrackerModel`.

    Positions (ground truth plus Gaussian noise of `position_noise`) through a
    constant-velocity alpha-beta filter (gains `tracker_alpha`, `tracker_beta`): the reported
    velocity is noisy and lags a kick or a bounce by a few frames. After a loss the filter
    starts again from the next two detections."""

    def __init__(self, table: Table, params: SimParams, rng: np.random.Generator) -> None:
        self.table = table
        self.params = params
        self.rng = rng
        self.frame = 0
        self._last: BallState | None = None
        self._last_seen_ns = -(10**18)
        self._estimate: list[float] | None = None  # x, y, vx, vy at _last_seen_ns
        self._velocity_known = False
        a, b = params.tracker_alpha, params.tracker_beta
        sigma2 = params.position_noise**2
        period = params.frame_period
        # steady-state variances of an alpha-beta filter under white position noise
        denominator = a * (4 - 2 * a - b)
        self._var_position = sigma2 * (2 * a * a + 2 * b - 3 * a * b) / denominator
        self._var_velocity = sigma2 / period**2 * 2 * b * b / denominator

    def observe(self, state: WorldState, fraction: float) -> BallState:
        p = self.params
        self.frame += 1
        t = state.time_ns
        age = (t - self._last_seen_ns) * 1e-9
        if state.ball_in_play and fraction >= p.detect_fraction:
            noise = self.rng.normal(0.0, p.position_noise, 2).tolist()
            zx, zy = state.ball_x + noise[0], state.ball_y + noise[1]
            estimate = self._estimate
            if estimate is None or age > p.lost_after:
                estimate = [zx, zy, 0.0, 0.0]
                self._velocity_known = False
            elif not self._velocity_known:
                estimate = [zx, zy, (zx - estimate[0]) / age, (zy - estimate[1]) / age]
                self._velocity_known = True
            else:
                px, py = estimate[0] + estimate[2] * age, estimate[1] + estimate[3] * age
                rx, ry = zx - px, zy - py
                gain_v = p.tracker_beta / age
                estimate = [
                    px + p.tracker_alpha * rx,
                    py + p.tracker_alpha * ry,
                    estimate[2] + gain_v * rx,
                    estimate[3] + gain_v * ry,
                ]
            self._estimate = estimate
            self._last_seen_ns = t
            var_v = self._var_velocity if self._velocity_known else 25.0
            ball = BallState(
                capture_time=t,
                frame=self.frame,
                x=_clip(estimate[0]),
                y=_clip(estimate[1]),
                vx=_clip50(estimate[2]),
                vy=_clip50(estimate[3]),
                covariance=(self._var_position, self._var_position, var_v, var_v),
                status=BallStatus.DETECTED,
            )
            self._last = ball
            return ball
        last = self._last
        if last is None or age > p.lost_after or (not state.ball_in_play and age > 0.02):
            self._estimate = None
            return _lost(t, self.frame)
        grow = last.covariance[2] * age * age + (0.5 * age) ** 2
        return BallState(
            capture_time=t,
            frame=self.frame,
            x=_clip(last.x + last.vx * age),
            y=_clip(last.y + last.vy * age),
            vx=last.vx,
            vy=last.vy,
            covariance=(
                last.covariance[0] + grow,
                last.covariance[1] + grow,
                last.covariance[2] + 0.25 * age,
                last.covariance[3] + 0.25 * age,
            ),
            status=BallStatus.PREDICTED,
        )


def _lost(t: int, frame: int) -> BallState:
    """A LOST BallState: no position, covariance too large to use."""
    return BallState(t, frame, 0.0, 0.0, 0.0, 0.0, (1e6, 1e6, 1e6, 1e6), BallStatus.LOST)


def _clip(value: float) -> float:
    """max(-2.0, min(2.0, value)), written out (the same picks, also of a zero's sign)."""
    value = value if value < 2.0 else 2.0
    return value if value > -2.0 else -2.0


def _clip50(value: float) -> float:
    """max(-50.0, min(50.0, value)), written out (the same picks)."""
    value = value if value < 50.0 else 50.0
    return value if value > -50.0 else -50.0


# --- the human's rods, as the ball tracker's rod meter measures them ----------------------

HUMAN_RODS_EVERY = 4  # frames between two HumanRods (the tracker's `rods.every_frames`)
ROD_TRANSLATION_NOISE = 0.0015  # m, 1 sigma: the meter's translation error (p95 < 3 mm)
ROD_ROTATION_NOISE = 0.1  # rad, 1 sigma: the shape's rotation is coarse
ROTATION_SEEN_MIN = math.radians(20.0)  # below this the men's shape shows no rotation


def human_rods(rods: list[Rod], poses: list[tuple[float, float, float, float]],
               capture_time: int, frame: int, rng: np.random.Generator) -> HumanRods:
    """HumanRods for one frame, from the human's rod poses (table frame, role order): the
    translation with the meter's noise; the rotation where the men's shape shows it
    (|rotation| >= 20 deg: then with noise), else 0 and not seen; every man seen. Table
    frame, as the tracker reports them (positive rotation: feet towards the human's goal)."""
    noise = rng.normal(0.0, 1.0, 2 * len(poses)).tolist()
    measured_rods = []
    for i, (rod, (translation, rotation, _, _)) in enumerate(zip(rods, poses, strict=True)):
        turned = math.remainder(rotation, 2 * math.pi)
        seen = abs(turned) >= ROTATION_SEEN_MIN
        measured = turned + ROD_ROTATION_NOISE * noise[2 * i + 1] if seen else 0.0
        measured_rods.append(HumanRod(
            rod=ROD_IDS[i],
            translation=max(-1.0, min(1.0, translation + ROD_TRANSLATION_NOISE * noise[2 * i])),
            rotation=max(-math.pi, min(math.pi, measured)),
            men_seen=min(5, rod.men),
            rotation_seen=seen,
        ))
    return HumanRods(capture_time=capture_time, frame=frame, rods=tuple(measured_rods))


# --- mirroring for the human side ----------------------------------------------------------


def mirror_ball(ball: BallState) -> BallState:
    return BallState(
        capture_time=ball.capture_time,
        frame=ball.frame,
        x=-ball.x,
        y=-ball.y,
        vx=-ball.vx,
        vy=-ball.vy,
        covariance=ball.covariance,
        status=ball.status,
    )


def rod_status(
    poses: list[tuple[float, float, float, float]],
    team: str,
    before: tuple[list[tuple[float, float, float, float]], RodStatus] | None = None,
) -> RodStatus:
    """RodStatus of one team's rods (role order) in that team's own frame; poses are
    (translation, rotation, v_t, v_r) in the table frame. `before`: earlier poses and the
    status made of them, whose RodPosition is taken again for each rod whose pose is the
    same (the messages are immutable; most frames only some rods move)."""
    sign = 1.0 if team == "robot" else -1.0
    ids = ROD_IDS
    if before is None:
        # positional arguments and a list: built twice a frame, worth the terseness
        return RodStatus(tuple([
            RodPosition(ids[i], sign * t, sign * r, sign * vt, sign * vr)
            for i, (t, r, vt, vr) in enumerate(poses)
        ]))
    old_poses, old = before
    return RodStatus(tuple([
        old.rods[i] if pose == old_poses[i] else RodPosition(
            ids[i], sign * pose[0], sign * pose[1], sign * pose[2], sign * pose[3])
        for i, pose in enumerate(poses)
    ]))


def unmirror_target(target: RodTarget, team: str) -> tuple[float, float]:
    """A team's target (its own frame) as table-frame (translation, rotation)."""
    sign = 1.0 if team == "robot" else -1.0
    return sign * target.translation, sign * target.rotation
