"""The supervisory page's glue (foosball.panels.supervisory): server actions to core actions,
the view to the page's topics, the board.toml section, and the service that
`foosball-agent@supervisory_panel` runs answering on its port."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from foosball.agent_cli import check_board
from foosball.agents.supervisory_panel import ACTIONS, OperatorAction, SupervisoryCore
from foosball.config import BoardConfigError, load_board_config
from foosball.geometry import default_table, default_table_path
from foosball.panels.server import PanelAction, PanelHardware, PanelServer, panel_token
from foosball.panels.supervisory import (
    STATIC_DIR,
    SupervisoryPage,
    SupervisoryPanelConfig,
    operator_action,
    topics,
)
from foosball.runtime import AgentRuntime, Inputs
from foosball.runtime.settings import SafetySettings
from foosball.wire.catalogue import Agent, AxisStatus, DriveState, MotorStatus
from foosball.wire.codec import WireCodec, load_key, new_key
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport
from tests.busy import busiest_processes

TOKEN = panel_token(bytes(range(32)))
MOTORS = MotorStatus(axes=tuple(AxisStatus(a, DriveState.READY, 0.1 * a, 0.0, 0.1, 0)
                                for a in range(8)))


def test_a_server_action_becomes_the_cores_with_who_and_when() -> None:
    action = operator_action(PanelAction("drive", {"axis": 3, "command": "halt"},
                                         "10.0.0.9", 1_700_000_000.25))
    assert action == OperatorAction("drive", "10.0.0.9", 1_700_000_000_250_000_000, 3, "halt")
    odd = operator_action(PanelAction("drive", {"axis": "3", "command": 7}, "x", 0.0))
    assert (odd.axis, odd.command) == (-1, "")  # for the core to refuse and log


def test_the_view_is_split_into_topics_the_page_renders() -> None:
    view = SupervisoryCore(default_table()).step(Inputs(0.0, (MOTORS,))).actuation
    data = topics(view)
    assert set(data) == {"axes", "link", "safety", "log", "updates"}
    assert len(data["axes"]["axes"]) == 8 and data["axes"]["stale"] is False
    assert data["link"] == {"link": None, "stale": True}
    assert data["safety"]["faulted"] is False


class Published:
    def __init__(self) -> None:
        self.topics: list[dict[str, Any]] = []
        self.queued: tuple[PanelAction, ...] | None = None

    def act(self, data: Any) -> None:
        self.topics.append(data)

    def sense(self, timeout_s: float) -> tuple[PanelAction, ...] | None:
        return self.queued

    def close(self) -> None:
        pass


def test_the_page_is_sent_only_a_view_that_changed() -> None:
    core, hardware = SupervisoryCore(default_table()), Published()
    page = SupervisoryPage(hardware)  # type: ignore[arg-type]
    first = core.step(Inputs(0.0, (MOTORS,))).actuation
    page.act(first)
    same = core.step(Inputs(0.1)).actuation
    assert same is first  # nothing changed: the core hands back the same view
    page.act(same)
    page.act(None)  # a failed step: the page keeps showing the last view
    assert len(hardware.topics) == 1
    page.act(core.step(Inputs(0.7)).actuation)  # now stale: news
    assert len(hardware.topics) == 2 and hardware.topics[-1]["axes"]["stale"] is True
    assert page.sense(0.0) is None
    hardware.queued = (PanelAction("halt_all", {}, "10.0.0.9", 1.0),)
    assert page.sense(0.0) == (OperatorAction("halt_all", "10.0.0.9", 10**9),)


class IdleClock:
    """The wake event of a page whose waits cost no wall time: a wait that nothing cut short
    moves the passed-in clock on by its whole timeout (an idle turn); one that returns at
    once (the event already set) moves it not at all. Steps per clock second are then the
    step thread's CPU, counted instead of timed."""

    def __init__(self) -> None:
        self.now_s = 100.0
        self.event = threading.Event()

    def wait(self, timeout_s: float) -> bool:
        woken = self.event.is_set()
        if not woken:
            self.now_s += timeout_s
        return woken

    def set(self) -> None:
        self.event.set()

    def clear(self) -> None:
        self.event.clear()


