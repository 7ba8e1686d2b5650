"""Camera frames through shared memory: the simulated camera of the rig.

A camera process (`foosball sim camera`, the simulator's renderer) serves frames to one
tracker; the ball tracker's `socket` frame source reads them as it would a V4L2 device's
mmap'ed buffers. The pixels never cross the socket: copying ~1 MB per frame through a stream
socket cost the tracker half its CPU. Instead:

- on connection the camera sends a hello, b"FBR1" | u32 width | u32 height | u32 channels |
  u32 slots, with a memfd (SCM_RIGHTS) holding a ring of `slots` frames, each a slot header
  (i64 capture time in ns, u64 index + 1, 0 while the slot is being written) and the pixels;
- for each frame it writes the next slot, then sends a notice, b"FBN1" | u32 slot | u64
  index, on the socket;
- the tracker takes the newest notice, copies that slot once and checks that its header still
  names the frame (else the camera lapped it meanwhile: dropped and counted, as a driver's
  ring drops frames nobody read).

A stopped or killed camera is exactly what a dead USB camera is to the tracker: no frames,
then the CAMERA_LOST cause, and frames again when it comes back (the source reconnects).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import select
import socket
import struct
import sys
import time
from collections.abc import Callable

import numpy as np

from foosball.vision.sources import CapturedFrame, FrameSource, SourceError

HELLO = struct.Struct("<4sIIII")
HELLO_MAGIC = b"FBR1"
NOTICE = struct.Struct("<4sIQ")
NOTICE_MAGIC = b"FBN1"
SLOT_HEADER = struct.Struct("<qQ")  # capture time (ns), index + 1 (0: being written)
SLOTS = 4  # the camera laps a slot after 4 frames: 20 ms at 200 fps, 100 times a copy
MAX_PIXELS = 4096 * 4096
RECONNECT_S = 0.2
LATE_REPORT_S = 0.05  # a frame this late is written to the camera's log


def pause(seconds: float) -> None:
    """time.sleep through select: the rig steps a board's clock with libfaketime, under
    which time.sleep fails (EINVAL) while select keeps working."""
    if seconds > 0:
        select.select([], [], [], seconds)


class FrameRing:
    """The frames' shared memory: `slots` slots of one frame size, in a memfd."""

    def __init__(self, width: int, height: int, channels: int, slots: int = SLOTS,
                 fd: int | None = None) -> None:
        if not (channels in (1, 2, 3) and 0 < width * height <= MAX_PIXELS and 0 < slots < 64):
            raise SourceError(f"not a camera ring: {width}x{height}x{channels}, {slots} slots")
        self.width, self.height, self.channels, self.slots = width, height, channels, slots
        self.frame_bytes = width * height * channels
        self.slot_bytes = SLOT_HEADER.size + self.frame_bytes
        size = slots * self.slot_bytes
        self.fd = os.memfd_create("foosball-camera") if fd is None else fd
        if fd is None:
            os.ftruncate(self.fd, size)
        elif os.fstat(self.fd).st_size < size:
            os.close(self.fd)
            raise SourceError("the camera's ring is smaller than its hello says")
        try:
            self._map = mmap.mmap(self.fd, size)
        except OSError:
            os.close(self.fd)  # the descriptor is this ring's from here on
            raise
        self.shape = (height, width, channels) if channels > 1 else (height, width)

    def hello(self) -> bytes:
        return HELLO.pack(HELLO_MAGIC, self.width, self.height, self.channels, self.slots)

    def _pixels(self, slot: int) -> np.ndarray:
        at = slot * self.slot_bytes + SLOT_HEADER.size
        return np.frombuffer(self._map, np.uint8, self.frame_bytes, at).reshape(self.shape)

    def write(self, slot: int, image: np.ndarray, capture_ns: int, index: int) -> None:
        if image.shape != self.shape or image.dtype != np.uint8:
            raise SourceError(f"frame {image.shape} {image.dtype} does not fit the ring "
                              f"{self.shape} uint8")
        at = slot * self.slot_bytes
        SLOT_HEADER.pack_into(self._map, at, 0, 0)  # being written
        np.copyto(self._pixels(slot), image)
        SLOT_HEADER.pack_into(self._map, at, capture_ns, index + 1)

    def read(self, slot: int, index: int) -> CapturedFrame | None:
        """A copy of frame `index` from `slot`; None when the slot holds another by now."""
        at = slot * self.slot_bytes
        capture_ns, named = SLOT_HEADER.unpack_from(self._map, at)
        if named != index + 1:
            return None
        image = self._pixels(slot).copy()
        if SLOT_HEADER.unpack_from(self._map, at)[1] != index + 1:  # lapped while copying
            return None
        return CapturedFrame(image, capture_ns, index)

    def close(self) -> None:
        self._map.close()
        with contextlib.suppress(OSError):
            os.close(self.fd)


