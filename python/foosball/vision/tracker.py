"""Frame in, filtered ball out: detector + calibration + Kalman filter, one call per frame.

Per frame: predict the ball to the frame's capture time, look for it in a window around
the predicted pixel (sized by the prediction's uncertainty), fall back to the decimated
whole frame when the window is empty, map the centre to the table at ball-centre height,
and hand it to the track (`track.BallTrack`: gate, update, restarts, manoeuvres). No ball
for a while, or a prediction too uncertain to be useful, and the track is LOST;
re-acquisition then searches the whole frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from foosball.geometry import Table
from foosball.vision.calibration import BallProjector, Calibration
from foosball.vision.config import DetectorConfig, FilterConfig
from foosball.vision.detector import Detection, make_detector
from foosball.vision.field import FieldRegion
from foosball.vision.kalman import Walls
from foosball.vision.track import REJECTED, RESTARTED, BallTrack


class TrackStatus(IntEnum):
    """Same values as the catalogue's BallStatus (vision has no wire dependency)."""

    DETECTED = 0
    PREDICTED = 1
    LOST = 2


class Search(IntEnum):
    WINDOW = 0  # found (or not) in the window around the prediction
    FRAME = 1  # the decimated whole frame was searched


@dataclass(slots=True)  # read-only by use; not frozen: a frozen __init__ costs 3x per frame
class TrackResult:
    status: TrackStatus
    x: float
    y: float
    vx: float
    vy: float
    covariance: tuple[float, float, float, float]
    detection: Detection | None  # the accepted measurement of this frame
    search: Search
    restarted: bool  # the filter was (re)started on this frame


class BallTracker:
    def __init__(self, detector_cfg: DetectorConfig, filter_cfg: FilterConfig,
                 calibration: Calibration, table: Table, pixel_format: str = "bgr",
                 ball_diameter: float = 0.0):
        """`ball_diameter` (m): the settings' ball; 0 takes the table geometry's."""
        radius = (ball_diameter or table.ball.diameter) / 2
        self._made_with = (filter_cfg, table, pixel_format, ball_diameter)
        self.projector = BallProjector(calibration.for_ball(radius))
        f = table.field
        # The ball's centre stays on the field, or goes a little beyond the end walls in
        # the goal mouths (and nowhere else): nothing outside is ever a candidate.
        self.field = FieldRegion(self.projector, table)
        self.detector = make_detector(detector_cfg, pixel_format, calibration.image_size,
                                      radius_at=self.projector.radius_px,
                                      on_table=self.field.contains,
                                      field_mask=self.field.mask(),
                                      table_interior=self.field.centre_mask())
        self.cfg = filter_cfg.validate()
        self.walls = Walls.of_table(f.half_length, f.half_width, f.goal_width, radius)
        self.track = BallTrack(filter_cfg, self.walls)
        self.filter = self.track.filter
        self._confirmations = 0
        self._lost_variance = (f.half_length ** 2, f.half_width ** 2, 100.0, 100.0)

    def for_calibration(self, calibration: Calibration,
                        detector_cfg: DetectorConfig) -> BallTracker:
        """A new tracker like this one, mapping with `calibration` (the game panel's guided
        calibration switches to it; the track starts again)."""
        filter_cfg, table, pixel_format, ball_diameter = self._made_with
        return BallTracker(detector_cfg, filter_cfg, calibration, table, pixel_format,
                           ball_diameter)

    def configure(self, detector_cfg: DetectorConfig) -> None:
        self.detector.configure(detector_cfg)

    def process(self, image: np.ndarray, capture_time_ns: int) -> TrackResult:
        if self.track.tracking:
            result = self._track(image, capture_time_ns)
        else:
            result = self._acquire(image, capture_time_ns)
        if self.detector.observes:
            self.detector.observe(image, result.detection)
        return result

    # --- with a track -------------------------------------------------------------------

    def _track(self, image: np.ndarray, now: int) -> TrackResult:
        cfg, flt = self.cfg, self.filter
        flt.predict(now)
        px, py = flt.x.p, flt.y.p
        u, v, metres_per_px = self.projector.to_pixel_and_scale(px, py)
        radius_px = self.projector.calibration.ball_radius / metres_per_px
        half = radius_px + 2.0 + self.detector.cfg.roi_sigmas * flt.position_sigma / metres_per_px
        search = Search.WINDOW
        detection = None
        if -half < u < self.detector.width + half and -half < v < self.detector.height + half:
            detection = self.detector.search_window(image, u, v, int(half + 1), radius_px)
        if detection is None:
            search = Search.FRAME
            detection = self.detector.search_frame(image, near=(u, v))
        restarted = False
        track = self.track
        if detection is not None:
            zx, zy = self.projector.to_table(detection.u, detection.v)
            sigma = cfg.partial_measurement_sigma if detection.partial else cfg.measurement_sigma
            outcome = track.measure(zx, zy, sigma, now)
            restarted = outcome == RESTARTED
            if outcome == REJECTED:
                detection = None  # a ball-coloured thing too far away: not our ball (yet)
        if detection is not None:
            return self._result(TrackStatus.DETECTED, detection, search, restarted)
        if track.lost_by(now):
            return self._lost(search)
        return self._result(TrackStatus.PREDICTED, None, search, False)

    # --- without a track ------------------------------------------------------------------

    def _acquire(self, image: np.ndarray, now: int) -> TrackResult:
        """The ball anywhere in the frame starts a track at once (the blob filter is the
        guard against false balls); its velocity comes with the second sighting."""
        cfg = self.cfg
        detection = self.detector.search_frame(image)
        if detection is None:
            return self._lost(Search.FRAME)
        zx, zy = self.projector.to_table(detection.u, detection.v)
        sigma = cfg.partial_measurement_sigma if detection.partial else cfg.measurement_sigma
        self.track.acquire(zx, zy, sigma, now)
        return self._result(TrackStatus.DETECTED, detection, Search.FRAME, True)

    # --- results --------------------------------------------------------------------------

    def _result(self, status: TrackStatus, detection: Detection | None, search: Search,
                restarted: bool) -> TrackResult:
        x, y = self.filter.x, self.filter.y
        return TrackResult(status, x.p, y.p, x.v, y.v, (x.a, y.a, x.c, y.c), detection, search,
                           restarted)

    def _lost(self, search: Search) -> TrackResult:
        x, y = self.track.last_xy
        return TrackResult(TrackStatus.LOST, x, y, 0.0, 0.0, self._lost_variance, None, search,
                           False)
