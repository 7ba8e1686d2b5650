"""What a calibration found and decided, for a person: the markers seen and missing (and
why), each marker's residual in table millimetres, the verdict, and the save that keeps
the old file.

Both `foosball vision calibrate` (vision_cli.py) and the game panel's guided calibration,
which the ball tracker runs on its own frames (foosball.agents.ball_tracker.calibrating),
use these: the decision is `calibration.calibrate`'s
alone (its refusal carries the per-marker offsets it judged, CalibrationRefused.offsets),
`summary` is what both print, `save_calibration` how both write.

- `look(image, layout)`: the markers the frame shows (ids, pixel corners), which of the
  layout's are missing and why: with four or more found, where each missing one should be
  in the image (outside the frame, or inside it but not found: covered, glare, bent, out of
  focus); with fewer, `layout_check.missing_markers`'s text. `Look.where` says the same
  short (MISSING_KINDS and the pixel centre) for a message.
- `attempt(image, layout, ...)`: `calibrate` on the frame; accepted (the Calibration) or
  refused/failed with its text, and each marker's offset from where the others put it.
- `save_calibration(calibration, path)`: the file written atomically (a half-written file
  never replaces a good one), the file it replaces kept beside it as `<name>.prev`.
- `annotate(image, seen)`: the frame with the markers found drawn and their ids, as JPEG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from foosball.files import write_atomically
from foosball.vision.calibration import (
    Calibration,
    CalibrationError,
    CalibrationRefused,
    MarkerLayout,
    calibrate,
    detect_markers,
    write_calibration,
)
from foosball.vision.layout_check import MarkerOffset, missing_markers, quad_centre

PREVIOUS_SUFFIX = ".prev"
# Why a layout's marker is missing from a frame (Look.where), for a message to say it short.
MISSING_KINDS = ("outside", "partly_outside", "not_found", "unknown")


@dataclass(frozen=True)
class Look:
    """The markers one frame shows against the layout."""

    width: int
    height: int
    found: dict[int, np.ndarray]  # id -> 4 pixel corners (ArUco order), layout's or not
    expected: list[int]  # the layout's ids
    missing: dict[int, str] = field(default_factory=dict)  # id -> why (as far as known)
    text: str = ""  # one line: what was seen
    # id -> (why, as one of MISSING_KINDS, and where it should be in pixels; unknown: None)
    where: dict[int, tuple[str, tuple[float, float] | None]] = field(default_factory=dict)

    @property
    def seen(self) -> list[int]:
        return sorted(set(self.found) & set(self.expected))

    @property
    def stray(self) -> list[int]:
        return sorted(set(self.found) - set(self.expected))


def look(image: np.ndarray, layout: MarkerLayout) -> Look:
    """The markers `image` shows, and for each of the layout's that it does not, why."""
    height, width = image.shape[:2]
    found = detect_markers(image)
    wanted = layout.by_id()
    seen = sorted(set(found) & set(wanted))
    missing_ids = sorted(set(wanted) - set(found))
    missing: dict[int, str] = {}
    where: dict[int, tuple[str, tuple[float, float] | None]] = {}
    if len(seen) < 4:
        why = missing_markers(sorted(found), sorted(wanted))
        missing = dict.fromkeys(missing_ids, "fewer than 4 markers found, so where it should "
                                             "be cannot be told")
        where = dict.fromkeys(missing_ids, ("unknown", None))
        text = why
    else:
        pixels = np.concatenate([found[i] for i in seen]).astype(np.float64)
        table = np.array([c for i in seen for c in wanted[i].corners], dtype=np.float64)
        plane_from_pixel, _ = cv2.findHomography(pixels, table, 0)
        pixel_from_plane = None if plane_from_pixel is None else np.linalg.inv(plane_from_pixel)
        for i in missing_ids:
            kind, centre, missing[i] = _why_missing(wanted[i].corners, pixel_from_plane,
                                                    width, height)
            where[i] = (kind, centre)
        text = (f"found {len(seen)} of the layout's {len(wanted)} markers {seen}"
                + (f"; missing {missing_ids}" if missing_ids else "")
                + (f"; also saw {sorted(set(found) - set(wanted))}, which the layout does "
                   "not have (a wrong id?)" if set(found) - set(wanted) else ""))
    return Look(width, height, found, sorted(wanted), missing, text, where)


def _why_missing(corners: Any, pixel_from_plane: np.ndarray | None, width: int, height: int,
                 ) -> tuple[str, tuple[float, float] | None, str]:
    if pixel_from_plane is None:
        return "unknown", None, "not found"
    at = cv2.perspectiveTransform(np.array(corners, dtype=np.float64).reshape(-1, 1, 2),
                                  pixel_from_plane).reshape(-1, 2)
    centre = at.mean(axis=0)
    xy = (float(centre[0]), float(centre[1]))
    inside = (at[:, 0] >= 0) & (at[:, 0] < width) & (at[:, 1] >= 0) & (at[:, 1] < height)
    where = f"it should be at ({centre[0]:.0f}, {centre[1]:.0f}) px"
    if not inside.any():
        return "outside", xy, (f"outside the camera's view ({where}): turn the camera or "
                               "move the marker")
    if not inside.all():
        return "partly_outside", xy, (f"partly outside the camera's view ({where}): all of "
                                      "it and its white margin must be in the frame")
    return "not_found", xy, (f"in view ({where}) but not found: covered by a rod or a man, "
                             "glare, not flat, out of focus, or a different id printed there")


