"""What every transport says of frames it could not keep: dropped unread, because they came
faster than they were read (the runtime counts them toward a LAN flood)."""

from __future__ import annotations

import os
import socket

import pytest

from foosball.wire.transports.base import Transport
from foosball.wire.transports.memory import MemoryHub, MemoryTransport
from foosball.wire.transports.raw import RawEthernetTransport
from foosball.wire.transports.udp import DEFAULT_GROUP, UdpTransport

FRAMES = 5000  # far more than a default socket queue (rmem_default, ~200 KB) holds


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def flooded(receiver: Transport, sender: Transport) -> tuple[int, int, int]:
    """FRAMES sent while the receiver reads none: its drop count before and after, and how
    many went out (a socket's own send queue may refuse some: EAGAIN, as the runtime counts
    it)."""
    before, sent = receiver.dropped(), 0
    for number in range(FRAMES):
        try:
            sender.send(number.to_bytes(4, "big") + bytes(60))
            sent += 1
        except BlockingIOError:
            pass
    return before, receiver.dropped(), sent


def drain(receiver: Transport) -> int:
    read = 0
    while receiver.recv(0) is not None:
        read += 1
    return read


def test_a_memory_transport_counts_what_its_full_queue_dropped() -> None:
    hub = MemoryHub(queue_limit=64)
    receiver, sender = MemoryTransport(hub), MemoryTransport(hub)
    before, after, _ = flooded(receiver, sender)
    assert (before, after) == (0, FRAMES - 64)
    assert drain(receiver) == 64


def test_a_udp_transport_counts_what_the_kernel_dropped_unread() -> None:
    port = free_port()  # the agents' group, on a port of this test's own
    with UdpTransport(DEFAULT_GROUP, port) as receiver, \
            UdpTransport(DEFAULT_GROUP, port) as sender:
        before, after, sent = flooded(receiver, sender)
        assert before == 0 and after > 0
        assert drain(receiver) + after == sent  # each frame read or counted


@pytest.mark.skipif(os.geteuid() != 0, reason="a packet socket needs CAP_NET_RAW (root)")
def test_a_raw_transport_counts_what_the_kernel_dropped_unread() -> None:
    with RawEthernetTransport("lo") as receiver, RawEthernetTransport("lo") as sender:
        before, after, _ = flooded(receiver, sender)
        assert after - before > 0
        assert drain(receiver) > 0
