# Over 500 lines on purpose: every message of the LAN in one file, the one definition the
# docs point to; each message is a short dataclass, and they are read (and reviewed) as one list.
"""The message catalogue: every message the agents exchange, in one place.

Each message is a frozen dataclass whose fields carry their wire spec: a small integer CBOR
key, a type, a unit and an allowed range. `to_body` turns a message into the CBOR map that
goes on the wire; `from_body` turns a decoded map back into a message and rejects anything
that is not exactly a valid message (unknown type, missing, extra or reordered key, wrong
type, out of range). Both directions use the same specs, so a sender cannot emit what a
receiver would refuse. `SENDERS` says which agents may send each message.

Units: metres, seconds, radians, amperes; times on the wire are integer nanoseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from enum import IntEnum
from functools import partial
from typing import Any, ClassVar

from foosball.wire.quick_init import quick_inits

# --- enums ---------------------------------------------------------------------------------


class Agent(IntEnum):
    MOTOR_DRIVER = 1
    POLE_DRIVER = 2
    SUPERVISORY_PANEL = 3
    BALL_TRACKER = 4
    STRATEGY = 5
    GAME_PANEL = 6
    OTA = 7
    TOOL = 8  # a person's command-line tool on the LAN
    SIMULATOR = 9
    MATCH_RECORDER = 10  # strategy board: listens, sends only heartbeats (and alarms)


class SafetyState(IntEnum):
    BOOT = 0
    ALIGNING = 1
    HOMING = 2
    READY = 3
    PLAYING = 4
    PAUSED = 5
    FAULT = 6


class AlarmCode(IntEnum):
    EMERGENCY_BUTTON = 1
    OVERCURRENT = 2
    MOTOR_LOCKED = 3
    DRIVE_FAULT = 4
    ETHERCAT_LINK = 5
    WORKING_COUNTER = 6
    HEARTBEAT_MISSING = 7
    BOARD_UNREACHABLE = 8
    CAMERA_LOST = 9
    LIMIT_BURST = 10
    WATCHDOG = 11
    CLOCK_STEP = 12  # a board's clock jumped, or a peer's frames are out of step with ours
    INTERNAL_ERROR = 13  # an agent's own step failed
    PEER_FAULT = 14  # a peer reports FAULT
    RESTART_REFUSED = 15  # not a cause (latched=False): a RESTART came while causes remain
    LAN_FLOOD = 16  # frames failing the MAC, or more than an agent reads: no healthy LAN


class DriveState(IntEnum):
    OFF = 0
    ALIGNING = 1
    HOMING = 2
    READY = 3
    RUNNING = 4
    QUICK_STOP = 5
    FAULT = 6


class GameCommand(IntEnum):
    START = 1
    PAUSE = 2
    STOP = 3
    RESTART = 4  # leave FAULT once its cause is gone


class DriveCommand(IntEnum):
    HALT = 1  # quick stop this drive and hold it stopped
    RELEASE = 2  # let it follow commands again (homing it first when it needs it)


class RodId(IntEnum):
    """The robot's rods; motor axis = 2 * rod + (0 translation, 1 rotation)."""

    GOALKEEPER = 0
    DEFENCE = 1
    MIDFIELD = 2
    ATTACK = 3


class BallStatus(IntEnum):
    DETECTED = 0  # seen in this frame
    PREDICTED = 1  # not seen (occluded); the filter's prediction
    LOST = 2  # not seen for too long; position meaningless


class LearnStage(IntEnum):
    REQUEST = 0  # game panel -> ball tracker: learn the band from your next frames
    LEARNT = 1  # ball tracker -> game panel: the band learnt, now in use
    REFUSED = 2  # ball tracker -> game panel: none taken, `text` says why


class CalibrationStage(IntEnum):
    """CameraCalibration's stage: two requests (game panel -> ball tracker), five replies."""

    LOOK = 0  # request: your next frame, the markers it shows and the layout's missing ones
    CALIBRATE = 1  # request: calibrate on your next frame; when accepted, save it and use it
    FOUND = 2  # reply to LOOK: what the frame shows (`text`, `markers`)
    ACCEPTED = 3  # reply to CALIBRATE: saved where the tracker reads it, and in use now
    REFUSED = 4  # reply to CALIBRATE: the calibration's checks refused it (`text` says why)
    FAILED = 5  # reply: nothing could be computed or saved (no layout, too few markers, ...)
    BUSY = 6  # reply: another job (learning, a calibration) or a match is under way


class MarkerSeen(IntEnum):
    """One marker of a CameraCalibration reply: found, or why not."""

    FOUND = 0  # in the frame (`u`, `v`: its centre)
    OUTSIDE = 1  # outside the camera's view (`u`, `v`: where it should be)
    PARTLY_OUTSIDE = 2  # partly outside it (its white margin must be in the frame too)
    NOT_FOUND = 3  # in view but not found: covered, glare, not flat, out of focus, wrong id
    UNKNOWN = 4  # not found, and fewer than 4 markers were: where it should be is unknown
    STRAY = 5  # found, but the layout has no marker of this id


# --- field specs ---------------------------------------------------------------------------


class SchemaError(ValueError):
    """A value does not fit the catalogue."""


