# Over 500 lines: the calibration from markers, the file that keeps it and the projector that
# maps the ball with it change together; the layout check and the file schemas are their own
# modules (layout_check.py, layout_file.py).
"""Camera calibration from ArUco markers at known table positions (four at least; with a
fifth or more each is checked against the others, so a mis-measured one is named).

The markers' corners give the homography from pixels to the marker plane (least squares
over all their corners, so the reprojection error says something). The ball's centre is not on
that plane but a ball radius above the field, so a pixel -> plane result is moved along the
camera ray to the ball-centre height: with the camera centre C (from solvePnP on the same
corners) the correction is a scaling about C's foot point, itself a homography, folded into
one 3x3 matrix used per frame.

The camera's focal length comes from the configuration, or is estimated from the homography
when the camera looks at the table at an angle (a camera looking straight down cannot tell
its height from its focal length; then give it: `calibrate --focal-px`, FOCAL_HELP).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from foosball.files import load_file, write_atomically
from foosball.schema import SettingError, parse, setting
from foosball.vision.layout_check import (
    MAX_MARKER_OFFSET_M,
    MIN_MARKERS_TO_NAME,
    CameraFor,
    MarkerOffset,
    Misplaced,
    layout_hints,
    marker_offsets,
    misplaced_marker,
    missing_markers,
)
from foosball.vision.layout_file import parse_layout_file

CALIBRATION_VERSION = 1
ARUCO_DICTIONARY = cv2.aruco.DICT_4X4_50
# A calibration whose marker corners reproject worse than this (RMS, px, at 640x480) is
# refused: the simulator's 22-px markers give 0.55 px, a layout with one marker turned
# gives tens. The same view at a higher resolution has proportionally larger errors, so
# the limit scales with the image's diagonal (reprojection_limit_px).
MAX_REPROJECTION_RMS_PX = 2.0
REFERENCE_DIAGONAL_PX = 800.0  # 640x480
# The example layout's markers (m): beyond the field's corners, and beside the middle of
# each long side (between the two 5-man rods), where the simulator draws them too.
EXAMPLE_MARKER_CENTRES = ((-0.655, 0.40), (0.655, 0.40), (0.655, -0.40), (-0.655, -0.40),
                          (0.0, 0.40), (0.0, -0.40))
FOCAL_MEASURE = ("lay a ruler flat on the field under the camera: F = (its length in the "
                 "image, px) x (the lens's height above the field, m) / (its length, m); or "
                 "from the datasheet: F = the lens's focal length (mm) / the pixel pitch "
                 "(mm) at the resolution captured")
FOCAL_HELP = f"give the focal length in pixels: `--focal-px F`. To measure F, {FOCAL_MEASURE}"


def reprojection_limit_px(width: int, height: int) -> float:
    """The reprojection RMS limit for an image of this size (2 px at 640x480)."""
    return MAX_REPROJECTION_RMS_PX * math.hypot(width, height) / REFERENCE_DIAGONAL_PX

LAYOUT_HELP = """\
Marker layout file (JSON): where each printed ArUco marker (dictionary DICT_4X4_50, ids 0-49)
lies on the table, in the table frame: origin at the centre of the playing field, x along the
long side towards the human's goal, y across (to the left seen from the robot's goal), metres.

  {"height": 0.0,                      marker plane above the field, m (0: on the field)
   "markers": [
     {"id": 0, "x": -0.655, "y": 0.40, "size": 0.05, "yaw": 0.0},
     ...]}

  id    the number the marker encodes (printed markers: `cv2.aruco.generateImageMarker`)
  x, y  the centre of the marker's black square, m
  size  the side of the black square (not the white margin), m
  yaw   rad, the marker's orientation: 0 when the top edge of the printed marker image
        faces +y and its left edge faces -x; pi/2 turns
        it a quarter turn anticlockwise seen from above
  or, instead of x/y/size/yaw: "corners": [[x, y] x 4], the black square's corners in the
        marker image's order top-left, top-right, bottom-right, bottom-left

