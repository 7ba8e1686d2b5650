"""Where the ball really is: the live table's truth datagrams (`foosball sim camera --truth`),
one per camera frame, kept with their arrival times."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass

from foosball.rig.network import inside


@dataclass(frozen=True, slots=True)
class Truth:
    at_s: float  # monotonic arrival here
    t_ns: int  # the frame's capture stamp, as the tracker's BallState carries it
    x: float
    y: float
    in_play: bool
    visible: float  # the share of the ball's pixels in sight of the camera (0..1)
    score_robot: int
    score_human: int
    saves_robot: int


class TruthListener:
    """A UDP socket opened in the camera's network namespace (None: this one)."""

    def __init__(self, namespace: str | None, keep: int = 60_000) -> None:
        with inside(namespace):
            self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._sock.bind(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self.address = f"127.0.0.1:{self._sock.getsockname()[1]}"
        self._frames: deque[Truth] = deque(maxlen=keep)
        self._lock = threading.Lock()
        self._running = True
        self._thread = threading.Thread(target=self._listen, name="truth", daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while self._running:
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            d = json.loads(data)
            truth = Truth(time.monotonic(), int(d["t_ns"]), float(d["x"]), float(d["y"]),
                          bool(d["in_play"]), float(d["visible"]), int(d["score_robot"]),
                          int(d["score_human"]), int(d["saves_robot"]))
            with self._lock:
                self._frames.append(truth)

    def since(self, at_s: float) -> list[Truth]:
        with self._lock:
            return [t for t in self._frames if t.at_s >= at_s]

    def by_stamp(self, at_s: float) -> dict[int, Truth]:
        return {t.t_ns: t for t in self.since(at_s)}

    def latest(self) -> Truth | None:
        with self._lock:
            return self._frames[-1] if self._frames else None

    def close(self) -> None:
        self._running = False
        self._thread.join(timeout=1.0)
        self._sock.close()