NS_MAX = 2**63 - 1
INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Spec:
    """How one field travels: CBOR key, type, unit and limits."""

    key: int
    kind: str  # float | int | bool | str | bytes | enum | floats | records
    low: float = -math.inf
    high: float = math.inf
    unit: str = ""
    max_len: int = 0  # str/bytes/sequence length limit; exact length for `floats`
    # `records` only, the last field of its class and at most one: an empty tuple is left
    # out of the body and a body without the key reads as empty; so a field added later
    # reads older bodies (recordings, a board not yet updated), and an older decoder takes
    # the new ones while the field is empty
    optional: bool = False
    enum: type[IntEnum] | None = None
    record: type | None = None

    def __post_init__(self) -> None:
        # A number field's limits must be finite: the checks compare integers from the wire
        # with them before converting, and float() of an in-range integer cannot overflow.
        if self.kind in ("float", "floats"):
            assert math.isfinite(self.low) and math.isfinite(self.high), self

    def check(self, name: str, value: Any) -> Any:
        """Validate an outgoing or incoming value; return its Python form."""
        return _CHECKS[self.kind](self, name, value)

    def to_wire(self, value: Any) -> Any:
        if self.kind == "enum":
            return int(value)
        if self.kind == "floats":
            return list(value)
        if self.kind == "records":
            return [to_body(v) for v in value]
        return value


# One checker per kind, looked up once per field: this runs for every field of every
# message sent or received, so it stays flat and branch-free.


def brief(value: Any) -> str:
    """A short, safe description of a value from the wire, for drop details: a peer's 2^1100
    or kilobyte string must not become a 400-digit log line (or, past 4300 digits, a
    ValueError from str())."""
    if type(value) is int and value.bit_length() > 64:
        return f"{'-' if value < 0 else ''}an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except Exception:  # a hostile structure's repr may itself fail
        return f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."


def _check_float(spec: Spec, name: str, value: Any) -> float:
    kind = type(value)
    if kind is not float and kind is not int:  # bool is not accepted as a number
        raise SchemaError(f"{name}: expected a number, got {kind.__name__}")
    # Compared before float(): an int compares exactly, and float(2**1100) would overflow.
    if not spec.low <= value <= spec.high:  # also rejects NaN and infinities
        raise SchemaError(f"{name}: {brief(value)} outside [{spec.low}, {spec.high}] {spec.unit}")
    return value if kind is float else float(value)  # type: ignore[no-any-return]


def _check_int(spec: Spec, name: str, value: Any) -> int:
    if type(value) is not int:  # bool is not accepted as an integer
        raise SchemaError(f"{name}: expected an integer, got {type(value).__name__}")
    if not spec.low <= value <= spec.high:
        raise SchemaError(f"{name}: {brief(value)} outside [{spec.low}, {spec.high}]")
    return value


def _check_enum(spec: Spec, name: str, value: Any) -> IntEnum:
    if type(value) is not int and not isinstance(value, IntEnum):
        raise SchemaError(f"{name}: expected an integer, got {type(value).__name__}")
    assert spec.enum is not None
    member = spec.enum._value2member_map_.get(value)
    if member is None:
        raise SchemaError(f"{name}: {brief(value)} is not a {spec.enum.__name__}")
    return member  # type: ignore[return-value]


def _check_bool(spec: Spec, name: str, value: Any) -> bool:
    if type(value) is not bool:
        raise SchemaError(f"{name}: expected true/false, got {type(value).__name__}")
    return value  # type: ignore[no-any-return]


def _check_sized(expected: type) -> Any:
    def check(spec: Spec, name: str, value: Any) -> Any:
        if type(value) is not expected:
            raise SchemaError(f"{name}: expected {spec.kind}, got {type(value).__name__}")
        if len(value) > spec.max_len:
            raise SchemaError(f"{name}: longer than {spec.max_len}")
        return value

    return check


def _check_floats(spec: Spec, name: str, value: Any) -> tuple[float, ...]:
    if not isinstance(value, list | tuple) or len(value) != spec.max_len:
        raise SchemaError(f"{name}: expected {spec.max_len} numbers")
    low, high = spec.low, spec.high
    for v in value:  # inline: this runs for every covariance of every ball state
        kind = type(v)
        if (kind is not float and kind is not int) or not low <= v <= high:
            _check_float(spec, name, v)  # raises with the precise complaint
    return tuple([float(v) for v in value])


def _check_records(spec: Spec, name: str, value: Any) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= spec.max_len:
        raise SchemaError(f"{name}: expected 1..{spec.max_len} entries")
    assert spec.record is not None
    return tuple([_record_check(spec.record, name, i, v) for i, v in enumerate(value)])


_CONVERTED = frozenset({"enum", "floats", "records"})  # kinds whose wire form differs
_CHECKS = {
    "float": _check_float,
    "int": _check_int,
    "enum": _check_enum,
    "bool": _check_bool,
    "str": _check_sized(str),
    "bytes": _check_sized(bytes),
    "floats": _check_floats,
    "records": _check_records,
}


def _spec(key: int, kind: str, default: Any = MISSING, **kw: Any) -> Any:
    """A field on the wire (always sent, but for an empty optional one); `default` only
    spares a Python caller the value."""
    return field(default=default, metadata={"wire": Spec(key, kind, **kw)})


def num(key: int, low: float, high: float, unit: str = "", default: Any = MISSING) -> Any:
    return _spec(key, "float", default, low=low, high=high, unit=unit)


def integer(key: int, low: int, high: int, unit: str = "", default: Any = MISSING) -> Any:
    return _spec(key, "int", default, low=low, high=high, unit=unit)


def flag(key: int) -> Any:
    return _spec(key, "bool")


def text(key: int, max_len: int) -> Any:
    return _spec(key, "str", max_len=max_len)


def blob(key: int, max_len: int) -> Any:
    return _spec(key, "bytes", max_len=max_len)


def choice(key: int, enum: type[IntEnum]) -> Any:
    return _spec(key, "enum", enum=enum)


def floats(key: int, count: int, low: float, high: float, unit: str = "") -> Any:
    return _spec(key, "floats", max_len=count, low=low, high=high, unit=unit)


