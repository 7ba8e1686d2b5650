"""The learned goalkeeper's step, in parts: the observation, onnxruntime's run, and the same
network in numpy (microseconds per call here, best of 5 x 3,000; docs/notes/issue-34.md).
Needs the `learning` extra. Run under `flock /tmp/foosball-measure.lock`."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import onnx
from onnx import numpy_helper

from foosball.geometry import default_table
from foosball.learning.policy import Mlp
from foosball.strategy.learned import KeeperObservation, OnnxPolicy, model_path
from foosball.wire.catalogue import BallState, BallStatus, RodId, RodPosition, RodStatus


def best_us(call: Callable[[], object], n: int = 3000) -> float:
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(n):
            call()
        runs.append((time.perf_counter() - started) / n * 1e6)
    return round(min(runs), 1)


def main() -> None:
    path = model_path("goalkeeper.onnx")
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
    numpy_net = Mlp(weights["w1"], weights["b1"], weights["w2"], weights["b2"])
    observe = KeeperObservation(default_table())
    ball = BallState(1_000_000_000, 1, 0.1, 0.02, -3.0, 0.4, (0.0, 0.0, 0.0, 0.0),
                     BallStatus.DETECTED)
    rods = RodStatus(tuple(RodPosition(RodId(i), 0.0, 0.1, 0.0, 0.0) for i in range(4)))
    policy = OnnxPolicy(path)
    observation = observe(ball, rods, 1_005_000_000)
    assert np.allclose(policy(observation), numpy_net(observation), atol=1e-5)
    print("observation us", best_us(lambda: observe(ball, rods, 1_005_000_000)))
    print("onnxruntime run us", best_us(lambda: policy(observation)))
    print("numpy mlp us", best_us(lambda: numpy_net(observation)))


if __name__ == "__main__":
    main()