At least 4 distinct ids, visible in one frame, spread over the table (the corners of the
field or beyond them). Give 5 or more (the example has 6: the corners and the middle of
each side): then every marker is checked against the others, and a marker whose measured
position is off by more than 10 mm is refused by its id, with how far and which way.
`foosball vision layout-example` writes a file to start from."""


class CalibrationError(ValueError):
    """Calibration cannot be computed or a calibration file is wrong."""


class CalibrationRefused(CalibrationError):
    """The markers were found but do not fit their layout well enough to trust. When the
    markers were checked against each other it carries each one's offset (`offsets`) and
    the ids the refusal blames (`blamed`; the others' offsets without the first of them,
    `without_blamed`), for a picture of them (the game panel's)."""

    def __init__(self, text: str, offsets: tuple[MarkerOffset, ...] = (),
                 blamed: tuple[int, ...] = (),
                 without_blamed: tuple[MarkerOffset, ...] = ()) -> None:
        super().__init__(text)
        self.offsets = offsets
        self.blamed = blamed
        self.without_blamed = without_blamed  # the others, checked without blamed[0]


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker on the table: its id and its four corners in the table frame (m), in
    ArUco order (the printed image's top-left, top-right, bottom-right, bottom-left)."""

    marker_id: int
    corners: tuple[tuple[float, float], ...]

    @staticmethod
    def square(marker_id: int, x: float, y: float, size: float, yaw: float = 0.0) -> Marker:
        """A marker lying face up, its image's x axis at `yaw` from the table's +x; seen
        from above (z up) the image's "down" is table -y when yaw = 0."""
        h = size / 2
        local = ((-h, h), (h, h), (h, -h), (-h, -h))
        c, s = math.cos(yaw), math.sin(yaw)
        return Marker(marker_id, tuple((x + c * a - s * b, y + s * a + c * b) for a, b in local))


@dataclass(frozen=True, slots=True)
class MarkerLayout:
    markers: tuple[Marker, ...]
    height: float = 0.0  # marker plane above the field, m

    def by_id(self) -> dict[int, Marker]:
        return {m.marker_id: m for m in self.markers}

    def to_json(self) -> dict[str, Any]:
        return {
            "height": self.height,
            "markers": [{"id": m.marker_id, "corners": [list(c) for c in m.corners]}
                        for m in self.markers],
        }

    @staticmethod
    def from_json(data: Any) -> MarkerLayout:
        """Markers as {"id", "corners": [[x, y] x4]} or {"id", "x", "y", "size", "yaw"},
        checked by the settings parser (foosball.schema, vision/layout_file.py): errors name
        the key, `markers[3] x: a number (m), not 'a'`."""
        try:
            file = parse_layout_file(data)
        except SettingError as exc:
            raise CalibrationError(str(exc)) from exc
        markers = [Marker(m.id, m.corners) if m.corners is not None
                   else Marker.square(m.id, m.x, m.y, m.size, m.yaw)  # type: ignore[arg-type]
                   for m in file.markers]
        ids = [m.marker_id for m in markers]
        if len(set(ids)) != len(ids) or len(ids) < 4:
            raise CalibrationError(f"markers: need at least 4 distinct ids, got {ids}")
        return MarkerLayout(tuple(markers), file.height)


@dataclass(frozen=True, slots=True)
class Calibration:
    image_size: tuple[int, int]  # width, height
    plane_from_pixel: np.ndarray  # 3x3, pixel -> marker plane (x, y), m
    marker_height: float  # marker plane above the field, m
    ball_centre_height: float  # ball radius, m
    ball_radius: float
    camera_centre: tuple[float, float, float]  # table frame, m
    focal_px: float
    focal_estimated: bool
    reprojection_rms_px: float
    reprojection_max_px: float
    table_rms_m: float  # detected corners mapped to the table vs their configured position
    marker_ids: tuple[int, ...]
    # Lens: principal point (px) and OpenCV distortion (k1, k2, p1, p2, k3). The homography
    # maps *undistorted* pixels; all zeros (the default) is a distortion-free camera.
    principal: tuple[float, float] = (0.0, 0.0)
    distortion: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    # When the markers were seen; None for a file written before it was kept.
    created: datetime | None = None
    # Per marker (5 or more seen): (id, dx, dy), m, where the other markers put its centre
    # minus where the layout says; empty when there were too few to check one.
    marker_offsets: tuple[tuple[int, float, float], ...] = ()

    def for_ball(self, radius: float) -> Calibration:
        """The same camera for a ball of another radius (the settings' ball diameter)."""
        return replace(self, ball_radius=radius, ball_centre_height=radius)

    def ball_from_pixel(self) -> np.ndarray:
        """3x3 homography from pixels to the ball centre's (x, y) at its height."""
        cx, cy, cz = self.camera_centre
        # A point P on the marker plane seen at a pixel; the ball centre on the same ray at
        # height h is C + (P - C) * (cz - h) / (cz - h_plane): a scaling about (cx, cy).
        s = (cz - self.ball_centre_height) / (cz - self.marker_height)
        scale_about_camera = np.array([[s, 0, (1 - s) * cx], [0, s, (1 - s) * cy], [0, 0, 1]])
        return scale_about_camera @ self.plane_from_pixel

    def to_json(self) -> dict[str, Any]:
        created = {} if self.created is None else {"created": self.created.isoformat()}
        return {
            "version": CALIBRATION_VERSION,
            **created,
            "image_size": list(self.image_size),
            "plane_from_pixel": self.plane_from_pixel.tolist(),
            "marker_height": self.marker_height,
            "ball_centre_height": self.ball_centre_height,
            "ball_radius": self.ball_radius,
            "camera_centre": list(self.camera_centre),
            "focal_px": self.focal_px,
            "focal_estimated": self.focal_estimated,
            "reprojection_rms_px": self.reprojection_rms_px,
            "reprojection_max_px": self.reprojection_max_px,
            "table_rms_m": self.table_rms_m,
            "marker_ids": list(self.marker_ids),
            "principal": list(self.principal),
            "distortion": list(self.distortion),
            "marker_offsets_m": [list(o) for o in self.marker_offsets],
        }

    @staticmethod
    def from_json(data: Any) -> Calibration:
        """A calibration file's decoded JSON, checked by the one settings parser
        (foosball.schema, `CalibrationFile`): errors name the key, `focal_px: a number, not
        'x'`; load_calibration puts the file's name before them."""
        if not isinstance(data, dict):
            raise CalibrationError(f"a calibration (a JSON object), not {data!r}")
        try:
            file: CalibrationFile = parse(CalibrationFile, data, "")
        except SettingError as exc:
            raise CalibrationError(str(exc)) from exc
        if file.camera_centre[2] <= file.ball_centre_height:
            raise CalibrationError(f"camera_centre: {list(file.camera_centre)} is not above "
                                   f"the ball (ball_centre_height {file.ball_centre_height})")
        width, height = file.image_size
        return Calibration(
            image_size=(width, height),
            plane_from_pixel=file.plane_from_pixel,
            marker_height=file.marker_height,
            ball_centre_height=file.ball_centre_height,
            ball_radius=file.ball_radius,
            camera_centre=file.camera_centre,  # type: ignore[arg-type]
            focal_px=file.focal_px,
            focal_estimated=file.focal_estimated,
            reprojection_rms_px=file.reprojection_rms_px,
            reprojection_max_px=file.reprojection_max_px,
            table_rms_m=file.table_rms_m,
            marker_ids=file.marker_ids,
            principal=file.principal or ((width - 1) / 2, (height - 1) / 2),  # type: ignore[arg-type]
            distortion=file.distortion,  # type: ignore[arg-type]
            created=file.created,
            marker_offsets=file.marker_offsets_m,
        )


def _created(value: Any, where: str) -> datetime | None:
    """The file's "created" time; files from before it was written have none."""
    if value is None:
        return None
    try:
        created = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        created = None
    # Without its UTC offset a time cannot be placed (our writer always gives one).
    if created is None or created.utcoffset() is None:
        raise SettingError(f"{where}: an ISO time with its UTC offset, not {value!r}")
    return created


def _numbers(count: int, kind: type = float) -> Any:
    """A convert for a list of `count` finite numbers (integers when `kind` is int)."""

    def convert(value: Any, where: str) -> tuple[Any, ...]:
        wanted = "integers" if kind is int else "finite numbers"
        if not isinstance(value, list) or len(value) != count or not all(
                not isinstance(v, bool) and isinstance(v, int if kind is int else int | float)
                and math.isfinite(v) for v in value):
            raise SettingError(f"{where}: {count} {wanted}, not {value!r}")
        return tuple(kind(v) for v in value)

    return convert


def _matrix(value: Any, where: str) -> np.ndarray:
    try:
        matrix = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        matrix = np.zeros(0)
    if matrix.shape != (3, 3) or not np.all(np.isfinite(matrix)):
        raise SettingError(f"{where}: a finite 3x3 matrix, not {value!r}")
    return matrix


def _offsets(value: Any, where: str) -> tuple[tuple[int, float, float], ...]:
    if not isinstance(value, list):
        raise SettingError(f"{where}: a list of [id, dx, dy], not {value!r}")
    return tuple((int(i), float(dx), float(dy)) for i, dx, dy in
                 (_numbers(3)(item, f"{where}[{n}]") for n, item in enumerate(value)))


def _version(value: Any, where: str) -> int:
    if value != CALIBRATION_VERSION or isinstance(value, bool):
        raise SettingError(f"{where}: {value!r} is not {CALIBRATION_VERSION}")
    return CALIBRATION_VERSION


@dataclass(frozen=True)
class CalibrationFile:
    """What a calibration file (Calibration.to_json) holds, as the settings parser checks
    it: each key's type and range here; whether the camera is above the ball in
    Calibration.from_json."""

    version: int = setting(convert=_version)
    image_size: tuple[int, ...] = setting(convert=_numbers(2, int))  # width, height (px)
    plane_from_pixel: Any = setting(convert=_matrix)
    marker_height: float = setting(unit="m")
    ball_centre_height: float = setting(unit="m")
    ball_radius: float = setting(unit="m")
    camera_centre: tuple[float, ...] = setting(convert=_numbers(3))  # x, y, z (m)
    focal_px: float = setting(unit="px")
    focal_estimated: bool = setting()
    reprojection_rms_px: float = setting(low=0.0, unit="px")
    reprojection_max_px: float = setting(low=0.0, unit="px")
    table_rms_m: float = setting(low=0.0, unit="m")
    marker_ids: tuple[int, ...] = setting()
    created: Any = setting(None, convert=_created)  # absent in files written before it was
    principal: tuple[float, ...] | None = setting(None, convert=_numbers(2))  # None: centre
    distortion: tuple[float, ...] = setting((0.0,) * 5, convert=_numbers(5))
    marker_offsets_m: tuple[tuple[int, float, float], ...] = setting((), convert=_offsets)


def detect_markers(gray_or_bgr: np.ndarray) -> dict[int, np.ndarray]:
    """ArUco (DICT_4X4_50) marker id -> its 4 corners in pixels (sub-pixel refined)."""
    image = gray_or_bgr
    if image.ndim == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids = _aruco_detect(image)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2).astype(np.float64) for i, c in zip(ids.ravel(), corners,
                                                                      strict=True)}