def records(key: int, record: type, max_len: int) -> Any:
    return _spec(key, "records", record=record, max_len=max_len)


def optional_records(key: int, record: type, max_len: int) -> Any:
    """A field added after the message was first sent (the last ones): absent when empty."""
    return _spec(key, "records", (), record=record, max_len=max_len, optional=True)


def specs(cls: type) -> tuple[tuple[str, Spec], ...]:
    """(field name, spec) pairs of a message or record class, cached on the class."""
    cached = cls.__dict__.get("_specs")
    if cached is None:
        cached = tuple((f.name, f.metadata["wire"]) for f in fields(cls))
        keys = [s.key for _, s in cached]
        # Ascending keys: the order to_body writes them in is canonical CBOR's.
        assert keys == sorted(set(keys)), f"{cls.__name__}: CBOR keys must ascend, no repeats"
        optional = [n for n, (_, s) in enumerate(cached) if s.optional]
        assert all(cached[n][1].kind == "records" for n in optional) and \
            optional == list(range(len(cached) - len(optional), len(cached))), \
            f"{cls.__name__}: only the last fields may be optional (records)"
        cls._specs = cached  # type: ignore[attr-defined]
    return cached


def _checked_specs(cls: type) -> tuple[tuple[str, Spec, Any], ...]:
    """specs() with each field's checker looked up once, cached on the class."""
    cached = cls.__dict__.get("_checked_specs")
    if cached is None:
        cached = tuple((name, spec, _CHECKS[spec.kind]) for name, spec in specs(cls))
        cls._checked_specs = cached  # type: ignore[attr-defined]
    return cached


# --- compiled checks ---------------------------------------------------------------------
# to_body and from_body run for every message sent and received (a MotorStatus is 49
# fields). Per class, the same checks are compiled once into one flat function (as
# dataclasses compiles __init__): no call per field. It returns None on anything it does not
# accept, and the general code below then says precisely what is wrong, so the compiled
# code never has to.


def _value_check(spec: Spec, v: str, ns: dict[str, Any], tag: str, outgoing: bool) -> list[str]:
    """Lines that check the value in variable `v` against `spec` and leave its converted
    form (the message's on the way in, the wire's on the way out) in `v`."""
    lo, hi = f"LO_{tag}", f"HI_{tag}"
    ns[lo], ns[hi] = spec.low, spec.high
    kind = spec.kind
    if kind == "float":
        return [f"t = type({v})",
                f"if t is not float and (t is not int or not {lo} <= {v} <= {hi}): return None",
                f"if t is float and not {lo} <= {v} <= {hi}: return None",
                f"if t is int: {v} = float({v})"]
    if kind == "int":
        return [f"if type({v}) is not int or not {lo} <= {v} <= {hi}: return None"]
    if kind == "bool":
        return [f"if type({v}) is not bool: return None"]
    if kind in ("str", "bytes"):
        return [f"if type({v}) is not {kind} or len({v}) > {spec.max_len}: return None"]
    if kind == "enum":
        assert spec.enum is not None
        ns[f"MAP_{tag}"] = spec.enum._value2member_map_
        if outgoing:  # the member (or its number) out, its number on the wire
            ns["IntEnum"] = IntEnum
            return [f"if not (type({v}) is int or isinstance({v}, IntEnum)) or {v} not in "
                    f"MAP_{tag}: return None",
                    f"{v} = int({v})"]
        return [f"{v} = MAP_{tag}.get({v}) if type({v}) is int else None",
                f"if {v} is None: return None"]
    if kind == "floats":
        convert = f"list({v})" if outgoing else f"tuple([float(x) for x in {v}])"
        return [f"if not isinstance({v}, (list, tuple)) or len({v}) != {spec.max_len}: "
                "return None",
                f"for x in {v}:",
                "    t = type(x)",
                f"    if (t is not float and t is not int) or not {lo} <= x <= {hi}: "
                "return None",
                f"{v} = {convert}"]
    assert kind == "records" and spec.record is not None
    ns[f"REC_{tag}"] = spec.record
    ns[f"FAST_{tag}"] = _compiled(spec.record, outgoing)
    each = (f"FAST_{tag}(r) if type(r) is REC_{tag} else None" if outgoing
            else f"FAST_{tag}(r) if type(r) is dict else None")
    lines = [f"if not isinstance({v}, (list, tuple)) or not 1 <= len({v}) <= {spec.max_len}: "
             "return None",
             f"{v} = [{each} for r in {v}]",
             f"if None in {v}: return None"]
    return lines if outgoing else [*lines, f"{v} = tuple({v})"]  # the wire's list, ours tuple


