from __future__ import annotations

import math

import pytest

from foosball.geometry import default_table
from foosball.strategy.base import BallView, RodView
from foosball.strategy.behind import sweep_translations
from foosball.strategy.cover import Interval, covered_length, plan_cover, rod_shadows, shadow
from foosball.strategy.improved import ImprovedStrategy
from foosball.strategy.kick import offset_for_angle
from foosball.strategy.params import KickEngineParams
from foosball.strategy.prediction import BallPoint
from foosball.strategy.rods import men_offsets
from foosball.wire.catalogue import BallState, BallStatus, RodId, RodPosition, RodStatus

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


def test_aim_is_straight_when_the_line_reaches_the_goal_and_angled_when_not():
    s = ImprovedStrategy(TABLE)
    assert s.aim_angle(ATTACK.x + 0.03, 0.02) == 0.0
    angle = s.aim_angle(ATTACK.x + 0.03, 0.25)  # off to the side: angle in
    assert angle < 0.0
    goal_y = 0.25 + math.tan(angle) * (TABLE.field.half_length - ATTACK.x - 0.03)
    assert abs(goal_y) < TABLE.field.goal_width / 2


def test_the_strategy_does_not_ask_for_the_opponents_rods():
    """The rig measures no human rod: the simulator must not be able to hand them over."""
    assert not hasattr(ImprovedStrategy(TABLE), "observe_opponents")


def play_behind(s: ImprovedStrategy, ball: BallView, here: list[RodView], steps: int,
                start: float = 0.0) -> list:  # type: ignore[type-arg]
    out = []
    for k in range(steps):
        out.append(s.decide(start + k * 0.005, ball, here))
    return out


def test_a_ball_behind_the_attack_rod_is_stepped_around_wound_up_over_and_struck():
    s = ImprovedStrategy(TABLE)
    ball = BallView(ATTACK.x - 0.02, 0.0, 0.0, 0.0)  # behind the middle man's feet
    here = [RodView(0.0, 0.0)] * 4
    aside = play_behind(s, ball, here, 1)[-1][3]
    clear = s.block_half
    assert all(abs(y - ball.y) >= clear for y in ATTACK.men_y(aside.translation))
    assert abs(aside.rotation) < 0.1  # feet down while stepping aside: the ball stays
    here[3] = RodView(aside.translation, 0.0)
    here[3] = RodView(aside.translation, 0.2)  # feet a little forward: still wind up backwards
    lift = play_behind(s, ball, here, 1, 0.005)[-1][3]
    assert lift.rotation < -2.5 and lift.translation == pytest.approx(aside.translation)
    assert not s.kicks[3].active
    here[3] = RodView(aside.translation, -2.9)  # feet up behind
    align = play_behind(s, ball, here, 1, 0.01)[-1][3]
    assert any(abs(y - ball.y) < 0.02 for y in ATTACK.men_y(align.translation))
    here[3] = RodView(align.translation, -2.9)
    play_behind(s, ball, here, 1, 0.015)
    assert s.kicks[3].active  # over the ball: strike


def test_a_ball_held_past_half_the_limit_is_shot_instead_of_stopped():
    ball = BallView(MIDFIELD.x + 0.045, 0.0, -0.1, 0.3)  # rolling back slowly: calm stops it

    def kicks_after(s: ImprovedStrategy, start: float) -> bool:
        here = [RodView(0.0, 0.0)] * 4
        s.decide(start, ball, here)
        plan = s.plans_last[2]
        wanted = plan.translation if plan.translation is not None else 0.0
        here[2] = RodView(wanted, 0.0)  # the rod got where it was sent
        s.decide(start + 0.005, ball, here)
        return s.kicks[2].active

    assert not kicks_after(ImprovedStrategy(TABLE), 0.0)
    rushed = ImprovedStrategy(TABLE)
    rushed.clock.update(ball.x, 0.0)
    assert kicks_after(rushed, 6.0)  # 6 s of the 5-man rod's 10


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
    # midfield: the ball is there before its feet could swing back, so they swing forward
    # (back, they would knock it back at our goal); attack: back, the ball is far
    assert out[2].rotation > 1.0 and out[3].rotation < -1.0


