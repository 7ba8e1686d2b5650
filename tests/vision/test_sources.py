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
