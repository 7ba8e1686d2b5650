"""Ball tracker agent (BTA), the vision board's agent.

Pure core: `BallTrackerCore.step(Inputs) -> Outputs` (foosball.runtime) on catalogue
messages and the captured frame of the turn; it never reads a clock, a socket or a camera.
Per frame it publishes one BallState stamped with the frame's capture time. It takes
VisionConfig from the game panel (thresholds apply from the next frame; `preview` turns the
mask preview on and off) and sends the threshold mask as VisionPreview parts (one part per
frame, so the preview never delays a BallState by more than one small message). It reports
the calibration it maps the ball with in CalibrationStatus at once and then every second
(the game panel shows it; a panel started later hears it within a second). No frame for
`camera_timeout_s`, or frames the calibration was not made for, are the CAMERA_LOST cause
for as long as it lasts.

A VisionLearn request (the panel's "learn from the ball") makes it keep every
LEARN_EVERY-th of its next frames (as BGR copies) until it has the number asked for, then
hand them to its hardware as a LearnJob: learning takes seconds, which no step may take
(the step loop would stall and its heartbeats stop), so the camera runs it on a worker
thread and hands the LearnOutcome back as the sample of a turn of its own. A band learnt
is applied at once and kept like one tuned on the panel; the reply (VisionLearn LEARNT or
REFUSED, with the reason) goes to the panel. Tracking goes on meanwhile.

A CameraCalibration request (the panel's Camera tab: LOOK, CALIBRATE) goes the same way,
on the same worker, one job at a time (calibrating.py says how): the next frame, the job,
the reply and the annotated frame as CameraSnapshot parts; an accepted calibration is
saved by the hardware and mapped with at once (a new CalibrationStatus goes out).

`Camera` (hardware.py) is its hardware for the runtime: a FrameSource's frames as the
samples.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from foosball.agents.ball_tracker.calibrating import REQUESTS, Calibrating, CalibrationOutcome
from foosball.runtime import Inputs, Outputs
from foosball.runtime.latch import Cause
from foosball.vision.calibration import Calibration
from foosball.vision.config import (
    HSV_BAND_FIELDS,
    DetectorConfig,
    VisionConfigError,
    VisionSettings,
)
from foosball.vision.learn import LearnError, LearntColour, learn_colour
from foosball.vision.rods import HumanRodMeter, RodReading
from foosball.vision.sources import CapturedFrame
from foosball.vision.tracker import BallTracker, TrackResult
from foosball.wire.catalogue import (
    CALIBRATION_MARKERS,
    PREVIEW_CHUNK,
    Agent,
    AlarmCode,
    BallState,
    BallStatus,
    CalibrationStatus,
    CameraCalibration,
    GameState,
    HumanRod,
    HumanRods,
    LearnStage,
    RodId,
    SafetyState,
    VisionConfig,
    VisionLearn,
    VisionPreview,
)

POSITION_LIMIT = 2.0  # m, well outside the field; the catalogue's BallState bound is wider
SPEED_LIMIT = 50.0  # m/s, the catalogue's bound
VARIANCE_LIMIT = 1e6
CALIBRATION_PERIOD_S = 1.0
# Learning: one frame kept in LEARN_EVERY (at 200 fps, 40 frames span a second of rolling:
# the ball moves between them, so their median is the table without it), at most
# MAX_LEARN_FRAMES of them (BGR copies, 0.9 MB each at 640 x 480).
LEARN_EVERY = 5
MIN_LEARN_FRAMES = 5
MAX_LEARN_FRAMES = 60
# The frames asked for must come within this (at 200 fps they take a second; a camera that
# stalls or runs slowly is told, rather than a request left hanging).
LEARN_COLLECT_S = 10.0


@dataclass(frozen=True, slots=True)
class LearnJob:
    """Core -> its hardware (in the actuation): learn a band, off the step thread."""

    request: int
    learn: Callable[[], LearntColour]  # raises LearnError


@dataclass(frozen=True, slots=True)
class LearnOutcome:
    """Hardware -> core (the sample of a turn of its own): what came of a LearnJob."""

    request: int
    learnt: LearntColour | None
    refusal: str = ""  # LearnError's reason when nothing was learnt
    own_band: DetectorConfig | None = None  # LearnError's: the ball's band, not separating


def run_learn_job(job: LearnJob) -> LearnOutcome:
    try:
        return LearnOutcome(job.request, job.learn())
    except LearnError as exc:
        return LearnOutcome(job.request, None, str(exc), exc.band)


class _Collecting:
    """A learning request under way: frames kept so far, then the job out."""

    def __init__(self, request: int, wanted: int, started_s: float) -> None:
        self.request = request
        self.wanted = wanted
        self.started_s = started_s
        self.frames: list[np.ndarray] = []
        self.seen = 0  # frames since the request
        self.learning = False  # the job went to the hardware


class BallTrackerCore:
    agent = Agent.BALL_TRACKER
    reads = (VisionConfig, VisionLearn, CameraCalibration, GameState)  # and RUNTIME_READS

    def __init__(self, tracker: BallTracker, settings: VisionSettings,
                 preview_size: tuple[int, int] = (160, 120), startup_grace_s: float = 2.0,
                 rod_meter: HumanRodMeter | None = None):
        self.tracker = tracker
        self.rod_meter = rod_meter  # the human's rods from the same frames (None: not sent)
        self.settings = settings
        self.detector_cfg = settings.detector
        self.camera_timeout_s = settings.camera_timeout_s
        self.startup_grace_s = startup_grace_s
        self.preview_size = preview_size
        self.preview = False
        self._preview_parts: list[bytes] = []
        self._preview_frame = 0
        self._preview_next = 0
        self._started_s: float | None = None
        self._last_frame_s: float | None = None
        self.camera_lost: Cause | None = None
        self.last_result: TrackResult | None = None  # the tracker's own view (for tests)
        self.rejected_configs = 0
        self.frames = 0
        self.to_keep: DetectorConfig | None = None  # thresholds accepted since the last step
        self.collecting: _Collecting | None = None  # a learning request under way
        # The guided calibration's requests (calibrating.py); the layout and focal length
        # are the tracker's settings.
        self.calibrating = Calibrating(settings.markers_file, settings.focal_px,
                                       tracker.projector.calibration.ball_radius)
        # The calibration changes only by the guided calibration: one message, sent again.
        self.calibration_status = calibration_status(tracker.projector.calibration)
        self._calibration_sent_s = -math.inf

    @property
    def state(self) -> SafetyState:
        return SafetyState.BOOT if self._last_frame_s is None else SafetyState.READY

    def step(self, inputs: Inputs) -> Outputs:
        """`inputs.sensed`: the CapturedFrame of this turn, None when none came, or the
        LearnOutcome of a learning job the hardware ran."""
        now = inputs.now_s
        if self._started_s is None:
            self._started_s = now
        out: list[Any] = []
        if now - self._calibration_sent_s >= CALIBRATION_PERIOD_S:
            self._calibration_sent_s = now
            out.append(self.calibration_status)
        actions: list[Any] = []
        for message in inputs.messages:
            if isinstance(message, VisionConfig):
                self._apply(message)
            elif isinstance(message, VisionLearn) and message.stage is LearnStage.REQUEST:
                out.extend(self._start_learning(message, now))
            elif isinstance(message, CameraCalibration) and message.stage in REQUESTS:
                out.extend(self.calibrating.request(message, now, self._learning_busy()))
            elif isinstance(message, GameState):
                self.calibrating.playing = message.state is SafetyState.PLAYING
        out.extend(self._collection_overdue(now))
        out.extend(self.calibrating.overdue(now))
        self.last_result = None
        # A learning outcome comes in a turn of its own, in which no frame was due.
        sensed = inputs.sensed
        learnt = isinstance(sensed, LearnOutcome | CalibrationOutcome)
        if isinstance(sensed, LearnOutcome):
            out.extend(self._learnt(sensed))
            sensed = None
        elif isinstance(sensed, CalibrationOutcome):
            out.extend(self._calibrated(sensed))
            sensed = None
        frame: CapturedFrame | None = sensed
        if frame is not None and not self._fits(frame):
            # A frame the calibration was not made for (the camera came up in another mode):
            # positions from it would be wrong, so it counts as no frame at all.
            self.camera_lost = Cause(AlarmCode.CAMERA_LOST,
                                     f"frame {frame.image.shape[1]}x{frame.image.shape[0]} "
                                     f"does not match the calibration "
                                     f"{self.tracker.detector.width}x"
                                     f"{self.tracker.detector.height}")
            frame = None
        elif frame is not None:
            self._last_frame_s = now
            self.camera_lost = None
            self.frames += 1
            self.last_result = self.tracker.process(frame.image, frame.capture_time_ns)
            out.append(ball_state(self.last_result, frame))
            if self.rod_meter is not None and \
                    frame.index % self.rod_meter.cfg.every_frames == 0:
                out.append(human_rods(self.rod_meter.measure(frame.image), frame))
            if self.preview:
                out.append(self._preview_part(frame))
            if self.collecting is not None and not self.collecting.learning:
                actions.extend(self._collect(frame))
            if self.calibrating.waiting is not None:
                actions.append(self.calibrating.job(frame.image, self._remap))
        elif not learnt and self._camera_silent(now):
            silence = now - (self._last_frame_s if self._last_frame_s is not None
                             else self._started_s)
            self.camera_lost = Cause(AlarmCode.CAMERA_LOST,
                                     f"no camera frame for {silence * 1e3:.0f} ms")
        out.extend(self.calibrating.next_part())  # the snapshot, a part a turn
        causes = (self.camera_lost,) if self.camera_lost is not None else ()
        if self.to_keep is not None:
            actions.append(self.to_keep)
            self.to_keep = None
        return Outputs(tuple(out), causes, self.state, actuation=tuple(actions) or None)

    # --- learning the band from the ball (VisionLearn) ---------------------------------

    def _learning_busy(self) -> str:
        under_way = self.collecting
        return f"busy: learning request {under_way.request} is under way" \
            if under_way is not None else ""

    def _start_learning(self, request: VisionLearn, now: float) -> list[VisionLearn]:
        busy = self._learning_busy() or self.calibrating.busy
        if busy:
            return [learn_reply(request.request, LearnStage.REFUSED, text=busy)]
        wanted = min(max(request.frames, MIN_LEARN_FRAMES), MAX_LEARN_FRAMES)
        self.collecting = _Collecting(request.request, wanted, now)
        return []

    def _collection_overdue(self, now: float) -> list[VisionLearn]:
        collecting = self.collecting
        if collecting is None or collecting.learning or \
                now - collecting.started_s <= LEARN_COLLECT_S:
            return []
        self.collecting = None
        return [learn_reply(collecting.request, LearnStage.REFUSED,
                            text=f"only {len(collecting.frames)} of the {collecting.wanted} "
                                 f"frames came in {LEARN_COLLECT_S:g} s (one in "
                                 f"{LEARN_EVERY} is kept): is the camera running?")]

    def _collect(self, frame: CapturedFrame) -> list[LearnJob]:
        collecting = self.collecting
        assert collecting is not None
        collecting.seen += 1
        if (collecting.seen - 1) % LEARN_EVERY:
            return []
        image = frame.image
        collecting.frames.append(cv2.cvtColor(image, cv2.COLOR_YUV2BGR_YUYV)
                                 if image.shape[2] == 2 else image.copy())
        if len(collecting.frames) < collecting.wanted:
            return []
        collecting.learning = True
        detector = self.tracker.detector
        learn = functools.partial(learn_colour, tuple(collecting.frames), self.detector_cfg,
                                  detector.field_mask, self.tracker.projector.radius_px)
        collecting.frames = []  # the job holds them now
        return [LearnJob(collecting.request, learn)]

    def _learnt(self, outcome: LearnOutcome) -> list[VisionLearn]:
        if self.collecting is None or outcome.request != self.collecting.request:
            return []  # not ours (cannot happen: one job at a time)
        self.collecting = None
        learnt, band, text = outcome.learnt, None, ""
        if learnt is not None:
            band, text = learnt.detector, (f"learnt from {learnt.frames_with_ball} frames with "
                                           f"the ball; now in use")
        elif self.detector_cfg.method == "background" and outcome.own_band is not None:
            # The background detector needs the ball's colour, not a band that separates it.
            band, text = outcome.own_band, ("the ball's own band, for the background "
                                            "detector: " + outcome.refusal)
        if band is None:
            return [learn_reply(outcome.request, LearnStage.REFUSED, text=outcome.refusal)]
        cfg = replace(self.detector_cfg, **{name: getattr(band, name) for name in HSV_BAND_FIELDS})
        self.detector_cfg = cfg.validate()
        self.tracker.configure(self.detector_cfg)
        self.to_keep = self.detector_cfg  # kept on the board like the panel's tuning
        return [learn_reply(outcome.request, LearnStage.LEARNT, band=self.detector_cfg,
                            learnt=learnt, text=text)]

    # --- the guided camera calibration (CameraCalibration, calibrating.py) ------------

    def _remap(self, calibration: Calibration) -> tuple[BallTracker, HumanRodMeter | None]:
        """What maps the ball (and the human's rods) with `calibration`: the job builds it
        on the worker thread, the step only switches to it."""
        meter = self.rod_meter
        return (self.tracker.for_calibration(calibration, self.detector_cfg),
                meter.for_calibration(calibration) if meter is not None else None)

    def _calibrated(self, outcome: CalibrationOutcome) -> list[Any]:
        out: list[Any] = [self.calibrating.done(outcome)]
        if outcome.calibration is not None and outcome.mapping is not None:
            self.tracker, self.rod_meter = outcome.mapping
            self.tracker.configure(self.detector_cfg)  # tuned while the job ran
            self.calibration_status = calibration_status(outcome.calibration)
            out.append(self.calibration_status)  # and one now: the panel shows it at once
        return out

    def _fits(self, frame: CapturedFrame) -> bool:
        detector = self.tracker.detector
        shape = frame.image.shape
        channels = 3 if detector.pixel_format == "bgr" else 2
        return len(shape) == 3 and shape[0] == detector.height and \
            shape[1] == detector.width and shape[2] == channels

    def _camera_silent(self, now: float) -> bool:
        if self._last_frame_s is None:
            assert self._started_s is not None
            return now - self._started_s > self.startup_grace_s
        return now - self._last_frame_s > self.camera_timeout_s

    def _apply(self, message: VisionConfig) -> None:
        try:
            cfg = self.detector_cfg.with_panel(message)
        except VisionConfigError:
            self.rejected_configs += 1  # e.g. sat_low above sat_high: keep the old thresholds
            return
        if cfg != self.detector_cfg:
            self.to_keep = cfg  # the hardware keeps it on the board (thresholds_file)
        self.detector_cfg = cfg
        self.tracker.configure(cfg)
        if message.preview and not self.preview:
            self._preview_parts = []  # start a fresh snapshot
        self.preview = bool(message.preview)

    def _preview_part(self, frame: CapturedFrame) -> VisionPreview:
        if self._preview_next >= len(self._preview_parts):
            mask = self.tracker.detector.frame_mask(frame.image, self.preview_size)
            packed = np.packbits(mask > 0).tobytes()
            self._preview_parts = [packed[i:i + PREVIEW_CHUNK]
                                   for i in range(0, len(packed), PREVIEW_CHUNK)]
            self._preview_frame = frame.index
            self._preview_next = 0
        part = self._preview_next
        self._preview_next += 1
        width, height = self.preview_size
        return VisionPreview(frame=self._preview_frame, part=part,
                             parts=len(self._preview_parts), width=width, height=height,
                             mask=self._preview_parts[part])


def _clip(value: float, low: float, high: float) -> float:
    """A plain float within [low, high] (the catalogue refuses numpy scalars and NaN)."""
    value = float(value)
    if not math.isfinite(value):
        return high
    return min(high, max(low, value))


def ball_state(result: TrackResult, frame: CapturedFrame) -> BallState:
    return BallState(
        capture_time=frame.capture_time_ns,
        frame=frame.index,
        x=_clip(result.x, -POSITION_LIMIT, POSITION_LIMIT),
        y=_clip(result.y, -POSITION_LIMIT, POSITION_LIMIT),
        vx=_clip(result.vx, -SPEED_LIMIT, SPEED_LIMIT),
        vy=_clip(result.vy, -SPEED_LIMIT, SPEED_LIMIT),
        covariance=tuple(_clip(v, 0.0, VARIANCE_LIMIT) for v in result.covariance),  # type: ignore[arg-type]
        status=BallStatus(int(result.status)),
    )


def human_rods(readings: list[RodReading], frame: CapturedFrame) -> HumanRods:
    return HumanRods(
        capture_time=frame.capture_time_ns, frame=frame.index,
        rods=tuple(HumanRod(rod=RodId(r.role), translation=_clip(r.translation, -1.0, 1.0),
                            rotation=_clip(r.rotation, -math.pi, math.pi),
                            men_seen=min(5, r.men_seen), rotation_seen=r.rotation_seen)
                   for r in readings[:4]))


def learn_reply(request: int, stage: LearnStage, band: DetectorConfig | None = None,
                learnt: LearntColour | None = None, text: str = "") -> VisionLearn:
    """The tracker's VisionLearn answer (band fields 0 when refused)."""
    values = {name: getattr(band, name) if band is not None else 0 for name in HSV_BAND_FIELDS}
    return VisionLearn(
        request=request, stage=stage,
        frames=min(240, learnt.frames_with_ball) if learnt is not None else 0, **values,
        ball_share=_clip(learnt.coverage, 0.0, 1.0) if learnt is not None else 0.0,
        table_share=_clip(learnt.table_share, 0.0, 1.0) if learnt is not None else 0.0,
        text=text[:200])


def calibration_status(calibration: Calibration) -> CalibrationStatus:
    created = calibration.created
    width, height = calibration.image_size
    return CalibrationStatus(
        made_at=max(0, round(created.timestamp() * 1e9)) if created is not None else 0,
        reprojection_rms_px=_clip(calibration.reprojection_rms_px, 0.0, 1e4),
        reprojection_max_px=_clip(calibration.reprojection_max_px, 0.0, 1e4),
        table_rms_m=_clip(calibration.table_rms_m, 0.0, POSITION_LIMIT),
        width=width, height=height,
        markers=min(len(calibration.marker_ids), CALIBRATION_MARKERS))