def _compiled(cls: type, outgoing: bool) -> Any:
    """cls's compiled to_body (outgoing) or from_body (incoming), cached on the class."""
    attribute = "_compiled_to" if outgoing else "_compiled_from"
    cached = cls.__dict__.get(attribute)
    if cached is not None:
        return cached
    fields_ = specs(cls)
    ns: dict[str, Any] = {"CLS": cls, "ABSENT": _ABSENT,
                          "fill": partial(_fill_absent, tuple(s.key for _, s in fields_))}
    values = [f"v{i}" for i in range(len(fields_))]
    optional = [spec.key for _, spec in fields_ if spec.optional]
    if outgoing:
        lines = ["def compiled(m):",
                 *(f"    {v} = m.{name}" for v, (name, _) in zip(values, fields_, strict=True))]
    else:
        keys = [f"k{i}" for i in range(len(fields_))]
        lines = ["def compiled(body):",
                 "    if type(body) is not dict: return None",
                 *([f"    if {len(fields_) - len(optional)} <= len(body) < {len(fields_)}: "
                    "body = fill(body)"] if optional else []),
                 f"    if len(body) != {len(fields_)}: return None",
                 f"    {', '.join(keys)}, = body",
                 # 1.0 and True equal 1 but are other encodings of a key
                 "    if not (" + " and ".join(f"type({k}) is int and {k} == {spec.key}"
                                               for k, (_, spec) in zip(keys, fields_,
                                                                       strict=True)) + "):",
                 "        return None",
                 f"    {', '.join(values)}, = body.values()"]
    for i, (v, (_, spec)) in enumerate(zip(values, fields_, strict=True)):
        checks = _value_check(spec, v, ns, str(i), outgoing)
        if spec.optional:  # empty: left out of the body; absent: read as empty
            absent = f"type({v}) is tuple and not {v}" if outgoing else f"{v} is ABSENT"
            lines += [f"    if {absent}: {v} = {'ABSENT' if outgoing else '()'}",
                      "    else:", *("        " + line for line in checks)]
        else:
            lines += ["    " + line for line in checks]
    if outgoing:
        lines.append("    body = {" + ", ".join(f"{spec.key}: {v}" for v, (_, spec)
                                                in zip(values, fields_, strict=True)) + "}")
        for v, (_, spec) in zip(values, fields_, strict=True):
            if spec.optional:
                lines.append(f"    if {v} is ABSENT: del body[{spec.key}]")
        lines.append("    return body")
    else:
        lines.append(f"    return CLS({', '.join(values)})")
    exec("\n".join(lines), ns)  # our own specs: no outside text reaches it
    setattr(cls, attribute, ns["compiled"])
    return ns["compiled"]


def to_body(message: Any) -> dict[int, Any]:
    """The CBOR map of a message or record, validating every field on the way out."""
    body = _compiled(type(message), True)(message)
    return body if body is not None else _to_body_general(message)  # the latter: why not


def _to_body_general(message: Any) -> dict[int, Any]:
    body = {}
    for name, spec, check in _checked_specs(type(message)):
        value = getattr(message, name)
        if spec.optional and type(value) is tuple and not value:
            continue  # empty: left out
        value = check(spec, name, value)
        body[spec.key] = spec.to_wire(value) if spec.kind in _CONVERTED else value
    return body


def _record_check(cls: type, name: str, index: int, value: Any) -> Any:
    # A record object is validated when its message is encoded (to_wire -> to_body);
    # a map from the wire is validated here. The index is formatted only on error.
    if isinstance(value, cls):
        return value
    try:
        if isinstance(value, (dict, Mapping)):  # dict first: ABCs are slow
            return from_body(cls, value, name)
        raise SchemaError(f"expected a {cls.__name__}")
    except SchemaError as exc:
        raise SchemaError(f"{name}[{index}]: {exc}") from None


_ABSENT = object()  # an optional field's key not in a body (see Spec.optional)


def _fill_absent(keys: tuple[int, ...], body: dict[Any, Any]) -> dict[Any, Any]:
    """The body with ABSENT for each key it leaves out, in order. Only for integer keys
    in ascending order (the one encoding): anything else is returned as it is, for the
    checks after it to refuse; so is a body without a key that may not be left out."""
    if not all(type(k) is int for k in body) or list(body) != sorted(body):
        return body
    return {k: body.get(k, _ABSENT) for k in keys}


def from_body(cls: type, body: Any, where: str | None = None) -> Any:
    """Build a message or record from its CBOR map; SchemaError on anything unexpected,
    keys included: integers, in the order to_body writes them (one message, one encoding)."""
    message = _compiled(cls, False)(body)
    return message if message is not None else _from_body_general(cls, body, where)


def _from_body_general(cls: type, body: Any, where: str | None = None) -> Any:
    where = where or cls.__name__
    if not isinstance(body, dict) and not isinstance(body, Mapping):
        raise SchemaError(f"{where}: expected a map")
    checked = _checked_specs(cls)
    optional = sum(1 for _, spec, _ in checked if spec.optional)
    if optional and len(checked) - optional <= len(body) < len(checked):
        body = _fill_absent(tuple(spec.key for _, spec, _ in checked), dict(body))
    if len(body) != len(checked):
        raise SchemaError(f"{where}: expected {len(checked)} fields, got {len(body)}")
    values = []  # in field order, so the constructor takes them positionally (faster)
    for (name, spec, check), key, raw in zip(checked, body, body.values(), strict=False):
        # 1.0 and True equal 1 (in dict lookups too) but are other encodings of the key.
        if type(key) is not int or key != spec.key:
            raise SchemaError(_key_complaint(where, cls, body))
        if raw is _ABSENT and not spec.optional:
            raise SchemaError(f"{where}.{name}: missing")
        values.append(() if raw is _ABSENT else check(spec, name, raw))
    return cls(*values)


def _key_complaint(where: str, cls: type, body: Mapping[Any, Any]) -> str:
    """What is wrong with the keys of a body of the right size whose keys are not cls's."""
    odd = [brief(k) for k in body if type(k) is not int]
    if odd:
        return f"{where}: keys must be integers, got {', '.join(odd[:4])}"
    for name, spec in specs(cls):
        if spec.key not in body:
            return f"{where}.{name}: missing"
    return f"{where}: keys out of order"


# --- messages ------------------------------------------------------------------------------
# TYPE_ID is the message's number on the wire; never reuse a retired one.

F = 1e3  # generous bound for speeds and positions that must still be finite
POSITION = 2.0  # m: any point on or near the table
ANGLE = 1e4  # rad at a motor shaft (multi-turn)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Every agent, 100 Hz: alive, in which state, and how its board is doing."""

    TYPE_ID: ClassVar[int] = 1
    agent: Agent = choice(1, Agent)
    state: SafetyState = choice(2, SafetyState)
    period_s: float = num(3, 0.0, 10.0, "s")
    cpu_load: float = num(4, 0.0, 100.0, "%")
    memory: float = num(5, 0.0, 100.0, "%")
    temperature: float = num(6, -273.0, 200.0, "degC")


