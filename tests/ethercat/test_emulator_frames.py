"""The drive emulator answers a frame only while the master can still be waiting for it:
how long a frame waited in the emulator's socket comes from the kernel's arrival stamp."""

from __future__ import annotations

import socket
import time

from foosball.ethercat.emulator_process import (
    SO_TIMESTAMPNS,
    STALE_FRAME_S,
    TIMESTAMP_SPACE,
    _waited,
)


def test_the_wait_is_read_from_the_kernels_arrival_stamp() -> None:
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        receiver.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        receiver.bind(("127.0.0.1", 0))
        before = time.time()
        sender.sendto(b"frame", receiver.getsockname())
        after = time.time()
        _, ancillary, _, _ = receiver.recvmsg(64, TIMESTAMP_SPACE)
    finally:
        receiver.close()
        sender.close()
    # Read as if the emulator came to it 10 ms after it was sent: waited about 10 ms.
    waited = _waited(ancillary, after + 0.010)
    assert 0.010 - 1e-3 <= waited <= 0.010 + (after - before) + 1e-3
    assert waited > STALE_FRAME_S  # such a frame is dropped, not answered late


def test_without_a_stamp_a_frame_counts_as_fresh() -> None:
    assert _waited([], time.time()) == 0.0
