"""A root booted under systemd-nspawn with systemd as PID 1, driven from the host: the
simulated rig's booted boards (foosball.rig.booted) and the systemd tests.

Commands run inside through `nsenter` into the container's init, which works whether or
not the host itself runs systemd: on a systemd host the container is registered with
systemd-machined (its own delegated scope), elsewhere (a CI container) it is not.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import psutil

T = TypeVar("T")
BOOT_TIMEOUT_S = 60.0
HALT_TIMEOUT_S = 30.0
_SPAN = re.compile(r"(\d+(?:\.\d+)?)(us|ms|min|s|h)")
_SPAN_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def wait_until(condition: Callable[[], T], timeout: float, what: str,
               interval: float = 0.05) -> T:
    """Poll `condition` until it returns something true; fail naming `what` at `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


def host_runs_systemd() -> bool:
    return os.path.isdir("/run/systemd/system")  # sd_booted()


@dataclass(frozen=True)
class Machine:
    name: str
    leader: int  # host PID of the container's systemd
    console: Path

    def run(self, *command: str, check: bool = True,
            timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["nsenter", f"--target={self.leader}", "--all", "--", *command],
                              capture_output=True, text=True, timeout=timeout, check=check)

    def systemctl(self, *args: str) -> str:
        return self.run("systemctl", *args, check=False).stdout.strip()

    def show(self, unit: str, prop: str) -> str:
        return self.systemctl("show", "--value", f"--property={prop}", unit)

    def seconds(self, unit: str, prop: str) -> float:
        """A time-span property (WatchdogUSec=2s, RestartUSec=200ms) in seconds."""
        return sum(float(n) * _SPAN_UNITS[u] for n, u in _SPAN.findall(self.show(unit, prop)))

    def journal(self, *args: str, lines: int = 60) -> str:
        return self.run("journalctl", "--no-pager", f"--lines={lines}", *args,
                        check=False).stdout

    def diagnostics(self) -> str:
        return "\n".join((
            "$ systemctl list-units --all 'foosball*'",
            self.systemctl("list-units", "--all", "--no-pager", "foosball*"),
            "$ systemctl --failed", self.systemctl("--failed", "--no-pager"),
            "$ journalctl -n 80", self.journal(lines=80),
        ))


class Container:
    """`root` booted in the network namespace `netns` (a name under /run/netns), the
    host's `binds` (host path: path inside) mounted in; `boot()` waits for systemd to say the
    system is up, `halt()` stops it (and is safe to call twice)."""

    def __init__(self, root: Path, name: str, netns: str, binds: dict[Path, str],
                 console: Path, capabilities: tuple[str, ...] = ()) -> None:
        self.name = name
        self.console = console
        self.command = [
            "systemd-nspawn", "--quiet", f"--directory={root}", f"--machine={name}",
            "--boot", f"--network-namespace-path=/run/netns/{netns}", "--link-journal=no",
            "--console=pipe", *(f"--bind={host}:{inside}" for host, inside in binds.items()),
            # A board's init may grant its services real-time priority and locked memory
            # (LimitRTPRIO=, LimitMEMLOCK=); nspawn's PID 1 would get hard limits of 0 and
            # 8 MiB, and no CAP_SYS_RESOURCE to raise them.
            "--rlimit=RTPRIO=99", "--rlimit=MEMLOCK=infinity",
            *(f"--capability={cap}" for cap in capabilities)]
        if not host_runs_systemd():
            self.command += ["--register=no", "--keep-unit"]  # no machined to ask for a scope
        self.process: subprocess.Popen[bytes] | None = None
        self.machine: Machine | None = None

    def start(self, preexec_fn: Callable[[], object] | None = None) -> subprocess.Popen[bytes]:
        with open(self.console, "w") as log:
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
        return self.process

    def wait_booted(self, timeout_s: float = BOOT_TIMEOUT_S, finished: bool = True) -> Machine:
        """Until systemd runs in the container and, with `finished`, its boot is done
        (every unit started: an agent's Type=notify unit once it said READY=1); without,
        until it is starting units."""
        process = self.process
        if process is None:
            raise RuntimeError(f"{self.name} was not started")
        leader = wait_until(lambda: _container_init(process, self.console), timeout_s,
                            f"systemd starting in {self.name}")
        machine = Machine(self.name, leader, self.console)
        states = ("running", "degraded") + (() if finished else ("starting",))
        wait_until(lambda: machine.systemctl("is-system-running") in states, timeout_s,
                   f"{self.name} booting", interval=0.2)
        self.machine = machine
        return machine

    def halt(self) -> int | None:
        if self.process is None:
            return None
        _halt(self.process)
        return self.process.returncode


@contextmanager
def booted(root: Path, name: str, netns: str, binds: dict[Path, str],
           console: Path) -> Iterator[Machine]:
    """Boot `root` in the network namespace `netns`; halt it and wait for it on exit."""
    container = Container(root, name, netns, binds, console)
    container.start()
    try:
        yield container.wait_booted()
    finally:
        container.halt()


def _container_init(process: subprocess.Popen[bytes], console: Path) -> int | None:
    if process.poll() is not None:
        raise RuntimeError(f"systemd-nspawn exited with {process.returncode}:\n"
                           + console.read_text())
    for child in psutil.Process(process.pid).children(recursive=True):
        try:
            with open(f"/proc/{child.pid}/status") as status:
                nspid = next(line for line in status if line.startswith("NSpid:")).split()
            if nspid[-1] == "1" and len(nspid) > 2 and child.name() == "systemd":
                return child.pid
        except (OSError, StopIteration, psutil.Error):
            continue  # gone, or not yet exec'd
    return None


def _halt(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM asks nspawn to halt the container; a second one makes it kill it."""
    for _ in range(2):
        if process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(HALT_TIMEOUT_S)
            return
        except subprocess.TimeoutExpired:
            continue
    process.kill()
    process.wait()
