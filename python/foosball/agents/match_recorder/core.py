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

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from foosball.geometry import Table
from foosball.recording.format import encode_record, header
from foosball.runtime import Inputs, Outputs
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

SOURCE = "strategy board"


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