def steps_per_second(runtime: AgentRuntime, clock: IdleClock, turns: int) -> float:
    start = clock.now_s
    for _ in range(turns):
        runtime.work_turn()
    return turns / max(clock.now_s - start, 1e-9)


def test_after_an_action_the_page_steps_at_its_idle_rate_again(tmp_path: Path) -> None:
    """Issue 29: the first accepted action left the page's wake event set, and the step
    thread ran flat out (SCHED_FIFO 20) from then on."""
    server = PanelServer(STATIC_DIR, token=TOKEN, actions=ACTIONS, port=0)
    panel = PanelHardware(server, start=False)
    clock = IdleClock()
    panel.wake = clock  # type: ignore[assignment]
    settings = SafetySettings()
    runtime = AgentRuntime(SupervisoryCore(default_table()), memory_endpoint(), settings,
                           hardware=SupervisoryPage(panel), monotonic=lambda: clock.now_s,
                           health=None)
    idle = steps_per_second(runtime, clock, 50)
    assert idle == pytest.approx(1 / settings.heartbeat_period_s)
    reply = server._submit("10.0.0.9", json.dumps({"action": "halt_all", "token": TOKEN}))
    assert reply["accepted"]
    runtime.work_turn()  # the action's own, immediate step
    assert runtime.core.actions[0].what == "halt all"
    assert steps_per_second(runtime, clock, 50) == pytest.approx(idle)


def memory_endpoint() -> Endpoint:
    key = bytes(range(32))
    return Endpoint(MemoryTransport(MemoryHub()), WireCodec(key, Agent.SUPERVISORY_PANEL))


def test_the_page_files_are_in_the_package() -> None:
    for name in ("index.html", "supervisory.js", "supervisory.css"):
        assert (STATIC_DIR / name).is_file()
    html = (STATIC_DIR / "index.html").read_text()
    assert "/static/supervisory.js" in html and "/static/supervisory.css" in html


def test_the_board_section_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="port"):
        SupervisoryPanelConfig(port=70000)
    with pytest.raises(ValueError, match="stale_after_s"):
        SupervisoryPanelConfig(stale_after_s=0)
    path = board_file(tmp_path, port=8081, extra='colour = "red"')
    with pytest.raises(BoardConfigError, match="colour"):
        check_board(load_board_config(path))


def board_file(tmp_path: Path, port: int, extra: str = "") -> Path:
    key = tmp_path / "wire.key"
    key.write_text(new_key())
    key.chmod(0o600)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        wire_port = udp.getsockname()[1]
    path = tmp_path / "board.toml"
    path.write_text(f"""
[wire]
transport = "udp"
udp_destination = "127.0.0.1"
udp_port = {wire_port}
key_file = "{key}"

[table]
geometry = "{default_table_path()}"

[supervisory_panel]
port = {port}
host = "127.0.0.1"
token_file = "{tmp_path / 'panel.token'}"
{extra}
""")
    return path


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, deadline_s: float) -> bytes:
    """The page, asked until it answers or the deadline passes (the service is starting)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return bytes(response.read())
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


def test_the_service_serves_the_page_and_leaves_the_token_for_the_operator(
        tmp_path: Path) -> None:
    port = free_tcp_port()
    path = board_file(tmp_path, port)
    agent = subprocess.Popen([sys.executable, "-m", "foosball.cli", "agent", "run",
                              "supervisory_panel", "--config", str(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        page = get(f"http://127.0.0.1:{port}/", deadline_s=20)
        assert b"Supervisory panel" in page
        assert b"renderAxes" in get(f"http://127.0.0.1:{port}/static/supervisory.js", 5)
        token_file = tmp_path / "panel.token"
        assert token_file.read_text().strip() == panel_token(load_key(tmp_path / "wire.key"))
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            output, _ = agent.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            busy = busiest_processes()
            agent.kill()  # never leave it running
            output, _ = agent.communicate()
            raise AssertionError(f"no stop on SIGTERM within 20 s: {output[-2000:]}\n"
                                 f"busiest processes then:\n{busy}") from None
    assert agent.returncode == 0, output
