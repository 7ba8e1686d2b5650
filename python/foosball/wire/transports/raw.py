"""Raw Ethernet (AF_PACKET): the agents' own EtherType on the agent LAN.

Needs CAP_NET_RAW (root on the boards). Frames are broadcast by default, or sent to one
configured MAC address.
"""

from __future__ import annotations

import socket
import struct

from foosball.wire.transports.base import Transport, TransportError, wait_readable

ETHERTYPE_FOOSBALL = 0x88B5  # IEEE "local experimental" EtherType
BROADCAST = "ff:ff:ff:ff:ff:ff"
PACKET_OUTGOING = 4  # sll_pkttype of frames this host sent
ETH_HEADER = 14


def parse_mac(text: str) -> bytes:
    parts = text.split(":")
    if len(parts) != 6:
        raise TransportError(f"bad MAC address {text!r}")
    try:
        return bytes(int(p, 16) for p in parts)
    except ValueError:
        raise TransportError(f"bad MAC address {text!r}") from None


class RawEthernetTransport(Transport):
    def __init__(
        self, iface: str, ethertype: int = ETHERTYPE_FOOSBALL, destination: str = BROADCAST
    ) -> None:
        self.iface = iface
        self.ethertype = ethertype
        try:
            self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ethertype))
        except PermissionError as exc:
            raise TransportError(
                "raw Ethernet needs CAP_NET_RAW (run as root or use --transport udp)"
            ) from exc
        try:
            self._sock.bind((iface, ethertype))
        except OSError as exc:
            self._sock.close()
            raise TransportError(f"cannot bind to interface {iface!r}: {exc.strerror}") from exc
        own_mac = self._sock.getsockname()[4]
        self._header = parse_mac(destination) + own_mac + struct.pack("!H", ethertype)
        self._sock.setblocking(False)

    def send(self, frame: bytes) -> None:
        self._sock.send(self._header + frame)

    def recv(self, timeout: float | None) -> bytes | None:
        while True:
            try:
                data, address = self._sock.recvfrom(2048)
            except BlockingIOError:
                if not wait_readable(self._sock, timeout):
                    return None
                continue
            if address[2] == PACKET_OUTGOING or len(data) < ETH_HEADER:
                continue  # our own transmission, looped back to the socket
            return data[ETH_HEADER:]

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()
