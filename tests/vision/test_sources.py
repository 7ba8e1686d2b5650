from __future__ import annotations

import cv2
import numpy as np
import pytest

from foosball.vision.sources import (
    BACKENDS,
    FrameSource,
    MemorySource,
    SourceError,
    open_source,
)


def frames(n: int = 3) -> list[np.ndarray]:
    out = []
    for i in range(n):
        image = np.zeros((48, 64, 3), np.uint8)
        image[:, :, 2] = 40 * (i + 1)  # tell the frames apart after a lossy round trip
        out.append(image)
    return out


def test_every_backend_is_a_frame_source():
    for kind, (module_name, class_name) in BACKENDS.items():
        module = __import__(module_name, fromlist=[class_name])
        cls = getattr(module, class_name)
        assert issubclass(cls, FrameSource), kind


def test_unknown_kind_and_bad_options_say_what_is_wrong():
    with pytest.raises(SourceError, match="unknown frame source 'webcam'"):
        open_source("webcam")
    with pytest.raises(SourceError, match="bad options"):
        open_source("memory", images=frames(), colour="red")


def test_memory_source_times_and_end():
    source = open_source("memory", images=frames(), fps=100.0)
    got = list(source)
    assert [f.index for f in got] == [0, 1, 2]
    assert [f.capture_time_ns for f in got] == [0, 10_000_000, 20_000_000]
    assert source.finished and source.read(0.0) is None


def test_image_folder_in_name_order(tmp_path):
    for i, image in enumerate(frames()):
        cv2.imwrite(str(tmp_path / f"frame_{2 - i:03d}.png"), image)
    (tmp_path / "notes.txt").write_text("not an image")
    with open_source("images", path=str(tmp_path), fps=200.0) as source:
        got = list(source)
    assert source.frame_size == (64, 48)
    assert [int(f.image[0, 0, 2]) for f in got] == [120, 80, 40]
    assert got[1].capture_time_ns == 5_000_000
    with pytest.raises(SourceError, match="not a folder"):
        open_source("images", path=str(tmp_path / "nothing"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match="no image files"):
        open_source("images", path=str(empty))


def test_video_file(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 100.0, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    for image in frames():
        writer.write(image)
    writer.release()
    with open_source("video", path=str(path)) as source:
        got = list(source)
    assert len(got) == 3
    assert source.frame_size == (64, 48)
    assert got[2].capture_time_ns == 20_000_000
    reds = [int(f.image[10, 10, 2]) for f in got]
    assert reds == sorted(reds) and reds[2] - reds[0] > 50  # in order, through MJPG


def test_missing_camera_and_video_fail_clearly(tmp_path):
    with pytest.raises(SourceError, match="cannot open"):
        open_source("video", path=str(tmp_path / "missing.avi"))
    with pytest.raises(SourceError, match="v4l2: cannot open"):
        open_source("v4l2", device=str(tmp_path / "video99"))


def test_memory_source_refuses_nothing():
    with pytest.raises(SourceError):
        MemorySource([])


class FakeCapture:
    """Stands in for cv2.VideoCapture: frames are handed over by the test; `idle` is set
    when the grabber asks for another frame after `expect` were delivered (so it has queued
    the last one)."""

    def __init__(self):
        import queue
        import threading

        self.pending = queue.Queue()
        self.idle = threading.Event()
        self.expect = 1
        self.delivered = 0
        self.lock = threading.Lock()
        self.released = False
        self._stamp_ms = 0.0
        self._image = None

    def grab(self):
        import queue

        try:
            self._stamp_ms, self._image = self.pending.get_nowait()
        except queue.Empty:
            with self.lock:
                if self.delivered >= self.expect:
                    self.idle.set()
            return False  # a stalled camera
        self.delivered += 1
        return True

    def get(self, prop):
        return self._stamp_ms if prop == cv2.CAP_PROP_POS_MSEC else 0.0

    def retrieve(self):
        return True, self._image

    def release(self):
        self.released = True


def test_camera_source_times_out_when_the_camera_stalls_and_keeps_the_newest_frame():
    from foosball.vision.sources import _GrabberSource

    capture = FakeCapture()
    source = _GrabberSource(capture, lambda raw: raw, clock=lambda: 42)
    try:
        capture.pending.put((1000.0, frames()[0]))
        first = source.read(timeout=2.0)
        assert first is not None and first.index == 0
        # the driver's monotonic stamp (1 s) is moved onto the realtime clock
        assert first.capture_time_ns != 1_000_000_000
        assert source.read(timeout=0.0) is None  # nothing new: the agent will alarm
        with capture.lock:
            capture.expect = 3
            capture.idle.clear()
        for k in (1, 2):
            capture.pending.put((1000.0 + 5 * k, frames()[k]))
        assert capture.idle.wait(timeout=2.0)
        latest = source.read(timeout=0.0)
        assert latest is not None and latest.index == 2  # frame 1 was dropped: stale
        assert source.read(timeout=0.0) is None
    finally:
        source.close()
    assert capture.released
