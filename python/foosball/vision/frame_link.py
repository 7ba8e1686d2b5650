"""Camera frames over a UNIX stream socket: the simulated camera of the rig.

A camera process (`foosball sim camera`, the simulator's renderer) serves frames on a
socket; the ball tracker's `socket` frame source reads them as it would a V4L2 device. A
frame is a fixed header and the raw pixels:

    b"FBF1" | u32 width | u32 height | u32 channels | i64 capture time (ns) | u64 index

so a stopped or killed camera is exactly what a dead USB camera is to the tracker: no
frames, then the CAMERA_LOST cause, and frames again when it comes back (the source
reconnects on its own).
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import struct
import time
from collections.abc import Callable

import numpy as np

from foosball.vision.sources import CapturedFrame, FrameSource, SourceError

MAGIC = b"FBF1"
HEADER = struct.Struct("<4sIIIqQ")
RECONNECT_S = 0.2


def pause(seconds: float) -> None:
    """time.sleep through select: the rig steps a board's clock with libfaketime, under
    which time.sleep fails (EINVAL) while select keeps working."""
    if seconds > 0:
        select.select([], [], [], seconds)


def frame_header(image: np.ndarray, capture_time_ns: int, index: int) -> bytes:
    height, width = image.shape[:2]
    channels = image.shape[2] if image.ndim == 3 else 1
    return HEADER.pack(MAGIC, width, height, channels, capture_time_ns, index)


class SocketSource(FrameSource):
    """Frames from a camera server's UNIX socket; reconnects when the camera comes back."""

    def __init__(self, path: str, pixel_format: str = "bgr", width: int = 640,
                 height: int = 480) -> None:
        self.path = path
        self.pixel_format = pixel_format
        self.frame_size = (width, height)
        self._sock: socket.socket | None = None
        self._last_attempt = -RECONNECT_S
        self._buffer = bytearray()
        self.frames = 0
        self.dropped = 0  # frames that a newer one overtook before they were read
        self.reconnects = 0

    def _connect(self) -> socket.socket | None:
        now = time.monotonic()
        if now - self._last_attempt < RECONNECT_S:
            return None
        self._last_attempt = now
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.path)
        except OSError:
            sock.close()
            return None
        sock.setblocking(False)
        self.reconnects += 1
        self._buffer.clear()
        return sock

    def read(self, timeout: float) -> CapturedFrame | None:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            if self._sock is None:
                self._sock = self._connect()
            if self._sock is not None:
                frame = self._take_frame()
                if frame is not None:
                    return frame
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if self._sock is None:
                pause(min(left, RECONNECT_S))
                continue
            readable, _, _ = select.select([self._sock], [], [], left)
            if readable and not self._fill():
                self._drop_connection()

    def _fill(self) -> bool:
        """Everything the socket holds now; False when the camera went away."""
        assert self._sock is not None
        while True:
            try:
                chunk = self._sock.recv(1 << 20)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self._buffer += chunk

    def _take_frame(self) -> CapturedFrame | None:
        """The newest complete frame buffered. Older ones are dropped and counted, as a
        camera driver's ring drops frames nobody read: a tracker that fell behind must
        see the ball as it is now, not work through a backlog."""
        buffer = self._buffer
        at, newest = 0, None
        while len(buffer) - at >= HEADER.size:
            magic, width, height, channels, capture_ns, index = HEADER.unpack_from(buffer, at)
            if magic != MAGIC or channels not in (1, 2, 3) or width * height > 4096 * 4096:
                self._drop_connection()  # not a camera we know: start over
                return None
            size = HEADER.size + width * height * channels
            if len(buffer) - at < size:
                break
            if newest is not None:
                self.dropped += 1
            newest = (at, width, height, channels, capture_ns, index)
            at += size
        if newest is None:
            return None
        start, width, height, channels, capture_ns, index = newest
        begin = start + HEADER.size
        pixels = np.frombuffer(bytes(buffer[begin:begin + width * height * channels]), np.uint8)
        del buffer[:at]
        shape = (height, width, channels) if channels > 1 else (height, width)
        self.frames += 1
        return CapturedFrame(pixels.reshape(shape), capture_ns, index)

    def _drop_connection(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._buffer.clear()

    def close(self) -> None:
        self._drop_connection()


class CameraServer:
    """Serves frames at `fps` to whoever connects (one tracker at a time)."""

    def __init__(self, path: str, fps: float,
                 next_frame: Callable[[int], tuple[np.ndarray, int]]) -> None:
        """`next_frame(index)` -> (image, capture time in ns on the wall clock)."""
        if fps <= 0:
            raise SourceError("camera fps must be positive")
        self.path = path
        self.period = 1.0 / fps
        self.next_frame = next_frame
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(path)
        self._server.listen(1)
        self.sent = 0
        self.running = True

    def serve(self) -> None:
        index = 0
        client: socket.socket | None = None
        deadline = time.monotonic()
        while self.running:
            if client is None:
                readable, _, _ = select.select([self._server], [], [], 0.2)
                if not readable:
                    continue
                client, _ = self._server.accept()
                deadline = time.monotonic()
            image, capture_ns = self.next_frame(index)
            try:
                client.sendall(frame_header(image, capture_ns, index) + image.tobytes())
            except OSError:  # the tracker went away: wait for the next one
                client.close()
                client = None
                continue
            index += 1
            self.sent += 1
            deadline += self.period
            wait = deadline - time.monotonic()
            if wait > 0:
                pause(wait)
            else:
                deadline = time.monotonic()  # late: do not burst to catch up
        if client is not None:
            client.close()

    def close(self) -> None:
        self.running = False
        self._server.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