@dataclass(frozen=True, slots=True)
class Alarm:
    """Any agent: something is unsafe; every motor stops and the game halts."""

    TYPE_ID: ClassVar[int] = 2
    source: Agent = choice(1, Agent)
    code: AlarmCode = choice(2, AlarmCode)
    text: str = text(3, 200)
    latched: bool = flag(4)
    axis: int = integer(5, -1, 7)


@dataclass(frozen=True, slots=True)
class BallState:
    """Ball tracker -> strategy, game panel: the filtered ball, once per camera frame."""

    TYPE_ID: ClassVar[int] = 3
    capture_time: int = integer(1, 0, NS_MAX, "ns")
    frame: int = integer(2, 0, NS_MAX)
    x: float = num(3, -POSITION, POSITION, "m")
    y: float = num(4, -POSITION, POSITION, "m")
    vx: float = num(5, -50.0, 50.0, "m/s")
    vy: float = num(6, -50.0, 50.0, "m/s")
    covariance: tuple[float, float, float, float] = floats(7, 4, 0.0, 1e6)
    status: BallStatus = choice(8, BallStatus)


@dataclass(frozen=True, slots=True)
class RodTarget:
    rod: RodId = choice(1, RodId)
    translation: float = num(2, -POSITION, POSITION, "m")
    rotation: float = num(3, -2 * math.pi, 2 * math.pi, "rad")
    translation_speed: float = num(4, 0.0, 20.0, "m/s")
    rotation_speed: float = num(5, 0.0, 1000.0, "rad/s")


@dataclass(frozen=True, slots=True)
class RodCommand:
    """Strategy -> pole driver: where each robot rod goes, in table units."""

    TYPE_ID: ClassVar[int] = 4
    ball_capture_time: int = integer(1, 0, NS_MAX, "ns")
    rods: tuple[RodTarget, ...] = records(2, RodTarget, 4)


@dataclass(frozen=True, slots=True)
class RodPosition:
    rod: RodId = choice(1, RodId)
    translation: float = num(2, -POSITION, POSITION, "m")
    rotation: float = num(3, -ANGLE, ANGLE, "rad")
    translation_velocity: float = num(4, -F, F, "m/s")
    rotation_velocity: float = num(5, -F * 10, F * 10, "rad/s")


@dataclass(frozen=True, slots=True)
class RodStatus:
    """Pole driver -> strategy, panels: measured rod positions in table units."""

    TYPE_ID: ClassVar[int] = 5
    rods: tuple[RodPosition, ...] = records(1, RodPosition, 4)


@dataclass(frozen=True, slots=True)
class AxisTarget:
    axis: int = integer(1, 0, 7)
    position: float = num(2, -ANGLE, ANGLE, "rad")
    velocity: float = num(3, 0.0, 5000.0, "rad/s")


@dataclass(frozen=True, slots=True)
class MotorCommand:
    """Pole driver -> motor driver: motor shaft targets, already limit-checked, and the
    capture time of the ball state they answer (the RodCommand's; 0: none), so the motor
    driver measures frame -> setpoint on the wire."""

    TYPE_ID: ClassVar[int] = 6
    axes: tuple[AxisTarget, ...] = records(1, AxisTarget, 8)
    ball_capture_time: int = integer(2, 0, NS_MAX, "ns", default=0)


@dataclass(frozen=True, slots=True)
class AxisStatus:
    axis: int = integer(1, 0, 7)
    state: DriveState = choice(2, DriveState)
    position: float = num(3, -ANGLE, ANGLE, "rad")
    velocity: float = num(4, -F * 10, F * 10, "rad/s")
    current: float = num(5, -F, F, "A")
    fault_code: int = integer(6, 0, 0xFFFF)


@dataclass(frozen=True, slots=True)
class MotorStatus:
    """Motor driver -> pole driver, supervisory panel, strategy: every axis."""

    TYPE_ID: ClassVar[int] = 7
    axes: tuple[AxisStatus, ...] = records(1, AxisStatus, 8)


@dataclass(frozen=True, slots=True)
class SlaveState:
    """One EtherCAT slave as the master read it from the slave's own registers."""

    position: int = integer(1, 1, 65535)  # in wiring order, from 1 (axis = position - 1)
    al_state: int = integer(2, 0, 0xFF)  # with the error flag 0x10; 0: none (no answer)
    al_status_code: int = integer(3, 0, 0xFFFF)  # why it left OP (0x001B: SM watchdog)
    al_status_text: str = text(4, 40)  # SOEM's text for the code (its longest: 35)
    # the ESC's error counters summed over its ports (-1: not read): RX errors (invalid
    # frames and physical-layer errors, 0x0300-0x0307) and lost links (0x0310-0x0313)
    rx_errors: int = integer(5, -1, 8 * 255)
    lost_links: int = integer(6, -1, 4 * 255)


@dataclass(frozen=True, slots=True)
class DriveEmergency:
    """The last CoE emergency one drive sent (CiA 301): why it faulted, in its own words."""

    position: int = integer(1, 1, 65535)  # the slave, in wiring order (axis = position - 1)
    error_code: int = integer(2, 0, 0xFFFF)  # CiA 301/402 error code (0x5xxx device, ...)
    error_register: int = integer(3, 0, 0xFF)  # 0x1001: bit 0 generic, 1 current, ...
    data: int = integer(4, 0, 2**40 - 1)  # the manufacturer's five bytes, little-endian


