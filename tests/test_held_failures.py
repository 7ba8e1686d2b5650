"""tools/held-failures: a failed acceptance case is run once more only when the host held a
real-time probe off its CPU during it (tools/host-stalls' holds log), and only when every
failed case had such a hold. Read from a real Robot Framework run of a small suite."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "held-failures"
SUITE = """*** Test Cases ***
Passes
    Sleep    0.1 s
Fails First
    Sleep    2 s
    Fail    the drives stopped
Fails Second
    Sleep    2 s
    Fail    no heartbeat
"""


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, float]]:
    """output.xml of the suite, and when (wall clock) each test began."""
    from robot.api import ExecutionResult

    folder = tmp_path_factory.mktemp("robot")
    (folder / "suite.robot").write_text(SUITE)
    subprocess.run([sys.executable, "-m", "robot", "--outputdir", str(folder), "--log", "NONE",
                    "--report", "NONE", "--console", "none", str(folder / "suite.robot")],
                   check=False)
    xml = folder / "output.xml"
    tests = ExecutionResult(str(xml)).suite.tests
    return xml, {test.name: test.start_time.timestamp() for test in tests}


def held(output: Path, holds: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), str(output), str(holds)],
                          capture_output=True, text=True, check=False)


def hold_line(end_wall: float, late_ms: float) -> str:
    return json.dumps({"end_wall": end_wall, "late_ms": late_ms,
                       "thread": "real-time thread on CPU 1"}) + "\n"


def test_every_failed_case_in_a_hold_is_run_again(output: tuple[Path, dict[str, float]],
                                                  tmp_path: Path) -> None:
    xml, began = output
    holds = tmp_path / "holds"
    # one hold in each failing case (a line cut short by the probe's end is skipped)
    holds.write_text(hold_line(began["Fails First"] + 0.3, 62.0)
                     + hold_line(began["Fails Second"] + 0.3, 98.0) + '{"end_wall": ')
    result = held(xml, holds)
    assert result.returncode == 0, result.stdout
    assert "Fails First: failed in a host hold: real-time thread on CPU 1 late 62 ms" in (
        result.stdout)
    assert "Fails Second: failed in a host hold: real-time thread on CPU 1 late 98 ms" in (
        result.stdout)


def test_a_failed_case_without_a_hold_runs_nothing_again(
        output: tuple[Path, dict[str, float]], tmp_path: Path) -> None:
    xml, began = output
    holds = tmp_path / "holds"
    # a hold in the first failing case, and one in the passing case before it
    holds.write_text(hold_line(began["Passes"] + 0.05, 70.0)
                     + hold_line(began["Fails First"] + 0.3, 62.0))
    result = held(xml, holds)
    assert result.returncode == 1
    assert "Fails Second: no logged host hold during it" in result.stdout
    assert held(xml, tmp_path / "absent").returncode == 1  # no holds logged at all
