"""Aiming past the human's men the camera measures (HumanRods), behind `aim_through_gaps`."""

from __future__ import annotations

import math

from foosball.agents.strategy import StrategyAgentCore
from foosball.geometry import default_table
from foosball.runtime import Inputs
from foosball.runtime.latch import SafetyView
from foosball.strategy.improved import ImprovedStrategy
from foosball.strategy.params import load_params, replace
from foosball.wire.catalogue import HumanRod, HumanRods, RodId

TABLE = default_table()
ATTACK = TABLE.robot_rods[3]
THEIR_GOALKEEPER = TABLE.human_rods[0]


def gap_aiming() -> ImprovedStrategy:
    params = load_params()
    return ImprovedStrategy(TABLE, replace(params, improved=replace(params.improved,
                                                                     aim_through_gaps=True)))


def rods(goalkeeper_y: float, rotation: float = 0.0) -> HumanRods:
    """The human's goalkeeper with a man at `goalkeeper_y` (table frame); his other rods far
    to one side, feet lifted."""
    man = THEIR_GOALKEEPER.men_y(0.0)[0]
    return HumanRods(1, 1, (
        HumanRod(RodId(0), goalkeeper_y - man, rotation, THEIR_GOALKEEPER.men,
                 abs(rotation) > 0.35),
        *(HumanRod(RodId(i), 0.0, 1.5, 3, True) for i in (1, 2, 3)),
    ))


def test_off_by_default_and_then_the_aim_ignores_the_measured_men():
    s = ImprovedStrategy(TABLE)
    assert not s.wants_human_rods
    assert s.aim_angle(ATTACK.x + 0.03, 0.0) == 0.0


def test_a_man_in_the_straight_path_turns_the_aim_past_him():
    s = gap_aiming()
    assert s.wants_human_rods
    s.observe_human_rods(rods(goalkeeper_y=0.0))
    origin_x = ATTACK.x + 0.03
    angle = s.aim_angle(origin_x, 0.0)
    assert angle != 0.0
    at_keeper = math.tan(angle) * (THEIR_GOALKEEPER.x - origin_x)
    assert abs(at_keeper) > s.block_half  # passes the man
    at_goal = math.tan(angle) * (TABLE.field.half_length - origin_x)
    assert abs(at_goal) < TABLE.field.goal_width / 2  # and still ends in the mouth


def test_a_man_beside_the_path_or_with_his_feet_up_changes_nothing():
    s = gap_aiming()
    s.observe_human_rods(rods(goalkeeper_y=0.09))
    assert s.aim_angle(ATTACK.x + 0.03, 0.0) == 0.0
    s.observe_human_rods(rods(goalkeeper_y=0.0, rotation=1.4))
    assert s.aim_angle(ATTACK.x + 0.03, 0.0) == 0.0


def test_the_strategy_agent_hands_human_rods_on_only_to_a_strategy_that_wants_them():
    for strategy, wanted in ((ImprovedStrategy(TABLE), False), (gap_aiming(), True)):
        core = StrategyAgentCore(strategy, TABLE)
        core.step(Inputs(0.0, (rods(goalkeeper_y=0.0),), safety=SafetyView(faulted=False),
                         wall_ns=0))
        assert (strategy.human_men is not None) is wanted