@dataclass(frozen=True, slots=True)
class EtherCatStatus:
    """Motor driver -> supervisory panel: the EtherCAT segment's health."""

    TYPE_ID: ClassVar[int] = 8
    link_up: bool = flag(1)
    slaves: int = integer(2, 0, 65535)
    expected_slaves: int = integer(3, 0, 65535)
    al_state: int = integer(4, 0, 0xFF)
    working_counter: int = integer(5, 0, 65535)
    expected_working_counter: int = integer(6, 0, 65535)
    bad_working_counters: int = integer(7, 0, NS_MAX)
    cycle_period_s: float = num(8, 0.0, 1.0, "s")
    wakeup_jitter_p99_s: float = num(9, 0.0, 10.0, "s")
    # Frame capture -> the setpoint answering it leaves in an EtherCAT frame, over the
    # commands of the last status period (0: none measured).
    capture_to_setpoint_p50_s: float = num(10, 0.0, 10.0, "s", default=0.0)
    capture_to_setpoint_p99_s: float = num(11, 0.0, 10.0, "s", default=0.0)
    # The slaves out of OP or not answering, as the master last read them while the
    # working counter was short (its bus recovery); empty while it is full (issue 31).
    slaves_not_op: tuple[SlaveState, ...] = optional_records(12, SlaveState, 8)
    # The last CoE emergency of each drive that sent one since the bus started.
    emergencies: tuple[DriveEmergency, ...] = optional_records(13, DriveEmergency, 8)


@dataclass(frozen=True, slots=True)
class GameControl:
    """Game panel (or a person's tool) -> every agent."""

    TYPE_ID: ClassVar[int] = 9
    command: GameCommand = choice(1, GameCommand)


@dataclass(frozen=True, slots=True)
class DriveControl:
    """Supervisory panel (or a person's tool) -> motor driver: one drive halted or let go."""

    TYPE_ID: ClassVar[int] = 15
    axis: int = integer(1, 0, 7)
    command: DriveCommand = choice(2, DriveCommand)


@dataclass(frozen=True, slots=True)
class GameState:
    """Game panel -> every agent: the one authoritative game state."""

    TYPE_ID: ClassVar[int] = 10
    state: SafetyState = choice(1, SafetyState)
    score_robot: int = integer(2, 0, 999)
    score_human: int = integer(3, 0, 999)
    clock_s: float = num(4, 0.0, 1e6, "s")
    alarm_text: str = text(5, 200)


@dataclass(frozen=True, slots=True)
class VisionConfig:
    """Game panel -> ball tracker: thresholds in OpenCV HSV terms (H 0..179, S/V 0..255)."""

    TYPE_ID: ClassVar[int] = 11
    hue_low: int = integer(1, 0, 179)
    hue_high: int = integer(2, 0, 179)
    sat_low: int = integer(3, 0, 255)
    sat_high: int = integer(4, 0, 255)
    val_low: int = integer(5, 0, 255)
    val_high: int = integer(6, 0, 255)
    min_area: float = num(7, 0.0, 1e6, "px")
    max_area: float = num(8, 0.0, 1e6, "px")
    min_density: float = num(9, 0.0, 1.0)
    max_eccentricity: float = num(10, 0.0, 1.0)
    preview: bool = flag(11)


PREVIEW_CHUNK = 1024  # bytes of packed mask per frame; a message must fit one Ethernet frame


@dataclass(frozen=True, slots=True)
class VisionPreview:
    """Ball tracker -> game panel: a small 1-bit threshold mask, split across frames."""

    TYPE_ID: ClassVar[int] = 12
    frame: int = integer(1, 0, NS_MAX)
    part: int = integer(2, 0, 255)
    parts: int = integer(3, 1, 256)
    width: int = integer(4, 1, 640)
    height: int = integer(5, 1, 480)
    mask: bytes = blob(6, PREVIEW_CHUNK)


CALIBRATION_MARKERS = 50  # ArUco DICT_4X4_50: no calibration can have seen more markers


@dataclass(frozen=True, slots=True)
class CalibrationStatus:
    """Ball tracker -> game panel, 1 Hz: the camera calibration it maps the ball with."""

    TYPE_ID: ClassVar[int] = 16
    made_at: int = integer(1, 0, NS_MAX, "ns")  # wall clock; 0: the file does not say
    reprojection_rms_px: float = num(2, 0.0, 1e4, "px")
    reprojection_max_px: float = num(3, 0.0, 1e4, "px")
    table_rms_m: float = num(4, 0.0, POSITION, "m")  # marker corners mapped back to the table
    width: int = integer(5, 1, 65535, "px")  # the image size it was made for
    height: int = integer(6, 1, 65535, "px")
    markers: int = integer(7, 0, CALIBRATION_MARKERS)


@dataclass(frozen=True, slots=True)
class HumanRod:
    rod: RodId = choice(1, RodId)  # the human's rod of this role
    translation: float = num(2, -POSITION, POSITION, "m")
    rotation: float = num(3, -math.pi, math.pi, "rad")  # 0 when not rotation_seen
    men_seen: int = integer(4, 0, 5)  # 0: not measured in this frame (values are the last)
    rotation_seen: bool = flag(5)  # the men's shape showed the rotation


@dataclass(frozen=True, slots=True)
class HumanRods:
    """Ball tracker -> strategy, game panel: where the human's men stand, measured from
    the camera (the men's colour blobs) on the frame captured at `capture_time`."""

    TYPE_ID: ClassVar[int] = 17
    capture_time: int = integer(1, 0, NS_MAX, "ns")
    frame: int = integer(2, 0, NS_MAX)
    rods: tuple[HumanRod, ...] = records(3, HumanRod, 4)


