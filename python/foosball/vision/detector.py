# Over 500 lines: one pipeline read in its order (threshold, blobs, the seed's filter, the
# sub-pixel centre and its circle fits); the hot path and its fits change together.
"""Ball detection: HSV colour threshold, blobs, the seed's blob filter, sub-pixel centre.

The hot path works on a small window of the frame in the camera's native pixel format:
only the window is converted and thresholded, by one compiled call (`_band.c`) that also
clears what lies off the field and sums the mask's moments, into a buffer allocated once.
Converting and thresholding whole frames is what the seed did and what costs most. While
tracking, a window holding one whole ball and nothing else (most frames) is read from
those moments instead of tracing and measuring outlines (five OpenCV calls). A lost ball
is re-acquired on a decimated copy of the whole frame, then refined in a full-resolution
window.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from foosball.vision._band import band_mask
from foosball.vision.config import DetectorConfig, RodsConfig

PIXEL_FORMATS = ("bgr", "yuyv")

# The ball's outline polygon runs this far inside its image's edge (measured on rendered
# balls: boundary pixel centres, threshold a little outside the half-coverage line).
EDGE_INSET = 0.25

# Expected ball radius in pixels at a pixel position, from the calibration (None: unknown).
RadiusAt = Callable[[float, float], float]

# Sums over a mask's set pixels: count, x, y, x^2, x y, y^2 (its moments up to order 2).
MaskSums = tuple[int, int, int, int, int, int]

# A tracking window's mask is one whole ball and nothing else when its pixel count is this
# share of the expected disc (pi r^2; measured on rendered whole balls: 0.75-1.00, median
# 0.94; partly hidden ones at most 0.87) ...
LONE_BALL_AREA = (0.885, 1.2)
# ... and its polar moment is at most this much above a disc's of the same area. The disc
# has the least polar moment of all shapes of its area (2 pi (mu20 + mu02) / m00^2 = 1);
# a cut, a second blob, a streak all raise it (whole balls: 0.998-1.036, median 1.000;
# partly hidden ones 1.009-1.75).
LONE_BALL_ROUNDNESS = 1.02
# Such a mask's moment ellipse is nearly round: any shape's second moments have
# det >= (area / 4 pi)^2 (equality for ellipses), so a trace within 1.02 of a disc's keeps
# the axes' variance ratio above 0.67, the eccentricity below 0.575 (0.65 allows for the
# pixels' own extent). Blob filters at least this loose need not compute it.
LONE_BALL_MAX_ECCENTRICITY = 0.65


@dataclass(slots=True)  # read-only by use; not frozen: a frozen __init__ costs 3x per frame
class Detection:
    u: float  # pixel centre, full resolution, x to the right
    v: float  # pixel centre, y down
    area: float  # px^2: the outline polygon's (all fragments when partial), or the
    # pixel count of a lone whole ball
    partial: bool  # partly hidden: centre from the enclosing circle, less certain


@dataclass(frozen=True, slots=True)
class BlobStats:
    u: float
    v: float
    area: float
    perimeter: float
    density: float
    eccentricity: float
    span: int = 0  # the outline's larger bounding-box side, px (before `scale`)


def blob_stats(contour: np.ndarray, offset_u: float = 0.0, offset_v: float = 0.0,
               scale: float = 1.0) -> BlobStats | None:
    """The seed's four blob measures and the centroid of one outline (None if degenerate)."""
    m = cv2.moments(contour)
    area = m["m00"]
    if area <= 0.0:
        return None
    perimeter = cv2.arcLength(contour, True)
    _, _, w, h = cv2.boundingRect(contour)
    # The outline runs through boundary pixel centres, so its box is one pixel smaller.
    density = area / max(1, (w - 1) * (h - 1))
    return BlobStats(
        u=offset_u + scale * m["m10"] / area,
        v=offset_v + scale * m["m01"] / area,
        area=area * scale * scale,
        perimeter=perimeter * scale,
        density=min(1.0, density),
        eccentricity=moment_eccentricity(m["mu20"] / area, m["mu11"] / area, m["mu02"] / area),
        span=max(w, h),
    )


