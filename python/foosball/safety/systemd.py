"""systemd's notify protocol (READY=1, WATCHDOG=1) without a library.

Under `Type=notify` with `WatchdogSec=`, systemd restarts an agent that stops calling
`watchdog()`; outside systemd (no NOTIFY_SOCKET) every call is a no-op.
"""

from __future__ import annotations

import contextlib
import os
import socket


class SystemdNotifier:
    def __init__(self, address: str | None = None) -> None:
        address = address if address is not None else os.environ.get("NOTIFY_SOCKET", "")
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self._sock: socket.socket | None = None
        if self._address:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def notify(self, state: str) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):  # systemd gone (shutdown): nothing to tell
                self._sock.sendto(state.encode(), self._address)

    def ready(self) -> None:
        self.notify("READY=1")

    def watchdog(self) -> None:
        self.notify("WATCHDOG=1")

    def status(self, text: str) -> None:
        self.notify(f"STATUS={text}")
