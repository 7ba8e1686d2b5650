"""Learning on the simulated table (laptop side; no board package imports it).

`import foosball.learning` registers the Gymnasium environments (`env`):
`gymnasium.make("foosball/Goalkeeper-v0")` and `"foosball/Team-v0"`. `train` trains the
goalkeeper policy and exports it to ONNX (`policy`), which the strategy agent runs
(`foosball.strategy.learned`). Needs the `learning` extra (gymnasium; onnx to export,
onnxruntime to run).
"""

from __future__ import annotations

import contextlib

GOALKEEPER_ID = "foosball/Goalkeeper-v0"
TEAM_ID = "foosball/Team-v0"


def register_envs() -> None:
    """Register the environments with Gymnasium (again is harmless)."""
    import gymnasium

    for env_id, entry in ((GOALKEEPER_ID, "GoalkeeperEnv"), (TEAM_ID, "TeamEnv")):
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=f"foosball.learning.env:{entry}")


with contextlib.suppress(ModuleNotFoundError):  # without gymnasium the policy tools import
    register_envs()
