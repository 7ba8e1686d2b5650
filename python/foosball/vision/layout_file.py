"""The marker layout file (`vision calibrate --markers FILE`, calibration.LAYOUT_HELP) as the
settings parser checks it (foosball.schema): each key's type and range here; the markers
built from it, and the rule of at least four distinct ids, in MarkerLayout.from_json.

    {"height": 0.0, "markers": [{"id": 0, "x": -0.655, "y": 0.40, "size": 0.05, "yaw": 0.0},
                                {"id": 1, "corners": [[x, y], [x, y], [x, y], [x, y]]}, ...]}

Errors name the key the way the table geometry names its rods': `markers[3] x: a number
(m), not 'a'`, `markers[0]: x, y and size, or corners`, `height: missing` never (0 by
default); `_comment` is a note, in the top table or in a marker, never a setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from foosball.schema import SettingError, Spec, check, parse, setting

COMMENT = "_comment"
SQUARE_KEYS = ("x", "y", "size")


def _point(value: Any, where: str) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise SettingError(f"{where}: [x, y] (m), not {value!r}")
    return (check(float, value[0], Spec(unit="m"), f"{where}[0]"),
            check(float, value[1], Spec(unit="m"), f"{where}[1]"))


def _corners(value: Any, where: str) -> tuple[tuple[float, float], ...]:
    if not isinstance(value, list) or len(value) != 4:
        raise SettingError(f"{where}: 4 corners [x, y], not {value!r}")
    return tuple(_point(corner, f"{where}[{i}]") for i, corner in enumerate(value))


@dataclass(frozen=True)
class MarkerEntry:
    """One marker of the file: its centre, size and yaw, or its four corners."""

    id: int = setting(low=0, high=49)  # ArUco DICT_4X4_50
    x: float | None = setting(None, unit="m")
    y: float | None = setting(None, unit="m")
    size: float | None = setting(None, above=0.0, unit="m")
    yaw: float = setting(0.0, unit="rad")
    corners: tuple[tuple[float, float], ...] | None = setting(None, convert=_corners)


def _entry(value: Any, where: str) -> MarkerEntry:
    if isinstance(value, dict):
        value = {key: v for key, v in value.items() if key != COMMENT}
    entry: MarkerEntry = parse(MarkerEntry, value, where)
    square = [key for key in SQUARE_KEYS if getattr(entry, key) is not None]
    if entry.corners is None and len(square) < len(SQUARE_KEYS):
        missing = ", ".join(key for key in SQUARE_KEYS if key not in square)
        raise SettingError(f"{where}: {missing} missing (x, y and size, or corners)")
    if entry.corners is not None and square:
        raise SettingError(f"{where}: corners and {', '.join(square)} (x, y and size, or "
                           "corners, not both)")
    return entry


def _markers(value: Any, where: str) -> tuple[MarkerEntry, ...]:
    if not isinstance(value, list):
        raise SettingError(f"{where}: a list of markers, not {value!r}")
    return tuple(_entry(item, f"{where}[{i}]") for i, item in enumerate(value))


@dataclass(frozen=True)
class MarkerLayoutFile:
    """The file's top table."""

    markers: tuple[MarkerEntry, ...] = setting(convert=_markers)
    height: float = setting(0.0, unit="m")  # the marker plane above the field


def parse_layout_file(data: Any) -> MarkerLayoutFile:
    """The checked file; SettingError naming the key (the caller adds the file's name)."""
    if not isinstance(data, dict):
        raise SettingError(f"a marker layout (a JSON object), not {data!r}")
    file: MarkerLayoutFile = parse(
        MarkerLayoutFile, {key: v for key, v in data.items() if key != COMMENT}, "")
    return file
