"""Learning on the simulated table (laptop side; no board package imports it).

`import foosball.learning` registers the Gymnasium environments (`gymnasium.make(
"foosball/Goalkeeper-v0")`, `env`); `train` trains the goalkeeper policy and exports it to
ONNX (`policy`), which the strategy agent runs (`foosball.strategy.learned`). Needs the
`learning` extra (gymnasium; onnx to export, onnxruntime to run).
"""

from __future__ import annotations

import contextlib

GOALKEEPER_ID = "foosball/Goalkeeper-v0"


def register_envs() -> None:
    """Register the environments with Gymnasium (again is harmless)."""
    import gymnasium

    if GOALKEEPER_ID not in gymnasium.registry:
        gymnasium.register(id=GOALKEEPER_ID, entry_point="foosball.learning.env:GoalkeeperEnv")


with contextlib.suppress(ModuleNotFoundError):  # without gymnasium the policy tools import
    register_envs()
