"""A stop request that a signal handler may make.

Python runs a signal handler in the main thread between two bytecodes, wherever that thread
is: also inside `threading.Event.wait()`, holding the event's lock, which is not reentrant.
A handler that calls `Event.set()` there waits for that lock forever (seen: an agent hung on
SIGTERM about once in 150-200 stops, until systemd or the rig killed it). So a handler only
sets a flag and writes one byte to a pipe (a wake-up fd); neither takes a lock. Whoever
waits selects on the pipe, so a stop wakes it at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Iterable
from types import FrameType


class StopRequest:
    """`set()` from a signal handler or any thread; `wait(timeout)` like an Event's."""

    def __init__(self) -> None:
        self.requested = False
        self.signum: int | None = None
        self._read_fd, self._write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def set(self) -> None:
        self.requested = True
        with contextlib.suppress(OSError):  # the pipe full (already woken) or closed
            os.write(self._write_fd, b"\0")

    def handle(self, signum: int, _frame: FrameType | None = None) -> None:
        """The signal handler: a flag and a byte, nothing else."""
        self.signum = signum
        self.set()

    def install(self, signals: Iterable[int] = (signal.SIGTERM, signal.SIGINT)) -> None:
        for signum in signals:
            signal.signal(signum, self.handle)

    def is_set(self) -> bool:
        return self.requested

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once a stop was asked for, waiting up to `timeout_s` for one."""
        if not self.requested:
            select.select([self._read_fd], [], [], timeout_s)
        return self.requested

    def fileno(self) -> int:
        """The wake-up fd, readable once a stop was asked for (for a caller's own select)."""
        return self._read_fd

    def close(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
