"""Match recorder: every match's messages appended to the strategy board's data partition.

Pure core: `MatchRecorderCore.step(Inputs) -> Outputs` (foosball.runtime). It listens
to what the LAN carries about a match: BallState, RodCommand, RodStatus, HumanRods,
MotorStatus, EtherCatStatus (the motor driver's frame -> setpoint), GameState, Alarm and
GameControl, and turns each into a record of the
recording format (foosball.recording.format), stamped with the board's wall clock of the
step. Its hardware is the file (`RecordingHardware` around a `RecordingWriter`, whose own
thread does the writing, so a slow card never holds up a step).

What is a match: from the game panel's GameState going PLAYING until it says READY (STOP) or
BOOT (the game panel started again); PAUSED and FAULT in between are part of it (a fault in
a match is what a recording is most wanted for). Between matches nothing is written, so an
idle table does not push the last matches out of the size bound.

Why an agent of its own and not part of the game panel: the game panel's core stays what it
is (the game and its page), the recorder's is one small pure function; in its own process a
card that stalls, a full partition or a bug in the recorder can slow or stop only the
recorder, never the page nor the game (no peer watches its heartbeat: no deadline names it).
The price is one more process on the board and every frame decoded once more; the note of
issue 18 has the measured cost.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from foosball.geometry import Table
from foosball.recording.format import encode_record, header
from foosball.recording.writer import RecordingWriter
from foosball.runtime import Inputs, Outputs
from foosball.schema import SettingError, seconds, setting
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    BallState,
    EtherCatStatus,
    GameControl,
    GameState,
    HumanRods,
    MotorStatus,
    RodCommand,
    RodStatus,
    SafetyState,
    SchemaError,
)

MIB = 1024 * 1024
SOURCE = "strategy board"


@dataclass(frozen=True)
class MatchRecorderConfig:
    """[match_recorder] in the strategy board's board.toml."""

    # on the data partition (the agents' unit may write /data/foosball only)
    directory: str = "/data/foosball/matches"
    # The rig's traffic at 200 fps is about 20 MiB per 5 minutes (benchmarks/recorder_cost.py,
    # issue 18's note): a file holds a match, the default bound the last ten or so.
    max_file_bytes: int = setting(64 * MIB, low=MIB, high=4096 * MIB, unit="B")
    max_total_bytes: int = setting(256 * MIB, low=2 * MIB, high=65536 * MIB, unit="B")
    # what a power cut may lose at most (an fdatasync this often, on the writer's thread)
    sync_period_s: float = seconds(1.0, high=60.0)

    def __post_init__(self) -> None:
        if self.max_total_bytes < 2 * self.max_file_bytes:
            raise SettingError("[match_recorder] max_total_bytes: at least twice "
                               f"max_file_bytes ({2 * self.max_file_bytes}), not "
                               f"{self.max_total_bytes}")


@dataclass(frozen=True, slots=True)
class FileOp:
    """One thing for the file, in order: "begin" a match (`header`), "append" `records`
    (`count` of them, encoded), "end" the match."""

    kind: str
    header: dict[str, Any] | None = None
    records: bytes = b""
    count: int = 0


RECORDED = (BallState, RodCommand, RodStatus, HumanRods, MotorStatus, EtherCatStatus,
            GameState, Alarm, GameControl)
ENDS_MATCH = (SafetyState.READY, SafetyState.BOOT)


def match_id(wall_ns: int) -> str:
    """The start time to the millisecond (UTC): a match's files never share a name with
    another's (a file of that name would be written over)."""
    seconds, ns = divmod(wall_ns, 1_000_000_000)
    when = datetime.fromtimestamp(seconds, UTC).strftime("%Y%m%dT%H%M%S")
    return f"{when}.{ns // 1_000_000:03d}Z"


class MatchRecorderCore:
    agent = Agent.MATCH_RECORDER
    reads = RECORDED  # and the runtime's RUNTIME_READS (Alarm, GameControl among them)

    def __init__(self, table: Table, source: str = SOURCE) -> None:
        self.table = table
        self.source = source
        self.recording = False
        self.matches = 0
        self.unrecordable = 0  # messages the catalogue would not encode again (none expected)

    def step(self, inputs: Inputs) -> Outputs:
        ops: list[FileOp] = []
        parts: list[bytes] = []

        def flush() -> None:
            if parts:
                ops.append(FileOp("append", records=b"".join(parts), count=len(parts)))
                parts.clear()

        for message in inputs.messages:
            if not isinstance(message, RECORDED):
                continue
            if isinstance(message, GameState):
                if not self.recording and message.state == SafetyState.PLAYING:
                    self.recording = True
                    self.matches += 1
                    ops.append(FileOp("begin", header(
                        self.table, source=self.source, match=match_id(inputs.wall_ns),
                        started_ns=inputs.wall_ns)))
                elif self.recording and message.state in ENDS_MATCH:
                    self._encode(parts, inputs.wall_ns, message)
                    flush()
                    ops.append(FileOp("end"))
                    self.recording = False
                    continue
            if self.recording:
                self._encode(parts, inputs.wall_ns, message)
        flush()
        return Outputs(actuation=tuple(ops))

    def _encode(self, parts: list[bytes], wall_ns: int, message: Any) -> None:
        # Whatever a message holds, the recorder's step must not fail: a failed step is an
        # INTERNAL_ERROR alarm, and an alarm stops the game on every board.
        try:
            parts.append(encode_record(wall_ns, message))
        except (SchemaError, ValueError, TypeError):
            self.unrecordable += 1


class RecordingHardware:
    """The recorder's 'hardware': the writer. sense() only waits (on the runtime's wake,
    `wake_with`) so that messages are stepped as they come; act() hands the step's records
    to the writer's queue and returns at once."""

    def __init__(self, writer: RecordingWriter) -> None:
        self.writer = writer
        self.wake = threading.Event()

    def wake_with(self, event: threading.Event) -> None:
        self.wake = event

    def sense(self, timeout_s: float) -> None:
        if timeout_s > 0:
            self.wake.wait(timeout_s)

    def act(self, actuation: Any) -> None:
        for op in actuation or ():  # None after a failed step: nothing to write
            if op.kind == "begin":
                self.writer.begin(op.header)
            elif op.kind == "append":
                self.writer.append(op.records, op.count)
            else:
                self.writer.end()

    def close(self) -> None:
        self.writer.close()