@dataclass(frozen=True)
class Attempt:
    """One calibration from one frame: accepted (calibration set) or not (text says why)."""

    accepted: bool
    text: str
    calibration: Calibration | None = None
    offsets: tuple[MarkerOffset, ...] = ()  # each marker against the others (m)
    blamed: tuple[int, ...] = ()  # the markers the refusal names
    without_blamed: tuple[MarkerOffset, ...] = ()  # the others, without blamed[0]
    refused: bool = False  # False and not accepted: could not be computed at all


def attempt(image: np.ndarray, layout: MarkerLayout, ball_radius: float,
            focal_px: float | None = None, **options: Any) -> Attempt:
    """`calibrate` (the one `foosball vision calibrate` runs) on one frame."""
    try:
        calibration = calibrate(image, layout, ball_radius, focal_px=focal_px, **options)
    except CalibrationRefused as exc:
        return Attempt(False, str(exc), None, exc.offsets, exc.blamed, refused=True,
                       without_blamed=exc.without_blamed)
    except CalibrationError as exc:
        return Attempt(False, str(exc))
    offsets = tuple(MarkerOffset(i, dx, dy) for i, dx, dy in calibration.marker_offsets)
    return Attempt(True, "accepted", calibration, offsets)


def summary(calibration: Calibration) -> dict[str, Any]:
    """What `calibrate` prints about an accepted calibration (and the panel shows)."""
    return {
        "markers": list(calibration.marker_ids),
        "reprojection_rms_px": round(calibration.reprojection_rms_px, 4),
        "reprojection_max_px": round(calibration.reprojection_max_px, 4),
        "table_rms_mm": round(calibration.table_rms_m * 1e3, 3),
        # each marker against the others: where they put it, mm off the layout
        "marker_offsets_mm": ({str(i): round(math.hypot(dx, dy) * 1e3, 1)
                               for i, dx, dy in calibration.marker_offsets}
                              or "not checked: 5 markers or more needed"),
        "camera_centre_m": [round(v, 4) for v in calibration.camera_centre],
        "focal_px": round(calibration.focal_px, 2),
        "focal_estimated": calibration.focal_estimated,
        "distortion": list(calibration.distortion),
        "ball_diameter_mm": round(calibration.ball_radius * 2e3, 2),
    }


def save_calibration(calibration: Calibration, path: str | Path) -> Path | None:
    """Write `calibration` to `path` atomically; the file it replaces (if any) is kept as
    `<path>.prev` first (also atomically), which is returned. A failure part-way leaves the
    good file in place: the old one is copied, never moved, before the new one replaces it."""
    path = Path(path)
    kept = None
    if path.exists():
        kept = path.with_name(path.name + PREVIOUS_SUFFIX)
        write_atomically(kept, path.read_bytes())
    write_calibration(calibration, path)
    return kept


def residuals(layout: MarkerLayout, attempt: Attempt, limit_m: float) -> list[dict[str, Any]]:
    """Each of the layout's markers for a picture over the field: its centre (m, table
    frame), its offset (mm) when checked, and whether the refusal names it. When the refusal
    blames one marker, the others are shown as checked without it (`without` its id): a
    mis-measured marker bends every fit it is in, and its neighbours, fitted through it,
    would look off too."""
    by_id = {o.marker_id: o for o in attempt.offsets}
    without = None
    if attempt.blamed and attempt.without_blamed:
        without = attempt.blamed[0]
        by_id |= {o.marker_id: o for o in attempt.without_blamed if o.marker_id != without}
    rows = []
    for marker in layout.markers:
        x, y = quad_centre(marker.corners)
        row: dict[str, Any] = {"id": marker.marker_id, "x": round(float(x), 4),
                               "y": round(float(y), 4)}
        offset = by_id.get(marker.marker_id)
        if offset is not None:
            row |= {"dx_mm": round(offset.dx * 1e3, 1), "dy_mm": round(offset.dy * 1e3, 1),
                    "mm": round(offset.distance * 1e3, 1),
                    "over": offset.distance > limit_m}
        row["blamed"] = marker.marker_id in attempt.blamed
        if without is not None and offset is not None and marker.marker_id != without:
            row["without"] = without
        rows.append(row)
    return rows


def annotate(image: np.ndarray, seen: Look, max_width: int = 640, quality: int = 80) -> bytes:
    """The frame as JPEG (at most `max_width` wide), each marker found outlined with its id:
    green the layout's, orange one the layout does not have."""
    out = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    scale = min(1.0, max_width / out.shape[1])
    if scale < 1.0:
        out = cv2.resize(out, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    else:
        out = out.copy()
    thick = max(1, round(out.shape[1] / 320))
    for marker_id, corners in seen.found.items():
        colour = (0, 200, 0) if marker_id in seen.expected else (0, 140, 255)
        pts = np.round(np.asarray(corners, dtype=np.float64) * scale).astype(np.int32)
        cv2.polylines(out, [pts.reshape(-1, 1, 2)], True, colour, thick)
        cx, cy = pts.mean(axis=0)
        label = str(marker_id)
        font = cv2.FONT_HERSHEY_SIMPLEX
        size = 0.4 * thick + 0.2
        (tw, th), _ = cv2.getTextSize(label, font, size, thick)
        org = (int(cx - tw / 2), int(cy + th / 2))
        cv2.rectangle(out, (org[0] - 2, org[1] - th - 2), (org[0] + tw + 2, org[1] + 3),
                      (0, 0, 0), -1)
        cv2.putText(out, label, org, font, size, colour, thick, cv2.LINE_AA)
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise CalibrationError("cannot encode the frame as JPEG")
    return bytes(data)
