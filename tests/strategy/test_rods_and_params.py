from __future__ import annotations

import pytest

from foosball.geometry import default_table
from foosball.strategy import rods
from foosball.strategy.params import (
    ParameterError,
    StrategyParams,
    load_params,
    parse_params,
)

TABLE = default_table()
GOALKEEPER, DEFENCE, MIDFIELD, ATTACK = TABLE.robot_rods


def test_men_positions_follow_the_translation():
    assert rods.men_positions(ATTACK, 0.05) == pytest.approx((-0.15, 0.05, 0.25))


def test_nearest_man():
    assert rods.nearest_man(MIDFIELD, 0.0, 0.13) == 3
    assert rods.nearest_man(DEFENCE, 0.0, -0.3) == 0


def test_men_reaching_a_point():
    assert rods.men_reaching(ATTACK, 0.0) == [1]
    assert rods.men_reaching(ATTACK, 0.09) == [1, 2]
    assert rods.men_reaching(GOALKEEPER, 0.2) == []


def test_reachable_intervals_merge():
    spans = rods.reachable_intervals(MIDFIELD)
    assert spans == [pytest.approx((-0.3015, 0.3015))]
    assert len(rods.reachable_intervals(DEFENCE)) == 1  # 0.24 spacing, 0.358 travel: overlap


def test_reach_picks_the_smallest_move_among_men_that_can():
    best = rods.reach(ATTACK, 0.09, current_translation=0.1)
    assert best.man == 1 and best.error == 0.0
    best = rods.reach(ATTACK, 0.09, current_translation=-0.1)
    assert best.man == 2
    far = rods.reach(GOALKEEPER, 0.3, 0.0)
    assert far.translation == GOALKEEPER.travel_max and far.error > 0


def test_default_parameter_file_equals_the_documented_defaults():
    assert load_params() == StrategyParams()


def test_unknown_or_mistyped_keys_are_errors():
    # the board file's error form (foosball.schema): [section] key: why
    with pytest.raises(ParameterError, match=r"^\[seed\]: unknown key kik_power; known: "):
        parse_params({"seed": {"kik_power": 3}})
    with pytest.raises(ParameterError, match=r"^\[seed\] kick_power: a number, not 'fast'"):
        parse_params({"seed": {"kick_power": "fast"}})
    with pytest.raises(ParameterError, match=r"^\[kick_engine\] aim_offsets\[1\]: a number"):
        parse_params({"kick_engine": {"aim_offsets": [0.0, "far"]}})
    assert parse_params({"kick_engine": {"aim_offsets": [0, 1]}}).kick_engine.aim_offsets \
        == (0.0, 1.0)
    with pytest.raises(ParameterError, match="unknown sections"):
        parse_params({"seeds": {}})
