"""Throwaway network namespaces, the emulator process, and a master inside the namespace.

The test process itself stays in the host namespace; a socket's namespace is fixed when it
is created, so `inside(ns)` switches the calling thread into the namespace only while
pysoem (or a raw wire transport) opens its socket.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import os
import secrets
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CLONE_NEWNET = 0x40000000


def _netns_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces and veth pairs (CI runs as root)"
    if shutil.which("ip") is None:
        return "needs iproute2's `ip` to create network namespaces"
    try:
        import pysoem  # noqa: F401
    except ImportError:
        return "needs pysoem (pip install 'foosball[ethercat]')"
    return None


NETNS_SKIP = _netns_skip_reason()
needs_netns = pytest.mark.skipif(NETNS_SKIP is not None, reason=NETNS_SKIP or "")
_counter = itertools.count()
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


class Namespace:
    """A namespace with an EtherCAT veth pair (ecat0/ecat1) and an agent-LAN pair (lan0/lan1)."""

    def __init__(self) -> None:
        self.name = f"fb-ec-{os.getpid()}-{next(_counter)}-{secrets.token_hex(2)}"
        _ip("netns", "add", self.name)
        try:
            for a, b in (("ecat0", "ecat1"), ("lan0", "lan1")):
                _ip("-n", self.name, "link", "add", a, "type", "veth", "peer", "name", b)
                _ip("-n", self.name, "link", "set", a, "up")
                _ip("-n", self.name, "link", "set", b, "up")
            _ip("-n", self.name, "link", "set", "lo", "up")
        except subprocess.CalledProcessError:
            self.delete()
            raise

    def delete(self) -> None:
        subprocess.run(["ip", "netns", "del", self.name], check=False, capture_output=True)

    def exec_args(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]


@contextlib.contextmanager
def inside(ns: Namespace) -> Iterator[None]:
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{ns.name}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns into the test namespace failed")
        yield
    finally:
        _libc.setns(own, CLONE_NEWNET)
        os.close(own)
        os.close(target)


class EmulatorProcess:
    """`foosball ethercat emulate` on ecat1, driven through its stdin line protocol."""

    def __init__(self, ns: Namespace, drives: int = 8, extra: tuple[str, ...] = (),
                 rt_priority: int = 70) -> None:
        args = [*ns.exec_args(), sys.executable, "-m", "foosball.cli", "ethercat", "emulate",
                "--iface", "ecat1", "--drives", str(drives), "--start-fraction", "0.15",
                "--alignment-time", "0.1", "--rt-priority", str(rt_priority), *extra]
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1)
        ready = self._line(timeout=20.0)
        if ready.get("event") != "ready":
            raise RuntimeError(f"emulator did not start: {ready}")
        self.pid = int(ready.get("pid", self.process.pid))  # type: ignore[call-overload]

    def _line(self, timeout: float = 5.0) -> dict[str, object]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.process.stdout], [], [], 0.1)
            if readable:
                line = self.process.stdout.readline()
                if not line:
                    break
                with contextlib.suppress(json.JSONDecodeError):
                    return dict(json.loads(line))
        stderr = ""
        if self.process.poll() is not None and self.process.stderr is not None:
            stderr = self.process.stderr.read()
        raise RuntimeError(f"no answer from the emulator; stderr: {stderr[-2000:]}")

    def command(self, line: str) -> dict[str, object]:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        reply = self._line()
        if not reply.get("ok"):
            raise RuntimeError(f"emulator refused {line!r}: {reply}")
        return reply

    def slaves(self) -> list[dict[str, object]]:
        return list(self.command("status")["slaves"])  # type: ignore[arg-type]

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(BrokenPipeError, RuntimeError):
                self.command("quit")
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]
