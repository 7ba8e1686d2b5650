"""Each seed rule (000_6123d8720d00d2c5.txt) on constructed situations."""

from __future__ import annotations

import math

import pytest

from foosball.geometry import default_table
from foosball.strategy.base import BallView, RodView
from foosball.strategy.kick import Phase
from foosball.strategy.params import SeedParams
from foosball.strategy.seed_rules import (
    SeedRodBehaviour,
    Situation,
    classify,
    kick_triggered,
    move_pole,
    time_to_intersection,
)

TABLE = default_table()
GOALKEEPER, DEFENCE, MIDFIELD, ATTACK = TABLE.robot_rods
P = SeedParams()
AT_REST = RodView(translation=0.0, rotation=0.0)


def behaviour(rod=DEFENCE):
    return SeedRodBehaviour(rod, TABLE, P)


@pytest.mark.parametrize(
    ("x_offset", "vx", "expected"),
    [
        (-0.1, -1.0, Situation.BEHIND_AWAY),
        (-0.1, +1.0, Situation.BEHIND_CLOSER),
        (+0.1, +1.0, Situation.FRONT_AWAY),
        (+0.1, -1.0, Situation.FRONT_CLOSER),
        (+0.1, 0.0, Situation.FRONT_CLOSER),  # at rest counts as coming closer
        (-0.1, 0.0, Situation.BEHIND_CLOSER),
    ],
)
def test_the_four_situations(x_offset, vx, expected):
    ball = BallView(DEFENCE.x + x_offset, 0.0, vx, 0.3)
    assert classify(DEFENCE, ball) is expected


def test_team_direction_flips_behind_and_front():
    ball = BallView(DEFENCE.x + 0.1, 0.0, -1.0, 0.0)
    assert classify(DEFENCE, ball, forward=-1) is Situation.BEHIND_CLOSER
    assert classify(DEFENCE, BallView(DEFENCE.x + 0.1, 0, 1.0, 0), forward=-1) is (
        Situation.BEHIND_AWAY
    )


def test_rule_1_behind_moving_away_takes_no_action():
    b = behaviour()
    first = b.step(0.0, BallView(DEFENCE.x + 0.6, 0.1, -1.0, 0.0), AT_REST)  # rule 4 positions
    ball = BallView(DEFENCE.x - 0.1, -0.2, -2.0, 0.5)  # behind, going to our goal
    held = b.step(0.01, ball, AT_REST)
    assert b.last_situation is Situation.BEHIND_AWAY
    assert held == first  # the previous command, unchanged
    assert not b.kick.active


def test_rule_2_behind_coming_closer_passes_through_and_moves_pole():
    b = behaviour()
    ball = BallView(DEFENCE.x - 0.1, 0.0, 2.0, 1.0)  # behind, coming; crosses at y = 0.05
    out = b.step(0.0, ball, AT_REST)
    assert b.last_situation is Situation.BEHIND_CLOSER
    assert out.rotation == pytest.approx(math.radians(-90))
    men = DEFENCE.men_y(out.translation)
    assert min(abs(m - 0.05) for m in men) == pytest.approx(0.0, abs=1e-9)
    assert not b.kick.active


def test_rule_3_slow_ball_moving_away_in_reach_is_kicked():
    b = behaviour()
    ball = BallView(DEFENCE.x + 0.03, 0.0, 0.005, 0.0)  # slow, in front, 3 cm < 5 cm
    b.step(0.0, ball, AT_REST)
    assert b.last_situation is Situation.FRONT_AWAY
    assert b.kick.active


def test_rule_3_slow_ball_out_of_reach_is_not_kicked():
    b = behaviour()
    b.step(0.0, BallView(DEFENCE.x + 0.2, 0.0, 0.005, 0.0), AT_REST)
    assert b.last_situation is Situation.FRONT_AWAY
    assert not b.kick.active


def test_rule_3_fast_ball_moving_away_gets_no_kick():
    b = behaviour()
    b.step(0.0, BallView(DEFENCE.x + 0.03, 0.0, 3.0, 0.0), AT_REST)
    assert not b.kick.active


