"""A laptop on the rig's agent LAN: hears every message, stamps it on arrival, and sends
what a person would (GameControl from `foosball wire send`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from foosball.rig.network import inside
from foosball.rig.rig import Rig
from foosball.wire.catalogue import Agent, Alarm, GameCommand, GameControl, Heartbeat
from foosball.wire.endpoint import Endpoint
from foosball.wire.settings import WireSettings, open_endpoint


@dataclass(frozen=True, slots=True)
class Heard:
    at_s: float  # monotonic arrival time here
    sender: Agent
    boot_id: int
    message: Any


class Observer:
    def __init__(self, rig: Rig, sender: Agent = Agent.TOOL, realtime: bool = False,
                 kinds: tuple[type, ...] | None = None) -> None:
        """`realtime`: listen under SCHED_FIFO like the agents' I/O threads, so that gaps
        measured here are the senders' and not this process's. `kinds`: keep only these
        messages (a long run keeps millions otherwise)."""
        self.realtime = realtime
        self.kinds = kinds
        settings = WireSettings(transport=rig.lan.transport, iface=rig.lan.iface,
                                key_file=str(rig.key_file), max_age_s=5.0)
        with inside(rig.lan.namespace("tool")):
            self.endpoint: Endpoint = open_endpoint(settings, sender)
        self.heard: list[Heard] = []
        self._lock = threading.Lock()
        self._running = True
        self._thread = threading.Thread(target=self._listen, name="observer", daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        if self.realtime:
            from foosball.realtime import set_fifo

            set_fifo(50)
        while self._running:
            for received in self.endpoint.receive(0.01):
                if self.kinds is not None and not isinstance(received.message, self.kinds):
                    continue
                heard = Heard(time.monotonic(), received.sender, received.boot_id,
                              received.message)
                with self._lock:
                    self.heard.append(heard)

    def since(self, at_s: float, kind: type | None = None) -> list[Heard]:
        with self._lock:
            return [h for h in self.heard if h.at_s >= at_s and
                    (kind is None or isinstance(h.message, kind))]

    def wait_for(self, found: Callable[[], Any], timeout_s: float) -> Any:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            result = found()
            if result:
                return result
            time.sleep(0.01)
        return found()

    def first(self, at_s: float, match: Callable[[Heard], bool]) -> Heard | None:
        return next((h for h in self.since(at_s) if match(h)), None)

    def alarms(self, at_s: float) -> list[Heard]:
        return self.since(at_s, Alarm)

    def heartbeats(self, agent: Agent, at_s: float) -> list[Heard]:
        return [h for h in self.since(at_s, Heartbeat) if h.sender == agent]

    def send(self, message: Any) -> None:
        self.endpoint.send(message)

    def restart(self) -> None:
        self.send(GameControl(command=GameCommand.RESTART))

    def close(self) -> None:
        self._running = False
        self._thread.join(timeout=1.0)
        self.endpoint.close()