def _aruco_detect(gray: np.ndarray) -> tuple[Any, np.ndarray | None]:
    """OpenCV's ArUco markers with sub-pixel corners: the ArucoDetector class where OpenCV
    has it (4.7 on, as the images' 4.9), else the functions before it (Debian bookworm's
    4.6, which the booted rig's boards run). Not the class's parameters on 4.6: there
    `DetectorParameters()` makes an empty object and setting a field on it kills the
    process. 4.6 refines every corner in one fixed window, which on markers of 20-30 px
    pulls corners 3 px out; the corners are refined here as 4.8 does it (a window of 0.3
    of the marker's module, at most 5 px), which gives the same corners."""
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY)
    if hasattr(cv2.aruco, "ArucoDetector"):
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        corners, ids, _ = cv2.aruco.ArucoDetector(dictionary, params).detectMarkers(gray)
        return corners, ids
    params = cv2.aruco.DetectorParameters_create()
    corners, ids, _ = cv2.aruco.detectMarkers(gray, dictionary, parameters=params)
    modules = 4 * (dictionary.markerSize + 2 * params.markerBorderBits)
    stop = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS,
            params.cornerRefinementMaxIterations, params.cornerRefinementMinAccuracy)
    for quad in corners:  # float32, 1 x 4 x 2: refined in place
        perimeter = float(np.linalg.norm(quad[0] - np.roll(quad[0], -1, axis=0), axis=1).sum())
        window = min(params.cornerRefinementWinSize, max(1, round(0.3 * perimeter / modules)))
        cv2.cornerSubPix(gray, quad.reshape(-1, 1, 2), (window, window), (-1, -1), stop)
    return corners, ids


