"""Typed settings from TOML tables: one parser for every section of a board's configuration.

A settings class is a dataclass; each field's annotation is its type and `setting(...)` adds
its range, unit and choices as field metadata, so the class itself is the schema:

    cycle_s: float = setting(0.005, low=0.0005, high=0.1, unit="s")

`parse(cls, table, where)` builds the class from a TOML table: unknown keys are refused,
every value is checked against its type (an int is accepted for a float; a bool is never a
number), its range and its choices, enums are taken by value, nested dataclasses from
sub-tables. Every error is a SettingError naming the key path (`[motor_driver] cycle_s`);
the board loader adds the file's name.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from collections.abc import Callable
from typing import Any

_SPEC = "foosball.schema"


class SettingError(ValueError):
    """A value in a settings table is wrong; the message starts with its key path."""


@dataclasses.dataclass(frozen=True)
class Spec:
    low: float | None = None  # inclusive
    high: float | None = None  # inclusive
    above: float | None = None  # exclusive lower bound (seconds, rates: "> 0")
    unit: str = ""
    choices: tuple[Any, ...] = ()
    # a parser of its own for what a plain type cannot say (a table of agents -> seconds)
    convert: Callable[[Any, str], Any] | None = None
    in_file: bool = True  # False: not a key of the file (set from elsewhere, e.g. geometry)

    def describe(self) -> str:
        parts = []
        if self.above is not None:
            parts.append(f"> {self.above:g}")
        if self.low is not None:
            parts.append(f">= {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        text = " and ".join(parts)
        return f"{text} {self.unit}".strip() if text else self.unit


def setting(default: Any = dataclasses.MISSING, *, low: float | None = None,
            high: float | None = None, above: float | None = None, unit: str = "",
            choices: tuple[Any, ...] = (), convert: Callable[[Any, str], Any] | None = None,
            in_file: bool = True,
            default_factory: Callable[[], Any] | Any = dataclasses.MISSING) -> Any:
    spec = Spec(low, high, above, unit, choices, convert, in_file)
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata={_SPEC: spec})


def spec_of(field: dataclasses.Field[Any]) -> Spec:
    return field.metadata.get(_SPEC, Spec())


def file_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The fields a settings file may set."""
    return {f.name: f for f in dataclasses.fields(cls) if f.init and spec_of(f).in_file}


def parse(cls: type, table: Any, where: str) -> Any:
    """`cls` from a TOML table; `where` names the table, e.g. "[motor_driver]"."""
    if not isinstance(table, dict):
        raise SettingError(f"{where}: a table of settings, not {table!r}")
    return cls(**parse_values(cls, table, where))


def parse_values(cls: type, table: dict[str, Any], where: str) -> dict[str, Any]:
    """The checked values of `table` for `cls`'s fields (refusing any other key)."""
    known = file_fields(cls)
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise SettingError(f"{_at(where)}unknown key{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(unknown)}; known: {', '.join(sorted(known))}")
    for name, f in known.items():  # a field without a default must be in the file
        if name not in table and f.default is dataclasses.MISSING \
                and f.default_factory is dataclasses.MISSING:
            raise SettingError(f"{_key(where, name)}: missing")
    hints = typing.get_type_hints(cls)
    return {name: check(hints[name], value, spec_of(known[name]), _key(where, name))
            for name, value in table.items()}


def parse_split(table: Any, where: str, *classes: type) -> list[dict[str, Any]]:
    """One table that holds the keys of several classes (the motor driver's bus keys and its
    own): each class's checked values; a key none of them knows is refused, naming all."""
    if not isinstance(table, dict):
        raise SettingError(f"{where}: a table of settings, not {table!r}")
    owners = [set(file_fields(cls)) for cls in classes]
    known = set().union(*owners)
    unknown = sorted(set(table) - known)
    if unknown:
        raise SettingError(f"{_at(where)}unknown key{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return [parse_values(cls, {k: v for k, v in table.items() if k in names}, where)
            for cls, names in zip(classes, owners, strict=True)]


