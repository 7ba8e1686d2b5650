"""Raw Ethernet (AF_PACKET): the agents' own EtherType on the agent LAN.

Needs CAP_NET_RAW (root on the boards). Frames are broadcast by default, or sent to one
configured MAC address.
"""

from __future__ import annotations

import ctypes
import select
import socket
import struct
from collections import deque
from typing import Any

from foosball.wire import catalogue, cose
from foosball.wire.codec import SetAside
from foosball.wire.transports.base import Transport, TransportError, socket_drops, wait_readable

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


# Classic BPF opcodes used here (linux/filter.h).
_LDH_ABS, _LD_ABS, _LDB_ABS, _LDB_IND, _LD_LEN = 0x28, 0x20, 0x30, 0x50, 0x80
_JA, _JEQ, _JGT, _JGE, _JGE_X = 0x05, 0x15, 0x25, 0x35, 0x3D
_ADD, _SUB, _TAX, _TXA, _RET = 0x04, 0x14, 0x07, 0x87, 0x06
_PASS, _DROP = 0x40000, 0  # bytes of the frame to keep; 0 = leave it out


NOTHING_ASIDE = SetAside()


def frame_filter(ethertype: int, set_aside: SetAside = NOTHING_ASIDE
                 ) -> list[tuple[int, int, int, int]]:
    """A classic BPF program that passes frames of `ethertype`, except those `set_aside`
    covers (cose.claim: the same bytes, read the same way). A frame it cannot read that far
    passes: the codec decides about it, and counts it if it is bad.

    Our frame after the 14-byte Ethernet header: u16 length, then the COSE_Mac0 prefix
    d1 84 43 a1 01 05 a1 04 (tag 17 [protected {1: 5}, {4: ...), the kid's byte-string head
    0x40 + n and n bytes, the payload's byte-string head (1, 2 or 3 bytes as cose.claim
    counts them), then a6 01 <type id> 02 <sender>. X holds n, then n plus the payload
    head's bytes beyond one."""
    prefix = cose.OWN_PREFIX
    assert len(prefix) == 8, "the filter reads the COSE prefix as two words"
    kid_at = ETH_HEADER + 2 + len(prefix)
    needs = kid_at + 9  # bytes up to the sender in the longest layout, past the kid
    # one byte each: claim's rule
    types = sorted(t for t in set_aside.types if t < 24)
    heartbeat = catalogue.Heartbeat.TYPE_ID
    senders = [] if heartbeat in types else sorted(s for s in set_aside.heartbeat_senders
                                                   if s < 24)
    ops: list[tuple[int, Any, Any, Any, str]] = []

    def op(code: int, k: Any = 0, jt: Any = 0, jf: Any = 0, label: str = "") -> None:
        ops.append((code, jt, jf, k, label))

    op(_LDH_ABS, 12)
    op(_JEQ, ethertype, jf="drop")
    if types or senders:
        op(_LD_LEN)
        op(_JGE, needs, jf="pass")
        op(_LD_ABS, ETH_HEADER + 2)
        op(_JEQ, int.from_bytes(prefix[:4], "big"), jf="pass")
        op(_LD_ABS, ETH_HEADER + 6)
        op(_JEQ, int.from_bytes(prefix[4:], "big"), jf="pass")
        op(_LDB_ABS, kid_at)
        op(_JGE, 0x40, jf="pass")
        op(_JGE, 0x58, jt="pass")
        op(_SUB, 0x40)
        op(_ADD, needs)  # A = n + needs: the frame must be that long
        op(_TAX)
        op(_LD_LEN)
        op(_JGE_X, jf="pass")
        op(_TXA)
        op(_SUB, needs)
        op(_TAX)  # X = n
        op(_LDB_IND, kid_at + 1)  # the payload's head: one byte, or two, or three
        op(_JEQ, 0x58, jt="head2")
        op(_JGT, 0x58, jt="head3", jf="map")
        for label, extra in (("head2", 1), ("head3", 2)):
            op(_TXA, label=label)
            op(_ADD, extra)
            op(_TAX)
            op(_JA, "map")
        op(_LDB_IND, kid_at + 2, label="map")
        op(_JEQ, 0xA6, jf="pass")
        op(_LDB_IND, kid_at + 3)
        op(_JEQ, 0x01, jf="pass")
        op(_LDB_IND, kid_at + 4)  # the type id
        for type_id in types:
            op(_JEQ, type_id, jt="drop")
        if senders:
            op(_JEQ, heartbeat, jf="pass")
            op(_LDB_IND, kid_at + 5)
            op(_JEQ, 0x02, jf="pass")
            op(_LDB_IND, kid_at + 6)  # the sender
            for sender in senders:
                op(_JEQ, sender, jt="drop")
    op(_RET, _PASS, label="pass")
    op(_RET, _DROP, label="drop")
    labels = {label: i for i, (*_, label) in enumerate(ops) if label}

    def to(target: Any, i: int) -> int:  # a label -> the jump's offset from the next op
        return labels[target] - i - 1 if isinstance(target, str) else int(target)

    return [(code, 0, 0, to(k, i)) if code == _JA else (code, to(jt, i), to(jf, i), k)
            for i, (code, jt, jf, k, _) in enumerate(ops)]


