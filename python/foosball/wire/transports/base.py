"""The one interface every transport implements."""

from __future__ import annotations

import select
import socket
import struct
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


SO_MEMINFO = 55  # Linux 4.6+: the socket's memory figures, SK_MEMINFO_DROPS among them
SK_MEMINFO_DROPS = 8


def socket_drops(sock: socket.socket) -> int:
    """Frames the kernel dropped for `sock` since it opened because its queue was full (or
    its memory spent): what arrived faster than the process read it. UDP and packet sockets
    count them alike (sk_drops); frames a socket filter refused are not among them."""
    return struct.unpack("9I", sock.getsockopt(socket.SOL_SOCKET, SO_MEMINFO, 36))[
        SK_MEMINFO_DROPS]


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

    def dropped(self) -> int:
        """Frames dropped unread since this transport opened because they came faster than
        they were read (a full queue): a count that only grows."""
        return 0

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
