"""Camera frames through a shared ring (the rig's camera): newest frame first, a lapped slot
dropped, reconnects, a stranger refused. A real server and source, no threads."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np

from foosball.vision.frame_link import NOTICE, NOTICE_MAGIC, CameraServer, SocketSource


def image(index: int) -> np.ndarray:
    return np.full((4, 6, 3), index, np.uint8)


def camera(tmp_path: Path) -> tuple[CameraServer, SocketSource]:
    path = str(tmp_path / "camera.sock")
    server = CameraServer(path, 100.0, lambda i: (image(i), 1000 + i))
    source = SocketSource(path, width=6, height=4)
    assert source.read(0.0) is None  # connects; nothing sent yet
    assert server.accept(1.0)
    return server, source


def publish(server: CameraServer, count: int) -> None:
    for _ in range(count):
        assert server.publish(image(server.index), 1000 + server.index)


def test_a_tracker_that_fell_behind_gets_the_newest_frame_and_the_rest_are_counted(
        tmp_path: Path) -> None:
    server, source = camera(tmp_path)
    publish(server, 3)
    got = source.read(1.0)
    assert got is not None and got.index == 2 and got.capture_time_ns == 1002
    assert got.image.shape == (4, 6, 3) and int(got.image[0, 0, 0]) == 2
    assert source.dropped == 2
    publish(server, 1)
    got = source.read(1.0)
    assert got is not None and got.index == 3 and source.dropped == 2
    server.close()


def test_a_frame_is_the_trackers_own_copy(tmp_path: Path) -> None:
    server, source = camera(tmp_path)
    publish(server, 1)
    got = source.read(1.0)
    publish(server, 4)  # the camera laps the ring: frame 0's slot now holds frame 4
    assert got is not None and int(got.image[0, 0, 0]) == 0
    server.close()


def test_a_slot_the_camera_lapped_before_it_was_read_is_dropped(tmp_path: Path) -> None:
    server, source = camera(tmp_path)
    publish(server, 1)
    assert source.read(0.05) is not None
    publish(server, 1)
    slot = server.index - 1
    server._ring.write(slot % server._ring.slots, image(99), 5, 99)  # overwritten meanwhile
    assert source.read(0.05) is None
    assert source.dropped == 1
    server.close()


def test_a_camera_that_goes_away_is_no_frames_and_is_reconnected(tmp_path: Path) -> None:
    server, source = camera(tmp_path)
    publish(server, 1)
    assert source.read(1.0) is not None
    server.client.close()
    server.client = None
    assert source.read(0.05) is None
    for _ in range(20):  # the source retries every 0.2 s while it has no camera
        source.read(0.05)
        if server.accept(0.0):
            break
    assert server.client is not None, "the source did not reconnect"
    publish(server, 1)
    got = source.read(1.0)
    assert got is not None and got.index == 1 and source.reconnects == 2
    server.close()


def test_a_peer_that_is_not_our_camera_drops_the_connection(tmp_path: Path) -> None:
    path = str(tmp_path / "camera.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    source = SocketSource(path, width=6, height=4)
    assert source.read(0.0) is None
    client, _ = listener.accept()
    client.sendall(b"GARBAGE!" * 8)  # no hello, no ring
    assert source.read(0.05) is None
    assert source._sock is None
    listener.close()


def test_a_notice_that_names_no_slot_drops_the_connection(tmp_path: Path) -> None:
    server, source = camera(tmp_path)
    publish(server, 1)
    assert source.read(1.0) is not None
    server.client.sendall(NOTICE.pack(NOTICE_MAGIC, 77, 1))
    assert source.read(0.05) is None
    assert source._sock is None
    server.close()
