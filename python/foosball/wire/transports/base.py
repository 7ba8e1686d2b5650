"""The one interface every transport implements."""

from __future__ import annotations

import select
import socket
from abc import ABC, abstractmethod
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from foosball.wire.codec import SetAside


class TransportError(OSError):
    """A transport cannot be opened or used (bad interface, no permission...)."""


def wait_readable(sock: socket.socket, timeout: float | None) -> bool:
    """Wait up to `timeout` (0 = not at all, None = for ever) for data to read."""
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

    def set_aside(self, set_aside: SetAside) -> None:  # noqa: B027 - optional
        """Frames that `set_aside` covers (by their header's claim) will be set aside unread
        by the codec (WireCodec.set_aside): a transport may leave them out before they cost
        the agent a wake-up. Only a claim is looked at, so only what the codec would not
        have checked anyway may be left out; anything else still arrives."""

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
