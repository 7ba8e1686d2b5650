"""Frame sources behind one interface, the backend picked by configuration (python-can
style): a name -> (module, class) table, and only the chosen backend is imported.

Backends: ``v4l2`` and ``gstreamer`` (a camera through OpenCV, what the vision board uses),
``video`` (a file), ``images`` (a folder), ``sim`` (the simulator's camera renderer) and
``memory`` (frames handed over in-process, for tests).

A live camera source keeps the camera's native pixel format when it can: V4L2 YUYV frames
are delivered raw (OpenCV's conversion of every whole frame to BGR is what we avoid), and
the detector converts only its search window.
"""

from __future__ import annotations

import contextlib
import importlib
import queue
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


class SourceError(RuntimeError):
    """A frame source cannot be opened or used; the message says which and why."""


@dataclass(frozen=True, slots=True)
class CapturedFrame:
    image: np.ndarray  # native format: HxWx3 BGR or HxWx2 YUYV
    capture_time_ns: int  # when the exposure was taken, on the board's (PTP) clock
    index: int  # frame counter of this source
    truth: Any = None  # ground truth from a simulator frame (None for cameras and files)


class FrameSource(ABC):
    """One interface for every backend."""

    pixel_format: str = "bgr"
    frame_size: tuple[int, int] = (0, 0)  # width, height
    finished: bool = False  # a finite source (file, folder, list) has no more frames

    @abstractmethod
    def read(self, timeout: float) -> CapturedFrame | None:
        """The next frame, or None if none came within `timeout` seconds (or finished)."""

    def close(self) -> None:  # noqa: B027 - most sources hold nothing to release
        """Release the device; safe to call twice."""

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __iter__(self):  # type: ignore[no-untyped-def]
        while True:
            frame = self.read(1.0)
            if frame is None:
                if self.finished:
                    return
                continue
            yield frame


# name -> (module, class); one table, read only by open_source.
BACKENDS: dict[str, tuple[str, str]] = {
    "v4l2": ("foosball.vision.sources", "V4l2Source"),
    "gstreamer": ("foosball.vision.sources", "GStreamerSource"),
    "video": ("foosball.vision.sources", "VideoFileSource"),
    "images": ("foosball.vision.sources", "ImageFolderSource"),
    "memory": ("foosball.vision.sources", "MemorySource"),
    "sim": ("foosball.sim.vision_source", "SimSource"),
    "socket": ("foosball.vision.frame_link", "SocketSource"),
}


def open_source(kind: str, **options: Any) -> FrameSource:
    try:
        module_name, class_name = BACKENDS[kind]
    except KeyError:
        raise SourceError(f"unknown frame source {kind!r}; choose one of {sorted(BACKENDS)}") \
            from None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise SourceError(f"frame source {kind!r} needs the module {exc.name!r}") from exc
    try:
        return getattr(module, class_name)(**options)  # type: ignore[no-any-return]
    except TypeError as exc:
        raise SourceError(f"frame source {kind!r}: bad options {sorted(options)}: {exc}") \
            from exc


# --- in-process and file sources ----------------------------------------------------------


class MemorySource(FrameSource):
    """Frames from a list (tests); capture times at `fps` unless given per frame."""

    def __init__(self, images: Sequence[np.ndarray], fps: float = 200.0,
                 capture_times_ns: Sequence[int] | None = None, pixel_format: str = "bgr",
                 truths: Sequence[Any] | None = None):
        if not images:
            raise SourceError("memory source: no images")
        self._images = list(images)
        self._times = list(capture_times_ns) if capture_times_ns is not None else [
            round(i * 1e9 / fps) for i in range(len(images))]
        self._truths = list(truths) if truths is not None else [None] * len(images)
        self._next = 0
        self.pixel_format = pixel_format
        height, width = self._images[0].shape[:2]
        self.frame_size = (width, height)

    def read(self, timeout: float) -> CapturedFrame | None:
        if self._next >= len(self._images):
            self.finished = True
            return None
        i = self._next
        self._next += 1
        return CapturedFrame(self._images[i], self._times[i], i, self._truths[i])


class ImageFolderSource(FrameSource):
    """Every image file of a folder in name order (or an explicit list of paths)."""

    def __init__(self, path: str | Iterable[str], fps: float = 200.0):
        import cv2

        self._cv2 = cv2
        if isinstance(path, str):
            folder = Path(path)
            if not folder.is_dir():
                raise SourceError(f"images: {folder} is not a folder")
            self._paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        else:
            self._paths = [Path(p) for p in path]
        if not self._paths:
            raise SourceError(f"images: no image files in {path}")
        self._period_ns = round(1e9 / fps)
        self._next = 0
        first = self._load(self._paths[0])
        self.frame_size = (first.shape[1], first.shape[0])

    def _load(self, path: Path) -> np.ndarray:
        image = self._cv2.imread(str(path), self._cv2.IMREAD_COLOR)
        if image is None:
            raise SourceError(f"images: cannot read {path}")
        return image

    def read(self, timeout: float) -> CapturedFrame | None:
        if self._next >= len(self._paths):
            self.finished = True
            return None
        i = self._next
        self._next += 1
        return CapturedFrame(self._load(self._paths[i]), i * self._period_ns, i)