def sock_fprog(program: list[tuple[int, int, int, int]]
               ) -> tuple[bytes, ctypes.Array[ctypes.c_char]]:
    """The sock_fprog setsockopt wants for `program`, and the buffer it points into (keep it
    alive while the call runs)."""
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
            self._attach(NOTHING_ASIDE)
            self._sock.bind((iface, ETH_P_ALL))
        except OSError as exc:
            self._sock.close()
            raise TransportError(f"cannot bind to interface {iface!r}: {exc.strerror}") from exc
        own_mac = self._sock.getsockname()[4]
        self._type = struct.pack("!H", ethertype)
        self._header = parse_mac(destination) + own_mac + self._type
        self._sock.setblocking(False)
        self._poll = select.poll()
        self._poll.register(self._sock, select.POLLIN)
        # What this socket sent lately: its own frames come back (as outgoing packets) and are
        # skipped without decoding.
        self._sent: deque[bytes] = deque(maxlen=512)
        self._sent_set: set[bytes] = set()

    def _attach(self, set_aside: SetAside) -> None:
        program, code = sock_fprog(frame_filter(self.ethertype, set_aside))
        self._sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, program)
        del code  # the kernel has its own copy now

    def set_aside(self, set_aside: SetAside) -> None:
        # Replaces the filter in one step: frames already queued still arrive (the codec
        # sets them aside), and no frame is lost in between.
        self._attach(set_aside)

    def send(self, frame: bytes) -> None:
        data = self._header + frame
        if len(self._sent) == self._sent.maxlen:
            self._sent_set.discard(self._sent[0])
        self._sent.append(data)
        self._sent_set.add(data)
        self._sock.send(data)

    def recv(self, timeout: float | None) -> bytes | None:
        # Asked whether anything waits before reading (poll, select), never by a read that
        # fails: a failed read raises in Python, and the I/O loop asks once more after every
        # frame it takes (is there another?), at each of the LAN's ~1,000 frames a second.
        if timeout == 0:
            if not self._poll.poll(0):
                return None
        elif not wait_readable(self._sock, timeout):
            return None
        for _ in range(64):  # frames of other EtherTypes or our own: skipped, not waited on
            try:
                # recv, not recvfrom: a packet socket's address costs an ioctl (the
                # interface's name) per frame, and the frame itself says all we need.
                data = self._sock.recv(2048)
            except BlockingIOError:
                return None  # readable, yet nothing (a pending error): no busy loop
            if len(data) < ETH_HEADER or data[12:14] != self._type:
                pass  # queued before the filter was attached
            elif data in self._sent_set:
                pass  # our own transmission, looped back to this socket (its sequence
                # number makes it unlike any other process's frame)
            else:
                # Another process's transmission on this host: the agents that share a
                # board (the pole board runs three) hear each other this way.
                return data[ETH_HEADER:]
            if not self._poll.poll(0):
                return None
        return None

    def dropped(self) -> int:
        return socket_drops(self._sock)

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()