@pytest.mark.parametrize("sideways", [0.0, 0.27])
def test_rods_ahead_of_our_clear_step_out_of_its_path_and_the_clear_waits_for_them(sideways):
    """The ball before our goalkeeper, at rest (the referee's restart) or rolling slowly
    away (issue 30: cleared at 7.6 m/s into our own 2-man rod, back in 90 ms later): the
    2-man rod's men in the clear's path step aside, feet down (or it holds still, out of
    the path); midfield and attack lift their feet (the kick keeps its line only roughly);
    the goalkeeper does not strike before the path is clear."""
    s = ImprovedStrategy(TABLE)
    ball = BallView(GOALKEEPER.x + 0.035, 0.0, 0.0, sideways)
    s.decide(0.0, ball, AT_REST)
    plans = s.plans_last
    assert plans is not None
    assert plans[0].shot is not None and plans[0].kick is None  # path not clear yet
    line = plans[0].shot
    clear = BLOCK + 0.01
    path_y = line.y + line.slope * (DEFENCE.x - line.x)
    in_path = any(abs(y - path_y) < clear for y in DEFENCE.men_y(0.0))
    defence = plans[1]
    assert defence.mode == "control" and defence.translation is not None
    assert all(abs(y - path_y) >= clear for y in DEFENCE.men_y(defence.translation))
    assert in_path or defence.translation == 0.0  # out of the path: holds still
    assert sideways or defence.translation == 0.0  # the 2-man rod's men at +-120 mm
    assert plans[2].mode == "lift" and plans[3].mode == "lift"
    assert plans[2].rotation < -1.0 and plans[3].rotation < -1.0  # back and up
    here = [RodView(plans[0].translation, 0.0), RodView(defence.translation, 0.0),
            RodView(0.0, -1.5), RodView(0.0, -1.5)]
    s.decide(0.005, ball, here)  # keeper in line, the path clear
    assert s.plans_last is not None and s.plans_last[0].kick is not None


def test_a_ball_rolling_along_the_opponents_rod_is_covered_where_it_will_be_shot_from():
    s = ImprovedStrategy(TABLE)
    human_attack = TABLE.rod("human_attack")
    b = BallPoint(0.0, human_attack.x - 0.035, 0.0, 0.0, 0.5)  # a pull under way
    x, y = s.threat_origin(b)
    assert x == pytest.approx(b.x, abs=0.002)
    assert 0.0 < y < 0.05  # a moment ahead, not where it would come to rest


def test_rotation_targets_stay_near_the_home_turn_for_the_no_spinning_rule():
    unwound = ImprovedStrategy._unwound
    assert unwound(-3.0, -0.2) == pytest.approx(-3.0)
    assert unwound(-3.0, 3.1) == pytest.approx(-3.0 + 2 * math.pi)  # same pose, nearby
    assert unwound(0.0, 4.0) == pytest.approx(0.0)  # far round: back, not on to a full turn
    assert unwound(0.0, -4.5) == pytest.approx(0.0)


def test_no_kick_starts_from_a_rod_a_turn_round():
    s = ImprovedStrategy(TABLE)
    ball = BallView(ATTACK.x + 0.035, 0.0, 0.0, 0.0)
    here = [RodView(0.0, 0.0)] * 3 + [RodView(0.0, 2 * math.pi)]
    for k in range(3):
        s.decide(k * 0.005, ball, here)
    assert not s.kicks[3].active


def test_a_slow_ball_lost_under_our_own_man_is_still_played():
    s = ImprovedStrategy(TABLE)
    ball = BallView(MIDFIELD.x + 0.003, -0.263, 0.0, -0.05)  # under the midfield, by a man
    here = [RodView(0.0, 0.0), RodView(0.0, 0.0), RodView(MIDFIELD.travel_min, 0.0),
            RodView(0.0, 0.0)]
    s.decide(0.0, ball, here)
    for k in range(1, 4):
        s.decide(k * 0.005, None, here)  # the tracker lost it under the man
    assert s.plans_last[2].mode == "control"  # stepping aside to play it, not idle
    assert s.last_ball.speed == 0.0


def test_a_ball_lost_rolling_along_our_rod_is_swept_for_with_strikes_along_it():
    def status(translation: float, rotation: float) -> RodStatus:
        poses = [(0.0, 0.0), (0.0, 0.0), (translation, rotation), (0.0, 0.0)]
        return RodStatus(tuple(RodPosition(RodId(i), t, r, 0.0, 0.0)
                               for i, (t, r) in enumerate(poses)))

    s = ImprovedStrategy(TABLE)
    lost = BallState(0, 0, 0.0, 0.0, 0.0, 0.0, (1e6,) * 4, BallStatus.LOST)
    seen = BallState(0, 0, MIDFIELD.x + 0.002, 0.1, 0.0, 0.7, (0.0,) * 4, BallStatus.DETECTED)
    s.step(seen, status(0.0, 0.0), 0)
    s.step(lost, status(0.0, 0.0), 5_000_000)  # rolling on, under the rod's axis: unseen
    assert s.plans_last[2].rotation == s.profile.windup_angle  # feet up before moving
    assert s.plans_last[2].kick is None
    order = sweep_translations(MIDFIELD, 0.1)  # nearest the last seen y first
    assert order[0] == min(order, key=lambda t: min(abs(t + o - 0.1)
                                                    for o in men_offsets(MIDFIELD)))
    step = (MIDFIELD.travel_max - MIDFIELD.travel_min) / (len(order) - 1)
    assert step <= 0.044 + 1e-9  # a foot strikes a ball within 29 mm of its centre
    struck = []
    for k, translation in enumerate(order):
        s.step(lost, status(translation, s.profile.windup_angle), (2 + k) * 5_000_000)
        struck.append(s.plans_last[2].kick is not None)
        s.kicks[2].phase = s.kicks[2].phase.IDLE  # as if the strike had been and gone
    assert all(struck)  # one strike at each translation of the sweep, in turn