class SocketSource(FrameSource):
    """Frames from a camera server's UNIX socket and ring; reconnects when the camera comes
    back."""

    def __init__(self, path: str, pixel_format: str = "bgr", width: int = 640,
                 height: int = 480) -> None:
        self.path = path
        self.pixel_format = pixel_format
        self.frame_size = (width, height)
        self._sock: socket.socket | None = None
        self._ring: FrameRing | None = None
        self._last_attempt = -RECONNECT_S
        self._buffer = bytearray()
        self.frames = 0
        self.dropped = 0  # frames that a newer one overtook, or the camera lapped, unread
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
        """Everything the socket holds now; False when the camera went away or is not one."""
        assert self._sock is not None
        if self._ring is None:
            return self._hello()
        while True:
            try:
                chunk = self._sock.recv(64 * NOTICE.size)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self._buffer += chunk

    def _hello(self) -> bool:
        assert self._sock is not None
        try:
            data, fds, _, _ = socket.recv_fds(self._sock, HELLO.size, 1)
        except BlockingIOError:
            return True
        except OSError:
            return False
        try:
            if len(data) != HELLO.size or len(fds) != 1:
                return False
            magic, width, height, channels, slots = HELLO.unpack(data)
            if magic != HELLO_MAGIC:
                return False
            self._ring = FrameRing(width, height, channels, slots, fd=fds.pop())
        except (SourceError, OSError, ValueError):
            return False
        finally:
            for fd in fds:
                os.close(fd)
        return True

    def _take_frame(self) -> CapturedFrame | None:
        """The newest frame noticed. Older ones are dropped and counted, as a camera
        driver's ring drops frames nobody read: a tracker that fell behind must see the ball
        as it is now, not work through a backlog."""
        if self._ring is None:
            return None
        buffer = self._buffer
        whole = len(buffer) - len(buffer) % NOTICE.size
        if whole == 0:
            return None
        magic, slot, index = NOTICE.unpack_from(buffer, whole - NOTICE.size)
        self.dropped += whole // NOTICE.size - 1
        del buffer[:whole]
        if magic != NOTICE_MAGIC or slot >= self._ring.slots:
            self._drop_connection()  # not a camera we know: start over
            return None
        frame = self._ring.read(slot, index)
        if frame is None:
            self.dropped += 1
            return None
        self.frames += 1
        return frame

    def _drop_connection(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        if self._ring is not None:
            self._ring.close()
        self._ring = None
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
        self._ring: FrameRing | None = None
        self.client: socket.socket | None = None
        self._hello_sent = False
        self.index = 0
        self.sent = 0
        self.running = True

    def accept(self, timeout: float) -> bool:
        """Wait up to `timeout` for a tracker; True once one is connected."""
        if self.client is None:
            readable, _, _ = select.select([self._server], [], [], timeout)
            if readable:
                self.client, _ = self._server.accept()
                self._hello_sent = False
        return self.client is not None

    def publish(self, image: np.ndarray, capture_ns: int) -> bool:
        """Frame `self.index` into the ring and its notice to the tracker; False when the
        tracker went away (the server waits for the next one)."""
        assert self.client is not None
        try:
            if self._ring is None:
                height, width = image.shape[:2]
                self._ring = FrameRing(width, height, image.shape[2] if image.ndim == 3 else 1)
            if not self._hello_sent:
                socket.send_fds(self.client, [self._ring.hello()], [self._ring.fd])
                self._hello_sent = True
            slot = self.index % self._ring.slots
            self._ring.write(slot, image, capture_ns, self.index)
            self.client.sendall(NOTICE.pack(NOTICE_MAGIC, slot, self.index))
        except OSError:
            self.client.close()
            self.client = None
            return False
        self.index += 1
        self.sent += 1
        return True

    def serve(self) -> None:
        deadline = time.monotonic()
        while self.running:
            if self.client is None:
                if not self.accept(0.2):
                    continue
                deadline = time.monotonic()
            started = time.monotonic()
            image, capture_ns = self.next_frame(self.index)
            rendered = time.monotonic()
            if not self.publish(image, capture_ns):
                continue
            late = rendered - deadline
            if late > LATE_REPORT_S:
                # The tracker raises CAMERA_LOST after its camera_timeout_s without a frame:
                # say whether the frame itself took long or this process was not run.
                print(f"camera: frame {self.index - 1} late by {late * 1e3:.0f} ms at "
                      f"monotonic {rendered:.3f} s (rendering it took "
                      f"{(rendered - started) * 1e3:.0f} ms)", file=sys.stderr, flush=True)
            deadline += self.period
            wait = deadline - time.monotonic()
            if wait > 0:
                pause(wait)
            else:
                deadline = time.monotonic()  # late: do not burst to catch up
        if self.client is not None:
            self.client.close()

    def close(self) -> None:
        self.running = False
        self._server.close()
        if self._ring is not None:
            self._ring.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
