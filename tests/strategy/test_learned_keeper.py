"""The learned goalkeeper as the strategy runs it: observation, action within the pole
driver's limits, the parameter file's choice, the shipped model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foosball.geometry import default_table
from foosball.strategy.learned import (
    OBS_SIZE,
    ROTATION_RANGE,
    KeeperObservation,
    LearnedKeeperStrategy,
    keeper_target,
    model_path,
    target_action,
)
from foosball.strategy.params import ParameterError, load_params, parse_params
from foosball.strategy.registry import strategy_factory
from foosball.wire.catalogue import BallState, BallStatus, RodId, RodPosition, RodStatus


def ball(x: float, y: float, vx: float, vy: float, status: BallStatus = BallStatus.DETECTED,
         capture_ns: int = 1_000_000_000) -> BallState:
    return BallState(capture_ns, 1, x, y, vx, vy, (0.0, 0.0, 0.0, 0.0), status)


RODS = RodStatus(tuple(RodPosition(RodId(i), 0.0, 0.0, 0.0, 0.0) for i in range(4)))


def test_actions_stay_within_the_pole_drivers_limits() -> None:
    rod = default_table().robot_rods[0]
    for a in (-5.0, -1.0, 0.0, 1.0, 5.0):
        target = keeper_target(np.array([a, a]), rod)
        assert rod.travel_min <= target.translation <= rod.travel_max
        assert abs(target.rotation) <= ROTATION_RANGE < 2 * math.pi
    back = keeper_target(target_action(keeper_target([0.25, -0.5], rod), rod), rod)
    assert back.translation == pytest.approx(keeper_target([0.25, -0.5], rod).translation)
    assert back.rotation == pytest.approx(-0.5 * ROTATION_RANGE)


def test_the_observation_reads_the_ball_its_age_and_where_it_crosses_our_line() -> None:
    table = default_table()
    observe = KeeperObservation(table)
    keeper_x = table.robot_rods[0].x
    seen = observe(ball(0.0, 0.05, -2.0, 0.0), RODS, 1_010_000_000)
    assert seen.shape == (OBS_SIZE,) and seen[4] == 1.0 and seen[6] == 0.0
    assert seen[7] == pytest.approx(0.01 / 0.05)  # 10 ms old
    assert seen[8] == pytest.approx(0.05 / table.field.half_width, rel=1e-5)
    assert seen[9] == pytest.approx(-keeper_x / 2.0, rel=1e-5)  # (0 - x) / -2 m/s, over 1 s
    lost = observe(ball(0.0, 0.05, -2.0, 0.0, BallStatus.LOST), RODS, 1_010_000_000)
    assert lost[6] == 1.0 and not lost[:4].any()


class Fixed:
    def __call__(self, observation: np.ndarray) -> np.ndarray:
        return np.array([0.5, -0.25])


def test_the_goalkeeper_takes_the_policys_target_and_the_others_improveds() -> None:
    table = default_table()
    learned = LearnedKeeperStrategy(table, policy=Fixed())
    improved = strategy_factory("improved")(table, 0)
    command = learned.step(ball(0.1, 0.02, -3.0, 0.4), RODS, 1_005_000_000)
    reference = improved.step(ball(0.1, 0.02, -3.0, 0.4), RODS, 1_005_000_000)
    assert command.rods[0] == keeper_target([0.5, -0.25], table.robot_rods[0])
    assert command.rods[1:] == reference.rods[1:]


def test_the_parameter_file_chooses_who_keeps_goal() -> None:
    assert load_params().learned.goalkeeper == "improved"
    policy = parse_params({"learned": {"goalkeeper": "policy"}})
    with pytest.raises(ParameterError, match="goalkeeper"):
        parse_params({"learned": {"goalkeeper": "robot"}})
    pytest.importorskip("onnxruntime", reason="needs onnxruntime to run the shipped model")
    chosen = strategy_factory("improved")(default_table(), 0, policy)
    assert isinstance(chosen, LearnedKeeperStrategy)
    assert not isinstance(strategy_factory("improved")(default_table(), 0), LearnedKeeperStrategy)


def test_the_shipped_model_runs_and_answers_within_the_action_range() -> None:
    pytest.importorskip("onnxruntime", reason="needs onnxruntime to run the shipped model")
    from foosball.strategy.learned import OnnxPolicy

    policy = OnnxPolicy(model_path(load_params().learned.model))
    action = policy(np.zeros(OBS_SIZE, np.float32))
    assert action.shape == (2,) and np.all(np.abs(action) <= 1.0)
