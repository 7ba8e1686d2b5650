"""A match recording: a CBOR sequence (RFC 8742), one format for the board and the simulator.

A file is a run of concatenated CBOR data items, nothing between them:

    header = {"format": "foosball-recording", "version": 2,
              "source": "strategy board" | "simulator", "match": <id>, "part": n,
              "started_ns": <wall clock>, "table": <geometry as in table.json>,
              "meta": {...}, ...}            # the simulator adds "params", "frame_period"
    record = [t_ns, type, body]

`type` is a catalogue message's TYPE_ID and `body` its CBOR map as on the wire (to_body), so
a record is checked by the same specs as a frame from the LAN; type 0 (WORLD) is the
simulator's true world state (`WorldState` as a list), which no board has; type
-1 (RESULT), the simulator's own accounting of the match's shots and saves, written once at
its end (`encode_result`; a reader that does not know it skips it with a warning). `t_ns`
is when the record was taken: on the board the wall clock (PTP) when the recorder stepped
with the message, in the simulator its clock.

Nothing is ever rewritten: records are appended, so a crash or a power cut leaves a prefix of
whole records and at most one partial one at the end. `read_recording` keeps every whole
record, skips what is not one with a warning (never an exception), and stops at the first
item it cannot frame (the cut).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cbor2

from foosball.geometry import Table, parse_table
from foosball.wire.catalogue import BY_TYPE_ID, SchemaError, from_body, to_body, type_id
from foosball.wire.quick_init import quick_init

FORMAT = "foosball-recording"
VERSION = 2
WORLD = 0  # record type of the simulator's world state
RESULT = -1  # record type of the simulator's accounting of the match (shots, saves)
SUFFIX = ".cbors"


@quick_init  # made every frame of a simulated match
@dataclass(frozen=True, slots=True)
class WorldState:
    """One snapshot of the table: what the renderer draws and a recording stores."""

    time_ns: int
    ball_x: float
    ball_y: float
    ball_vx: float
    ball_vy: float
    ball_in_play: bool
    translations: tuple[float, ...]  # per rod, geometry-file order
    rotations: tuple[float, ...]
    score_robot: int = 0
    score_human: int = 0


def header(table: Table, *, source: str, match: str, started_ns: int, part: int = 1,
           meta: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "source": source, "match": match,
            "part": part, "started_ns": started_ns, "table": dataclasses.asdict(table),
            "meta": meta or {}, **extra}


def encode_header(head: dict[str, Any]) -> bytes:
    return cbor2.dumps(head)


def encode_record(t_ns: int, message: Any) -> bytes:
    """One catalogue message as a record (its wire body, checked on the way out)."""
    return cbor2.dumps([t_ns, type_id(message), to_body(message)])


def encode_world(state: WorldState) -> bytes:
    """A simulator WorldState as a record."""
    return cbor2.dumps([state.time_ns, WORLD, [
        state.ball_x, state.ball_y, state.ball_vx, state.ball_vy, state.ball_in_play,
        list(state.translations), list(state.rotations), state.score_robot,
        state.score_human]])


def encode_result(t_ns: int, shots: list[dict[str, Any]], saves: dict[str, int]) -> bytes:
    """The simulator's shots (each: time_ns, team, rod, speed, on_target, outcome) and saves
    per team, as it counted them from the true contacts."""
    return cbor2.dumps([t_ns, RESULT, {"shots": shots, "saves": saves}])


@dataclass
class Recording:
    """What a file (or several, `merge`) held: messages as (t_ns, message), the simulator's
    world states, and a warning for everything skipped."""

    path: str
    header: dict[str, Any] = field(default_factory=dict)
    table: Table | None = None
    messages: list[tuple[int, Any]] = field(default_factory=list)
    states: list[WorldState] = field(default_factory=list)  # simulator only
    warnings: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None  # the simulator's accounting (RESULT), when written

    @property
    def source(self) -> str:
        return str(self.header.get("source", "?"))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.header.get("params", {}))

    @property
    def frame_period(self) -> float:
        return float(self.header.get("frame_period", 0.005))

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.header.get("meta", {}))

    def of_type(self, cls: type) -> list[tuple[int, Any]]:
        return [(t, m) for t, m in self.messages if type(m) is cls]


def read_recording(path: str | Path, data: bytes | None = None) -> Recording:
    """Every whole record of the file; never raises on what is inside it (only on a file
    that cannot be opened)."""
    path = str(path)
    if data is None:
        with open(path, "rb") as stream:
            data = stream.read()
    out = Recording(path)
    stream = io.BytesIO(data)
    decoder = cbor2.CBORDecoder(stream)
    first = _next(decoder, stream, out, len(data))
    if first is _END:
        out.warnings.append(f"{path}: empty or cut inside its header: nothing recorded")
        return out
    if not (isinstance(first, dict) and first.get("format") == FORMAT):
        out.warnings.append(f"{path}: not a {FORMAT} file")
        return out
    if first.get("version") != VERSION:
        out.warnings.append(f"{path}: version {first.get('version')!r}, this reader knows "
                            f"{VERSION}")
        return out
    out.header = first
    try:
        out.table = parse_table(first["table"])
    except (KeyError, TypeError, ValueError) as exc:
        out.warnings.append(f"{path}: header's table unreadable ({exc}); records kept")
    skipped = 0
    while True:
        at = stream.tell()
        item = _next(decoder, stream, out, len(data))
        if item is _END:
            break
        problem = _take(item, out)
        if problem:
            skipped += 1
            if skipped <= 5:
                out.warnings.append(f"{path}: record at byte {at} skipped: {problem}")
    if skipped > 5:
        out.warnings.append(f"{path}: {skipped} records skipped in all")
    return out


_END = object()


def _next(decoder: cbor2.CBORDecoder, stream: io.BytesIO, out: Recording, size: int) -> Any:
    """The next data item, or _END at the end of the file or at a cut (with a warning)."""
    at = stream.tell()
    if at >= size:
        return _END
    try:
        return decoder.decode()
    except (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError,
            MemoryError) as exc:
        out.warnings.append(f"{out.path}: {size - at} bytes at the end are not a whole record "
                            f"(a cut: {type(exc).__name__}); the rest skipped")
        return _END


def _take(item: Any, out: Recording) -> str:
    """Add one record to `out`; what is wrong with it otherwise."""
    if not (isinstance(item, list) and len(item) == 3 and type(item[0]) is int
            and type(item[1]) is int):
        return "not a [time, type, body] record"
    t_ns, kind, body = item
    if kind == RESULT:
        if not (isinstance(body, dict) and isinstance(body.get("shots"), list)
                and isinstance(body.get("saves"), dict)):
            return "result: not {shots: [...], saves: {...}}"
        out.result = body
        return ""
    if kind == WORLD:
        try:
            out.states.append(_world(t_ns, body))
        except (TypeError, ValueError) as exc:
            return f"world state: {exc}"
        return ""
    cls = BY_TYPE_ID.get(kind)
    if cls is None:
        return f"unknown message type {kind}"
    try:
        out.messages.append((t_ns, from_body(cls, body)))
    except (SchemaError, TypeError, ValueError) as exc:
        return f"{cls.__name__}: {exc}"
    return ""


def _world(t_ns: int, body: Any) -> WorldState:
    x, y, vx, vy, in_play, translations, rotations, robot, human = body
    return WorldState(time_ns=t_ns, ball_x=float(x), ball_y=float(y), ball_vx=float(vx),
                      ball_vy=float(vy), ball_in_play=bool(in_play),
                      translations=tuple(map(float, translations)),
                      rotations=tuple(map(float, rotations)), score_robot=int(robot),
                      score_human=int(human))


def read_recordings(paths: Iterable[str | Path]) -> Recording:
    """Several files (the parts of a match, or several matches) as one, in time order; the
    first file's header speaks for all."""
    parts = [read_recording(p) for p in paths]
    if not parts:
        return Recording("")
    merged = Recording(", ".join(p.path for p in parts))
    for part in parts:
        if not merged.header and part.header:
            merged.header, merged.table = part.header, part.table
        merged.messages += part.messages
        merged.states += part.states
        merged.warnings += part.warnings
    merged.messages.sort(key=lambda tm: tm[0])
    merged.states.sort(key=lambda s: s.time_ns)
    if len(parts) == 1:  # several files' accountings (their own clocks each) do not add up
        merged.result = parts[0].result
    return merged
