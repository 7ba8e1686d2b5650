"""Scripted humans with ball control: pull and push shots from the 3-man rod."""

from __future__ import annotations

from dataclasses import replace

import pytest

from foosball.geometry import default_table
from foosball.sim.match import Match
from foosball.sim.opponents import PRO, ScriptedOpponent

TABLE = default_table()


@pytest.mark.parametrize("direction", [-1.0, 1.0])
def test_the_pro_carries_a_resting_ball_along_the_rod_then_shoots_it_rolling(direction):
    skill = replace(PRO, shot_speed=(10.0, 10.0), pull_probability=1.0,
                    carry_direction=direction)
    match = Match("hold", ScriptedOpponent(TABLE, skill, 2), seed=1, duration=1.0)
    attack = TABLE.rod("human_attack")
    match.world.place_ball(attack.x - 0.035, 0.0, 0.0, 0.0)
    match._serve_at = None  # the ball is placed, no serve
    sideways = []
    while not match.result.shots and match.world.time < 1.0:
        state = match.step_frame()
        sideways.append(state.ball_vy)
    assert match.result.shots, "no shot within 1 s"
    shot = match.result.shots[0]
    assert shot.team == "human" and shot.speed > 6.0
    # before the strike the ball rolled along the rod, the way of the carry (the human's
    # frame is the table's turned half round: its +y is the table's -y)
    rolled = max(sideways, key=lambda v: -direction * v)
    assert -direction * rolled > 0.25
