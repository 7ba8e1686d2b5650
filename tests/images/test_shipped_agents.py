"""Every agent of every board starts from exactly the files its image installs.

For each board, the files python3-foosball's packages give it (foosball.rig.image_files,
from the same table the recipe reads) are copied into an empty folder, and each agent the
board's shipped board.toml names runs from them with `python3 -S` (no site-packages, no
editable install's finder): the package is that folder and nothing else; the third-party
libraries come from the virtual environment's site-packages on PYTHONPATH, as the image's
python3-* packages would. The board.toml is the shipped one, changed only where this
machine must differ: UDP in a network namespace of its own instead of raw Ethernet on
lan0, the fake EtherCAT bus, the camera a frame socket nobody serves, paths under a
temporary folder. Each agent must tell systemd READY, be heard heartbeating on the wire,
and exit 0 on SIGTERM.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from foosball.rig.image_files import BOARDS, copy_board_files
from tests.agents.boards import shipped_board_copy
from tests.conftest import needs_root_netns

REPO = Path(__file__).resolve().parents[2]
THIRD_PARTY = sysconfig.get_paths()["purelib"]  # the venv's site-packages: numpy, cv2, ...
NOT_AGENTS = {"wire", "table", "safety"}
READY_WITHIN_S = 60.0  # imports and start; seen > 30 s at load 13 on the 2 cores
STOP_WITHIN_S = 30.0  # a panel under the same load: seen > 15 s
WIRE_SENDER = {"motor_driver": "MOTOR_DRIVER", "pole_driver": "POLE_DRIVER",
               "supervisory_panel": "SUPERVISORY_PANEL", "ball_tracker": "BALL_TRACKER",
               "strategy": "STRATEGY", "game_panel": "GAME_PANEL",
               "match_recorder": "MATCH_RECORDER", "update_agent": "OTA"}


def shipped_python(site: Path) -> tuple[list[str], dict[str, str]]:
    """`python3 -S` with only the shipped package and the third-party libraries."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": f"{site}:{THIRD_PARTY}",
           "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
    return [sys.executable, "-S"], env


Shipped = tuple[list[str], dict[str, str]]  # the interpreter's command and environment


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Shipped]:
    """board -> `python3 -S` over a copy of that board's files, made once per board."""
    made: dict[str, Shipped] = {}

    def ship(board: str) -> Shipped:
        if board not in made:
            site = tmp_path_factory.mktemp(f"shipped-{board}") / "site"
            copy_board_files(board, site)
            python, env = shipped_python(site)
            found = subprocess.run([*python, "-c", "import foosball; print(foosball.__file__)"],
                                   env=env, cwd=site, capture_output=True, text=True,
                                   check=True)
            assert found.stdout.strip() == str(site / "foosball" / "__init__.py")  # no other
            made[board] = python, env
        return made[board]

    return ship


def replaced(text: str, old: str, new: str) -> str:
    assert old in text, f"the shipped board.toml no longer has {old!r}: adapt this test"
    return text.replace(old, new)


def adapted_board(board: str, tmp_path: Path) -> Path:
    path = shipped_board_copy(board, tmp_path)  # key, calibration, table: files made here
    text = replaced(path.read_text(), 'transport = "raw"', 'transport = "udp"')
    text = replaced(text, f'board = "{board}"', f'board = "{board}"\n'
                    f'state_dir = "{tmp_path / "ota"}"\n'
                    f'dbus_address = "unix:path={tmp_path / "no-rauc-bus"}"')
    if board == "pole":
        text = replaced(text, 'backend = "pysoem"', 'backend = "fake"')
    if board == "vision":
        text = replaced(text, 'kind = "v4l2"', 'kind = "socket"')
        start = text.index("options = {", text.index('kind = "socket"'))
        end = text.index("\n", start)
        text = text[:start] + f'options = {{ path = "{tmp_path / "camera.sock"}" }}' + text[end:]
    if board == "strategy":
        text = replaced(text, 'directory = "/data/foosball/matches"',
                        f'directory = "{tmp_path / "matches"}"')
    path.write_text(text)
    return path


def agents_of(board_toml: Path) -> list[str]:
    return sorted(set(tomllib.loads(board_toml.read_text())) - NOT_AGENTS)


@contextmanager
def network_namespace(name: str) -> Iterator[list[str]]:
    """A namespace with loopback up and multicast routed over it: the UDP transport's
    group reaches every process in it and nothing outside."""
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        for command in (["link", "set", "lo", "up"], ["route", "add", "224.0.0.0/4", "dev", "lo"]):
            subprocess.run(["ip", "-n", name, *command], check=True)
        yield ["ip", "netns", "exec", name]
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