def _estimate_focal(h: np.ndarray, cx: float, cy: float) -> float | None:
    """Focal length (px) from a plane -> pixel homography with a known principal point,
    square pixels and no skew (Zhang's constraints r1.r2 = 0 and |r1| = |r2| on one view).
    None when the view is too close to fronto-parallel to tell."""
    t = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], dtype=np.float64)
    g = t @ h
    g = g / np.linalg.norm(g[:, 0])
    h1, h2 = g[:, 0], g[:, 1]
    # Each constraint reads a * (1 / f^2) + b = 0.
    rows = np.array([h1[0] * h2[0] + h1[1] * h2[1],
                     h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    rhs = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
    denominator = float(rows @ rows)
    inverse_f2 = -float(rows @ rhs) / denominator if denominator > 0 else 0.0
    if inverse_f2 <= 0:
        return None
    focal = 1.0 / math.sqrt(inverse_f2)
    # A tilt too small to measure leaves the constraint terms at noise level. On the
    # simulator's rendered markers: 0.013 (7 deg tilt) estimates within 2.5 %, 0.0025
    # (3 deg) is 8 % off.
    if float(np.abs(rhs).max()) * focal * focal < 0.01:
        return None
    return focal


def calibrate(image: np.ndarray, layout: MarkerLayout, ball_radius: float,
              focal_px: float | None = None,
              principal: tuple[float, float] | None = None,
              distortion: tuple[float, ...] | None = None,
              max_reprojection_px: float | None = None,
              max_marker_offset_m: float = MAX_MARKER_OFFSET_M) -> Calibration:
    """Calibration from one frame showing the markers of `layout`. A lens `distortion`
    (OpenCV k1, k2, p1, p2, k3, from a one-time chessboard calibration of the camera) needs
    `focal_px`; the marker corners are undistorted before anything else. Refused
    (CalibrationRefused, with what to check) when the corners' reprojection RMS exceeds
    `max_reprojection_px` (default: reprojection_limit_px of the image), or, with five
    markers or more, when one lies further than `max_marker_offset_m` from where the
    others put it."""
    height, width = image.shape[:2]
    if max_reprojection_px is None:
        max_reprojection_px = reprojection_limit_px(width, height)
    found = detect_markers(image)
    wanted = layout.by_id()
    seen = sorted(set(found) & set(wanted))
    if len(seen) < 4:
        raise CalibrationError(missing_markers(sorted(found), sorted(wanted)))
    pixels = np.concatenate([found[i] for i in seen])
    cx, cy = principal if principal is not None else ((width - 1) / 2, (height - 1) / 2)
    lens = tuple(float(v) for v in (distortion or (0.0,) * 5))
    if len(lens) != 5:
        raise CalibrationError("distortion: expected k1, k2, p1, p2, k3")
    if any(lens):
        if focal_px is None:
            raise CalibrationError("a lens distortion needs the camera's focal_px as well")
        pixels = np.array([undistort_pixel(u, v, focal_px, cx, cy, lens)  # type: ignore[arg-type]
                           for u, v in pixels])
    table = np.array([c for i in seen for c in wanted[i].corners], dtype=np.float64)
    plane_from_pixel, _ = cv2.findHomography(pixels, table, 0)
    if plane_from_pixel is None:
        raise CalibrationError("the marker corners do not determine a homography")
    pixel_from_plane = np.linalg.inv(plane_from_pixel)
    projected = cv2.perspectiveTransform(table.reshape(-1, 1, 2), pixel_from_plane).reshape(-1, 2)
    pixel_errors = np.linalg.norm(projected - pixels, axis=1)
    mapped = cv2.perspectiveTransform(pixels.reshape(-1, 1, 2), plane_from_pixel).reshape(-1, 2)
    table_errors = np.linalg.norm(mapped - table, axis=1)
    rms = float(np.sqrt(np.mean(pixel_errors ** 2)))
    table_mm = float(np.sqrt(np.mean(table_errors ** 2))) * 1e3
    given = focal_px

    def camera_for(plane_from_pixels: np.ndarray) -> np.ndarray | None:
        focal = given or _estimate_focal(np.linalg.inv(plane_from_pixels), cx, cy)
        return None if focal is None else np.array(
            [[focal, 0, cx], [0, focal, cy], [0, 0, 1]], dtype=np.float64)

    offsets = _check_layout({i: pixels[4 * k:4 * k + 4] for k, i in enumerate(seen)}, wanted,
                            f"reprojection RMS {rms:.1f} px (limit {max_reprojection_px:.1f} "
                            f"px), table RMS {table_mm:.0f} mm",
                            rms > max_reprojection_px, max_marker_offset_m, camera_for,
                            layout.height)
    estimated = focal_px is None
    if focal_px is None:
        focal_px = _estimate_focal(pixel_from_plane, cx, cy)
        if focal_px is None:
            raise CalibrationError(
                "the camera looks almost straight down, so its focal length cannot be "
                f"estimated from the markers: {FOCAL_HELP}")
    camera = np.array([[focal_px, 0, cx], [0, focal_px, cy], [0, 0, 1]], dtype=np.float64)
    object_points = np.column_stack([table, np.full(len(table), layout.height)])
    # SQPnP finds the global minimum. IPPE (used before) returned the wrong one of its two
    # planar solutions on the simulator's straight-down camera: the camera centre 28 mm
    # off in y, which put anything above the field (the ball, the rods) 0.5-2.4 mm off.
    ok, rvec, tvec = cv2.solvePnP(object_points, pixels, camera, None,
                                  flags=cv2.SOLVEPNP_SQPNP)
    if not ok:
        raise CalibrationError("solvePnP failed on the marker corners")
    rotation, _ = cv2.Rodrigues(rvec)
    centre = (-rotation.T @ tvec).ravel()
    if centre[2] <= layout.height + ball_radius:
        raise CalibrationError(f"camera centre {centre.tolist()} is not above the table")
    return Calibration(
        image_size=(width, height),
        plane_from_pixel=plane_from_pixel / plane_from_pixel[2, 2],
        marker_height=layout.height,
        ball_centre_height=ball_radius,
        ball_radius=ball_radius,
        camera_centre=(float(centre[0]), float(centre[1]), float(centre[2])),
        focal_px=float(focal_px),
        focal_estimated=estimated,
        reprojection_rms_px=rms,
        reprojection_max_px=float(pixel_errors.max()),
        table_rms_m=float(np.sqrt(np.mean(table_errors ** 2))),
        marker_ids=tuple(seen),
        principal=(float(cx), float(cy)),
        distortion=lens,  # type: ignore[arg-type]
        created=datetime.now(UTC).replace(microsecond=0),
        marker_offsets=tuple((o.marker_id, o.dx, o.dy) for o in offsets),
    )


def _check_layout(seen: dict[int, np.ndarray], wanted: dict[int, Marker], fit: str,
                  pixels_too_far: bool, max_offset: float, camera_for: CameraFor,
                  height: float) -> list[MarkerOffset]:
    """Refuse (CalibrationRefused) a layout the markers seen (undistorted pixel corners by
    id) do not fit, with what to check; else each marker's offset from the others (empty
    with fewer than five). `fit` says how well the corners fit, for the refusal;
    `camera_for` the camera matrix for a subset's homography (checked through its pose)."""
    refusal = f"the markers do not fit their layout: {fit}. Check: "
    hints = layout_hints(seen, wanted) if pixels_too_far else []
    # Ids at the wrong places or a marker turned: every corner is paired with the wrong
    # point, so the markers cannot be checked against each other; say that first.
    paired_wrong = [h.text for h in hints if h.kind in ("places", "yaw")]
    if paired_wrong:
        raise CalibrationRefused(refusal + "; ".join(paired_wrong))
    offsets = marker_offsets(seen, wanted, camera_for, height)
    misplaced = misplaced_marker(seen, wanted, offsets, max_offset, camera_for, height)
    if misplaced is not None:
        raise CalibrationRefused(f"{_misplaced_text(misplaced, max_offset)} ({fit})",
                                 tuple(offsets),
                                 tuple(o.marker_id for o in misplaced.suspects),
                                 misplaced.rest)
    if pixels_too_far:
        raise CalibrationRefused(refusal + ("; ".join(h.text for h in hints) or
                                            "the ids, each marker's yaw and size in the layout "
                                            "file"), tuple(offsets))
    return offsets


def _misplaced_text(misplaced: Misplaced, limit: float) -> str:
    first = misplaced.suspects[0]
    allowed = f"more than the {limit * 1e3:.0f} mm allowed"
    if math.isinf(misplaced.spread):
        return ("the markers do not agree with each other: "
                + "; ".join(o.describe() for o in misplaced.suspects)
                + f", {allowed}. With {MIN_MARKERS_TO_NAME - 1} markers in view the check "
                f"cannot tell which is mis-measured ({MIN_MARKERS_TO_NAME} name it): measure "
                "their centres again, or bring another marker into view")
    if len(misplaced.suspects) > 1:
        ids = [o.marker_id for o in misplaced.suspects]
        return (f"one of markers {ids} is not where the layout says ("
                + "; ".join(o.describe() for o in misplaced.suspects)
                + f"), {allowed}; without any one of them the others agree, so these "
                "markers cannot tell which: measure their centres again, or add a marker")
    if misplaced.spread > limit:
        second = misplaced.next_suspect
        also = "" if second is None else f"; without it, {second.describe()}"
        return (f"{first.describe()}, {allowed}; the others disagree among themselves too "
                f"(up to {misplaced.spread * 1e3:.0f} mm without it{also}): measure every "
                "marker's centre again, these first")
    return (f"{first.describe()}, {allowed}; the other markers agree with each other within "
            f"{misplaced.spread * 1e3:.0f} mm. Measure where marker {first.marker_id}'s "
            "centre lies again")


def example_layout() -> dict[str, Any]:
    """A layout file to edit: six 50 mm markers just beyond the corners of a 1200 x 680 mm
    field and beside the middle of each side (where the simulator puts them), with what
    each key means. Six, not four: with five or more, each is checked against the others."""
    return {
        "_comment": "foosball vision calibrate --help explains every key; metres, table "
                    "frame: x towards the human's goal, y across, origin at the field's "
                    "centre. Measure the centre of each marker's black square.",
        "height": 0.0,
        "markers": [{"id": i, "x": x, "y": y, "size": 0.05, "yaw": 0.0}
                    for i, (x, y) in enumerate(EXAMPLE_MARKER_CENTRES)],
    }


def undistort_pixel(u: float, v: float, focal: float, cx: float, cy: float,
                    lens: tuple[float, float, float, float, float],
                    iterations: int = 8) -> tuple[float, float]:
    """The pixel a distortion-free camera would have seen (OpenCV's model, inverted by the
    same fixed-point iteration as cv2.undistortPoints; plain floats, a few microseconds)."""
    k1, k2, p1, p2, k3 = lens
    x0 = x = (u - cx) / focal
    y0 = y = (v - cy) / focal
    for _ in range(iterations):
        r2 = x * x + y * y
        radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
        dx = 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
        dy = p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
        x = (x0 - dx) / radial
        y = (y0 - dy) / radial
    return focal * x + cx, focal * y + cy


def distort_pixel(u: float, v: float, focal: float, cx: float, cy: float,
                  lens: tuple[float, float, float, float, float]) -> tuple[float, float]:
    """Where the real lens puts the ray a distortion-free camera sees at (u, v)."""
    k1, k2, p1, p2, k3 = lens
    x = (u - cx) / focal
    y = (v - cy) / focal
    r2 = x * x + y * y
    radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
    xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
    yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
    return focal * xd + cx, focal * yd + cy


def write_calibration(calibration: Calibration, path: str | Path) -> None:
    """Atomically: a power cut leaves the old calibration or the new one, never half."""
    write_atomically(path, (json.dumps(calibration.to_json(), indent=2) + "\n").encode())


def load_calibration(path: str | Path) -> Calibration:
    """The calibration file at `path`; every error names the file (files.load_file)."""
    return load_file(path, Calibration.from_json, CalibrationError, kind="JSON")


class BallProjector:
    """Per-frame pixel <-> table mapping of the ball centre, in plain floats (a 3x3 product
    in Python is cheaper than a numpy call at this size)."""

    def __init__(self, calibration: Calibration):
        self.calibration = calibration
        g = calibration.ball_from_pixel()
        g = g / g[2, 2]
        self._g = tuple(float(v) for v in g.ravel())
        gi = np.linalg.inv(g)
        self._gi = tuple(float(v) for v in gi.ravel())
        self._det_g = float(np.linalg.det(g))
        self._radius = calibration.ball_radius
        self._lens = calibration.distortion if any(calibration.distortion) else None
        self._intrinsics = (calibration.focal_px, *calibration.principal)

    def to_table(self, u: float, v: float) -> tuple[float, float]:
        if self._lens is not None:
            u, v = undistort_pixel(u, v, *self._intrinsics, self._lens)
        g = self._g
        w = g[6] * u + g[7] * v + g[8]
        return (g[0] * u + g[1] * v + g[2]) / w, (g[3] * u + g[4] * v + g[5]) / w

    def to_pixel(self, x: float, y: float) -> tuple[float, float]:
        g = self._gi
        w = g[6] * x + g[7] * y + g[8]
        u, v = (g[0] * x + g[1] * y + g[2]) / w, (g[3] * x + g[4] * y + g[5]) / w
        if self._lens is not None:
            u, v = distort_pixel(u, v, *self._intrinsics, self._lens)
        return u, v

    def to_pixel_and_scale(self, x: float, y: float) -> tuple[float, float, float]:
        """`to_pixel` and `metres_per_pixel` there, in one call (the tracker's per frame)."""
        if self._lens is not None:
            u, v = self.to_pixel(x, y)
            return u, v, self.metres_per_pixel(u, v)
        g = self._gi
        w = g[6] * x + g[7] * y + g[8]
        u, v = (g[0] * x + g[1] * y + g[2]) / w, (g[3] * x + g[4] * y + g[5]) / w
        g = self._g
        w = g[6] * u + g[7] * v + g[8]
        return u, v, math.sqrt(abs(self._det_g / (w * w * w)))

    def metres_per_pixel(self, u: float, v: float) -> float:
        """Local scale (geometric mean of the two axes) of the ball-height plane."""
        magnification = 1.0
        if self._lens is not None:
            # The lens shrinks or stretches the image locally: pixels of the real image per
            # pixel of the distortion-free one, around this point.
            u, v = undistort_pixel(u, v, *self._intrinsics, self._lens)
            ou, ov = distort_pixel(u, v, *self._intrinsics, self._lens)
            au, av = distort_pixel(u + 1.0, v, *self._intrinsics, self._lens)
            bu, bv = distort_pixel(u, v + 1.0, *self._intrinsics, self._lens)
            magnification = math.sqrt(abs((au - ou) * (bv - ov) - (av - ov) * (bu - ou)))
        g = self._g
        w = g[6] * u + g[7] * v + g[8]
        return math.sqrt(abs(self._det_g / (w * w * w))) / magnification

    def radius_px(self, u: float, v: float) -> float:
        """Expected radius of the ball's image at pixel (u, v)."""
        return self._radius / self.metres_per_pixel(u, v)
