"""Table geometry: the one JSON file every part of the system reads.

Table frame: origin at the centre of the playing field, x along the long side towards the
human's goal, y across, metres. A rod's *translation* is the offset of its centre man
line from y = 0; its men sit at ``translation + (i - (n - 1) / 2) * spacing``.

Rotation: 0 rad = men vertical, feet down; positive = feet swing towards the human's goal
(+x), whichever team the rod belongs to. ``Rod.forward`` says which way that team shoots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from foosball.files import load_file

ROLES = ("goalkeeper", "defence", "midfield", "attack")
TEAMS = ("robot", "human")


class GeometryError(ValueError):
    """A geometry file is wrong; the message names the offending field."""


@dataclass(frozen=True, slots=True)
class Field:
    length: float
    width: float
    goal_width: float

    @property
    def half_length(self) -> float:
        return self.length / 2

    @property
    def half_width(self) -> float:
        return self.width / 2


@dataclass(frozen=True, slots=True)
class Ball:
    diameter: float
    mass: float

    @property
    def radius(self) -> float:
        return self.diameter / 2


@dataclass(frozen=True, slots=True)
class Man:
    """Shape of one man (player figure); the same on every rod."""

    foot_reach: float  # rod axis -> foot tip
    rod_height: float  # rod axis above the field
    foot_clearance: float  # foot tip above the field when vertical
    foot_width: float  # along the rod
    foot_thickness: float  # along the field (x)
    contact_reach: float  # the foot touches the ball within this x distance of the rod


@dataclass(frozen=True, slots=True)
class Rod:
    name: str
    team: str
    role: str
    x: float
    men: int
    spacing: float
    travel_min: float
    travel_max: float
    gear_ratio: float  # translation motor revolutions per pulley revolution
    pulley_radius: float
    zero_offset: float  # translation (m) where the homing end switch trips

    @property
    def forward(self) -> int:
        """+1 if this rod's team shoots towards +x (the robot), -1 otherwise."""
        return 1 if self.team == "robot" else -1

    def men_y(self, translation: float) -> tuple[float, ...]:
        centre = (self.men - 1) / 2
        return tuple(translation + (i - centre) * self.spacing for i in range(self.men))

    def clamp(self, translation: float) -> float:
        return min(self.travel_max, max(self.travel_min, translation))

    def within_travel(self, translation: float) -> bool:
        return self.travel_min <= translation <= self.travel_max

    def reachable_y(self) -> list[tuple[float, float]]:
        """For each man, the interval of y its centre can reach."""
        return [
            (y_at_min, y_at_max)
            for y_at_min, y_at_max in zip(
                self.men_y(self.travel_min), self.men_y(self.travel_max), strict=True
            )
        ]

    def translation_for(self, man: int, y: float) -> float:
        """Rod translation that puts man `man` at `y` (not clamped)."""
        return y - (man - (self.men - 1) / 2) * self.spacing

    def metres_per_motor_radian(self) -> float:
        return self.pulley_radius / self.gear_ratio


@dataclass(frozen=True, slots=True)
class Table:
    field: Field
    ball: Ball
    man: Man
    rods: tuple[Rod, ...]

    def rod(self, name: str) -> Rod:
        for rod in self.rods:
            if rod.name == name:
                return rod
        raise KeyError(f"no rod named {name!r}; rods are {[r.name for r in self.rods]}")

    def team_rods(self, team: str) -> list[Rod]:
        """The team's rods in role order: goalkeeper, defence, midfield, attack."""
        rods = [r for r in self.rods if r.team == team]
        return sorted(rods, key=lambda r: ROLES.index(r.role))

    @property
    def robot_rods(self) -> list[Rod]:
        return self.team_rods("robot")

    @property
    def human_rods(self) -> list[Rod]:
        return self.team_rods("human")

    def goal_x(self, team: str) -> float:
        """x of the goal line that `team` defends."""
        return -self.field.half_length if team == "robot" else self.field.half_length


# --- loading and validation ---------------------------------------------------------------


