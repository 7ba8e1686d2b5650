"""Table geometry: the one JSON file every part of the system reads.

Table frame: origin at the centre of the playing field, x along the long side towards the
human's goal, y across, metres. A rod's *translation* is the offset of its centre man
line from y = 0; its men sit at ``translation + (i - (n - 1) / 2) * spacing``.

Rotation: 0 rad = men vertical, feet down; positive = feet swing towards the human's goal
(+x), whichever team the rod belongs to. ``Rod.forward`` says which way that team shoots.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from foosball.files import load_file
from foosball.schema import SettingError, Spec, check, parse, setting

ROLES = ("goalkeeper", "defence", "midfield", "attack")
TEAMS = ("robot", "human")


class GeometryError(SettingError):
    """A geometry file is wrong; the message names the section and the key (foosball.schema's
    form: `[field] width: missing`, `rods[2] men: an integer, not 'three'`)."""


@dataclass(frozen=True, slots=True)
class Field:
    length: float = setting(low=0.3, high=3.0, unit="m")
    width: float = setting(low=0.2, high=2.0, unit="m")
    goal_width: float = setting(low=0.05, high=1.0, unit="m")

    @property
    def half_length(self) -> float:
        return self.length / 2

    @property
    def half_width(self) -> float:
        return self.width / 2


@dataclass(frozen=True, slots=True)
class Ball:
    diameter: float = setting(low=0.01, high=0.1, unit="m")
    mass: float = setting(low=0.001, high=0.5, unit="kg")

    @property
    def radius(self) -> float:
        return self.diameter / 2


@dataclass(frozen=True, slots=True)
class Man:
    """Shape of one man (player figure); the same on every rod."""

    foot_reach: float = setting(low=0.0, high=0.3, unit="m")  # rod axis -> foot tip
    rod_height: float = setting(low=0.0, high=0.3, unit="m")  # rod axis above the field
    # foot tip above the field when vertical
    foot_clearance: float = setting(low=0.0, high=0.3, unit="m")
    foot_width: float = setting(low=0.0, high=0.3, unit="m")  # along the rod
    foot_thickness: float = setting(low=0.0, high=0.3, unit="m")  # along the field (x)
    # the foot touches the ball within this x distance of the rod
    contact_reach: float = setting(low=0.0, high=0.3, unit="m")


@dataclass(frozen=True, slots=True)
class Rod:
    """The ranges that depend on the field (x, spacing, travel, zero_offset) are checked
    against it when a table is parsed (`_parse_rod`)."""

    name: str = setting()
    team: str = setting(choices=TEAMS)
    role: str = setting(choices=ROLES)
    x: float = setting(unit="m")
    men: int = setting(low=1, high=7)
    spacing: float = setting(unit="m")
    travel_min: float = setting(unit="m")
    travel_max: float = setting(unit="m")
    # translation motor revolutions per pulley revolution
    gear_ratio: float = setting(low=0.01, high=1000.0)
    pulley_radius: float = setting(low=0.001, high=0.5, unit="m")
    zero_offset: float = setting(unit="m")  # translation (m) where the homing end switch trips

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


# --- loading and validation (foosball.schema: the same checks and errors as board.toml) ------

SECTIONS = ("field", "ball", "man", "rods")


def _within(value: float, low: float, high: float, where: str) -> None:
    check(float, value, Spec(low=low, high=high, unit="m"), where)


def _section(data: dict[str, Any], key: str, cls: type) -> Any:
    if key not in data:
        raise SettingError(f"[{key}]: missing")
    return parse(cls, data[key], f"[{key}]")


def _parse_rod(data: Any, where: str, field: Field) -> Rod:
    rod: Rod = parse(Rod, data, where)
    if not rod.name:
        raise SettingError(f"{where} name: empty")
    half_l, half_w = field.half_length, field.half_width
    _within(rod.x, -half_l, half_l, f"{where} x")
    _within(rod.spacing, 0.0, field.width, f"{where} spacing")
    _within(rod.travel_min, -half_w, 0.0, f"{where} travel_min")
    _within(rod.travel_max, 0.0, half_w, f"{where} travel_max")
    _within(rod.zero_offset, -half_w, half_w, f"{where} zero_offset")
    if rod.men > 1 and rod.spacing <= 0:
        raise SettingError(f"{where} spacing: a rod with {rod.men} men needs a spacing > 0")
    outer = (rod.men - 1) / 2 * rod.spacing
    if outer + max(-rod.travel_min, rod.travel_max) > half_w:
        raise SettingError(f"{where} travel_max: the outer man would leave the field")
    if not rod.travel_min <= rod.zero_offset <= rod.travel_max:
        raise SettingError(f"{where} zero_offset: {rod.zero_offset} is outside the travel")
    return rod


def parse_table(data: Any) -> Table:
    """Build a Table from decoded JSON, or raise GeometryError naming the section and key."""
    try:
        return _parse_table(data)
    except GeometryError:
        raise
    except SettingError as exc:
        raise GeometryError(str(exc)) from exc


def _parse_table(data: Any) -> Table:
    if not isinstance(data, dict):
        raise SettingError("geometry: expected a JSON object at the top level")
    unknown = sorted(set(data) - {*SECTIONS, "_comment"})
    if unknown:
        raise SettingError(f"unknown section{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    field = _section(data, "field", Field)
    if field.goal_width >= field.width:
        raise SettingError("[field] goal_width: must be narrower than the field")
    ball = _section(data, "ball", Ball)
    man = _section(data, "man", Man)
    rods_data = data.get("rods")
    if not isinstance(rods_data, list) or not rods_data:
        raise SettingError("[rods]: expected a non-empty list")
    rods = tuple(_parse_rod(r, f"rods[{i}]", field) for i, r in enumerate(rods_data))
    names = [r.name for r in rods]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise SettingError(f"rods[{i}] name: {name!r} is used twice")
    for team in TEAMS:
        roles = sorted(r.role for r in rods if r.team == team)
        if roles != sorted(ROLES):
            raise SettingError(f"[rods]: team {team!r} needs exactly one rod per role {ROLES}")
    return Table(field=field, ball=ball, man=man, rods=rods)


def load_table(path: str | Path) -> Table:
    return load_file(path, parse_table, GeometryError)


def default_table_path() -> Path:
    return Path(str(resources.files("foosball") / "data" / "table.json"))


def default_table() -> Table:
    return load_table(default_table_path())