@dataclass(frozen=True, slots=True)
class VisionLearn:
    """Game panel -> ball tracker: learn the ball's HSV band from your own frames of it
    rolling (the moving blob), instead of thresholds by hand. Ball tracker -> game panel:
    what came of it, the band now in use or why none was taken (a band that takes in the
    field or the frame is refused). One message both ways, told apart by `stage`; the
    reply carries the request's number. The band fields are 0 in a request."""

    TYPE_ID: ClassVar[int] = 18
    request: int = integer(1, 0, INT32)
    stage: LearnStage = choice(2, LearnStage)
    frames: int = integer(3, 0, 240)  # request: frames to learn from; reply: with the ball
    hue_low: int = integer(4, 0, 179)
    hue_high: int = integer(5, 0, 179)
    sat_low: int = integer(6, 0, 255)
    sat_high: int = integer(7, 0, 255)
    val_low: int = integer(8, 0, 255)
    val_high: int = integer(9, 0, 255)
    ball_share: float = num(10, 0.0, 1.0)  # of the ball's pixels inside the band
    table_share: float = num(11, 0.0, 1.0)  # of the other pixels of the frames inside it
    text: str = text(12, 200)


# A CameraCalibration must fit one Ethernet frame with every field at its limit
# (tests/wire/test_catalogue.py): at most this many markers, and the text this long.
CAMERA_CALIBRATION_MARKERS = 16
CAMERA_CALIBRATION_TEXT = 300


@dataclass(frozen=True, slots=True)
class CalibrationMarker:
    """One marker in a CameraCalibration reply."""

    marker: int = integer(1, 0, CALIBRATION_MARKERS - 1)  # its ArUco id
    seen: MarkerSeen = choice(2, MarkerSeen)
    u: int = integer(3, -100_000, 100_000, "px")  # its centre in the frame (UNKNOWN: 0)
    v: int = integer(4, -100_000, 100_000, "px")
    x_mm: int = integer(5, -5000, 5000, "mm")  # its centre on the table, as the layout says
    y_mm: int = integer(6, -5000, 5000, "mm")  # (a STRAY one: 0)
    checked: bool = flag(7)  # CALIBRATE: its offset was measured (5 markers or more)
    dx_mm: float = num(8, -1000.0, 1000.0, "mm")  # where the other markers put it, off
    dy_mm: float = num(9, -1000.0, 1000.0, "mm")  # the layout's place (0 unless checked)
    blamed: bool = flag(10)  # the refusal names it
    # checked without the blamed marker (a mis-measured marker bends every fit it is in)
    without_blamed: bool = flag(11)


@dataclass(frozen=True, slots=True)
class CameraCalibration:
    """Game panel -> ball tracker: LOOK at your next frame (the markers found, the layout's
    missing ones and why), or CALIBRATE on it (`foosball vision calibrate`'s decision;
    accepted: saved where the tracker reads its calibration, the old file kept, and used
    at once). Ball tracker -> game panel: the reply (FOUND, ACCEPTED, REFUSED, FAILED,
    BUSY) with the request's number, the verdict's text, each marker and, when
    `snapshot_parts` > 0, the annotated frame following as CameraSnapshot parts. One
    message both ways, told apart by `stage`; a request's other fields are 0 and empty."""

    TYPE_ID: ClassVar[int] = 19
    request: int = integer(1, 0, INT32)
    stage: CalibrationStage = choice(2, CalibrationStage)
    width: int = integer(3, 0, 65535, "px")  # the frame's size (0: no frame)
    height: int = integer(4, 0, 65535, "px")
    reprojection_rms_px: float = num(5, 0.0, 1e4, "px")  # ACCEPTED/REFUSED (else 0)
    reprojection_limit_px: float = num(6, 0.0, 1e4, "px")  # the calibration's own limit
    table_rms_m: float = num(7, 0.0, POSITION, "m")
    focal_px: float = num(8, 0.0, 1e5, "px")  # ACCEPTED: the focal length used
    limit_mm: float = num(9, 0.0, 1000.0, "mm")  # a marker's largest offset accepted
    snapshot_parts: int = integer(10, 0, 256)  # CameraSnapshot parts that follow
    text: str = text(11, CAMERA_CALIBRATION_TEXT)
    markers: tuple[CalibrationMarker, ...] = optional_records(12, CalibrationMarker,
                                                              CAMERA_CALIBRATION_MARKERS)


SNAPSHOT_CHUNK = 1280  # JPEG bytes per CameraSnapshot; a message must fit one Ethernet frame


@dataclass(frozen=True, slots=True)
class CameraSnapshot:
    """Ball tracker -> game panel: the frame a CameraCalibration reply is about, downscaled
    and annotated (the markers found outlined with their ids), as a small JPEG in parts."""

    TYPE_ID: ClassVar[int] = 20
    request: int = integer(1, 0, INT32)  # the CameraCalibration request it answers
    part: int = integer(2, 0, 255)
    parts: int = integer(3, 1, 256)
    width: int = integer(4, 1, 4096, "px")  # the JPEG's size
    height: int = integer(5, 1, 4096, "px")
    jpeg: bytes = blob(6, SNAPSHOT_CHUNK)


@dataclass(frozen=True, slots=True)
class OtaCommand:
    """Update tool -> a board's update agent."""

    TYPE_ID: ClassVar[int] = 13
    board: str = text(1, 32)
    action: str = text(2, 32)
    url: str = text(3, 512)


