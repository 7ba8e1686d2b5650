"""Vision parameters: what the detector, the filter and the frame source need.

One explicit JSON file (``vision.json``) holds them; the game panel may retune the colour
and blob thresholds at run time through a ``VisionConfig`` message, which replaces only the
fields it carries. Thresholds are always set in OpenCV HSV terms (H 0..179, S and V 0..255)
whatever the camera's native pixel format is.

The files are read by the one settings parser (foosball.schema): each field's type and
range are on its dataclass (`setting(...)`), unknown keys are refused (`_comment` is
allowed in every table), and an error names the file, the table and the key as the board
file's do: `vision.json: [detector] hue_low: 300 is out of range (>= 0 and <= 179)`; a
board.toml's `[ball_tracker]` section says `[ball_tracker.detector] hue_low: ...`. What
one field cannot say (min_area below max_area, ...) each class's `validate` checks.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from foosball.files import load_file, write_atomically
from foosball.schema import SettingError, parse, setting, validate


class VisionConfigError(SettingError):
    """A vision configuration value is wrong; the message names the table and the key."""


DETECTOR_METHODS = ("colour", "background")  # the keys of vision/detector.py DETECTORS


def _checked(instance: Any, where: str) -> None:
    """The fields' own types and ranges (schema.validate) for a class built in code, as a
    VisionConfigError."""
    try:
        validate(instance, where)
    except VisionConfigError:
        raise
    except SettingError as exc:
        raise VisionConfigError(str(exc)) from exc


def check_hsv_band(band: Any, where: str) -> None:
    """An OpenCV HSV band (hue_low..hue_high, wrapping through 179 -> 0 when low > high);
    each value's range is its field's."""
    for low, high in (("sat_low", "sat_high"), ("val_low", "val_high")):
        if getattr(band, low) > getattr(band, high):
            raise VisionConfigError(f"{where} {low}: {getattr(band, low)} is above {high} "
                                    f"({getattr(band, high)})")


def _hsv(default: int) -> Any:
    return setting(default, low=0, high=255)


def _hue(default: int) -> Any:
    return setting(default, low=0, high=179)


@dataclass(frozen=True, slots=True)
class HsvBand:
    """An OpenCV HSV band, hue_low..hue_high wrapping through 179 -> 0 when low > high (for
    example 170..10 for red): the six keys and their ranges, for the ball's colour
    (DetectorConfig) and the men's (RodsConfig). Each gives its own hue and saturation
    floor; saturation up to 255 and value 60..255 are both's defaults."""

    hue_low: int = _hue(0)
    hue_high: int = _hue(179)
    sat_low: int = _hsv(0)
    sat_high: int = _hsv(255)
    val_low: int = _hsv(60)
    val_high: int = _hsv(255)

    @property
    def hue_wraps(self) -> bool:
        """True when the hue band crosses 179 -> 0."""
        return self.hue_low > self.hue_high


