"""benchmarks/budget.py runs on tiny counts and fails loudly, naming each agent over budget.
Never asserts a timing: only that the figures are there and the verdict follows the goal."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "budget.py"
TINY = ["--agents", "motor_driver", "supervisory_panel", "--runs", "1", "--cycles", "20",
        "--lan-seconds", "1"]


@pytest.fixture(scope="module")
def budget() -> ModuleType:
    spec = importlib.util.spec_from_file_location("budget", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["budget"] = module
    spec.loader.exec_module(module)
    return module


def test_over_a_tiny_budget_it_fails_naming_every_agent(budget: ModuleType, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    out = tmp_path / "budget.json"
    assert budget.main([*TINY, "--budget-pct", "0.0001", "--json", str(out)]) == 1
    err = capsys.readouterr().err
    assert "OVER BUDGET" in err and "motor_driver" in err and "supervisory_panel" in err
    report = json.loads(out.read_text())
    assert report["over_budget"] == ["motor_driver", "supervisory_panel"]
    motor = report["agents"][0]
    assert motor["board"] == "pole" and motor["share_1ms_pct"] > motor["share_pct"] > 0
    assert 0 < motor["kernel_here_us"] < motor["here_us"]  # the 1 ms kernel: part of a cycle


def test_within_a_huge_budget_it_passes(budget: ModuleType,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert budget.main([*TINY, "--budget-pct", "1e9"]) == 0
    assert "within" in capsys.readouterr().out


def test_every_agent_has_a_board_with_a_factor(budget: ModuleType) -> None:
    boards = budget.load_boards()
    for agent in budget.runtime_load.RIG:
        name, spec = budget.board_of(boards, agent)
        assert spec["factor"] > 0, name
