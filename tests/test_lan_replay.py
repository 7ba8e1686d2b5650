"""The LAN replay the budget uses (benchmarks/runtime_load.py) and the recorder's cost, which
replays the same traffic, run on tiny counts: the traffic is the boards' (ten heartbeat
streams), each agent hears what its shipped board file says it watches, and both scripts
still produce their figures. Never asserts a timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run(script: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return json.loads(out)


def test_the_motor_driver_hears_its_board_mates_heartbeats_and_its_commands_only() -> None:
    report = run("runtime_load.py", "--agent", "motor_driver", "--seconds", "1", "--runs", "1",
                 "--fps", "20")
    motor = report["agents"]["motor_driver"]
    # Heard: nine heartbeat streams of 100 Hz (not its own), the three frame-rate messages,
    # the pole driver's RodStatus and the game state (its own statuses it does not hear).
    # Read: its two mates' heartbeats and the pole driver's MotorCommand (the shipped
    # image-config/pole/board.toml).
    assert motor["frames_per_s"] == 900 + 3 * 20 + 20 + 10
    assert motor["accepted"] == 2 * 100 + 20 and not motor["drops"]


def test_the_pole_driver_hears_every_product_agent_and_not_the_unwatched_ones() -> None:
    pole = run("runtime_load.py", "--agent", "pole_driver", "--seconds", "1", "--runs", "1",
               "--fps", "20")["agents"]["pole_driver"]
    # The five other product agents' heartbeats, RodCommand and MotorStatus; not the
    # recorder's nor the three update agents'.
    assert pole["accepted"] == 5 * 100 + 20 + 20 and not pole["drops"]


def test_the_recorder_cost_runs_on_the_same_traffic() -> None:
    report = run("recorder_cost.py", "--seconds", "1", "--runs", "1", "--fps", "20", "--json")
    assert report["frames_per_s"] > 900 and report["records_per_s"] > 0
