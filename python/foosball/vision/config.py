"""Vision parameters: what the detector, the filter and the frame source need.

One explicit JSON file (``vision.json``) holds them; the game panel may retune the colour
and blob thresholds at run time through a ``VisionConfig`` message, which replaces only the
fields it carries. Thresholds are always set in OpenCV HSV terms (H 0..179, S and V 0..255)
whatever the camera's native pixel format is.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from foosball.files import load_file, write_atomically


class VisionConfigError(ValueError):
    """A vision configuration value is wrong; the message names the field."""


DETECTOR_METHODS = ("colour", "background")  # the keys of vision/detector.py DETECTORS


def check_hsv_band(band: Any, where: str) -> None:
    """An OpenCV HSV band (hue_low..hue_high, wrapping through 179 -> 0 when low > high)."""
    for name, high in (("hue_low", 179), ("hue_high", 179), ("sat_low", 255),
                       ("sat_high", 255), ("val_low", 255), ("val_high", 255)):
        value = getattr(band, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
            raise VisionConfigError(f"{where}.{name}: {value!r} is not an integer 0..{high}")
    if band.sat_low > band.sat_high or band.val_low > band.val_high:
        raise VisionConfigError(f"{where}: sat_low/val_low must not exceed sat_high/val_high")


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    """Colour threshold and blob filter (seed: HSV threshold, area, perimeter, density,
    eccentricity). Areas and perimeters are of the blob's outline polygon, in full-resolution
    pixels; the filters also apply to partly hidden balls, so the lower limits must let a
    half ball through."""

    hue_low: int = 7
    hue_high: int = 22
    sat_low: int = 190
    sat_high: int = 255
    val_low: int = 60
    val_high: int = 255
    min_area: float = 40.0
    max_area: float = 1200.0
    min_perimeter: float = 20.0
    max_perimeter: float = 160.0
    min_density: float = 0.3  # polygon area / bounding box area; a disc gives pi/4, a ball
    # hidden on two sides by a man (an L-shaped remainder) about 0.35
    max_eccentricity: float = 0.93  # of the blob's moment ellipse; a half disc gives 0.85
    # Search windows (px, half sizes). The tracking window is centred on the filter's
    # prediction: the ball's radius + 2 px + roi_sigmas standard deviations of the predicted
    # position, at most roi_max_half.
    roi_max_half: int = 64
    roi_sigmas: float = 4.0
    # Re-acquisition searches the whole frame decimated by this factor, then refines in a
    # full-resolution window of half size refine_half around each candidate.
    reacquire_decimation: int = 4
    refine_half: int = 20
    # A blob filling less than this share of its smallest enclosing circle (a digital
    # disc of that radius) is a partly hidden ball: its centre then comes from a circle
    # fitted to its own arc (the visible arc of a ball more than half visible spans over
    # 180 degrees). Whole balls fill 0.9-1.03, 80 %-visible ones about 0.87.
    whole_fill: float = 0.90
    # ... and whose centroid is off that circle's centre by more than this share of its
    # radius (whole balls: under 0.05, up to 0.1 drawn as ellipses far off-axis; 80 %-
    # visible balls about 0.14).
    whole_offset: float = 0.06
    # ... the ellipse still fills at least this much (a ball cut square by a man and a rod
    # is centred too, but fills about 0.7).
    centred_fill: float = 0.8
    # "colour": the HSV band above; "background": what differs from a running median of
    # the empty table (a ball coloured like the field: white on a light field), with the
    # same size and roundness checks.
    method: str = "colour"
    # background: a pixel is the ball's when its colour differs from the background's by
    # more than this (sum over B, G, R of the absolute differences, saturating at 255).
    background_threshold: int = 40
    # background: median of this many samples of the table, one taken every
    # background_every frames from the pixels away from the ball (and the men's).
    background_samples: int = 7
    background_every: int = 8

    def validate(self) -> DetectorConfig:
        check_hsv_band(self, "detector")
        for low, high in (("min_area", "max_area"), ("min_perimeter", "max_perimeter")):
            lo, hi = getattr(self, low), getattr(self, high)
            if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi):
                raise VisionConfigError(f"detector.{low}/{high}: need 0 <= {low} < {high}")
        if not 0.0 <= self.min_density <= 1.0:
            raise VisionConfigError("detector.min_density: must be in [0, 1]")
        if not 0.0 < self.max_eccentricity <= 1.0:
            raise VisionConfigError("detector.max_eccentricity: must be in (0, 1]")
        if not 4 <= self.refine_half <= self.roi_max_half <= 256:
            raise VisionConfigError(
                "detector.refine_half/roi_max_half: need 4 <= refine_half <= roi_max_half <= 256")
        if self.reacquire_decimation not in (1, 2, 4, 8):
            raise VisionConfigError("detector.reacquire_decimation: one of 1, 2, 4, 8")
        if not 0.0 < self.whole_fill <= 1.0:
            raise VisionConfigError("detector.whole_fill: must be in (0, 1]")
        if not 0.0 < self.centred_fill <= self.whole_fill:
            raise VisionConfigError("detector.centred_fill: must be in (0, whole_fill]")
        if not 0.0 <= self.whole_offset <= 1.0:
            raise VisionConfigError("detector.whole_offset: must be in [0, 1]")
        if self.method not in DETECTOR_METHODS:
            raise VisionConfigError(f"detector.method: {self.method!r} is not one of "
                                    f"{DETECTOR_METHODS}")
        if not 1 <= self.background_threshold <= 254:
            raise VisionConfigError("detector.background_threshold: must be in 1..254")
        if not 1 <= self.background_samples <= 31 or self.background_samples % 2 == 0:
            raise VisionConfigError("detector.background_samples: an odd number 1..31")
        if not 1 <= self.background_every <= 1000:
            raise VisionConfigError("detector.background_every: must be in 1..1000")
        return self

    @property
    def hue_wraps(self) -> bool:
        """True when the hue band crosses 179 -> 0 (for example 170..10 for red)."""
        return self.hue_low > self.hue_high

    def with_panel(self, panel: Any) -> DetectorConfig:
        """Apply a catalogue VisionConfig (duck-typed so this module needs no wire import)."""
        changed = replace(
            self,
            hue_low=int(panel.hue_low), hue_high=int(panel.hue_high),
            sat_low=int(panel.sat_low), sat_high=int(panel.sat_high),
            val_low=int(panel.val_low), val_high=int(panel.val_high),
            min_area=float(panel.min_area), max_area=float(panel.max_area),
            min_density=float(panel.min_density),
            max_eccentricity=float(panel.max_eccentricity),
        )
        return changed.validate()


@dataclass(frozen=True, slots=True)
class FilterConfig:
    """Kalman filter on [x, y, vx, vy] in the table frame (metres, seconds)."""

    measurement_sigma: float = 0.0006  # m, a fully visible ball
    partial_measurement_sigma: float = 0.0015  # m, a partly hidden ball
    acceleration_sigma: float = 8.0  # m/s^2, white-noise acceleration (spin, bumps, rolling)
    gate: float = 25.0  # normalised innovation squared beyond which a detection is a surprise
    max_speed: float = 25.0  # m/s; a surprise farther than this could travel is rejected
    # m/s: velocity uncertainty of a track started from one sighting (a new ball, or after
    # a collision the filter did not foresee); the next sighting then sets the velocity
    restart_velocity_sigma: float = 10.0
    wall_restitution: float = 0.5  # predicted bounce off the side and end walls
    max_prediction_s: float = 0.1  # predict through occlusions this long, then LOST
    max_position_sigma: float = 0.05  # m; beyond this the prediction is not worth publishing

    def validate(self) -> FilterConfig:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
                value
            ) or value <= 0:
                raise VisionConfigError(f"filter.{f.name}: {value!r} must be a positive number")
        if self.wall_restitution > 1.0:
            raise VisionConfigError("filter.wall_restitution: must be <= 1")
        return self


@dataclass(frozen=True, slots=True)
class RodsConfig:
    """The human's rods measured from the camera: the men's colour (HSV band, as for the
    ball; the default is the simulator's red team) and how often."""

    enabled: bool = True
    hue_low: int = 170
    hue_high: int = 8
    sat_low: int = 120
    sat_high: int = 255
    val_low: int = 60
    val_high: int = 255
    # measure on every n-th frame: 50 Hz at 200 fps is plenty for men that move slower than
    # the ball, and the measurement costs more than the tracking (issue 15's bench)
    every_frames: int = 4
    decimation: int = 2  # the rods' strips are thresholded at 1/decimation resolution
    head_above_axis: float = 0.052  # m, the man's head above his rod's axis (with the foot
    # reach of the table geometry: the man's length that shows his rotation from above)

    @property
    def hue_wraps(self) -> bool:
        return self.hue_low > self.hue_high

    def validate(self) -> RodsConfig:
        check_hsv_band(self, "rods")
        if not 1 <= self.every_frames <= 1000:
            raise VisionConfigError("rods.every_frames: must be in 1..1000")
        if self.decimation not in (1, 2, 4):
            raise VisionConfigError("rods.decimation: one of 1, 2, 4")
        return self


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """Which frame source to open and its options (see vision/sources.py BACKENDS)."""

    kind: str = "sim"
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class VisionSettings:
    detector: DetectorConfig = field(default_factory=DetectorConfig)
    filter: FilterConfig = field(default_factory=FilterConfig)
    source: SourceConfig = field(default_factory=SourceConfig)
    calibration: str = "calibration.json"
    camera_timeout_s: float = 0.05  # no frame for this long raises CAMERA_LOST
    # Where thresholds tuned on the game panel are kept across restarts ("": not kept).
    thresholds_file: str = ""
    # The ball's diameter, m (tables use 34-36 mm balls); 0: the table geometry's.
    ball_diameter: float = 0.0
    rods: RodsConfig = field(default_factory=lambda: RodsConfig())


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise VisionConfigError(f"{where}: expected an object")
    known = {f.name: f for f in fields(cls)}
    unknown = set(data) - set(known) - {"_comment"}
    if unknown:
        raise VisionConfigError(f"{where}: unknown keys {sorted(unknown)}")
    values = {}
    for key, value in data.items():
        if key == "_comment":
            continue
        default = getattr(cls(), key)
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not type(default) and not isinstance(default, dict):
            raise VisionConfigError(
                f"{where}.{key}: expected {type(default).__name__}, got {value!r}")
        values[key] = value
    return cls(**values)


def parse_settings(data: Any) -> VisionSettings:
    if not isinstance(data, dict):
        raise VisionConfigError("vision settings: expected a JSON object")
    data = _upgraded(data)
    unknown = set(data) - {"detector", "filter", "source", "calibration", "camera_timeout_s",
                           "thresholds_file", "ball_diameter", "rods", "_comment"}
    if unknown:  # a misspelt key must not be silently ignored
        raise VisionConfigError(f"vision settings: unknown keys {sorted(unknown)}")
    detector = _build(DetectorConfig, data.get("detector", {}), "detector").validate()
    filt = _build(FilterConfig, data.get("filter", {}), "filter").validate()
    src = data.get("source", {})
    if not isinstance(src, dict) or not isinstance(src.get("kind", "sim"), str):
        raise VisionConfigError("source: expected {\"kind\": str, \"options\": {...}}")
    options = src.get("options", {})
    if not isinstance(options, dict):
        raise VisionConfigError("source.options: expected an object")
    source = SourceConfig(kind=src.get("kind", "sim"), options=options)
    calibration = data.get("calibration", "calibration.json")
    timeout = data.get("camera_timeout_s", 0.05)
    if not isinstance(calibration, str):
        raise VisionConfigError("calibration: expected a path string")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise VisionConfigError("camera_timeout_s: expected a positive number")
    thresholds_file = data.get("thresholds_file", "")
    if not isinstance(thresholds_file, str):
        raise VisionConfigError("thresholds_file: expected a path string")
    diameter = data.get("ball_diameter", 0.0)
    if isinstance(diameter, bool) or not isinstance(diameter, int | float) or not (
            diameter == 0 or 0.02 <= diameter <= 0.05):
        raise VisionConfigError("ball_diameter: expected 0 (the table's) or 0.02..0.05 m")
    rods = _build(RodsConfig, data.get("rods", {}), "rods").validate()
    return VisionSettings(detector, filt, source, calibration, float(timeout), thresholds_file,
                          float(diameter), rods)


# The detector fields the game panel tunes (VisionConfig), kept in thresholds_file.
HSV_BAND_FIELDS = ("hue_low", "hue_high", "sat_low", "sat_high", "val_low", "val_high")
THRESHOLD_FIELDS = (*HSV_BAND_FIELDS, "min_area", "max_area", "min_density",
                    "max_eccentricity")
# What a colour file may hold: the thresholds, which detector they are for (a ball
# coloured like the field: learn-colour --for-background writes "background"), and the
# ball's size in pixels (learn-colour without a calibration measures it).
COLOUR_FIELDS = (*THRESHOLD_FIELDS, "method", "min_perimeter", "max_perimeter",
                 "refine_half", "roi_max_half")
COLOUR_COMMENT = ("the ball's colour: a vision settings file holding only detector keys; "
                  "`foosball vision detect --settings` reads it, the board's [ball_tracker] "
                  "thresholds_file names it (learn-colour and the game panel write it)")


def _upgraded(data: Any) -> Any:
    """Colour files kept before issue 32 held the THRESHOLD_FIELDS at the top level (the
    game panel wrote them on boards): read as the one format, never written."""
    if isinstance(data, dict) and set(data) == set(THRESHOLD_FIELDS):
        return {"detector": data}
    return data


def parse_colour(data: Any, detector: DetectorConfig) -> DetectorConfig:
    """A colour file's keys over `detector` (the settings' own). The one format is a vision
    settings file holding only detector keys, COLOUR_FIELDS and the band at least:
    `parse_settings` reads the same file as the settings it stands for."""
    data = _upgraded(data)
    if not (isinstance(data, dict) and isinstance(data.get("detector"), dict)
            and set(data) <= {"detector", "_comment"}):
        raise VisionConfigError('expected a colour file: {"detector": {"hue_low": ..., ...}} '
                                f"with the keys {list(COLOUR_FIELDS)}")
    section = data["detector"]
    unknown = set(section) - set(COLOUR_FIELDS) - {"_comment"}
    if unknown:
        raise VisionConfigError(f"detector: {sorted(unknown)} are not colour keys "
                                f"({list(COLOUR_FIELDS)}); other settings go in the "
                                "board file")
    missing = [name for name in HSV_BAND_FIELDS if name not in section]
    if missing:
        raise VisionConfigError(f"detector: missing {missing}")
    return _build(DetectorConfig, {**asdict(detector), **section}, "detector").validate()


def load_thresholds(path: str, detector: DetectorConfig) -> DetectorConfig:
    """The colour file at `path` (learnt, or last tuned on the panel) over `detector`;
    `detector` itself when none was kept yet. A file that is not valid is an error naming
    it (it was written whole, so it is not a half-written one)."""
    if not path or not Path(path).exists():
        return detector
    return load_file(path, lambda data: parse_colour(data, detector), VisionConfigError)


def save_thresholds(path: str, detector: DetectorConfig) -> None:
    """`detector`'s colour as a colour file (atomically: the agent may read it any time)."""
    values = {name: getattr(detector, name) for name in COLOUR_FIELDS}
    write_atomically(path, (json.dumps({"_comment": COLOUR_COMMENT, "detector": values},
                                       indent=1) + "\n").encode())


def with_thresholds_file(settings: VisionSettings) -> VisionSettings:
    """The settings as the ball tracker runs them: their thresholds_file's colour over
    their detector (every reader of the settings goes through here, so none ignores it)."""
    return replace(settings, detector=load_thresholds(settings.thresholds_file,
                                                      settings.detector))


def load_settings(path: str | Path) -> VisionSettings:
    return load_file(path, parse_settings, VisionConfigError)


def settings_to_json(settings: VisionSettings) -> dict[str, Any]:
    return {
        "detector": asdict(settings.detector),
        "filter": asdict(settings.filter),
        "source": {"kind": settings.source.kind, "options": dict(settings.source.options)},
        "calibration": settings.calibration,
        "camera_timeout_s": settings.camera_timeout_s,
        "thresholds_file": settings.thresholds_file,
        "ball_diameter": settings.ball_diameter,
        "rods": asdict(settings.rods),
    }
