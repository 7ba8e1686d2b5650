from __future__ import annotations

import math

import pytest

from foosball.geometry import default_table
from foosball.strategy.base import BallView, RodView
from foosball.strategy.cover import Interval, covered_length, plan_cover, rod_shadows, shadow
from foosball.strategy.improved import ImprovedStrategy
from foosball.strategy.kick import offset_for_angle
from foosball.strategy.params import KickEngineParams
from foosball.strategy.prediction import BallPoint
from foosball.wire.catalogue import RodId, RodPosition, RodStatus

TABLE = default_table()
GOALKEEPER, DEFENCE, MIDFIELD, ATTACK = TABLE.robot_rods
MOUTH = Interval(-TABLE.field.goal_width / 2, TABLE.field.goal_width / 2)
BLOCK = TABLE.man.foot_width / 2 + TABLE.ball.radius
GOAL_X = -TABLE.field.half_length
AT_REST = [RodView(0.0, 0.0) for _ in range(4)]


def test_shadow_of_a_man_halfway_is_twice_his_width():
    s = shadow(0.0, 0.0, -0.3, 0.0, 0.02, -0.6)
    assert (s.low, s.high) == pytest.approx((-0.04, 0.04))
    assert shadow(0.0, 0.0, 0.3, 0.0, 0.02, -0.6) is None  # not between ball and goal


@pytest.mark.parametrize("ball_y", [-0.25, -0.1, 0.0, 0.12, 0.28])
def test_goalkeeper_and_defence_leave_no_part_of_the_mouth_open(ball_y):
    """A shot from the opponent's attack rod line: together they hide the whole mouth."""
    ball_x = TABLE.rod("human_attack").x - 0.02
    plan = plan_cover(ball_x, ball_y, GOALKEEPER, DEFENCE, GOAL_X, MOUTH, BLOCK, 0.0, 0.0)
    shadows = rod_shadows(GOALKEEPER, plan.goalkeeper_translation, ball_x, ball_y, BLOCK, GOAL_X)
    shadows += rod_shadows(DEFENCE, plan.defence_translation, ball_x, ball_y, BLOCK, GOAL_X)
    assert covered_length(MOUTH, shadows) == pytest.approx(MOUTH.width)
    assert GOALKEEPER.within_travel(plan.goalkeeper_translation)
    assert DEFENCE.within_travel(plan.defence_translation)


def test_cover_uses_the_shadows_already_there():
    ball_x, ball_y = 0.1, 0.0
    alone = plan_cover(ball_x, ball_y, GOALKEEPER, DEFENCE, GOAL_X, MOUTH, BLOCK, 0.0, 0.0)
    fixed = rod_shadows(MIDFIELD, 0.0, ball_x, ball_y, BLOCK, GOAL_X)
    helped = plan_cover(ball_x, ball_y, GOALKEEPER, DEFENCE, GOAL_X, MOUTH, BLOCK, 0.0, 0.0,
                        fixed)
    assert helped.covered > alone.covered


def test_direction_calibration_is_odd_and_monotonic():
    p = KickEngineParams()
    assert offset_for_angle(p, 0.0) == 0.0
    small, large = offset_for_angle(p, math.radians(10)), offset_for_angle(p, math.radians(30))
    assert 0 < small < large
    assert offset_for_angle(p, math.radians(-30)) == -large


def opponents(translation: float, rotation: float = 0.0) -> RodStatus:
    return RodStatus(rods=tuple(RodPosition(RodId(i), translation, rotation, 0.0, 0.0)
                                for i in range(4)))


def test_aim_avoids_the_opponents_men_and_finds_the_goal():
    s = ImprovedStrategy(TABLE)
    s.observe_opponents(opponents(0.0))  # every opponent man centred
    angle = s.aim_angle(ATTACK.x + 0.03, 0.0)
    assert angle != 0.0  # straight on hits the centred goalkeeper
    slope = math.tan(angle)
    keeper_y = 0.0 + slope * (TABLE.rod("human_goalkeeper").x - ATTACK.x - 0.03)
    assert abs(keeper_y) > BLOCK


def test_lifted_opponents_hide_nothing():
    s = ImprovedStrategy(TABLE)
    s.observe_opponents(opponents(0.0, rotation=-1.5))
    assert s.aim_angle(ATTACK.x + 0.03, 0.0) == 0.0


def test_threat_origin_is_where_the_ball_meets_the_next_opponent_rod():
    s = ImprovedStrategy(TABLE)
    human_attack = TABLE.rod("human_attack")
    b = BallPoint(0.0, human_attack.x + 0.2, 0.1, -1.0, -0.25)
    x, y = s.threat_origin(b)
    assert x == pytest.approx(human_attack.x - s.contact_ahead)
    assert y == pytest.approx(0.05, abs=0.002)
    assert s.threat_origin(BallPoint(0.0, 0.1, 0.2, 0.0, 0.0)) == (0.1, 0.2)


def test_a_shot_on_its_way_sends_goalkeeper_and_defence_to_its_crossing():
    s = ImprovedStrategy(TABLE)
    ball = BallView(-0.28, 0.0, -3.0, -0.6)  # past the opponent's attack rod, towards goal
    s.decide(0.0, ball, AT_REST)
    plans = s.plans_last
    for i, rod in ((0, GOALKEEPER), (1, DEFENCE)):
        crossing = 0.0 + (-0.6 / -3.0) * (rod.x - (-0.28))
        assert plans[i].mode == "block"
        assert plans[i].y == pytest.approx(crossing, abs=0.01)


def test_a_slow_ball_in_front_of_the_attack_is_shot():
    s = ImprovedStrategy(TABLE)
    ball = BallView(ATTACK.x + 0.035, 0.0, 0.0, 0.0)
    here = [RodView(0.0, 0.0)] * 4
    for k in range(3):
        s.decide(k * 0.005, ball, here)
    assert s.kicks[3].active


def test_rods_with_our_ball_coming_through_from_behind_lift_their_feet():
    s = ImprovedStrategy(TABLE)
    ball = BallView(DEFENCE.x + 0.1, 0.0, 3.0, 0.0)  # our shot, behind midfield and attack
    out = s.decide(0.0, ball, AT_REST)
    assert out[2].rotation < -1.0 and out[3].rotation < -1.0
