"""Measurements in, ball track out: the tracker's decisions about each ball centre it measures.

`BallTrack` holds the Kalman filter (`kalman.BallFilter`) and decides, per measured ball
centre (table frame), whether it updates the track, restarts it (a collision the model did
not foresee), starts a candidate elsewhere (a ball put down somewhere else) or is rejected.
The ball tracker (`tracker.BallTracker`) runs it on the detector's measurements; the
simulator's tracker model (`foosball.sim.perception.TrackerModel`) runs the same code on
its noisy ground truth, so what the simulated strategy sees is what the board would send.

Manoeuvre detection (a struck ball): a measurement beyond `FilterConfig.gate` restarts the
track; a smaller kick shows as innovations that keep pointing the same way. When the last
`manoeuvre_frames` normalised innovations of an axis all exceed `manoeuvre_sigmas` with the
same sign, the velocity of that axis is re-initialised from the measurements since the first
of them (a least-squares line), so the estimate follows the kick within one or two frames
instead of the filter's settling time. A ball that rolls steadily almost never trips it.
"""

from __future__ import annotations

import math

from foosball.vision.config import FilterConfig
from foosball.vision.kalman import Axis, BallFilter, Walls

RESTARTED = 2  # `measure` outcomes: the track was restarted on this measurement
UPDATED = 1  # the measurement updated the track
REJECTED = 0  # not our ball (yet): the track goes on predicting


class _Surprise:
    """One axis's recent normalised innovations and measurements (for manoeuvre detection)."""

    __slots__ = ("run", "samples")

    def __init__(self) -> None:
        self.run = 0  # consecutive innovations beyond the threshold with one sign (signed)
        self.samples: list[tuple[float, float]] = []  # (time s, measured position) of the run

    def clear(self) -> None:
        self.run = 0
        self.samples.clear()


