"""In-process transport: agents in one process (unit tests, single-process rigs).

Every transport attached to the same `MemoryHub` receives what the others send, as on a
shared Ethernet segment; a sender does not hear itself.
"""

from __future__ import annotations

import threading
from collections import deque

from foosball.wire.codec import SetAside
from foosball.wire.transports.base import Transport


class MemoryHub:
    """A shared segment. Create one and pass it to every MemoryTransport that shares it."""

    def __init__(self, queue_limit: int = 4096) -> None:
        self.queue_limit = queue_limit
        self._members: list[MemoryTransport] = []
        self._lock = threading.Lock()

    def attach(self, member: MemoryTransport) -> None:
        with self._lock:
            self._members.append(member)

    def detach(self, member: MemoryTransport) -> None:
        with self._lock:
            if member in self._members:
                self._members.remove(member)

    def deliver(self, sender: MemoryTransport, frame: bytes) -> None:
        with self._lock:
            members = [m for m in self._members if m is not sender]
        for member in members:
            member._arrive(frame)


class MemoryTransport(Transport):
    def __init__(self, hub: MemoryHub) -> None:
        self._hub = hub
        # A bounded queue drops the oldest frame when full, as a NIC ring would.
        self._queue: deque[bytes] = deque(maxlen=hub.queue_limit)
        self._dropped = 0
        self._ready = threading.Condition()
        self._set_aside = SetAside()
        hub.attach(self)

    def set_aside(self, set_aside: SetAside) -> None:
        # As the raw transport's socket filter does in the kernel, on the sender's side here.
        self._set_aside = set_aside

    def _arrive(self, frame: bytes) -> None:
        if self._set_aside and self._set_aside.covers(frame):
            return
        with self._ready:
            if len(self._queue) == self._queue.maxlen:
                self._dropped += 1
            self._queue.append(frame)
            self._ready.notify()

    def waiting(self) -> int:
        """Frames waiting to be received (a benchmark's replay wakes the I/O loop by it)."""
        return len(self._queue)

    def send(self, frame: bytes) -> None:
        self._hub.deliver(self, bytes(frame))

    def recv(self, timeout: float | None) -> bytes | None:
        with self._ready:
            if not self._queue and timeout != 0:
                self._ready.wait(timeout)
            return self._queue.popleft() if self._queue else None

    def dropped(self) -> int:
        return self._dropped

    def close(self) -> None:
        self._hub.detach(self)
