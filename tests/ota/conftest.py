"""Fixtures of the OTA tests: development keys made per run, a LAN of their own, boards."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from foosball.wire.catalogue import Agent, OtaStatus
from foosball.wire.codec import new_key
from foosball.wire.endpoint import Endpoint
from foosball.wire.settings import WireSettings, open_endpoint
from tests.ota.rauc_env import Keys, Lan, SimBoard, make_keys, rauc_skip_reason, wait_for

BOOT_S = 30  # a simulated boot up to a healthy first judgement, on a busy 2-core machine


@pytest.fixture(scope="session")
def dev_keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    """The lab's development keys: a CA the boards trust and a signer under it."""
    if rauc_skip_reason():
        pytest.skip(rauc_skip_reason())
    return make_keys(tmp_path_factory.mktemp("dev-keys"), "foosball test CA")


@pytest.fixture(scope="session")
def stranger_keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    """A CA and signer the boards do not trust."""
    if rauc_skip_reason():
        pytest.skip(rauc_skip_reason())
    return make_keys(tmp_path_factory.mktemp("stranger-keys"), "someone else")


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def make_lan(directory: Path) -> Lan:
    """A LAN of its own: a free UDP port and a fresh installation key, readable by its
    owner only from the start (as on a board: the loader refuses a key others can read)."""
    key_file = directory / "wire.key"
    with os.fdopen(os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write(new_key() + "\n")
    return Lan(free_udp_port(), key_file)


@pytest.fixture
def lan(tmp_path: Path) -> Lan:
    return make_lan(tmp_path)


def ota_command(lan: Lan, *args: str) -> list[str]:
    """`foosball ota ARGS` on this LAN, as a person runs it on a laptop."""
    return [sys.executable, "-m", "foosball.cli", "ota", *args, "--transport", "udp",
            "--udp-port", str(lan.port), "--key-file", str(lan.key_file)]


def ota_cli(lan: Lan, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(ota_command(lan, *args), capture_output=True, text=True,
                          timeout=timeout_s)


def ota_cli_started(lan: Lan, *args: str) -> subprocess.Popen[str]:
    """The same, running on (its stderr merged into its stdout)."""
    return subprocess.Popen(ota_command(lan, *args), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def lan_endpoint(lan: Lan, sender: Agent, key_file: Path | None = None) -> Endpoint:
    return open_endpoint(WireSettings(transport="udp", udp_port=lan.port,
                                      key_file=str(key_file or lan.key_file), max_age_s=2.0),
                         sender)


@pytest.fixture
def tool(lan: Lan) -> Iterator[Endpoint]:
    """A person's laptop on the agent LAN, with the installation key."""
    endpoint = lan_endpoint(lan, Agent.TOOL)
    yield endpoint
    endpoint.close()


@pytest.fixture
def make_board(tmp_path: Path, dev_keys: Keys, lan: Lan) -> Iterator[Callable[..., SimBoard]]:
    boards: list[SimBoard] = []

    def make(name: str = "pole", **options: Any) -> SimBoard:
        board = SimBoard(tmp_path / name, name, dev_keys, lan, **options)
        board.flash("1.0")
        boards.append(board)
        return board

    yield make
    for board in boards:
        board.power_off()


class StatusLog:
    """Every OtaStatus a listener on the LAN hears, on a thread of its own."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.statuses: list[OtaStatus] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            for received in self.endpoint.receive(0.05):
                if isinstance(received.message, OtaStatus):
                    with self._lock:
                        self.statuses.append(received.message)

    def states(self, board: str) -> list[str]:
        """The board's states in order, repeats folded."""
        out: list[str] = []
        with self._lock:
            for status in self.statuses:
                if status.board == board and (not out or out[-1] != status.state):
                    out.append(status.state)
        return out

    def mark(self) -> int:
        """Where the log is now: `wait(..., since=mark)` looks only at what comes after."""
        with self._lock:
            return len(self.statuses)

    def wait(self, board: str, condition: Callable[[OtaStatus], bool],
             timeout_s: float, since: int = 0) -> OtaStatus:
        """The first status of `board` heard since `since` meeting `condition`."""
        deadline = time.monotonic() + timeout_s
        seen = since
        pause = threading.Event()
        while time.monotonic() < deadline:
            with self._lock:
                new, seen = self.statuses[seen:], len(self.statuses)
            for status in new:
                if status.board == board and condition(status):
                    return status
            pause.wait(0.05)
        last = next((s for s in reversed(self.statuses) if s.board == board), None)
        raise AssertionError(f"{board}: no such status within {timeout_s:.0f} s; states "
                             f"{self.states(board)}; last {last}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@pytest.fixture
def statuses(tool: Endpoint) -> Iterator[StatusLog]:
    log = StatusLog(tool)
    yield log
    log.stop()


def marked_good(board: SimBoard, bootname: str) -> None:
    # The status goes out as the agent asks for the mark; RAUC's write follows.
    wait_for(f"the mark-good of {bootname}",
             lambda: f"set-state {bootname} good" in board.bootloader_writes(), 10)


def booted_healthy(board: SimBoard, statuses: StatusLog) -> None:
    """Power on and wait until the update agent has judged the boot healthy."""
    bootname = board.power_on()
    statuses.wait(board.name, lambda s: s.state == "idle", BOOT_S)
    marked_good(board, bootname)
