"""The service entry point: board configuration, watchdog petting, a real agent process."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from foosball.agent_cli import check_board
from foosball.agents.pole_driver import PoleDriverConfig
from foosball.config import BoardConfigError, load_board_config
from foosball.geometry import default_table_path
from foosball.wire.catalogue import Agent
from foosball.wire.codec import new_key
from tests.agents.boards import shipped_board_copy
from tests.conftest import needs_root_netns

FOOSBALL = [sys.executable, "-m", "foosball.cli"]


def board_file(tmp_path: Path, extra: str = "") -> Path:
    key = tmp_path / "wire.key"
    key.write_text(new_key())
    key.chmod(0o600)
    path = tmp_path / "board.toml"
    path.write_text(f"""
[wire]
transport = "udp"
key_file = "{key}"

[table]
geometry = "{default_table_path()}"

[pole_driver]
limit_policy = "reject"
{extra}
""")
    return path


def test_board_config_reads_wire_table_and_agent_sections(tmp_path):
    board = load_board_config(board_file(tmp_path))
    assert board.wire.transport == "udp"
    assert len(board.table.rods) == 8
    assert board.settings("pole_driver") == PoleDriverConfig(limit_policy="reject")
    with pytest.raises(BoardConfigError, match=r"no \[strategy\] section"):
        board.settings("strategy")


def test_board_config_names_a_bad_wire_key(tmp_path):
    path = board_file(tmp_path)
    path.write_text(path.read_text().replace('transport = "udp"', 'transprot = "udp"'))
    with pytest.raises(BoardConfigError, match="transprot"):
        load_board_config(path)


def test_board_config_reads_the_safety_section(tmp_path):
    path = board_file(tmp_path, "")
    path.write_text(path.read_text() + """
[safety]
startup_grace_s = 3.0
[safety.deadlines]
strategy = 0.03
motor_driver = 0.02
""")
    board = load_board_config(path)
    assert board.safety.startup_grace_s == 3.0
    assert board.safety.deadlines == {Agent.STRATEGY: 0.03, Agent.MOTOR_DRIVER: 0.02}
    assert "safety" not in board.agents


def test_board_config_names_a_bad_safety_key(tmp_path):
    path = board_file(tmp_path)
    path.write_text(path.read_text() + "\n[safety.deadlines]\nstrategie = 0.03\n")
    with pytest.raises(BoardConfigError, match="no agent 'strategie'"):
        load_board_config(path)


@needs_root_netns()
def test_pole_driver_service_heartbeats_on_the_lan_and_stops_on_sigterm(tmp_path):
    ns = f"fb-agent-{tmp_path.name[-8:]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for command in (["link", "set", "lo", "up"],
                        ["route", "add", "224.0.0.0/4", "dev", "lo"]):
            subprocess.run(["ip", "-n", ns, *command], check=True)
        config = board_file(tmp_path)
        key = str(tmp_path / "wire.key")
        in_ns = ["ip", "netns", "exec", ns]
        agent = subprocess.Popen([*in_ns, *FOOSBALL, "agent", "run", "pole_driver",
                                  "--config", str(config)])
        dump = subprocess.run(
            [*in_ns, *FOOSBALL, "wire", "dump", "--transport", "udp", "--key-file", key,
             "--json", "--count", "5", "--timeout", "30"],
            capture_output=True, text=True, timeout=60, check=True)
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    records = [json.loads(line) for line in dump.stdout.splitlines()]
    beats = [r for r in records if r.get("type") == "Heartbeat"]
    assert beats and all(r["sender"] == "POLE_DRIVER" for r in beats)


@pytest.mark.parametrize("board_name", ["pole", "vision", "strategy"])
def test_every_image_board_configuration_is_valid_for_its_agents(tmp_path, board_name):
    """The board.toml each image installs must start its agents (geometry path swapped
    for the default table, since /etc/foosball is the board's)."""
    copy = shipped_board_copy(board_name, tmp_path)
    board = load_board_config(copy)
    not_runnable = check_board(board)
    assert not not_runnable
    assert set(board.agents) - set(not_runnable)  # every board runs at least one agent


def test_logging_never_waits_for_a_full_stream() -> None:
    """The journal falls behind when every agent logs one fault at once: an agent's log call
    (the motor driver's latch, in the cycle that sends the quick stop) returns at once while
    its stream is full, and the line is written once the stream drains."""
    import fcntl
    import logging
    import os
    import threading

    from foosball.agent_cli import log_off_the_cycle

    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETFL, os.O_NONBLOCK)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(write_end, b"x" * 4096)  # the journal's socket, full
    fcntl.fcntl(write_end, fcntl.F_SETFL, 0)
    stream = os.fdopen(write_end, "w", buffering=1)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level  # pytest's own, put back after
    listener = log_off_the_cycle(stream)
    try:
        logged = threading.Event()

        def cycle() -> None:
            logging.getLogger("foosball.agents.motor_driver").error("FAULT latched: test")
            logged.set()

        threading.Thread(target=cycle, daemon=True).start()
        assert logged.wait(5.0), "the log call waited for the full stream"
        drained = b""  # the writer thread gets through once the stream drains
        while b"foosball.agents.motor_driver: FAULT latched: test\n" not in drained:
            drained += os.read(read_end, 65536)
    finally:
        listener.stop()
        root.handlers[:] = handlers
        root.setLevel(level)
        stream.close()
        os.close(read_end)