class VideoFileSource(FrameSource):
    """A recorded video; capture times from the frame index and the file's frame rate."""

    def __init__(self, path: str, fps: float | None = None):
        import cv2

        self._capture = cv2.VideoCapture(str(path))
        if not self._capture.isOpened():
            raise SourceError(f"video: cannot open {path}")
        rate = fps or self._capture.get(cv2.CAP_PROP_FPS) or 200.0
        self._period_ns = round(1e9 / rate)
        self.frame_size = (int(self._capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
                           int(self._capture.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        self._next = 0

    def read(self, timeout: float) -> CapturedFrame | None:
        ok, image = self._capture.read()
        if not ok:
            self.finished = True
            return None
        i = self._next
        self._next += 1
        return CapturedFrame(image, i * self._period_ns, i)

    def close(self) -> None:
        self._capture.release()


# --- live cameras through OpenCV ------------------------------------------------------------


class _GrabberSource(FrameSource):
    """A camera read on its own thread, so `read` can time out when the camera stops (the
    agent raises CAMERA_LOST) and the newest frame always wins over a backlog."""

    def __init__(self, capture: Any, to_frame: Callable[[np.ndarray], np.ndarray],
                 clock: Callable[[], int] = time.time_ns):
        import cv2

        self._cv2 = cv2
        self._capture = capture
        self._to_frame = to_frame
        self._clock = clock
        self._queue: queue.Queue[CapturedFrame] = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self._count = 0
        self._thread = threading.Thread(target=self._grab, name="camera-grabber", daemon=True)
        self._thread.start()

    def _grab(self) -> None:
        cv2 = self._cv2
        while not self._stop.is_set():
            if not self._capture.grab():
                time.sleep(0.001)  # the device is gone or stalled; read() reports the gap
                continue
            stamp_ms = self._capture.get(cv2.CAP_PROP_POS_MSEC)
            # V4L2 buffer timestamps are CLOCK_MONOTONIC; the agents compare times across
            # boards on the PTP-disciplined realtime clock, so shift them onto it. Without a
            # driver timestamp, the grab time is the best we have.
            if stamp_ms and stamp_ms > 0:
                stamp = int(stamp_ms * 1e6) + (time.time_ns() - time.monotonic_ns())
            else:
                stamp = self._clock()
            ok, raw = self._capture.retrieve()
            if not ok:
                continue
            frame = CapturedFrame(self._to_frame(raw), stamp, self._count)
            self._count += 1
            with contextlib.suppress(queue.Empty):
                self._queue.get_nowait()  # drop the stale frame: latency beats completeness
            self._queue.put_nowait(frame)

    def read(self, timeout: float) -> CapturedFrame | None:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
        self._capture.release()


class V4l2Source(_GrabberSource):
    """A V4L2 camera through OpenCV. `pixel_format="yuyv"` keeps the raw YUYV frames."""

    def __init__(self, device: str | int = "/dev/video0", width: int = 640, height: int = 480,
                 fps: float = 200.0, pixel_format: str = "yuyv"):
        import cv2

        capture = cv2.VideoCapture(device, cv2.CAP_V4L2)
        if not capture.isOpened():
            raise SourceError(f"v4l2: cannot open {device}")
        capture.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter.fourcc(*"YUYV"))
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        capture.set(cv2.CAP_PROP_FPS, fps)
        capture.set(cv2.CAP_PROP_BUFFERSIZE, 2)
        if pixel_format == "yuyv":
            capture.set(cv2.CAP_PROP_CONVERT_RGB, 0)
        self.pixel_format = pixel_format
        w = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH))
        h = int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        self.frame_size = (w, h)

        def to_frame(raw: np.ndarray) -> np.ndarray:
            if pixel_format == "yuyv" and raw.size == w * h * 2:
                return raw.reshape(h, w, 2)
            return raw

        super().__init__(capture, to_frame)


class GStreamerSource(_GrabberSource):
    """A GStreamer pipeline ending in an appsink, through OpenCV (BGR frames)."""

    def __init__(self, pipeline: str, width: int = 640, height: int = 480):
        import cv2

        capture = cv2.VideoCapture(pipeline, cv2.CAP_GSTREAMER)
        if not capture.isOpened():
            raise SourceError("gstreamer: cannot open the pipeline (is OpenCV built with "
                              f"GStreamer?): {pipeline}")
        self.pixel_format = "bgr"
        self.frame_size = (width, height)
        super().__init__(capture, lambda raw: raw)
