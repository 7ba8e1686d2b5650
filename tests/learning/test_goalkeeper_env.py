"""foosball/Goalkeeper-v0: Gymnasium's checker, its rewards, its vectorised form."""

from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="needs gymnasium (the learning extra)")

import foosball.learning  # noqa: E402, F401  (registers the environment)
from foosball.learning.env import GoalkeeperEnv  # noqa: E402
from foosball.strategy.learned import OBS_SIZE  # noqa: E402


def test_the_environment_passes_gymnasiums_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("foosball/Goalkeeper-v0")
    check_env(env.unwrapped, skip_render_check=True)
    observation, info = env.reset(seed=1)
    assert observation.shape == (OBS_SIZE,) and info["kind"] in GoalkeeperEnv().kinds


def _episode(env: GoalkeeperEnv, seed: int, action: np.ndarray) -> tuple[float, dict]:
    env.reset(seed=seed)
    total, done, info = 0.0, False, {}
    while not done:
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
    return total, info


def test_a_goal_against_costs_one_and_the_episode_ends_at_three_seconds() -> None:
    # the goalkeeper parked at one end with its feet up: hard shots get in
    env = GoalkeeperEnv(kinds=("rest",), speeds=(14.0, 15.0), randomise=False)
    away = np.array([-1.0, 0.5], np.float32)
    results = [_episode(env, seed, away) for seed in range(6)]
    assert any(info["goals_against"] > 0 for _, info in results)
    for total, info in results:
        assert total == pytest.approx(-info["goals_against"] - 0.5 * info["fouls"])
    assert env.match.world.time == pytest.approx(3.0, abs=0.006)


def test_the_same_seed_plays_the_same_episode() -> None:
    env = GoalkeeperEnv()
    first, _ = env.reset(seed=11)
    steps = [env.step(np.array([0.3, -0.2], np.float32))[0] for _ in range(50)]
    again, _ = env.reset(seed=11)
    assert np.array_equal(first, again)
    assert np.array_equal(steps[-1], [env.step(np.array([0.3, -0.2], np.float32))[0]
                                      for _ in range(50)][-1])


def test_the_vectorised_form_steps_copies_side_by_side() -> None:
    vec = gymnasium.make_vec("foosball/Goalkeeper-v0", num_envs=2, vectorization_mode="sync")
    observations, _ = vec.reset(seed=3)
    assert observations.shape == (2, OBS_SIZE)
    observations, rewards, _, _, _ = vec.step(np.zeros((2, 2), np.float32))
    assert observations.shape == (2, OBS_SIZE) and rewards.shape == (2,)
    vec.close()


def test_the_team_environment_passes_the_checker_and_moves_every_rod() -> None:
    from gymnasium.utils.env_checker import check_env

    from foosball.learning.env import TeamEnv

    check_env(gymnasium.make("foosball/Team-v0").unwrapped, skip_render_check=True)
    env = TeamEnv(duration=1.0)
    env.reset(seed=2)
    action = np.array([1.0, 0.0] * 4, np.float32)  # every rod to the end of its travel
    truncated, steps, info = False, 0, {}
    while not truncated:
        _, _, _, truncated, info = env.step(action)
        steps += 1
    assert 190 <= steps <= 200  # 1 s of ball states at 200 Hz, less the first few's delay
    table = env.table
    for rod in table.robot_rods:
        index = table.rods.index(rod)
        assert env.match.world.rod_pose(index)[0] == pytest.approx(rod.travel_max, abs=0.01)
    assert set(info) == {"goals_for", "goals_against", "fouls", "saves"}
