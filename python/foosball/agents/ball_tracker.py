"""Ball tracker agent (BTA), the vision board's agent.

Pure core: `BallTrackerCore.step(TrackerInput) -> TrackerOutput` on catalogue messages and
captured frames; it never reads a clock, a socket or a camera. Per frame it publishes one
BallState stamped with the frame's capture time. It takes VisionConfig from the game panel
(thresholds apply from the next frame; `preview` turns the mask preview on and off), sends
the threshold mask as VisionPreview parts (one part per frame, so the preview never delays
a BallState by more than one small message), a Heartbeat every period, and a latched
CAMERA_LOST Alarm when no frame came for `camera_timeout_s`.

Thin adapter: `run()` reads frames from a FrameSource, drains the endpoint, steps the core
and sends what it returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from foosball.safety.health import Health, read_board_health
from foosball.vision.config import VisionConfigError, VisionSettings
from foosball.vision.sources import CapturedFrame, FrameSource
from foosball.vision.tracker import BallTracker, TrackResult
from foosball.wire.catalogue import (
    PREVIEW_CHUNK,
    Agent,
    Alarm,
    AlarmCode,
    BallState,
    BallStatus,
    Heartbeat,
    SafetyState,
    VisionConfig,
    VisionPreview,
)

POSITION_LIMIT = 2.0  # m, well outside the field; the catalogue's BallState bound is wider
SPEED_LIMIT = 50.0  # m/s, the catalogue's bound
VARIANCE_LIMIT = 1e6


@dataclass(frozen=True, slots=True)
class TrackerInput:
    now_ns: int  # monotonic clock of the board
    frame: CapturedFrame | None = None
    messages: tuple[Any, ...] = ()  # catalogue messages received since the last step
    health: Health = field(default_factory=Health)


@dataclass(frozen=True, slots=True)
class TrackerOutput:
    messages: tuple[Any, ...]
    result: TrackResult | None = None  # the tracker's own view of this frame (for tests)


class BallTrackerCore:
    def __init__(self, tracker: BallTracker, settings: VisionSettings,
                 heartbeat_period_s: float = 0.01, preview_size: tuple[int, int] = (160, 120),
                 startup_grace_s: float = 2.0):
        self.tracker = tracker
        self.settings = settings
        self.detector_cfg = settings.detector
        self.heartbeat_period_ns = round(heartbeat_period_s * 1e9)
        self.camera_timeout_ns = round(settings.camera_timeout_s * 1e9)
        self.startup_grace_ns = round(startup_grace_s * 1e9)
        self.preview_size = preview_size
        self.preview = False
        self._preview_parts: list[bytes] = []
        self._preview_frame = 0
        self._preview_next = 0
        self._started_ns: int | None = None
        self._last_frame_ns: int | None = None
        self._last_heartbeat_ns: int | None = None
        self.camera_lost = False
        self.rejected_configs = 0
        self.frames = 0

    @property
    def state(self) -> SafetyState:
        if self.camera_lost:
            return SafetyState.FAULT
        return SafetyState.BOOT if self._last_frame_ns is None else SafetyState.READY

    def step(self, inputs: TrackerInput) -> TrackerOutput:
        now = inputs.now_ns
        if self._started_ns is None:
            self._started_ns = now
        out: list[Any] = []
        for message in inputs.messages:
            if isinstance(message, VisionConfig):
                self._apply(message)
        result = None
        frame = inputs.frame
        if frame is not None and not self._fits(frame):
            # A frame the calibration was not made for (the camera came up in another mode):
            # positions from it would be wrong, so it counts as no frame at all.
            if not self.camera_lost:
                out.append(Alarm(source=Agent.BALL_TRACKER, code=AlarmCode.CAMERA_LOST,
                                 text=f"frame {frame.image.shape[1]}x{frame.image.shape[0]} "
                                 f"does not match the calibration "
                                 f"{self.tracker.detector.width}x{self.tracker.detector.height}",
                                 latched=True, axis=-1))
                self.camera_lost = True
            frame = None
        if frame is not None:
            self._last_frame_ns = now
            self.camera_lost = False
            self.frames += 1
            result = self.tracker.process(frame.image, frame.capture_time_ns)
            out.append(ball_state(result, frame))
            if self.preview:
                out.append(self._preview_part(frame))
        elif not self.camera_lost and self._camera_silent(now):
            self.camera_lost = True
            silence = (now - (self._last_frame_ns or self._started_ns)) * 1e-9
            out.append(Alarm(source=Agent.BALL_TRACKER, code=AlarmCode.CAMERA_LOST,
                             text=f"no camera frame for {silence * 1e3:.0f} ms",
                             latched=True, axis=-1))
        if self._last_heartbeat_ns is None or now - self._last_heartbeat_ns >= \
                self.heartbeat_period_ns:
            self._last_heartbeat_ns = now
            h = inputs.health
            out.append(Heartbeat(agent=Agent.BALL_TRACKER, state=self.state,
                                 period_s=self.heartbeat_period_ns * 1e-9,
                                 cpu_load=_clip(h.cpu_load, 0.0, 100.0),
                                 memory=_clip(h.memory, 0.0, 100.0),
                                 temperature=_clip(h.temperature, -273.0, 200.0)))
        return TrackerOutput(tuple(out), result)

    def _fits(self, frame: CapturedFrame) -> bool:
        detector = self.tracker.detector
        shape = frame.image.shape
        channels = 3 if detector.pixel_format == "bgr" else 2
        return len(shape) == 3 and shape[0] == detector.height and \
            shape[1] == detector.width and shape[2] == channels

    def _camera_silent(self, now: int) -> bool:
        if self._last_frame_ns is None:
            assert self._started_ns is not None
            return now - self._started_ns > self.startup_grace_ns
        return now - self._last_frame_ns > self.camera_timeout_ns

    def _apply(self, message: VisionConfig) -> None:
        try:
            cfg = self.detector_cfg.with_panel(message)
        except VisionConfigError:
            self.rejected_configs += 1  # e.g. sat_low above sat_high: keep the old thresholds
            return
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


def run(core: BallTrackerCore, source: FrameSource, endpoint: Any,
        clock: Callable[[], int], should_stop: Callable[[], bool],
        health: Callable[[], Health] = read_board_health, health_period_s: float = 1.0) -> None:
    """The I/O edge: frames and messages in, messages out, until `should_stop()`."""
    wait_s = core.heartbeat_period_ns * 1e-9
    last_health = Health()
    next_health_ns = 0
    while not should_stop():
        frame = source.read(wait_s)
        if frame is None and source.finished:
            break
        now = clock()
        if now >= next_health_ns:  # psutil costs more than a frame: once a second
            last_health = health()
            next_health_ns = now + round(health_period_s * 1e9)
        received = tuple(r.message for r in endpoint.receive(0.0))
        output = core.step(TrackerInput(now, frame, received, last_health))
        for message in output.messages:
            endpoint.send(message)
