"""The game panel's guided camera calibration: what the camera sees, the markers found and
missing (and why), then "Calibrate": each marker's residual in table millimetres over the
field, accepted or refused with `foosball vision calibrate`'s own reasons, and on
acceptance the file saved where the ball tracker reads it (atomically, the old one kept
as `<file>.prev`).

`CalibrationFlow` is the pure part: `look(image, now)` and `calibrate(now)` on frames handed
in, `view()` what the page shows. The decision, the texts and the save are
foosball.vision.calibration_report's (the CLI's), not a second implementation. Where the
frames come from is the panel's hardware side: `CameraGrab` opens the tracker's frame
source for one frame (game_page.py wires it from [game_panel] camera_source).

A person at the table (the page's Calibrate tab):
1. "Look": the camera's frame with the markers found outlined and their ids; below, the
   layout's markers missing from it and why (outside the view, or in view but not found).
2. "Calibrate": the same frame calibrated; the field drawn with each marker at its place
   and an arrow for its residual (green within the limit, red beyond it, the one the
   refusal names ringed), and the verdict: accepted (saved to ..., the old one kept as
   ...) or refused with the reason (e.g. "marker 4 is 20 mm from where the layout says
   ..."). Nothing is saved when refused.
The ball tracker reads its calibration when it starts: restart it to use the new one.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from foosball.vision.calibration import MAX_MARKER_OFFSET_M, MarkerLayout, reprojection_limit_px
from foosball.vision.calibration_report import (
    PREVIOUS_SUFFIX,
    Look,
    annotate,
    attempt,
    look,
    residuals,
    save_calibration,
    summary,
)
from foosball.vision.sources import SourceError, open_source

# How long the grab waits for the camera's frames, and how many it reads (the first
# frames of a camera just opened can be dark while its exposure settles; the last is kept).
GRAB_TIMEOUT_S = 2.0
GRAB_FRAMES = 3


def _iso(wall_time: float) -> str:
    return datetime.fromtimestamp(wall_time, UTC).isoformat(timespec="seconds")


class CalibrationFlow:
    """See the module's docstring. `grab()` returns a BGR frame or raises SourceError."""

    def __init__(self, layout: MarkerLayout, ball_radius: float, output: str | Path,
                 focal_px: float | None = None,
                 grab: Callable[[], np.ndarray] | None = None,
                 max_marker_offset_m: float = MAX_MARKER_OFFSET_M) -> None:
        self.layout = layout
        self.ball_radius = ball_radius
        self.output = Path(output)
        self.focal_px = focal_px
        self.grab = grab
        self.max_marker_offset_m = max_marker_offset_m
        self.image: np.ndarray | None = None
        self.seen: Look | None = None
        self.looked_at = ""
        self.jpeg = ""
        self.result: dict[str, Any] | None = None
        self.text = "press Look to see what the camera sees"

    # -- the steps (frames handed in; the clock is the caller's) -------------------------
    def look(self, image: np.ndarray, now: float) -> str:
        """A new frame: the markers it shows. Returns "" (or why not)."""
        self.image = image
        self.seen = look(image, self.layout)
        self.looked_at = _iso(now)
        self.jpeg = base64.b64encode(annotate(image, self.seen)).decode()
        self.result = None
        self.text = self.seen.text
        return ""

    def grab_and_look(self, now: float) -> str:
        if self.grab is None:
            return "no camera for the calibration: set [game_panel] camera_source"
        try:
            image = self.grab()
        except (SourceError, OSError) as exc:
            self.text = f"no frame from the camera: {exc}"
            return self.text
        return self.look(image, now)

    def calibrate(self, now: float) -> str:
        """The frame looked at, calibrated; saved when accepted. Returns "" or why not."""
        if self.image is None:
            return "press Look first: the calibration uses the frame shown"
        result = attempt(self.image, self.layout, self.ball_radius, focal_px=self.focal_px,
                         max_marker_offset_m=self.max_marker_offset_m)
        height, width = self.image.shape[:2]
        view: dict[str, Any] = {
            "at": _iso(now), "accepted": result.accepted, "refused": result.refused,
            "text": result.text, "blamed": list(result.blamed),
            "limit_mm": round(self.max_marker_offset_m * 1e3, 1),
            "limit_px": round(reprojection_limit_px(width, height), 2),
            "markers": residuals(self.layout, result, self.max_marker_offset_m),
            "checked": bool(result.offsets)}
        if result.accepted:
            assert result.calibration is not None
            try:
                kept = save_calibration(result.calibration, self.output)
            except OSError as exc:
                view |= {"accepted": False, "text": f"accepted, but not saved to "
                                                    f"{self.output}: {exc}"}
            else:
                view |= {"saved": str(self.output), "kept": str(kept) if kept else "",
                         "summary": summary(result.calibration)}
                view["text"] = (f"accepted and saved to {self.output}"
                                + (f" (the old one kept as {kept})" if kept else "")
                                + ": restart the ball tracker to use it")
        self.result = view
        self.text = view["text"]
        return "" if view["accepted"] else view["text"]

    # -- what the page shows ---------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        seen = self.seen
        frame = None
        if seen is not None:
            frame = {"jpeg": self.jpeg, "width": seen.width, "height": seen.height,
                     "at": self.looked_at, "found": seen.seen, "stray": seen.stray,
                     "text": seen.text,
                     "missing": [{"id": i, "why": why} for i, why in seen.missing.items()]}
        return {"available": self.grab is not None, "output": str(self.output),
                "kept_as": self.output.name + PREVIOUS_SUFFIX,
                "layout": [m.marker_id for m in self.layout.markers],
                "text": self.text, "frame": frame, "result": self.result}


