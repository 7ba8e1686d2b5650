"""The rig's network: three boards on one agent LAN, the pole board's EtherCAT segment.

As root, each board is a network namespace, as on the real table:

    <id>-lan        bridge br0: the agent LAN (a switch)
    <id>-pole       lan0 -> br0; ecat0 <-> ecat1 (the master's port, the drives' port)
    <id>-vision     lan0 -> br0
    <id>-strategy   lan0 -> br0
    <id>-tool       lan0 -> br0 (a person's laptop: wire dump, wire send, the tests)

Raw-Ethernet CBOR frames cross the bridge exactly as they cross a switch. Faults a cable
can have are `cut(board)` / `mend(board)` (the board's switch port down or up).
Without root there are no namespaces: every process runs on the host over UDP multicast
on loopback (`LoopbackLan`), and it says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import secrets
import shutil
import socket
import struct
import subprocess
import time
from collections.abc import Iterator

BOARDS = ("pole", "vision", "strategy", "tool")


def netns_unavailable() -> str | None:
    """Why namespaces cannot be used here, or None."""
    if os.geteuid() != 0:
        return "not root: no network namespaces (the rig runs over UDP on loopback)"
    if shutil.which("ip") is None:
        return "no iproute2 `ip` command"
    return None


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {result.stderr.strip()}")


SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def set_link(namespace: str, iface: str, up: bool) -> float:
    """A cable plugged or pulled: `iface` in `namespace` up or down, in this process (one
    ioctl, as `ip link set` does, without a process to start first). Returns when the change
    was made (monotonic): the fault suites time detection from it."""
    with inside(namespace):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        request = struct.pack("16sH22x", iface.encode(), 0)
        flags = struct.unpack_from("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        flags = flags | IFF_UP if up else flags & ~IFF_UP
        at_s = time.monotonic()
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", iface.encode(), flags))
        return at_s


class NamespaceLan:
    transport = "raw"
    iface = "lan0"

    def __init__(self, prefix: str | None = None) -> None:
        self.prefix = prefix or f"fb{secrets.token_hex(2)}"
        self.created: list[str] = []
        try:
            self._build()
        except BaseException:
            self.delete()
            raise

    def ns(self, board: str) -> str:
        return f"{self.prefix}-{board}"

    def _add(self, name: str) -> None:
        _ip("netns", "add", name)
        self.created.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def _build(self) -> None:
        lan = self.ns("lan")
        self._add(lan)
        _ip("-n", lan, "link", "add", "br0", "type", "bridge", "stp_state", "0",
            "forward_delay", "0")
        _ip("-n", lan, "link", "set", "br0", "up")
        for board in BOARDS:
            ns = self.ns(board)
            self._add(ns)
            port = f"p-{board}"
            _ip("-n", lan, "link", "add", port, "type", "veth", "peer", "name", "lan0",
                "netns", ns)
            _ip("-n", lan, "link", "set", port, "master", "br0")
            _ip("-n", lan, "link", "set", port, "up")
            _ip("-n", ns, "link", "set", "lan0", "up")
        pole = self.ns("pole")
        _ip("-n", pole, "link", "add", "ecat0", "type", "veth", "peer", "name", "ecat1")
        _ip("-n", pole, "link", "set", "ecat0", "up")
        _ip("-n", pole, "link", "set", "ecat1", "up")

    def prefix_command(self, board: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns(board)]

    def namespace(self, board: str) -> str | None:
        return self.ns(board)

    def cut(self, board: str) -> float:
        """Unplug the board from the LAN switch; returns when (monotonic)."""
        return set_link(self.ns("lan"), f"p-{board}", False)

    def mend(self, board: str) -> float:
        return set_link(self.ns("lan"), f"p-{board}", True)

    def ethercat_link(self, up: bool) -> float:
        """The pole board's EtherCAT cable, at the drives' end; returns when (monotonic)."""
        return set_link(self.ns("pole"), "ecat1", up)

    def delete(self) -> None:
        for name in reversed(self.created):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self.created.clear()

    def describe(self) -> str:
        return (f"network namespaces {self.prefix}-{{pole,vision,strategy,tool}} on bridge "
                f"br0 in {self.prefix}-lan; raw Ethernet on lan0; EtherCAT on ecat0/ecat1")


class LoopbackLan:
    """No root: everything on the host, UDP multicast on loopback; the EtherCAT drives are
    the in-process fake bus, since a raw veth needs root."""

    transport = "udp"
    iface = "lo"
    prefix = "loopback"

    def prefix_command(self, board: str) -> list[str]:
        return []

    def namespace(self, board: str) -> str | None:
        return None

    def cut(self, board: str) -> None:
        raise RuntimeError("cutting a board's cable needs namespaces (root)")

    mend = cut

    def ethercat_link(self, up: bool) -> None:
        raise RuntimeError("the EtherCAT link is a fake bus without root")

    def delete(self) -> None:
        pass

    def describe(self) -> str:
        return "single host (not root): UDP multicast on loopback, EtherCAT on the fake bus"


_CLONE_NEWNET = 0x40000000


@contextlib.contextmanager
def inside(ns: str | None) -> Iterator[None]:
    """Run the block with the calling thread in namespace `ns` (None: stay): a socket opened
    inside stays in that namespace after the thread returns."""
    if ns is None:
        yield
        return
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(target, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {ns} failed")
        yield
    finally:
        libc.setns(own, _CLONE_NEWNET)
        os.close(own)
        os.close(target)