@dataclass(frozen=True, slots=True)
class DetectorConfig(HsvBand):
    """Colour threshold (the ball's HSV band) and blob filter (seed: HSV threshold, area,
    perimeter, density, eccentricity). Areas and perimeters are of the blob's outline
    polygon, in full-resolution pixels; the filters also apply to partly hidden balls, so
    the lower limits must let a half ball through."""

    hue_low: int = _hue(7)  # orange
    hue_high: int = _hue(22)
    sat_low: int = _hsv(190)
    min_area: float = setting(40.0, low=0.0, unit="px^2")  # each below its max_ (validate)
    max_area: float = setting(1200.0, low=0.0, unit="px^2")
    min_perimeter: float = setting(20.0, low=0.0, unit="px")
    max_perimeter: float = setting(160.0, low=0.0, unit="px")
    # polygon area / bounding box area; a disc gives pi/4, a ball hidden on two sides by a
    # man (an L-shaped remainder) about 0.35
    min_density: float = setting(0.3, low=0.0, high=1.0)
    # of the blob's moment ellipse; a half disc gives 0.85
    max_eccentricity: float = setting(0.93, above=0.0, high=1.0)
    # Search windows (px, half sizes). The tracking window is centred on the filter's
    # prediction: the ball's radius + 2 px + roi_sigmas standard deviations of the predicted
    # position, at most roi_max_half.
    roi_max_half: int = setting(64, high=256, unit="px")  # at least refine_half (validate)
    roi_sigmas: float = 4.0
    # Re-acquisition searches the whole frame decimated by this factor, then refines in a
    # full-resolution window of half size refine_half around each candidate.
    reacquire_decimation: int = setting(4, choices=(1, 2, 4, 8))
    refine_half: int = setting(20, low=4, unit="px")
    # A blob filling less than this share of its smallest enclosing circle (a digital
    # disc of that radius) is a partly hidden ball: its centre then comes from a circle
    # fitted to its own arc (the visible arc of a ball more than half visible spans over
    # 180 degrees). Whole balls fill 0.9-1.03, 80 %-visible ones about 0.87.
    whole_fill: float = setting(0.90, above=0.0, high=1.0)
    # ... and whose centroid is off that circle's centre by more than this share of its
    # radius (whole balls: under 0.05, up to 0.1 drawn as ellipses far off-axis; 80 %-
    # visible balls about 0.14).
    whole_offset: float = setting(0.06, low=0.0, high=1.0)
    # ... the ellipse still fills at least this much (a ball cut square by a man and a rod
    # is centred too, but fills about 0.7).
    centred_fill: float = setting(0.8, above=0.0, high=1.0)  # at most whole_fill (validate)
    # "colour": the HSV band above; "background": what differs from a running median of
    # the empty table (a ball coloured like the field: white on a light field), with the
    # same size and roundness checks.
    method: str = setting("colour", choices=DETECTOR_METHODS)
    # background: a pixel is the ball's when its colour differs from the background's by
    # more than this (sum over B, G, R of the absolute differences, saturating at 255).
    background_threshold: int = setting(40, low=1, high=254)
    # background: median of this many samples of the table, one taken every
    # background_every frames from the pixels away from the ball (and the men's).
    background_samples: int = setting(7, low=1, high=31)  # odd (validate)
    background_every: int = setting(8, low=1, high=1000)

    def validate(self, where: str = "[detector]") -> DetectorConfig:
        """Each field's range, then what one field cannot say."""
        _checked(self, where)
        check_hsv_band(self, where)
        for low, high in (("min_area", "max_area"), ("min_perimeter", "max_perimeter")):
            if not getattr(self, low) < getattr(self, high):
                raise VisionConfigError(f"{where} {low}: {getattr(self, low)!r} is not below "
                                        f"{high} ({getattr(self, high)!r})")
        if self.refine_half > self.roi_max_half:
            raise VisionConfigError(f"{where} refine_half: {self.refine_half} is above "
                                    f"roi_max_half ({self.roi_max_half})")
        if self.centred_fill > self.whole_fill:
            raise VisionConfigError(f"{where} centred_fill: {self.centred_fill!r} is above "
                                    f"whole_fill ({self.whole_fill!r})")
        if self.background_samples % 2 == 0:
            raise VisionConfigError(f"{where} background_samples: an odd number, not "
                                    f"{self.background_samples}")
        return self

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

    measurement_sigma: float = setting(0.0006, above=0.0, unit="m")  # a fully visible ball
    partial_measurement_sigma: float = setting(0.0015, above=0.0, unit="m")  # a partly hidden one
    # white-noise acceleration (spin, bumps, rolling); a kick is the manoeuvre detection's
    # (below), so this stays small: 4 m/s^2 halves the velocity noise of 8 on a rolling ball
    acceleration_sigma: float = setting(4.0, above=0.0, unit="m/s^2")
    gate: float = setting(25.0, above=0.0)  # normalised innovation squared beyond which a
    # detection is a surprise
    max_speed: float = setting(25.0, above=0.0, unit="m/s")  # a surprise farther than this
    # could travel is rejected
    # velocity uncertainty of a track started from one sighting (a new ball, or after a
    # collision the filter did not foresee); the next sighting then sets the velocity
    restart_velocity_sigma: float = setting(10.0, above=0.0, unit="m/s")
    wall_restitution: float = setting(0.5, above=0.0, high=1.0)  # predicted bounce off the
    # side and end walls
    max_prediction_s: float = setting(0.1, above=0.0, unit="s")  # predict through
    # occlusions this long, then LOST
    max_position_sigma: float = setting(0.05, above=0.0, unit="m")  # beyond this the
    # prediction is not worth publishing
    # manoeuvre detection (a kick below the gate, track.BallTrack): when an axis's normalised
    # innovation exceeds `manoeuvre_sigmas` with the same sign `manoeuvre_frames` frames in a
    # row, its velocity restarts from those frames' measurements; 0 frames: off
    manoeuvre_sigmas: float = setting(3.0, above=0.0)
    manoeuvre_frames: int = setting(2, low=0, high=10)
    # a restart (innovation beyond the gate) keeps the kick's direction: the velocity starts
    # at the prediction's plus the innovation over the frame period (the least change that
    # explains it), not at 0; the next sighting sets it as before
    restart_keeps_kick: bool = True

    def validate(self, where: str = "[filter]") -> FilterConfig:
        _checked(self, where)
        return self