NO_CAMERA = ("no camera for the calibration on this panel: set [game_panel] camera_source, "
             "markers_file and calibration_file")


def panel_action(flow: CalibrationFlow | None, name: str, wall_time: float,
                 playing: bool) -> str:
    """The page's Look or Calibrate for the game panel's core ("" or why not)."""
    if flow is None:
        return NO_CAMERA
    if playing:
        return "not while a match is playing (stop it first)"
    if name == "look":
        return flow.grab_and_look(wall_time)
    return flow.calibrate(wall_time)


def panel_view(flow: CalibrationFlow | None) -> dict[str, Any]:
    """The page's `calibrating` topic."""
    if flow is None:
        return {"available": False, "text": NO_CAMERA + " (or run `foosball vision "
                "calibrate` on the vision board)"}
    return flow.view()


@dataclass
class CameraGrab:
    """One frame from the tracker's frame source, opened for it and closed again (a camera
    serves one reader: calibrate while the ball tracker is stopped, as before its first
    calibration it is). `spec`: "kind" or "kind:path" (sim, socket:/run/.../camera.sock,
    v4l2:/dev/video0, video:clip.mp4, images:folder)."""

    spec: str
    frames: int = GRAB_FRAMES
    timeout_s: float = GRAB_TIMEOUT_S

    def options(self) -> tuple[str, dict[str, Any]]:
        kind, _, path = self.spec.partition(":")
        if kind == "sim":
            return kind, {"frames": self.frames}
        name = {"v4l2": "device", "gstreamer": "pipeline"}.get(kind, "path")
        return kind, ({name: path} if path else {})

    def __call__(self) -> np.ndarray:
        kind, options = self.options()
        source = open_source(kind, **options)
        try:
            image = None
            for _ in range(self.frames):
                frame = source.read(self.timeout_s)
                if frame is None:
                    break
                image = frame.image
        finally:
            source.close()
        if image is None:
            raise SourceError(f"{self.spec}: no frame within {self.timeout_s:g} s (is the "
                              "ball tracker holding the camera? stop it while calibrating)")
        image = np.asarray(image)
        if image.ndim == 3 and image.shape[2] == 2:  # a V4L2 camera's native YUYV
            import cv2

            image = cv2.cvtColor(image, cv2.COLOR_YUV2BGR_YUYV)
        return image
