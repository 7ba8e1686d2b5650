"""Camera frames over a UNIX socket (the rig's camera): newest frame first, reconnects."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np

from foosball.vision.frame_link import SocketSource, frame_header


def frame(index: int) -> bytes:
    image = np.full((4, 6, 3), index, np.uint8)
    return frame_header(image, 1000 + index, index) + image.tobytes()


def camera(tmp_path: Path) -> tuple[socket.socket, SocketSource, socket.socket]:
    path = str(tmp_path / "camera.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    source = SocketSource(path, width=6, height=4)
    assert source.read(0.0) is None  # connects; nothing sent yet
    client, _ = server.accept()
    return server, source, client


def test_a_tracker_that_fell_behind_gets_the_newest_frame_and_the_rest_are_counted(
        tmp_path: Path) -> None:
    server, source, client = camera(tmp_path)
    client.sendall(frame(0) + frame(1) + frame(2))
    got = source.read(1.0)
    assert got is not None and got.index == 2 and got.capture_time_ns == 1002
    assert got.image.shape == (4, 6, 3) and int(got.image[0, 0, 0]) == 2
    assert source.dropped == 2
    server.close()


def test_a_frame_split_across_reads_arrives_whole(tmp_path: Path) -> None:
    server, source, client = camera(tmp_path)
    data = frame(7)
    client.sendall(data[:30])
    assert source.read(0.05) is None
    client.sendall(data[30:])
    got = source.read(1.0)
    assert got is not None and got.index == 7 and source.dropped == 0
    server.close()


def test_a_camera_that_goes_away_is_no_frames_and_is_reconnected(tmp_path: Path) -> None:
    server, source, client = camera(tmp_path)
    client.close()
    assert source.read(0.05) is None
    client, _ = server.accept() if _wait_connect(source) else (None, None)
    assert client is not None, "the source did not reconnect"
    client.sendall(frame(3))
    got = source.read(1.0)
    assert got is not None and got.index == 3 and source.reconnects == 2
    server.close()


def test_bytes_that_are_not_a_camera_frame_drop_the_connection(tmp_path: Path) -> None:
    server, source, client = camera(tmp_path)
    client.sendall(b"GARBAGE!" * 8)
    assert source.read(0.05) is None
    assert source._sock is None
    server.close()


def _wait_connect(source: SocketSource) -> bool:
    for _ in range(20):  # the source retries every 0.2 s while it has no camera
        source.read(0.05)
        if source._sock is not None:
            return True
    return False
