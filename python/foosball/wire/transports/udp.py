"""UDP: the same frames for machines without raw-socket rights.

By default every agent joins one multicast group with loopback on, so several agents on one
host (the single-host simulated rig) and agents on several hosts all hear each other.
"""

from __future__ import annotations

import ipaddress
import socket
import struct

from foosball.wire.transports.base import Transport, TransportError, socket_drops, wait_readable

DEFAULT_GROUP = "239.255.88.181"
DEFAULT_PORT = 34997  # 0x88B5, as the raw EtherType


class UdpTransport(Transport):
    def __init__(
        self,
        destination: str = DEFAULT_GROUP,
        port: int = DEFAULT_PORT,
        iface_address: str = "0.0.0.0",
    ) -> None:
        try:
            address = ipaddress.ip_address(destination)
        except ValueError:
            raise TransportError(f"bad destination address {destination!r}") from None
        self._destination = (destination, port)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        try:
            sock.bind(("", port))
            if address.is_multicast:
                membership = struct.pack(
                    "4s4s", socket.inet_aton(destination), socket.inet_aton(iface_address)
                )
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
                if iface_address != "0.0.0.0":
                    sock.setsockopt(
                        socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(iface_address)
                    )
        except OSError as exc:
            sock.close()
            raise TransportError(f"cannot open UDP port {port}: {exc.strerror}") from exc
        sock.setblocking(False)
        self._sock = sock

    def send(self, frame: bytes) -> None:
        self._sock.sendto(frame, self._destination)

    def recv(self, timeout: float | None) -> bytes | None:
        try:
            return self._sock.recv(2048)
        except BlockingIOError:
            pass
        if not wait_readable(self._sock, timeout):
            return None
        try:  # once: select(2) may report a datagram that a checksum check then drops
            return self._sock.recv(2048)
        except BlockingIOError:
            return None

    def dropped(self) -> int:
        return socket_drops(self._sock)

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()