class BallTrack:
    """The track of one ball: Kalman filter, gate, restarts and candidates (see module)."""

    def __init__(self, cfg: FilterConfig, walls: Walls) -> None:
        self.cfg = cfg.validate()
        self.walls = walls
        self.filter = BallFilter(cfg, walls)
        self.tracking = False
        self.fresh = False  # the track has one sighting since it (re)started
        self.candidate: tuple[float, float, int] | None = None  # x, y, time_ns
        self.last_detection_ns = 0
        self.last_xy = (0.0, 0.0)
        self.manoeuvres = 0  # velocity re-initialisations so far (diagnostics)
        self._surprise = (_Surprise(), _Surprise())

    # --- the decisions ----------------------------------------------------------------------

    def acquire(self, zx: float, zy: float, sigma: float, now: int) -> None:
        """A ball found without a track: start one at once; its velocity comes with the
        second sighting."""
        self.filter.start(zx, zy, 0.0, 0.0, now, sigma, self.cfg.restart_velocity_sigma)
        self.fresh = True
        self.tracking = True
        self.candidate = None
        self._clear_surprise()
        self.last_detection_ns = now
        self.last_xy = (zx, zy)

    def measure(self, zx: float, zy: float, sigma: float, now: int) -> int:
        """A ball centre measured at `now` (the filter already predicted to it): UPDATED,
        RESTARTED or REJECTED."""
        cfg, flt = self.cfg, self.filter
        outcome = REJECTED
        if self.fresh and self._reachable(zx, zy, now):
            # Second sighting of a (re)started track: with the velocity variance that
            # large the update is the two-point velocity; no gate can judge it yet.
            flt.update(zx, zy, sigma)
            self.fresh = False
            outcome = UPDATED
        elif flt.normalised_innovation(zx, zy, sigma) <= cfg.gate:
            self._manoeuvre(zx, zy, sigma, now)
            flt.update(zx, zy, sigma)
            outcome = UPDATED
        elif self._reachable(zx, zy, now):
            # A collision the model did not foresee (a man, a post): the position is
            # trusted, the velocity is not known any more (but it changed at least by the
            # innovation over the time since the last sighting: `restart_keeps_kick`).
            vx = vy = 0.0
            elapsed = (now - self.last_detection_ns) * 1e-9
            if cfg.restart_keeps_kick and elapsed > 0.0:
                top = cfg.max_speed
                vx = max(-top, min(top, flt.x.v + (zx - flt.x.p) / elapsed))
                vy = max(-top, min(top, flt.y.v + (zy - flt.y.p) / elapsed))
            flt.start(zx, zy, vx, vy, now, sigma, cfg.restart_velocity_sigma)
            self.fresh = True
            self._clear_surprise()
            outcome = RESTARTED
        elif self._confirms_candidate(zx, zy, now):
            # Twice in a row a ball where ours cannot be, consistent with itself: the
            # ball was put down elsewhere (or our track was wrong). Follow the new one.
            cx, cy, then = self.candidate  # type: ignore[misc]
            dt = (now - then) * 1e-9
            flt.start(zx, zy, (zx - cx) / dt, (zy - cy) / dt, now, sigma,
                      math.sqrt(2.0) * sigma / dt)
            self.candidate = None
            self.fresh = False
            self._clear_surprise()
            outcome = RESTARTED
        else:
            self.candidate = (zx, zy, now)
            return REJECTED  # a ball-coloured thing too far away: not our ball (yet)
        self.last_detection_ns = now
        self.last_xy = (flt.x.p, flt.y.p)
        return outcome

    def lost_by(self, now: int) -> bool:
        """No measurement at `now`: True if the track is not worth publishing any more
        (then it stops; re-acquisition searches the whole frame)."""
        cfg, flt = self.cfg, self.filter
        too_long = (now - self.last_detection_ns) * 1e-9 > cfg.max_prediction_s
        off_field = abs(flt.x.p) > self.walls.x_limit + 0.05
        if too_long or off_field or flt.position_sigma > cfg.max_position_sigma:
            self.stop()
            return True
        return False

    def stop(self) -> None:
        self.tracking = False
        self.candidate = None
        self._clear_surprise()

    # --- manoeuvre detection ----------------------------------------------------------------

    def _manoeuvre(self, zx: float, zy: float, sigma: float, now: int) -> None:
        """Before a gated update: re-initialise an axis's velocity when its innovations have
        pointed the same way, beyond `manoeuvre_sigmas`, for `manoeuvre_frames` frames."""
        cfg = self.cfg
        frames = cfg.manoeuvre_frames
        if frames <= 0:
            return
        r = sigma * sigma
        t = now * 1e-9
        flt = self.filter
        for axis, z, surprise in ((flt.x, zx, self._surprise[0]),
                                  (flt.y, zy, self._surprise[1])):
            nu = (z - axis.p) / math.sqrt(axis.a + r)
            if abs(nu) < cfg.manoeuvre_sigmas:
                surprise.clear()
                continue
            sign = 1 if nu > 0 else -1
            if surprise.run * sign <= 0:
                surprise.clear()
            surprise.run += sign
            surprise.samples.append((t, z))
            if abs(surprise.run) >= frames:
                self._restart_velocity(axis, surprise, r)
                surprise.clear()
                self.manoeuvres += 1

    def _restart_velocity(self, axis: Axis, surprise: _Surprise, r: float) -> None:
        """Restart the axis from the run's measurements: the least-squares line through the
        last `manoeuvre_frames` of them (two: through both) gives the velocity and the
        position now, with their variances; the update that follows adds the measurement."""
        samples = surprise.samples[-max(2, self.cfg.manoeuvre_frames):]
        t, z = samples[-1]
        if len(samples) < 2:
            # one frame: the kick's velocity change from the innovation, as if it had acted
            # over the whole time since the last sighting (the least it can have been)
            dt = t - self.last_detection_ns * 1e-9
            if dt > 0.0:
                self._restart(axis, z, axis.v + (z - axis.p) / dt, r, 2.0 * r / (dt * dt))
            return
        n = len(samples)
        mt = sum(s[0] for s in samples) / n
        mz = sum(s[1] for s in samples) / n
        stt = sum((s[0] - mt) ** 2 for s in samples)
        if stt <= 0.0:
            return
        v = sum((s[0] - mt) * (s[1] - mz) for s in samples) / stt
        self._restart(axis, mz + v * (t - mt), v, r, r / stt)

    def _restart(self, axis: Axis, p: float, v: float, p_var: float, v_var: float) -> None:
        top = self.cfg.max_speed
        axis.start(p, max(-top, min(top, v)), p_var, v_var)

    def _clear_surprise(self) -> None:
        for surprise in self._surprise:
            surprise.clear()

    # --- helpers ----------------------------------------------------------------------------

    def _confirms_candidate(self, zx: float, zy: float, now: int) -> bool:
        if self.candidate is None:
            return False
        cx, cy, then = self.candidate
        dt = (now - then) * 1e-9
        return 0 < dt <= 0.05 and math.hypot(zx - cx, zy - cy) <= self.cfg.max_speed * dt + 0.01

    def _reachable(self, zx: float, zy: float, now: int) -> bool:
        lx, ly = self.last_xy
        elapsed = (now - self.last_detection_ns) * 1e-9
        reach = self.cfg.max_speed * elapsed + 0.03
        return (zx - lx) ** 2 + (zy - ly) ** 2 <= reach * reach