def _number(data: dict[str, Any], key: str, where: str, *, low: float, high: float) -> float:
    if key not in data:
        raise GeometryError(f"{where}.{key}: missing")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GeometryError(f"{where}.{key}: expected a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or not low <= value <= high:
        raise GeometryError(f"{where}.{key}: {value} is outside [{low}, {high}]")
    return value


def _section(data: dict[str, Any], key: str) -> dict[str, Any]:
    section = data.get(key)
    if not isinstance(section, dict):
        raise GeometryError(f"{key}: missing or not an object")
    return section


def _parse_rod(data: Any, where: str, field: Field) -> Rod:
    if not isinstance(data, dict):
        raise GeometryError(f"{where}: expected an object")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise GeometryError(f"{where}.name: expected a non-empty string")
    team = data.get("team")
    if team not in TEAMS:
        raise GeometryError(f"{where}.team: {team!r} is not one of {TEAMS}")
    role = data.get("role")
    if role not in ROLES:
        raise GeometryError(f"{where}.role: {role!r} is not one of {ROLES}")
    men = data.get("men")
    if isinstance(men, bool) or not isinstance(men, int) or not 1 <= men <= 7:
        raise GeometryError(f"{where}.men: expected an integer 1..7, got {men!r}")
    half_l, half_w = field.half_length, field.half_width
    rod = Rod(
        name=name,
        team=team,
        role=role,
        x=_number(data, "x", where, low=-half_l, high=half_l),
        men=men,
        spacing=_number(data, "spacing", where, low=0.0, high=field.width),
        travel_min=_number(data, "travel_min", where, low=-half_w, high=0.0),
        travel_max=_number(data, "travel_max", where, low=0.0, high=half_w),
        gear_ratio=_number(data, "gear_ratio", where, low=0.01, high=1000.0),
        pulley_radius=_number(data, "pulley_radius", where, low=0.001, high=0.5),
        zero_offset=_number(data, "zero_offset", where, low=-half_w, high=half_w),
    )
    if men > 1 and rod.spacing <= 0:
        raise GeometryError(f"{where}.spacing: a rod with {men} men needs a spacing > 0")
    outer = (men - 1) / 2 * rod.spacing
    if outer + max(-rod.travel_min, rod.travel_max) > half_w:
        raise GeometryError(f"{where}.travel_max: the outer man would leave the field")
    if not rod.travel_min <= rod.zero_offset <= rod.travel_max:
        raise GeometryError(f"{where}.zero_offset: {rod.zero_offset} is outside the travel")
    return rod


def parse_table(data: Any) -> Table:
    """Build a Table from decoded JSON, or raise GeometryError naming the bad field."""
    if not isinstance(data, dict):
        raise GeometryError("geometry: expected a JSON object at the top level")
    f = _section(data, "field")
    field = Field(
        length=_number(f, "length", "field", low=0.3, high=3.0),
        width=_number(f, "width", "field", low=0.2, high=2.0),
        goal_width=_number(f, "goal_width", "field", low=0.05, high=1.0),
    )
    if field.goal_width >= field.width:
        raise GeometryError("field.goal_width: must be narrower than the field")
    b = _section(data, "ball")
    ball = Ball(
        diameter=_number(b, "diameter", "ball", low=0.01, high=0.1),
        mass=_number(b, "mass", "ball", low=0.001, high=0.5),
    )
    m = _section(data, "man")
    man = Man(
        **{
            key: _number(m, key, "man", low=0.0, high=0.3)
            for key in (
                "foot_reach",
                "rod_height",
                "foot_clearance",
                "foot_width",
                "foot_thickness",
                "contact_reach",
            )
        }
    )
    rods_data = data.get("rods")
    if not isinstance(rods_data, list) or not rods_data:
        raise GeometryError("rods: expected a non-empty list")
    rods = tuple(_parse_rod(r, f"rods[{i}]", field) for i, r in enumerate(rods_data))
    names = [r.name for r in rods]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise GeometryError(f"rods[{i}].name: {name!r} is used twice")
    for team in TEAMS:
        roles = sorted(r.role for r in rods if r.team == team)
        if roles != sorted(ROLES):
            raise GeometryError(f"rods: team {team!r} needs exactly one rod per role {ROLES}")
    return Table(field=field, ball=ball, man=man, rods=rods)


def load_table(path: str | Path) -> Table:
    return load_file(path, parse_table, GeometryError)


def default_table_path() -> Path:
    return Path(str(resources.files("foosball") / "data" / "table.json"))


def default_table() -> Table:
    return load_table(default_table_path())
