"""The goalkeeper network: its imitation fit learns, its ONNX export computes the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from foosball.learning.policy import Mlp


def test_the_fit_learns_a_teachers_actions() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (2000, 6)).astype(np.float32)
    y = np.tanh(x[:, :2] * 0.8).astype(np.float32)
    mlp = Mlp.create(6, 16, 2, rng)
    before = float(np.mean((mlp(x) - y) ** 2))
    after = mlp.fit(x, y, rng, epochs=20)
    assert after < before / 10


def test_the_onnx_export_runs_the_same_function(tmp_path: Path) -> None:
    pytest.importorskip("onnx", reason="needs onnx (the learning extra) to export")
    pytest.importorskip("onnxruntime", reason="needs onnxruntime to run the export")
    from foosball.learning.policy import export_onnx
    from foosball.strategy.learned import OnnxPolicy

    rng = np.random.default_rng(1)
    mlp = Mlp.create(38, 32, 2, rng)
    mlp.b2 += 0.3  # not all zero: a swapped input or bias would show
    export_onnx(mlp, tmp_path / "k.onnx")
    policy = OnnxPolicy(tmp_path / "k.onnx")
    for _ in range(20):
        observation = rng.normal(0, 1, 38).astype(np.float32)
        assert np.allclose(policy(observation), mlp(observation), atol=1e-5)
