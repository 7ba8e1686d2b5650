"""The goalkeeper's backstop: a ball rolling past the end of his reach and on behind him
into the goal mouth meets the side of his leg, tilted back (issue 30)."""

from __future__ import annotations

import math

import pytest

from foosball.geometry import default_table
from foosball.sim.match import Match
from foosball.strategy.behind import BACKSTOP_MAX, backstop, feet_back_rotation

TABLE = default_table()
KEEPER = TABLE.robot_rods[0]
RADIUS = TABLE.ball.radius
MAN = TABLE.man
LEVER = MAN.rod_height - RADIUS
BLOCK_HALF = MAN.foot_width / 2 + RADIUS
GOAL_X = -TABLE.field.half_length
MOUTH = (-TABLE.field.goal_width / 2, TABLE.field.goal_width / 2)


def _backstop(x: float, y: float, vx: float, vy: float) -> tuple[float, float] | None:
    return backstop(KEEPER, x, y, vx, vy, GOAL_X, MOUTH, BLOCK_HALF, LEVER, MAN.foot_reach)


@pytest.mark.parametrize("behind", [0.005, 0.015, 0.025, 0.035, 0.045, BACKSTOP_MAX])
def test_the_tilted_leg_meets_a_ball_that_far_behind_the_axis(behind):
    """Checked against the simulator's own contact model of a man (an independent oracle:
    the physics' leg and rounded tip)."""
    world = Match("improved", "club", seed=1, duration=1.0).world
    low, high = world.man_interval(feet_back_rotation(behind, LEVER, MAN.foot_reach))
    assert low < -behind < high


def test_a_slow_ball_off_the_side_wall_into_the_corner_of_the_mouth_meets_the_leg():
    """Club seed 3 after the goalkeeper's restart: 0.3 m/s back, 0.69 m/s across, past the
    man's end of travel at the rod's line and into the mouth 95 mm behind it."""
    stop = _backstop(-0.465, 0.32, -0.30, -0.69)
    assert stop is not None
    man, rotation = stop
    assert KEEPER.travel_min <= man <= KEEPER.travel_max
    assert -0.9 < rotation < -0.2  # feet back, not lifted clear of the ball
    t = (man + BLOCK_HALF - 0.32) / -0.69  # the ball reaches the man's side
    behind = KEEPER.x - (-0.465 - 0.30 * t)
    assert 0.0 < behind <= BACKSTOP_MAX


@pytest.mark.parametrize("ball", [
    (-0.40, 0.05, -2.0, -0.1),  # straight at the man: the upright block takes it
    (-0.40, 0.30, -0.3, 0.4),  # away from the mouth
    (-0.40, 0.30, 0.3, -0.7),  # rolling out of our half
    (-0.40, 0.30, -0.3, -0.05),  # hardly across: it comes at the foot's face
    (-0.59, 0.06, -0.3, -0.7),  # already further behind than a leg meets it
])
def test_any_other_ball_is_left_to_the_other_plays(ball):
    assert _backstop(*ball) is None


def test_the_backstop_needs_a_one_man_goalkeeper():
    defence = TABLE.robot_rods[1]  # two men
    assert backstop(defence, -0.465, 0.32, -0.3, -0.69, GOAL_X, MOUTH, BLOCK_HALF, LEVER,
                    MAN.foot_reach) is None


def test_feet_back_means_a_negative_rotation_growing_with_the_distance():
    angles = [feet_back_rotation(d, LEVER, MAN.foot_reach) for d in (0.01, 0.03, 0.05)]
    assert angles[0] > angles[1] > angles[2] > -math.pi / 2
