"""Raw Ethernet (AF_PACKET): the agents' own EtherType on the agent LAN.

Needs CAP_NET_RAW (root on the boards). Frames are broadcast by default, or sent to one
configured MAC address.
"""

from __future__ import annotations

import ctypes
import socket
import struct
from collections import deque

from foosball.wire.transports.base import Transport, TransportError, wait_readable

ETHERTYPE_FOOSBALL = 0x88B5  # IEEE "local experimental" EtherType
BROADCAST = "ff:ff:ff:ff:ff:ff"
ETH_HEADER = 14


def parse_mac(text: str) -> bytes:
    parts = text.split(":")
    if len(parts) != 6:
        raise TransportError(f"bad MAC address {text!r}")
    try:
        return bytes(int(p, 16) for p in parts)
    except ValueError:
        raise TransportError(f"bad MAC address {text!r}") from None


ETH_P_ALL = 0x0003
SO_ATTACH_FILTER = 26


def ethertype_filter(ethertype: int) -> tuple[bytes, ctypes.Array[ctypes.c_char]]:
    """A classic BPF program that passes only frames of `ethertype` (ldh [12]; jeq; ret),
    as the sock_fprog setsockopt wants it, and the buffer it points into (keep it alive)."""
    program = ((0x28, 0, 0, 12), (0x15, 0, 1, ethertype), (0x06, 0, 0, 0x40000),
               (0x06, 0, 0, 0))
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *op) for op in program))
    return struct.pack("HP", len(program), ctypes.addressof(code)), code


class RawEthernetTransport(Transport):
    """A packet socket that hears every process on the interface: the agents sharing a
    board (the pole board runs three) talk through it as through the switch. A socket
    bound to one EtherType does not see frames sent from its own host, so it taps all
    traffic (ETH_P_ALL) with an in-kernel filter for our EtherType."""

    def __init__(
        self, iface: str, ethertype: int = ETHERTYPE_FOOSBALL, destination: str = BROADCAST
    ) -> None:
        self.iface = iface
        self.ethertype = ethertype
        try:
            self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        except PermissionError as exc:
            raise TransportError(
                "raw Ethernet needs CAP_NET_RAW (run as root or use --transport udp)"
            ) from exc
        try:
            program, self._filter_code = ethertype_filter(ethertype)
            self._sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, program)
            self._sock.bind((iface, ETH_P_ALL))
        except OSError as exc:
            self._sock.close()
            raise TransportError(f"cannot bind to interface {iface!r}: {exc.strerror}") from exc
        own_mac = self._sock.getsockname()[4]
        self._type = struct.pack("!H", ethertype)
        self._header = parse_mac(destination) + own_mac + self._type
        self._sock.setblocking(False)
        # What this socket sent lately: its own frames come back (as outgoing packets) and are
        # skipped without decoding.
        self._sent: deque[bytes] = deque(maxlen=512)
        self._sent_set: set[bytes] = set()

    def send(self, frame: bytes) -> None:
        data = self._header + frame
        if len(self._sent) == self._sent.maxlen:
            self._sent_set.discard(self._sent[0])
        self._sent.append(data)
        self._sent_set.add(data)
        self._sock.send(data)

    def recv(self, timeout: float | None) -> bytes | None:
        waited = False
        while True:
            try:
                # recv, not recvfrom: a packet socket's address costs an ioctl (the
                # interface's name) per frame, and the frame itself says all we need.
                data = self._sock.recv(2048)
            except BlockingIOError:
                # Wait once: a socket that is readable yet has nothing (a pending error)
                # must not turn this into a busy loop.
                if waited or not wait_readable(self._sock, timeout):
                    return None
                waited = True
                continue
            if len(data) < ETH_HEADER or data[12:14] != self._type:
                continue  # queued before the filter was attached
            if data in self._sent_set:
                continue  # our own transmission, looped back to this socket (its sequence
                # number makes it unlike any other process's frame)
            # Another process's transmission on this host: the agents that share a board
            # (the pole board runs three) hear each other this way.
            return data[ETH_HEADER:]

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()
