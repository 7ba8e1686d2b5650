"""The one interface every transport implements."""

from __future__ import annotations

import select
import socket
from abc import ABC, abstractmethod
from types import TracebackType


class TransportError(OSError):
    """A transport cannot be opened or used (bad interface, no permission...)."""


def wait_readable(sock: socket.socket, timeout: float | None) -> bool:
    """After a read would block: wait up to `timeout` (0 = not at all) for more data."""
    if timeout == 0:
        return False
    readable, _, _ = select.select([sock], [], [], timeout)
    return bool(readable)


class Transport(ABC):
    """Sends and receives whole frames: one frame, one message."""

    @abstractmethod
    def send(self, frame: bytes) -> None:
        """Send one frame to every peer (or the configured one)."""

    @abstractmethod
    def recv(self, timeout: float | None) -> bytes | None:
        """The next frame, or None when `timeout` seconds pass first (0 = poll)."""

    def fileno(self) -> int:
        """A selectable descriptor, for event loops; -1 where there is none."""
        return -1

    def close(self) -> None:  # noqa: B027 - optional for backends without resources
        """Release the backend's resources."""

    def __enter__(self) -> Transport:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