def test_rule_4_fast_ball_far_away_moves_pole_without_kick():
    b = behaviour()
    ball = BallView(DEFENCE.x + 0.5, 0.1, -1.0, 0.1)  # 0.5 s away; crosses at y = 0.15
    out = b.step(0.0, ball, AT_REST)
    assert b.last_situation is Situation.FRONT_CLOSER
    assert not b.kick.active
    assert out.rotation == 0.0
    assert min(abs(m - 0.15) for m in DEFENCE.men_y(out.translation)) < 1e-9


def test_rule_4_fast_ball_kicks_when_time_to_intersection_is_below_weighted_kick_time():
    limit = P.kick_time * P.latency_factor
    speed = 2.0
    late = BallView(DEFENCE.x + speed * limit * 1.1, 0.0, -speed, 0.0)
    soon = BallView(DEFENCE.x + speed * limit * 0.9, 0.0, -speed, 0.0)
    assert not kick_triggered(DEFENCE, late, P)
    assert kick_triggered(DEFENCE, soon, P)
    b = behaviour()
    b.step(0.0, soon, AT_REST)
    assert b.kick.active


def test_rule_4_slow_ball_kicks_when_closer_than_kick_min_distance():
    near = BallView(DEFENCE.x + P.kick_min_distance * 0.9, 0.05, -0.005, 0.0)
    far = BallView(DEFENCE.x + P.kick_min_distance * 1.1, 0.05, -0.005, 0.0)
    assert kick_triggered(DEFENCE, near, P)
    assert not kick_triggered(DEFENCE, far, P)


def test_move_pole_fast_ball_goes_to_the_trajectory_intersection_with_the_nearest_man():
    ball = BallView(MIDFIELD.x + 0.3, 0.0, -1.0, 0.4)  # crosses at y = 0.12
    target = move_pole(MIDFIELD, TABLE, ball, 0.0, P)
    assert target.from_trajectory
    assert target.y == pytest.approx(0.12)
    assert target.man == 3  # the man at +0.12 when the rod is centred
    assert target.translation == pytest.approx(0.0)


def test_move_pole_intersection_outside_the_table_falls_back_to_projection():
    ball = BallView(DEFENCE.x + 0.4, 0.05, -0.5, 1.0)  # line crosses the rod at y = 0.85
    target = move_pole(DEFENCE, TABLE, ball, 0.0, P)
    assert not target.from_trajectory
    assert target.y == pytest.approx(0.05)


def test_move_pole_slow_ball_uses_projection():
    ball = BallView(DEFENCE.x + 0.4, -0.1, -0.005, 0.005)
    target = move_pole(DEFENCE, TABLE, ball, 0.0, P)
    assert not target.from_trajectory
    assert target.y == pytest.approx(-0.1)


def test_move_pole_clamps_to_the_travel():
    ball = BallView(GOALKEEPER.x + 0.3, 0.3, -0.005, 0.0)
    target = move_pole(GOALKEEPER, TABLE, ball, 0.0, P)
    assert target.translation == pytest.approx(GOALKEEPER.travel_max)


def test_time_to_intersection_is_distance_over_speed():
    ball = BallView(ATTACK.x + 0.2, 0.0, -4.0, 0.0)
    assert time_to_intersection(ATTACK, ball) == pytest.approx(0.05)
    assert time_to_intersection(ATTACK, BallView(ATTACK.x + 0.2, 0, 4.0, 0)) is None


def test_kick_runs_minus_90_then_plus_50_then_0_at_kick_power():
    b = behaviour()
    ball = BallView(DEFENCE.x + 0.02, 0.0, 0.0, 0.0)
    out = b.step(0.0, ball, AT_REST)
    assert b.kick.phase is Phase.WIND_UP
    assert out.rotation == pytest.approx(math.radians(-90))
    assert out.rotation_speed == P.kick_power
    out = b.step(0.01, None, RodView(0.0, math.radians(-89)))
    assert b.kick.phase is Phase.STRIKE
    assert out.rotation == pytest.approx(math.radians(50))
    assert out.rotation_speed == P.kick_power
    out = b.step(0.02, None, RodView(0.0, math.radians(49)))
    assert b.kick.phase is Phase.RETURN
    assert out.rotation == 0.0
    b.step(0.03, None, RodView(0.0, 0.0))
    assert not b.kick.active