@dataclass(frozen=True, slots=True)
class RodsConfig(HsvBand):
    """The human's rods measured from the camera: the men's colour (HSV band, as for the
    ball; the default is the simulator's red team) and how often."""

    hue_low: int = _hue(170)  # red, through 179 -> 0
    hue_high: int = _hue(8)
    sat_low: int = _hsv(120)
    enabled: bool = True
    # measure on every n-th frame: 50 Hz at 200 fps is plenty for men that move slower than
    # the ball, and the measurement costs more than the tracking (issue 15's bench)
    every_frames: int = setting(4, low=1, high=1000)
    # the rods' strips are thresholded at 1/decimation resolution
    decimation: int = setting(2, choices=(1, 2, 4))
    head_above_axis: float = 0.052  # m, the man's head above his rod's axis (with the foot
    # reach of the table geometry: the man's length that shows his rotation from above)

    def validate(self, where: str = "[rods]") -> RodsConfig:
        _checked(self, where)
        check_hsv_band(self, where)
        return self


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """Which frame source to open and its options (see vision/sources.py BACKENDS)."""

    kind: str = "sim"
    options: dict[str, Any] = field(default_factory=dict)


def _ball_diameter(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            value == 0 or 0.02 <= value <= 0.05):
        raise SettingError(f"{where}: 0 (the table's) or 0.02..0.05 m, not {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class VisionSettings:
    detector: DetectorConfig = field(default_factory=DetectorConfig)
    filter: FilterConfig = field(default_factory=FilterConfig)
    source: SourceConfig = field(default_factory=SourceConfig)
    calibration: str = "calibration.json"
    # The marker layout the game panel's guided calibration (Camera tab) calibrates with,
    # as for `foosball vision calibrate --markers`; read at each Look/Calibrate. The
    # calibration goes to `calibration` (the old file kept as <calibration>.prev).
    markers_file: str = "markers.json"
    # The camera's focal length for that calibration, px (0: estimated from the markers,
    # as `vision calibrate` without --focal-px).
    focal_px: float = setting(0.0, low=0.0, high=1e5, unit="px")
    # no frame for this long raises CAMERA_LOST
    camera_timeout_s: float = setting(0.05, above=0.0, unit="s")
    # Where thresholds tuned on the game panel are kept across restarts ("": not kept).
    thresholds_file: str = ""
    # The ball's diameter, m (tables use 34-36 mm balls); 0: the table geometry's.
    ball_diameter: float = setting(0.0, convert=_ball_diameter)
    rods: RodsConfig = field(default_factory=lambda: RodsConfig())


COMMENT = "_comment"  # a note in any table of a JSON settings file, not a setting
SUBTABLES = ("detector", "filter", "source", "rods")


def _without_comments(data: dict[str, Any]) -> dict[str, Any]:
    """The settings without their `_comment` notes (the top table's and its sub-tables')."""
    return {key: ({k: v for k, v in value.items() if k != COMMENT}
                  if key in SUBTABLES and isinstance(value, dict) else value)
            for key, value in data.items() if key != COMMENT}


def parse_settings(data: Any, where: str = "") -> VisionSettings:
    """Vision settings from a decoded vision.json (`where` ""), or from a board file's
    section (`where` "[ball_tracker]"): every key checked by foosball.schema, then what
    one field cannot say (each class's validate)."""
    if not isinstance(data, dict):
        raise VisionConfigError(f"{where or 'vision settings'}: a table of settings (a JSON "
                                f"object), not {data!r}")
    try:
        settings: VisionSettings = parse(VisionSettings, _without_comments(_upgraded(data)),
                                         where)
    except VisionConfigError:
        raise
    except SettingError as exc:
        raise VisionConfigError(str(exc)) from exc
    settings.detector.validate(_table(where, "detector"))
    settings.filter.validate(_table(where, "filter"))
    settings.rods.validate(_table(where, "rods"))
    return settings


def _table(where: str, name: str) -> str:
    """A sub-table's name in errors: "[detector]" in vision.json, "[ball_tracker.detector]"
    in a board file."""
    return f"[{where.strip('[]')}.{name}]" if where else f"[{name}]"


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
            and set(data) <= {"detector", COMMENT}):
        raise VisionConfigError('expected a colour file: {"detector": {"hue_low": ..., ...}} '
                                f"with the keys {', '.join(COLOUR_FIELDS)}")
    section = {k: v for k, v in data["detector"].items() if k != COMMENT}
    unknown = sorted(set(section) - set(COLOUR_FIELDS))
    if unknown:
        raise VisionConfigError(f"[detector] {', '.join(unknown)}: not a colour key (the colour "
                                f"keys: {', '.join(COLOUR_FIELDS)}); other settings go in "
                                "the board file")
    for name in HSV_BAND_FIELDS:
        if name not in section:
            raise VisionConfigError(f"[detector] {name}: missing")
    try:
        colour: DetectorConfig = parse(DetectorConfig, {**asdict(detector), **section},
                                       "[detector]")
    except SettingError as exc:
        raise VisionConfigError(str(exc)) from exc
    return colour.validate()


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
        "markers_file": settings.markers_file,
        "focal_px": settings.focal_px,
        "camera_timeout_s": settings.camera_timeout_s,
        "thresholds_file": settings.thresholds_file,
        "ball_diameter": settings.ball_diameter,
        "rods": asdict(settings.rods),
    }