def moment_eccentricity(var_u: float, cov: float, var_v: float) -> float:
    """Of the ellipse with these second moments (per unit area) of a blob."""
    spread = math.sqrt(((var_u - var_v) * 0.5) ** 2 + cov * cov)
    major, minor = (var_u + var_v) * 0.5 + spread, (var_u + var_v) * 0.5 - spread
    return math.sqrt(max(0.0, 1.0 - minor / major)) if major > 0 else 1.0


def passes(stats: BlobStats, cfg: DetectorConfig) -> bool:
    return (
        cfg.min_area <= stats.area <= cfg.max_area
        and cfg.min_perimeter <= stats.perimeter <= cfg.max_perimeter
        and stats.density >= cfg.min_density
        and stats.eccentricity <= cfg.max_eccentricity
    )


class ColourThreshold:
    """HSV band -> binary mask of a window of a frame, and the mask's moments (sums), into
    a reused buffer.

    BGR windows are read straight from the frame by one compiled call (`_band.band_mask`:
    OpenCV's HSV conversion and inRange to the bit, the clip mask, the sums; no
    intermediate image). YUYV windows are first converted to BGR by OpenCV, copied into a
    contiguous buffer and converted as one long row: OpenCV's colour conversion pays a
    fixed cost per row (measured: a 182 x 48 strip took 3x the time of a 128 x 128
    square)."""

    def __init__(self, cfg: DetectorConfig | RodsConfig, pixel_format: str, max_rows: int,
                 max_cols: int):
        if pixel_format not in PIXEL_FORMATS:
            raise ValueError(f"pixel format {pixel_format!r} is not one of {PIXEL_FORMATS}")
        self.pixel_format = pixel_format
        pixels = max_rows * max_cols
        self._mask = np.empty(pixels, np.uint8)
        if pixel_format == "yuyv":
            self._yuyv = np.empty(pixels * 2, np.uint8)
            self._bgr = np.empty(pixels * 3, np.uint8)
        # The buffers' views for each window shape met so far (a tracking window has a
        # few dozen shapes): slicing and reshaping afresh cost as much as the conversion.
        self._views: dict[tuple[int, int], tuple[np.ndarray, ...]] = {}
        self.configure(cfg)

    def configure(self, cfg: DetectorConfig | RodsConfig) -> None:
        self._band = bytes((cfg.hue_low, cfg.hue_high, cfg.sat_low, cfg.sat_high,
                            cfg.val_low, cfg.val_high))

    def _views_for(self, rows: int, cols: int) -> tuple[np.ndarray, ...]:
        count = rows * cols
        views: tuple[np.ndarray, ...] = (self._mask[:count].reshape(rows, cols),)
        if self.pixel_format == "yuyv":  # pixel pairs stay pairs: every row has even length
            native = self._yuyv[:count * 2]
            bgr = self._bgr[:count * 3]
            views += (native.reshape(rows, cols, 2),  # the window copied in
                      native.reshape(1, count, 2),  # ... as one row
                      bgr.reshape(1, count, 3),  # converted
                      bgr.reshape(rows, cols, 3))  # ... shaped as the window
        self._views[rows, cols] = views
        return views

    def window(self, image: np.ndarray, x0: int, y0: int, cols: int, rows: int,
               clip: np.ndarray | None = None) -> tuple[np.ndarray, MaskSums]:
        """The mask of image[y0:y0 + rows, x0:x0 + cols] (a view into the reused buffer,
        valid until the next call), cleared where `clip` (frame-sized, or None) is 0, and
        its sums (count, x, y, x^2, x y, y^2; x, y from the window's corner)."""
        views = self._views.get((rows, cols)) or self._views_for(rows, cols)
        if self.pixel_format == "bgr":
            sums = band_mask(image, x0, y0, cols, rows, self._band, self._mask, clip, x0, y0)
        else:
            _, window, line, bgr_line, bgr = views
            np.copyto(window, image[y0:y0 + rows, x0:x0 + cols])
            cv2.cvtColor(line, cv2.COLOR_YUV2BGR_YUYV, dst=bgr_line)
            sums = band_mask(bgr, 0, 0, cols, rows, self._band, self._mask, clip, x0, y0)
        return views[0], sums

    def mask(self, image: np.ndarray) -> np.ndarray:
        """The mask of the whole of `image` (a view into the reused buffer)."""
        rows, cols = image.shape[:2]
        return self.window(image, 0, 0, cols, rows)[0]