@dataclass(frozen=True, slots=True)
class OtaStatus:
    """A board's update agent -> update tool, panels."""

    TYPE_ID: ClassVar[int] = 14
    board: str = text(1, 32)
    slot: str = text(2, 32)
    state: str = text(3, 32)
    progress: float = num(4, 0.0, 100.0, "%")
    text: str = text(5, 200)
    # (`text` above is a field by now, hence _spec)
    version: str = _spec(6, "str", max_len=64)  # of the booted slot
    primary: str = _spec(7, "str", max_len=32)  # the slot the next boot starts
    # The install this status is about: a refusal's the refused command's URL, otherwise
    # the one under way or last done; so two tools pushing to one board tell theirs apart.
    url: str = _spec(8, "str", "", max_len=512)


ANY_AGENT = frozenset(Agent)

# Which agents may send each message; receivers drop anything else (reason "sender"). Any
# key holder can sign, so this is what stops one agent from speaking for another.
SENDERS: dict[type, frozenset[Agent]] = {
    Heartbeat: ANY_AGENT,
    Alarm: ANY_AGENT,  # a person's tool may inject one to test the stop path
    BallState: frozenset({Agent.BALL_TRACKER}),
    RodCommand: frozenset({Agent.STRATEGY, Agent.TOOL}),
    RodStatus: frozenset({Agent.POLE_DRIVER}),
    MotorCommand: frozenset({Agent.POLE_DRIVER}),
    MotorStatus: frozenset({Agent.MOTOR_DRIVER}),
    EtherCatStatus: frozenset({Agent.MOTOR_DRIVER}),
    GameControl: frozenset({Agent.GAME_PANEL, Agent.SUPERVISORY_PANEL, Agent.TOOL}),
    DriveControl: frozenset({Agent.SUPERVISORY_PANEL, Agent.TOOL}),
    GameState: frozenset({Agent.GAME_PANEL}),
    VisionConfig: frozenset({Agent.GAME_PANEL, Agent.TOOL}),
    VisionPreview: frozenset({Agent.BALL_TRACKER}),
    CalibrationStatus: frozenset({Agent.BALL_TRACKER}),
    HumanRods: frozenset({Agent.BALL_TRACKER}),
    VisionLearn: frozenset({Agent.GAME_PANEL, Agent.TOOL, Agent.BALL_TRACKER}),  # by stage
    CameraCalibration: frozenset({Agent.GAME_PANEL, Agent.TOOL, Agent.BALL_TRACKER}),  # by stage
    CameraSnapshot: frozenset({Agent.BALL_TRACKER}),
    OtaCommand: frozenset({Agent.OTA, Agent.TOOL}),
    OtaStatus: frozenset({Agent.OTA}),
}
# Messages that name their sender in the body: the name must be the authenticated sender's.
SENDER_FIELD: dict[type, str] = {Heartbeat: "agent", Alarm: "source"}

MESSAGE_TYPES: tuple[type, ...] = tuple(SENDERS)  # one list: a message without senders is none
BY_TYPE_ID: dict[int, type] = {cls.TYPE_ID: cls for cls in MESSAGE_TYPES}  # type: ignore[attr-defined]
BY_NAME: dict[str, type] = {cls.__name__: cls for cls in MESSAGE_TYPES}
assert len(BY_TYPE_ID) == len(MESSAGE_TYPES), "two messages share a TYPE_ID"


def check_sender(message: Any, sender: Agent) -> None:
    """SchemaError unless `sender` may send `message` (SENDERS, SENDER_FIELD)."""
    cls = type(message)
    if sender not in SENDERS.get(cls, ()):
        raise SchemaError(f"{sender.name} may not send {cls.__name__}")
    field_name = SENDER_FIELD.get(cls)
    if field_name is not None and getattr(message, field_name) != sender:
        named = getattr(message, field_name)
        raise SchemaError(f"{cls.__name__}.{field_name} is {named.name}, sent by {sender.name}")


def type_id(message: Any) -> int:
    try:
        return type(message).TYPE_ID  # type: ignore[no-any-return]
    except AttributeError:
        raise SchemaError(f"{type(message).__name__} is not a catalogue message") from None


# --- JSON views for people (wire dump, panels) ------------------------------------------------


def to_json(message: Any) -> dict[str, Any]:
    """A JSON-friendly dict: enum names, hex bytes, nested records as dicts."""
    out: dict[str, Any] = {}
    for name, spec in specs(type(message)):
        value = getattr(message, name)
        if spec.kind == "enum":
            value = value.name
        elif spec.kind == "bytes":
            value = value.hex()
        elif spec.kind == "floats":
            value = list(value)
        elif spec.kind == "records":
            value = [to_json(v) for v in value]
        out[name] = value
    return out


def from_json(cls: type, data: dict[str, Any]) -> Any:
    """Inverse of to_json, validated: enum names or numbers, hex bytes."""
    values: dict[str, Any] = {}
    table = dict(specs(cls))
    unknown = set(data) - set(table)
    if unknown:
        raise SchemaError(f"{cls.__name__}: unknown fields {sorted(unknown)}")
    for name, spec in table.items():
        if spec.optional and data.get(name) in (None, [], ()):  # absent or empty: none
            values[name] = ()
            continue
        if name not in data:
            raise SchemaError(f"{cls.__name__}.{name}: missing")
        value = data[name]
        if spec.kind == "enum" and isinstance(value, str):
            assert spec.enum is not None
            try:
                value = spec.enum[value.upper()]
            except KeyError:
                names = [m.name for m in spec.enum]
                raise SchemaError(f"{cls.__name__}.{name}: {value!r} not one of {names}") from None
        elif spec.kind == "bytes" and isinstance(value, str):
            value = bytes.fromhex(value)
        elif spec.kind == "records":
            assert spec.record is not None
            value = tuple(from_json(spec.record, v) for v in value)
        values[name] = spec.check(f"{cls.__name__}.{name}", value)
    return cls(**values)


quick_inits(globals())  # every message made in half the time (foosball.wire.quick_init)
