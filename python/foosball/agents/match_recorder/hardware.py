"""The match recorder's 'hardware': the recording writer behind the core."""

from __future__ import annotations

import threading
from typing import Any

from foosball.recording.writer import RecordingWriter


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