class BallDetector:
    """Finds the ball in a window around a predicted pixel, or anywhere in a frame."""

    # Whether `observe` does anything (the tracker skips the call per frame otherwise).
    observes = False

    def __init__(self, cfg: DetectorConfig, pixel_format: str, frame_size: tuple[int, int],
                 radius_at: RadiusAt | None = None,
                 on_table: Callable[[float, float], bool] | None = None,
                 field_mask: np.ndarray | None = None,
                 table_interior: np.ndarray | None = None):
        self.cfg = cfg.validate()
        self.pixel_format = pixel_format
        self.width, self.height = frame_size
        self.radius_at = radius_at
        # Where a ball can be (from the calibration): orange things off the table (a shirt,
        # a cone beside it) are never candidates.
        self.on_table = on_table
        # The pixels a ball's image can cover (from the calibration; None: all): whatever
        # lies outside (the wooden frame, the markers) is cleared from every mask, so it
        # can neither take the candidates' places nor merge with the ball.
        self.field_mask = field_mask
        # Pixels (uint8, nonzero) whose neighbours within two pixels `on_table` accepts:
        # a centre there needs no projection to the table (bytes: the cheapest lookup).
        self._table_interior = None if table_interior is None else cv2.erode(
            table_interior, np.ones((5, 5), np.uint8)).tobytes()
        side = 2 * cfg.roi_max_half
        self._window = ColourThreshold(cfg, pixel_format, side, side)
        dec = cfg.reacquire_decimation
        self._small_rows = self.height // dec
        # YUYV keeps pixel pairs together, so it is decimated half as much across.
        self._small_cols = self.width // dec if pixel_format == "bgr" else 2 * (self.width // dec)
        channels = 3 if pixel_format == "bgr" else 2
        self._small = np.empty((self._small_rows, self._small_cols, channels), np.uint8)
        self._whole = ColourThreshold(cfg, pixel_format, self._small_rows, self._small_cols)
        self._small_field = None if field_mask is None else cv2.resize(
            field_mask, (self._small_cols, self._small_rows), interpolation=cv2.INTER_AREA)
        if self._small_field is not None:
            self._small_field[self._small_field > 0] = 255  # a partly covered cell counts
        self.last_window: tuple[int, int, int, int] | None = None  # x0, y0, cols, rows
        self._last_mask = self._window.mask(np.zeros((2, 2, channels), np.uint8))

    def configure(self, cfg: DetectorConfig) -> None:
        """New thresholds from the panel; buffers keep their size (roi_max_half is fixed)."""
        cfg = cfg.validate()
        if (cfg.roi_max_half, cfg.reacquire_decimation) != (
            self.cfg.roi_max_half, self.cfg.reacquire_decimation
        ):
            raise ValueError("roi_max_half and reacquire_decimation are fixed at start-up")
        self.cfg = cfg
        self._window.configure(cfg)
        self._whole.configure(cfg)

    # --- tracking: a window around the prediction -------------------------------------

    def search_window(self, image: np.ndarray, u: float, v: float, half: int,
                      radius: float = 0.0) -> Detection | None:
        """The ball in a window of half size `half` around (u, v). `radius`: the ball's
        expected image radius there, when tracking: a window holding one whole ball and
        nothing else is then read from the mask's moments (see `_lone_ball`)."""
        half = max(4, min(int(half), self.cfg.roi_max_half))
        cols = min(2 * half, self.width)
        rows = min(2 * half, self.height)
        # Keep the window its full size by shifting it inside the frame; YUYV windows must
        # start on a pixel pair.
        x0 = min(max(int(u) - half, 0), self.width - cols)
        y0 = min(max(int(v) - half, 0), self.height - rows)
        if self.pixel_format == "yuyv":
            x0 &= ~1
            cols &= ~1
        self.last_window = (x0, y0, cols, rows)
        mask, sums = self._window_mask(image, x0, y0, cols, rows)
        self._last_mask = mask
        if radius > 0.0:
            lone = self._lone_ball(sums, rows, cols, x0, y0, radius)
            if lone is not None:
                return lone
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            return None
        return self._choose(contours, x0, y0, u, v, min(cols, rows))

    def _lone_ball(self, sums: MaskSums, rows: int, cols: int, x0: int, y0: int,
                   radius: float) -> Detection | None:
        """The window's mask as one whole ball, or None when it may be anything else (then
        the outlines decide). A mask whose pixel count is the expected disc's and whose
        polar moment is a disc's (the least any shape of that area has) is one disc: a cut,
        a second blob, a streak would raise it. Its centre is the pixels' centroid (on
        rendered whole balls within 0.05 px of the outline's, median 0.01 px)."""
        s00, s10, s01, s20, s11, s02 = sums
        area = float(s00)
        disc = math.pi * radius * radius
        if not LONE_BALL_AREA[0] * disc <= area <= LONE_BALL_AREA[1] * disc:
            return None
        cu, cv = s10 / s00, s01 / s00
        var_u, var_v = s20 / s00 - cu * cu, s02 / s00 - cv * cv
        if 2.0 * math.pi * (var_u + var_v) > LONE_BALL_ROUNDNESS * area:
            return None
        reach = math.sqrt(area / math.pi) + 1.0
        if not (reach <= cu <= cols - 1 - reach and reach <= cv <= rows - 1 - reach):
            return None  # at the window's edge: what lies beyond is not known
        # The seed's blob filter on the disc this is (its outline would run through the
        # boundary pixels' centres, half a pixel inside; its density is pi / 4).
        cfg = self.cfg
        inner = reach - 1.5
        if not (cfg.min_area <= math.pi * inner * inner <= cfg.max_area
                and cfg.min_perimeter <= 2.0 * math.pi * inner <= cfg.max_perimeter
                and cfg.min_density <= math.pi / 4):
            return None
        if cfg.max_eccentricity < LONE_BALL_MAX_ECCENTRICITY and moment_eccentricity(
                var_u, s11 / s00 - cu * cv, var_v) > cfg.max_eccentricity:
            return None
        u, v = x0 + cu, y0 + cv
        if not self._surely_on_table(u, v) and self.on_table is not None and \
                not self.on_table(u, v):
            return None
        return Detection(u, v, area, False)

    def _surely_on_table(self, u: float, v: float) -> bool:
        """A pixel well inside the region `on_table` accepts (a lookup; False: ask it)."""
        inside = self._table_interior
        return inside is not None and inside[int(v) * self.width + int(u)] != 0

    def _choose(self, contours, x0: int, y0: int, u: float, v: float,
                window: int) -> Detection | None:
        cfg = self.cfg
        best: BlobStats | None = None
        best_index = -1
        best_distance = math.inf
        for index, contour in enumerate(contours):
            if len(contour) < 3:
                continue
            stats = blob_stats(contour, x0, y0)
            if stats is None or not passes(stats, cfg):
                continue
            if stats.span >= window:
                continue  # it fills the window from edge to edge: a patch, not a ball
            if self.on_table is not None and not self.on_table(stats.u, stats.v):
                continue
            distance = (stats.u - u) ** 2 + (stats.v - v) ** 2
            if distance < best_distance:
                best, best_index, best_distance = stats, index, distance
        if best is None:
            return None
        if self.radius_at is None:
            return Detection(best.u, best.v, best.area, False)
        # A whole ball's outline fills its smallest enclosing circle, but for the
        # staircase of the boundary pixels (measured: pi r^2 - 2.6 r), and its centroid is
        # that circle's centre. A ball partly hidden by a man, or cut in two by a foot,
        # fills it less and its centroid moves away from the hidden side. (A whole ball
        # far off the optical axis is drawn as an ellipse: it fills less, but stays
        # centred.)
        # And it is as large as the calibration says a ball is there: a ball cut on two
        # sides (a man above, a rod beside it) can look round and centred, but smaller.
        (eu, ev), enclosing = cv2.minEnclosingCircle(contours[best_index])
        radius = self.radius_at(best.u, best.v)
        digital_disc = math.pi * enclosing * enclosing - 2.6 * enclosing
        fill = best.area / digital_disc if digital_disc > 0 else 0.0
        offset = math.hypot(best.u - x0 - eu, best.v - y0 - ev)
        centred = offset <= cfg.whole_offset * enclosing and fill >= cfg.centred_fill
        if (fill >= cfg.whole_fill or centred) and enclosing >= radius - EDGE_INSET - 1.0:
            return Detection(best.u, best.v, best.area, False)
        return self._partial(contours, best_index, best, x0, y0, radius)

    def _partial(self, contours, best_index: int, best: BlobStats, x0: int, y0: int,
                 radius: float) -> Detection:
        """A partly hidden ball: gather the fragments a man's foot may have cut it into, and
        fit a circle to the part of their outline that is the ball's own edge (the points
        on their smallest enclosing circle; a foot's edge lies inside it)."""
        fragments = [contours[best_index]]
        area = best.area
        reach2 = (2.2 * radius) ** 2
        for index, contour in enumerate(contours):
            if index == best_index:
                continue
            m = cv2.moments(contour)
            if m["m00"] <= 0.0:
                continue
            du = x0 + m["m10"] / m["m00"] - best.u
            dv = y0 + m["m01"] / m["m00"] - best.v
            if du * du + dv * dv <= reach2:
                fragments.append(contour)
                area += m["m00"]
        outline = np.concatenate(fragments) if len(fragments) > 1 else fragments[0]
        (cu, cv), enclosing = cv2.minEnclosingCircle(outline)
        # The outline's vertices (measured: as accurate as every boundary pixel, cheaper).
        points = outline.reshape(-1, 2).astype(np.float64)
        edge_radius = radius - EDGE_INSET
        if enclosing < edge_radius - 1.0:
            # Less than half of the ball shows, or it is cut on two sides: the enclosing
            # circle is smaller than the ball. Its centre is where a circle of the ball's
            # radius holds every outline point and passes through the most of them.
            fitted = _fit_known_radius(points, (cu, cv), enclosing, edge_radius)
            if fitted is None:
                return Detection(best.u, best.v, area, True)
            return Detection(x0 + fitted[0], y0 + fitted[1], area, True)
        if abs(enclosing + 0.5 - radius) > 0.2 * radius + 1.0:
            return Detection(best.u, best.v, area, True)  # not a ball-sized arc
        du = points[:, 0] - cu
        dv = points[:, 1] - cv
        reach = max(0.0, enclosing - 1.5)
        on_edge = du * du + dv * dv >= reach * reach
        arc = points[on_edge]
        fit = _fit_circle(arc) if len(arc) >= 6 else None
        if fit is not None and abs(fit[2] + 0.5 - radius) <= 0.2 * radius + 1.0:
            cu, cv = fit[0], fit[1]
        return Detection(x0 + cu, y0 + cv, area, True)

    # --- what is the ball's colour: the parts a second detector replaces ---------------

    def _window_mask(self, image: np.ndarray, x0: int, y0: int, cols: int,
                     rows: int) -> tuple[np.ndarray, MaskSums]:
        """The window's mask, outside the field mask cleared, and its sums."""
        return self._window.window(image, x0, y0, cols, rows, self.field_mask)

    def _frame_mask(self, small: np.ndarray) -> np.ndarray:
        return self._whole.mask(small)

    def observe(self, image: np.ndarray, ball: Detection | None) -> None:
        """Every frame, after the search, with what it found (a background model learns
        the table from it; colour needs nothing)."""

    # --- re-acquisition: the whole frame, decimated -------------------------------------

    def search_frame(self, image: np.ndarray, near: tuple[float, float] | None = None,
                     candidates: int = 3) -> Detection | None:
        """Find the ball anywhere: decimated whole frame, then a full-resolution window.

        Among refined candidates the one nearest `near` wins, else the largest.
        """
        dec = self.cfg.reacquire_decimation
        if self.pixel_format == "bgr":
            cv2.resize(image, (self._small_cols, self._small_rows), dst=self._small,
                       interpolation=cv2.INTER_NEAREST)
            scale_u = self.width / self._small_cols
        else:
            pairs = image.reshape(self.height, self.width // 2, 4)
            small = self._small.reshape(self._small_rows, self._small_cols // 2, 4)
            cv2.resize(pairs, (self._small_cols // 2, self._small_rows), dst=small,
                       interpolation=cv2.INTER_NEAREST)
            scale_u = self.width / self._small_cols
        scale_v = self.height / self._small_rows
        mask = self._frame_mask(self._small)
        if self._small_field is not None:
            cv2.bitwise_and(mask, self._small_field, dst=mask)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        # A decimated ball is a few pixels across; only its size is worth checking here.
        min_area = 0.3 * self.cfg.min_area / (scale_u * scale_v)
        max_area = 2.0 * self.cfg.max_area / (scale_u * scale_v)
        found: list[tuple[float, float, float]] = []
        for contour in contours:
            x, y, w, h = cv2.boundingRect(contour)
            pixels = float(w * h)
            if pixels < min_area or pixels > 2.0 * max_area:
                continue
            m = cv2.moments(contour)
            area = m["m00"] if m["m00"] > 0 else pixels * 0.5
            if area > max_area:
                continue
            if m["m00"] > 0:
                cu, cv_ = m["m10"] / m["m00"], m["m01"] / m["m00"]
            else:
                cu, cv_ = x + (w - 1) * 0.5, y + (h - 1) * 0.5
            u, v = (cu + 0.5) * scale_u - 0.5, (cv_ + 0.5) * scale_v - 0.5
            if self.on_table is not None and not self.on_table(u, v):
                continue
            found.append((area, u, v))
        found.sort(reverse=True)
        half = max(self.cfg.refine_half, 2 * dec + 12)
        best: Detection | None = None
        best_distance = math.inf
        for _, u, v in found[:candidates]:
            detection = self.search_window(image, u, v, half)
            if detection is None:
                continue
            if near is None:
                return detection
            distance = (detection.u - near[0]) ** 2 + (detection.v - near[1]) ** 2
            if distance < best_distance:
                best, best_distance = detection, distance
        return best

    # --- preview for the game panel -----------------------------------------------------

    def frame_mask(self, image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """The threshold mask of the whole frame scaled to `size` (width, height), for the
        panel's tuning preview; not on the tracking path, so it may allocate."""
        width, height = size
        if self.pixel_format == "yuyv":
            image = cv2.cvtColor(image, cv2.COLOR_YUV2BGR_YUYV)
        small = cv2.resize(image, (width, height), interpolation=cv2.INTER_NEAREST)
        return ColourThreshold(self.cfg, "bgr", height, width).mask(small)


# detector.method -> (module, class): one table, read only by make_detector.
DETECTORS: dict[str, tuple[str, str]] = {
    "colour": ("foosball.vision.detector", "BallDetector"),
    "background": ("foosball.vision.background", "BackgroundDetector"),
}


def make_detector(cfg: DetectorConfig, pixel_format: str, frame_size: tuple[int, int],
                  **options: Any) -> BallDetector:
    """The detector the settings chose (`detector.method`); both have one interface."""
    module_name, class_name = DETECTORS[cfg.method]
    detector_class = getattr(importlib.import_module(module_name), class_name)
    return detector_class(cfg, pixel_format, frame_size, **options)  # type: ignore[no-any-return]


def _fit_circle(points: np.ndarray) -> tuple[float, float, float] | None:
    """Least-squares circle (Kasa), u^2 + v^2 + a u + b v + c = 0, from its normal
    equations on coordinates centred on the mean (where (a, b) decouple from c)."""
    count = len(points)
    mean = points.sum(axis=0) / count  # (np.mean's Python wrapper costs more than this)
    centred = points - mean
    z = (centred * centred).sum(axis=1)
    (suu, suv), (_, svv) = (centred.T @ centred).tolist()
    suz, svz = (centred.T @ z).tolist()
    det = suu * svv - suv * suv
    if det <= 1e-9:
        return None
    a = -(suz * svv - svz * suv) / det
    b = -(svz * suu - suz * suv) / det
    cu, cv = -a / 2, -b / 2
    r2 = cu * cu + cv * cv + float(z.sum()) / count
    if not r2 > 0:
        return None
    return cu + float(mean[0]), cv + float(mean[1]), math.sqrt(r2)


def _fit_fixed_circle(points: np.ndarray, start: tuple[float, float], radius: float,
                      iterations: int = 4) -> tuple[float, float] | None:
    """Centre of a circle of known radius through the outline points that lie on it (the
    ball's own edge; an occluder's edge lies inside), by Gauss-Newton from `start`."""
    cu, cv = start
    for _ in range(iterations):
        du = points[:, 0] - cu
        dv = points[:, 1] - cv
        distance = np.hypot(du, dv)
        arc = distance >= radius - 1.5
        if int(arc.sum()) < 5:
            return None
        d = np.maximum(distance[arc], 1e-9)
        # residual r_i = d_i - R; d r_i / d c = -(p_i - c) / d_i
        ju, jv = -du[arc] / d, -dv[arc] / d
        residual = d - radius
        a11, a12, a22 = float(ju @ ju), float(ju @ jv), float(jv @ jv)
        b1, b2 = float(ju @ residual), float(jv @ residual)
        det = a11 * a22 - a12 * a12
        if det <= 1e-9:
            return None
        step_u = -(a22 * b1 - a12 * b2) / det
        step_v = -(a11 * b2 - a12 * b1) / det
        cu, cv = cu + step_u, cv + step_v
        if abs(step_u) + abs(step_v) < 0.01:
            break
    if math.hypot(cu - start[0], cv - start[1]) > radius:
        return None
    return float(cu), float(cv)


_DIRECTIONS = np.exp(1j * np.linspace(0.0, 2 * np.pi, 24, endpoint=False))


def _fit_known_radius(points: np.ndarray, centre: tuple[float, float], enclosing: float,
                      radius: float) -> tuple[float, float] | None:
    """Centre of a circle of known `radius` holding every outline point and passing through
    as many as possible (the ball's own edge; the occluders' edges lie inside). Candidate
    centres around the enclosing circle's centre (24 directions, 4 distances up to where a
    chord of the enclosing circle's size would put it) are scored in one array operation,
    the best is refined by Gauss-Newton on the points that lie on its circle."""
    reach = math.sqrt(max(radius * radius - enclosing * enclosing, 0.0))
    if reach < 0.25:
        return float(centre[0]), float(centre[1])
    offsets = (_DIRECTIONS[None, :] * np.linspace(0.25, 1.0, 4)[:, None] * reach).ravel()
    candidates = complex(*centre) + np.concatenate([[0j], offsets])
    samples = points[:, 0] + 1j * points[:, 1]
    distance = np.abs(samples[:, None] - candidates[None, :])
    on_circle = (np.abs(distance - radius) <= 0.8).sum(axis=0)
    outside = (distance > radius + 0.8).sum(axis=0)
    best = int(np.argmax(on_circle - 4 * outside))
    start = candidates[best]
    return _fit_fixed_circle(points, (float(start.real), float(start.imag)), radius)
