"""An agent's connection to the agent LAN: a transport plus the codec."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from foosball.wire.codec import Drop, Received, WireCodec
from foosball.wire.transports import Transport

MAX_BATCH = 256  # frames drained per receive() call, so one chatty peer cannot starve a loop


class Endpoint:
    def __init__(self, transport: Transport, codec: WireCodec) -> None:
        self.transport = transport
        self.codec = codec
        self.last_drop: Drop | None = None
        self._send_lock = threading.Lock()

    def send(self, message: Any) -> None:
        # One lock over numbering and sending: two threads (the runtime's I/O and work
        # halves) must not put sequence N + 1 on the wire before N, or N is a "replay".
        with self._send_lock:
            self.transport.send(self.codec.encode(message))

    def receive(self, timeout: float | None = 0.0) -> list[Received]:
        """Every valid message waiting (waiting up to `timeout` for the first frame)."""
        out: list[Received] = []
        frame = self.transport.recv(timeout)
        count = 0
        while frame is not None and count < MAX_BATCH:
            count += 1
            result = self.codec.decode(frame)
            if isinstance(result, Drop):
                self.last_drop = result
            elif not self._is_own(result):
                out.append(result)
            frame = self.transport.recv(0)
        return out

    def _is_own(self, received: Received) -> bool:
        # On loopback-like segments an agent hears its own frames; they are not news.
        return received.sender == self.codec.sender and received.boot_id == self.codec.boot_id

    @property
    def drops(self) -> Counter[str]:
        return self.codec.drops

    def close(self) -> None:
        self.transport.close()
