"""The ball tracker's part of the guided camera calibration (the game panel's Camera tab).

The panel sends a CameraCalibration request, LOOK or CALIBRATE, with a number. The core
(`Calibrating`, driven by BallTrackerCore.step) takes the next frame it already receives
(no second camera reader; tracking goes on), copies it and hands a `CalibrationJob` to its
hardware's worker thread: the one learning uses, one job at a time (a request while a job
or a learning runs is answered BUSY; CALIBRATE while the game is PLAYING too). The job runs
foosball.vision.calibration_report, the CLI's code: `look` (the markers found, the
layout's missing ones and why), `attempt` (`calibrate`'s decision), `annotate` (the frame
with the markers outlined, downscaled to SNAPSHOT_WIDTH as a JPEG of a few KB); when
accepted it builds the tracker (and the rod meter) for the new calibration off the step
thread, and the hardware then saves the calibration where the tracker reads it
(`save_calibration`: atomically, the old file kept as `<file>.prev`). The outcome comes
back as the sample of a turn of its own: the core replies (FOUND, ACCEPTED, REFUSED,
FAILED) with each marker as a CalibrationMarker, and on ACCEPTED switches to the new
tracker at once and reports the new CalibrationStatus (no restart). The JPEG follows as
CameraSnapshot parts, one per turn (no BallState waits behind more than one small
message).

The marker layout and the focal length are the tracker's own settings: [ball_tracker]
`markers_file` (read by the worker at each job, so a corrected layout needs no restart)
and `focal_px` (0: estimated from the markers).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from foosball.vision.calibration import (
    Calibration,
    CalibrationError,
    MarkerLayout,
    reprojection_limit_px,
)
from foosball.vision.calibration_report import (
    Look,
    annotate,
    attempt,
    look,
    residuals,
    save_calibration,
)
from foosball.vision.layout_check import MAX_MARKER_OFFSET_M, quad_centre
from foosball.wire.catalogue import (
    CALIBRATION_MARKERS,
    CAMERA_CALIBRATION_MARKERS,
    CAMERA_CALIBRATION_TEXT,
    POSITION,
    SNAPSHOT_CHUNK,
    CalibrationMarker,
    CalibrationStage,
    CameraCalibration,
    CameraSnapshot,
    MarkerSeen,
)

REQUESTS = (CalibrationStage.LOOK, CalibrationStage.CALIBRATE)
SNAPSHOT_WIDTH = 320  # px: the annotated frame the panel is sent
SNAPSHOT_QUALITY = 60  # JPEG quality: 320 x 240 of the field in ~9 KB (8 parts)
# A request's frame must come within this (as LEARN_COLLECT_S): the panel is told, rather
# than a request left hanging.
FRAME_WAIT_S = 10.0
MISSING = {"outside": MarkerSeen.OUTSIDE, "partly_outside": MarkerSeen.PARTLY_OUTSIDE,
           "not_found": MarkerSeen.NOT_FOUND, "unknown": MarkerSeen.UNKNOWN}


@dataclass(frozen=True)
class CalibrationJob:
    """Core -> its hardware (in the actuation): look at or calibrate on one frame, off the
    step thread. `remap` builds what maps the ball with a new calibration."""

    request: int
    stage: CalibrationStage  # LOOK or CALIBRATE
    image: np.ndarray  # the tracker's frame, a copy (BGR, or YUYV with 2 channels)
    markers_file: str
    ball_radius: float
    focal_px: float | None
    remap: Callable[[Calibration], Any]


@dataclass(frozen=True)
class CalibrationOutcome:
    """Hardware -> core (the sample of a turn of its own): what came of a CalibrationJob."""

    reply: CameraCalibration  # snapshot_parts set; ACCEPTED only once saved
    jpeg: bytes = b""
    jpeg_size: tuple[int, int] = (0, 0)
    calibration: Calibration | None = None  # ACCEPTED: saved, to be used
    mapping: Any = None  # ACCEPTED: remap's result
    seconds: float = 0.0  # the worker's time for the job (the save included)


def clip_text(text: str, limit: int = CAMERA_CALIBRATION_TEXT) -> str:
    """`text` in at most `limit` UTF-8 bytes (the message's size is counted in bytes)."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[:limit - 3].decode(errors="ignore") + "..."


def reply(request: int, stage: CalibrationStage, text: str = "", **fields: Any,
          ) -> CameraCalibration:
    values: dict[str, Any] = {"width": 0, "height": 0, "reprojection_rms_px": 0.0,
                              "reprojection_limit_px": 0.0, "table_rms_m": 0.0,
                              "focal_px": 0.0, "limit_mm": MAX_MARKER_OFFSET_M * 1e3,
                              "snapshot_parts": 0, "markers": ()}
    return CameraCalibration(request=request, stage=stage, text=clip_text(text),
                             **(values | fields))


def _bounded(value: float, limit: float) -> float:
    value = float(value)
    return min(limit, max(-limit, value)) if math.isfinite(value) else 0.0


def marker_records(layout: MarkerLayout, seen: Look,
                   rows: list[dict[str, Any]] | None = None) -> tuple[CalibrationMarker, ...]:
    """Each of the layout's markers (then the stray ones found), as the reply carries them:
    found and where, or missing and why; with `rows` (calibration_report.residuals) the
    offset each was checked at and whether the refusal names it."""
    by_row = {row["id"]: row for row in rows or ()}
    out = []
    for marker in layout.markers:
        marker_id = marker.marker_id
        if not 0 <= marker_id < CALIBRATION_MARKERS:
            continue
        x, y = quad_centre(marker.corners)
        if marker_id in seen.found:
            state, centre = MarkerSeen.FOUND, tuple(np.asarray(seen.found[marker_id],
                                                               dtype=np.float64).mean(axis=0))
        else:
            kind, centre = seen.where.get(marker_id, ("unknown", None))  # type: ignore[assignment]
            state = MISSING[kind]
        row = by_row.get(marker_id, {})
        out.append(CalibrationMarker(
            marker=marker_id, seen=state,
            u=round(_bounded(centre[0], 1e5)) if centre is not None else 0,
            v=round(_bounded(centre[1], 1e5)) if centre is not None else 0,
            x_mm=round(_bounded(x * 1e3, 5000)), y_mm=round(_bounded(y * 1e3, 5000)),
            checked="mm" in row, dx_mm=_bounded(row.get("dx_mm", 0.0), 1000.0),
            dy_mm=_bounded(row.get("dy_mm", 0.0), 1000.0), blamed=bool(row.get("blamed")),
            without_blamed="without" in row))
    for marker_id in seen.stray:
        if 0 <= marker_id < CALIBRATION_MARKERS:
            u, v = np.asarray(seen.found[marker_id], dtype=np.float64).mean(axis=0)
            out.append(CalibrationMarker(
                marker=marker_id, seen=MarkerSeen.STRAY, u=round(_bounded(u, 1e5)),
                v=round(_bounded(v, 1e5)), x_mm=0, y_mm=0, checked=False, dx_mm=0.0,
                dy_mm=0.0, blamed=False, without_blamed=False))
    return tuple(out[:CAMERA_CALIBRATION_MARKERS])


def _layout(path: str) -> MarkerLayout:
    if not path:
        raise CalibrationError("no marker layout: set [ball_tracker] markers_file (the "
                               "layout as for `foosball vision calibrate --markers`)")
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise CalibrationError(f"marker layout {path}: {exc.strerror or exc} (write it with "
                               "`foosball vision layout-example` and measure it)") from None
    except ValueError as exc:
        raise CalibrationError(f"marker layout {path}: not JSON ({exc})") from None
    return MarkerLayout.from_json(data)


def run_calibration_job(job: CalibrationJob, save_to: str | Path = "",
                        clock: Callable[[], float] = time.perf_counter) -> CalibrationOutcome:
    """The job, as the tracker's worker runs it: look (and calibrate) on the frame, the
    snapshot made; when accepted, what maps the ball with it built and the calibration
    saved to `save_to` (a failed save: FAILED, nothing switched)."""
    started = clock()
    outcome = _run(job, save_to)
    return replace(outcome, seconds=clock() - started)


def _run(job: CalibrationJob, save_to: str | Path) -> CalibrationOutcome:
    image = job.image
    if image.ndim == 3 and image.shape[2] == 2:  # a V4L2 camera's native YUYV
        image = cv2.cvtColor(image, cv2.COLOR_YUV2BGR_YUYV)
    height, width = image.shape[:2]
    size = {"width": width, "height": height,
            "reprojection_limit_px": round(reprojection_limit_px(width, height), 3)}
    try:
        layout = _layout(job.markers_file)
    except CalibrationError as exc:
        return CalibrationOutcome(reply(job.request, CalibrationStage.FAILED, str(exc), **size))
    seen = look(image, layout)
    jpeg = annotate(image, seen, max_width=SNAPSHOT_WIDTH, quality=SNAPSHOT_QUALITY)
    scale = min(1.0, SNAPSHOT_WIDTH / width)
    snapshot = {"jpeg": jpeg, "jpeg_size": (round(width * scale), round(height * scale))}
    size["snapshot_parts"] = min(256, -(-len(jpeg) // SNAPSHOT_CHUNK))
    if job.stage is CalibrationStage.LOOK:
        return CalibrationOutcome(reply(job.request, CalibrationStage.FOUND, seen.text,
                                        markers=marker_records(layout, seen), **size),
                                  **snapshot)
    result = attempt(image, layout, job.ball_radius, focal_px=job.focal_px)
    rows = residuals(layout, result, MAX_MARKER_OFFSET_M)
    markers = marker_records(layout, seen, rows)
    if not result.accepted:
        stage = CalibrationStage.REFUSED if result.refused else CalibrationStage.FAILED
        return CalibrationOutcome(reply(job.request, stage, result.text, markers=markers,
                                        **size), **snapshot)
    calibration = result.calibration
    assert calibration is not None
    fit = {"reprojection_rms_px": _bounded(abs(calibration.reprojection_rms_px), 1e4),
           "table_rms_m": min(POSITION, _bounded(abs(calibration.table_rms_m), POSITION)),
           "focal_px": min(1e5, _bounded(abs(calibration.focal_px), 1e5))}
    try:
        mapping = job.remap(calibration)
        kept = save_calibration(calibration, save_to) if save_to else None
    except (OSError, CalibrationError, ValueError) as exc:
        return CalibrationOutcome(reply(
            job.request, CalibrationStage.FAILED, f"accepted, but not saved to {save_to}: "
            f"{exc}; the tracker keeps the calibration it has", markers=markers,
            **size, **fit), **snapshot)
    where = f"saved to {save_to}" if save_to else "not saved (no calibration file)"
    text = (where + (f" (the old one kept as {kept})" if kept else "")
            + "; the tracker maps the ball with it now")
    return CalibrationOutcome(reply(job.request, CalibrationStage.ACCEPTED, text,
                                    markers=markers, **size, **fit),
                              calibration=calibration, mapping=mapping, **snapshot)


class Calibrating:
    """The core's side: a request waiting for its frame, the job under way, the snapshot
    parts still to send. `playing` is the game's (GameState) as last heard."""

    def __init__(self, markers_file: str, focal_px: float, ball_radius: float) -> None:
        self.markers_file = markers_file
        self.focal_px = focal_px or None
        self.ball_radius = ball_radius
        self.playing = False
        self.waiting: tuple[CameraCalibration, float] | None = None  # request, since
        self.running: int | None = None  # the request whose job is out
        self._parts: list[CameraSnapshot] = []
        self.jobs = 0  # jobs handed out (for tests)

    @property
    def busy(self) -> str:
        """Why no other job may start now ("" when one may)."""
        if self.waiting is not None:
            return f"request {self.waiting[0].request} is waiting for a frame"
        if self.running is not None:
            return f"calibration request {self.running} is under way"
        return ""

    def request(self, message: CameraCalibration, now: float, learning: str) -> list[Any]:
        """A panel's LOOK or CALIBRATE: BUSY, or waiting for the next frame."""
        why = self.busy or learning
        if not why and self.playing and message.stage is CalibrationStage.CALIBRATE:
            why = "a match is playing: stop it first"
        if why:
            return [reply(message.request, CalibrationStage.BUSY, why)]
        self.waiting = (message, now)
        return []

    def overdue(self, now: float) -> list[CameraCalibration]:
        if self.waiting is None or now - self.waiting[1] <= FRAME_WAIT_S:
            return []
        message, _ = self.waiting
        self.waiting = None
        return [reply(message.request, CalibrationStage.FAILED,
                      f"no camera frame came in {FRAME_WAIT_S:g} s: is the camera running?")]

    def job(self, image: np.ndarray, remap: Callable[[Calibration], Any]) -> CalibrationJob:
        """The frame for the request waiting (copied: the source may reuse its buffer)."""
        assert self.waiting is not None
        message, _ = self.waiting
        self.waiting, self.running = None, message.request
        self.jobs += 1
        return CalibrationJob(message.request, message.stage, image.copy(), self.markers_file,
                              self.ball_radius, self.focal_px, remap)

    def done(self, outcome: CalibrationOutcome) -> CameraCalibration:
        """The outcome's reply; its snapshot queued to go out a part a turn."""
        self.running = None
        jpeg = outcome.jpeg
        parts = outcome.reply.snapshot_parts
        width, height = outcome.jpeg_size
        self._parts = [CameraSnapshot(request=outcome.reply.request, part=i, parts=parts,
                                      width=max(1, width), height=max(1, height),
                                      jpeg=jpeg[i * SNAPSHOT_CHUNK:(i + 1) * SNAPSHOT_CHUNK])
                       for i in range(parts)]
        return outcome.reply

    def next_part(self) -> list[CameraSnapshot]:
        return [self._parts.pop(0)] if self._parts else []
