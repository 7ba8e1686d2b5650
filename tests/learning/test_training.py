"""Issue 34: training reproducible from one command with a seed. The wall-time bound cuts a
run where the machine's speed says; the run's record names the command that trains the same
weights without the bound."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="needs gymnasium (the learning extra)")
pytest.importorskip("onnx", reason="needs onnx (the learning extra) to export")

from foosball.learning import train

TINY = ["--dagger-rounds", "1", "--round-episodes", "2", "--epochs", "2", "--es-pairs", "1",
        "--es-episodes", "1", "--hidden", "4", "--jobs", "1"]


def _train(argv: list[str], out: Path) -> dict:
    parser = argparse.ArgumentParser()
    train.add_arguments(parser)
    return train.train(parser.parse_args([*argv, "--out", str(out)]))


def _weights(out: Path) -> list[np.ndarray]:
    with np.load(out / "goalkeeper.npz") as saved:
        return [saved[name] for name in sorted(saved.files)]


def test_a_run_cut_by_its_time_bound_is_trained_again_by_its_reproduce_command(
        tmp_path: Path) -> None:
    cut = _train([*TINY, "--seed", "3", "--es-iterations", "5", "--minutes", "0"],
                 tmp_path / "cut")
    assert cut["es_iterations_run"] == 0  # the bound was reached before the first iteration
    command = shlex.split(cut["reproduce_command"])
    assert command[:3] == ["foosball", "learn", "train"]
    assert "--es-iterations" in command and command[command.index("--es-iterations") + 1] == "0"
    again = _train(command[3:], tmp_path / "again")
    assert again["es_iterations_run"] == 0
    for a, b in zip(_weights(tmp_path / "cut"), _weights(tmp_path / "again"), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_same_seed_trains_the_same_weights_and_another_seed_does_not(
        tmp_path: Path) -> None:
    argv = [*TINY, "--es-iterations", "1", "--minutes", "inf"]
    _train([*argv, "--seed", "1"], tmp_path / "a")
    _train([*argv, "--seed", "1"], tmp_path / "b")
    _train([*argv, "--seed", "2"], tmp_path / "c")
    a, b, c = (_weights(tmp_path / name) for name in "abc")
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, z) for x, z in zip(a, c, strict=True))