class NotifyListener:
    """systemd's side of each agent's NOTIFY_SOCKET: read without pause (an agent's
    sendto blocks once ten datagrams wait unread), READY=1 remembered per agent."""

    def __init__(self, folder: Path, names: list[str]) -> None:
        self.sockets: dict[socket.socket, str] = {}
        for name in names:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.bind(str(folder / f"notify-{name}"))
            self.sockets[sock] = name
        self.path = {name: str(folder / f"notify-{name}") for name in names}
        self.ready: set[str] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._done.is_set():
            readable, _, _ = select.select(list(self.sockets), [], [], 0.1)
            for sock in readable:
                if b"READY=1" in sock.recv(4096).split(b"\n"):
                    self.ready.add(self.sockets[sock])

    def wait_ready(self, agents: dict[str, subprocess.Popen[bytes]], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.ready != set(agents) and time.monotonic() < deadline:
            exited = {name: p.returncode for name, p in agents.items() if p.poll() is not None}
            assert not exited, f"exited before READY: {exited}"
            time.sleep(0.1)  # polling a flag the reader thread sets; no timing depends on it
        assert self.ready == set(agents), f"not READY: {set(agents) - self.ready}"

    def close(self) -> None:
        self._done.set()
        self._thread.join()
        for sock in self.sockets:
            sock.close()


@needs_root_netns()
@pytest.mark.parametrize("board", BOARDS)
def test_every_agent_of_the_board_runs_from_exactly_its_shipped_files(board, shipped, tmp_path):
    python, env = shipped(board)
    board_toml = adapted_board(board, tmp_path)
    names = agents_of(board_toml)
    notify = NotifyListener(tmp_path, names)
    agents: dict[str, subprocess.Popen[bytes]] = {}
    with network_namespace(f"fb-ship-{board}-{os.getpid()}") as in_ns:
        try:
            for name in names:
                with open(tmp_path / f"{name}.log", "wb") as log:
                    agents[name] = subprocess.Popen(
                        [*in_ns, *python, "-m", "foosball.cli", "agent", "run", name,
                         "--config", str(board_toml)],
                        env=env | {"NOTIFY_SOCKET": notify.path[name]},
                        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=log)
            notify.wait_ready(agents, READY_WITHIN_S)
            # Every agent beats at 100 Hz: a second's messages hear each one many times.
            dump = subprocess.run(
                [*in_ns, *python, "-m", "foosball.cli", "wire", "dump", "--config",
                 str(board_toml), "--json", "--count", str(150 * len(names)), "--timeout", "5"],
                env=env, cwd=tmp_path, capture_output=True, text=True, timeout=30)
            assert dump.returncode == 0, dump.stderr
            for agent in agents.values():
                agent.send_signal(signal.SIGTERM)
            codes = {name: agent.wait(timeout=STOP_WITHIN_S) for name, agent in agents.items()}
        finally:
            for agent in agents.values():
                if agent.poll() is None:
                    agent.kill()
                    agent.wait()
            notify.close()
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in names}
    assert codes == dict.fromkeys(names, 0), logs
    assert not [name for name, log in logs.items() if "Traceback" in log], logs
    records = [json.loads(line) for line in dump.stdout.splitlines()]
    heard = {r["sender"] for r in records if r.get("type") == "Heartbeat"}
    assert {WIRE_SENDER[name] for name in names} <= heard


@pytest.mark.parametrize("board", BOARDS)
def test_agent_check_passes_from_the_shipped_files(board, shipped, tmp_path):
    """The board's own board.toml (paths to files made here), checked by `foosball agent
    check` as the board's /usr/bin/foosball runs it: every agent's section parsed by code
    the board has."""
    python, env = shipped(board)
    board_toml = shipped_board_copy(board, tmp_path)
    result = subprocess.run([*python, "-m", "foosball.cli", "agent", "check", "--config",
                             str(board_toml)], env=env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"agents {agents_of(board_toml)}" in result.stdout


def test_the_shipped_python_finds_no_other_copy_of_the_package(tmp_path):
    """What the checks above rest on: with -S, neither the repository's python/ nor the
    editable install is on the path, so a module the board lacks is missing."""
    site = tmp_path / "site"
    copy_board_files("vision", site)
    python, env = shipped_python(site)
    result = subprocess.run([*python, "-c", "import foosball.sim.physics"], env=env,
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode != 0
    assert "No module named 'foosball.sim'" in result.stderr


BOARD_COMMANDS = {"pole": {"ethercat"}, "vision": {"vision"}, "strategy": set()}
COMMON_COMMANDS = {"agent", "geometry", "ota", "wire"}


@pytest.mark.parametrize("board", BOARDS)
def test_the_boards_foosball_command_offers_exactly_its_command_groups(board, shipped,
                                                                      tmp_path):
    """/usr/bin/foosball imports each command group's module by name and leaves out the
    groups whose code the board does not have (sim, rig, report, ...); every group the
    board has must import from its files."""
    python, env = shipped(board)
    listing = ("import argparse\nfrom foosball.cli import build_parser\n"
               "actions = build_parser([])._subparsers._group_actions\n"
               "print(' '.join(sorted(actions[0].choices)))")
    result = subprocess.run([*python, "-c", listing], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) == COMMON_COMMANDS | BOARD_COMMANDS[board]