def validate(instance: Any, where: str) -> None:
    """Check a dataclass built in code against the same specs (for its __post_init__)."""
    hints = typing.get_type_hints(type(instance))
    for name, f in file_fields(type(instance)).items():
        check(hints[name], getattr(instance, name), spec_of(f), _key(where, name))


def _at(where: str) -> str:
    """An error's start: the table's path, none for a file's top table."""
    return f"{where}: " if where else ""


def _key(where: str, name: str) -> str:
    """A key's path; `where` "" is a file's top table (vision.json's keys)."""
    if not where:
        return name
    return f"{where} {name}" if where.endswith("]") else f"{where}.{name}"


def _subtable(where: str) -> str:
    """The key path of a sub-table: "[ball_tracker] source" -> "[ball_tracker.source]";
    "source", a key of a file's top table, -> "[source]"."""
    if "] " not in where:
        return f"[{where}]"
    section, _, name = where.partition("] ")
    return f"{section}.{name}]"


def check(kind: Any, value: Any, spec: Spec, where: str) -> Any:
    """One value against its annotation and spec; the value as the class wants it."""
    if spec.convert is not None:
        return spec.convert(value, where)
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):  # e.g. `str | None`: the first that fits
        errors = []
        for option in typing.get_args(kind):
            if option is type(None):
                continue
            try:
                return check(option, value, spec, where)
            except SettingError as exc:
                errors.append(str(exc))
        raise SettingError(errors[0])
    if dataclasses.is_dataclass(kind):
        return parse(kind, value, _subtable(where))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        values = [m.value for m in kind]
        for member in kind:
            if value == member.value and type(value) is type(member.value):
                return member
        raise SettingError(f"{where}: one of {', '.join(map(repr, values))}, not {value!r}")
    if origin is tuple and len(typing.get_args(kind)) == 2 and typing.get_args(kind)[1] is ...:
        if not isinstance(value, list):  # tuple[float, ...]: a TOML list, every item checked
            raise SettingError(f"{where}: a list, not {value!r}")
        item = typing.get_args(kind)[0]
        return tuple(check(item, v, spec, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict or kind is dict:
        if not isinstance(value, dict):
            raise SettingError(f"{where}: a table, not {value!r}")
        return dict(value)
    if kind is bool:
        if not isinstance(value, bool):
            raise SettingError(f"{where}: true or false, not {value!r}")
        return value
    if kind is str:
        if not isinstance(value, str):
            raise SettingError(f"{where}: a string, not {value!r}")
        _choose(value, spec, where)
        return value
    if kind in (int, float):
        return _number(kind, value, spec, where)
    raise SettingError(f"{where}: cannot be set in a settings file")  # a tuple of axes...


def _number(kind: type, value: Any, spec: Spec, where: str) -> int | float:
    wanted = "an integer" if kind is int else "a number"
    unit = f" ({spec.unit})" if spec.unit else ""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            kind is int and not isinstance(value, int)):
        raise SettingError(f"{where}: {wanted}{unit}, not {value!r}")
    if not math.isfinite(value):
        raise SettingError(f"{where}: a finite number{unit}, not {value!r}")
    if ((spec.above is not None and not value > spec.above)
            or (spec.low is not None and value < spec.low)
            or (spec.high is not None and value > spec.high)):
        raise SettingError(f"{where}: {value!r} is out of range ({spec.describe()})")
    _choose(value, spec, where)
    return kind(value)


def _choose(value: Any, spec: Spec, where: str) -> None:
    if spec.choices and value not in spec.choices:
        raise SettingError(
            f"{where}: one of {', '.join(map(repr, spec.choices))}, not {value!r}")


def seconds(default: float, *, high: float | None = None) -> Any:
    """A duration that must be positive: the most common setting of all."""
    return setting(default, above=0.0, high=high, unit="s")
