"""`foosball learn speed`: the environment's steps per second against the simulator's own.

The simulator's own speed: the same battery episodes (`lab.shots.battery_match`, improved
against the scripted pro, randomised tables) played by `Match.run`, in frames per second
(one frame is one ball state, as one environment step is). The environment: the same count
of episodes stepped with a fixed action, alone and vectorised (Gymnasium's
`make_vec`, sync and async with `--envs` copies); and `foosball/Team-v0` alone. Wall
time by `time.perf_counter`: run it under `flock /tmp/foosball-measure.lock` and say the
load beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np


def simulator_rate(episodes: int, seed: int) -> float:
    from foosball.geometry import default_table
    from foosball.lab.shots import KINDS, battery_match
    from foosball.strategy.improved import ImprovedStrategy

    table = default_table()
    frames, spent = 0, 0.0
    for k in range(episodes):
        match, _ = battery_match(ImprovedStrategy(table), table, 9.0, seed + k,
                                 KINDS[k % len(KINDS)], randomise=True)
        started = time.perf_counter()
        match.run()
        spent += time.perf_counter() - started
        frames += round(match.duration / match.params.frame_period)
    return frames / spent


def env_rate(episodes: int, seed: int, envs: int = 1, mode: str = "",
             env_id: str = "foosball/Goalkeeper-v0") -> float:
    import gymnasium

    import foosball.learning  # noqa: F401  (registers the environment)

    if not mode:
        env = gymnasium.make(env_id)
        action = np.zeros(env.action_space.shape, np.float32)
        steps, spent = 0, 0.0
        for k in range(episodes):
            env.reset(seed=seed + k)
            started = time.perf_counter()
            done = False
            while not done:
                _, _, terminated, truncated, _ = env.step(action)
                steps += 1
                done = terminated or truncated
            spent += time.perf_counter() - started
        env.close()
        return steps / spent
    vec = gymnasium.make_vec("foosball/Goalkeeper-v0", num_envs=envs, vectorization_mode=mode)
    vec.reset(seed=seed)
    actions = np.zeros((envs, 2), np.float32)
    steps_each = 600 * episodes // envs
    started = time.perf_counter()
    for _ in range(steps_each):
        vec.step(actions)  # an ended copy resets itself (the next step)
    spent = time.perf_counter() - started
    vec.close()
    return steps_each * envs / spent


def measure(episodes: int, seed: int, envs: int) -> dict[str, Any]:
    simulator = simulator_rate(episodes, seed)
    single = env_rate(episodes, seed)
    return {
        "episodes": episodes, "seed": seed, "load_before": os.getloadavg(),
        "simulator_frames_per_s": round(simulator),
        "env_steps_per_s": round(single),
        "env_vs_simulator": round(single / simulator, 2),
        f"sync_vector_{envs}_steps_per_s": round(env_rate(episodes, seed, envs, "sync")),
        f"async_vector_{envs}_steps_per_s": round(env_rate(episodes, seed, envs, "async")),
        # the whole team (20 s matches from the kick-off; improved plans nothing there)
        "team_env_steps_per_s": round(env_rate(max(1, episodes // 5), seed,
                                               env_id="foosball/Team-v0")),
        "load_after": os.getloadavg(),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=500)
    parser.add_argument("--envs", type=int, default=2)
    parser.set_defaults(func=lambda args: (print(json.dumps(
        measure(args.episodes, args.seed, args.envs), indent=1)), 0)[1])
