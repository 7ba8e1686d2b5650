import json

import pytest

from foosball.geometry import (
    GeometryError,
    default_table,
    default_table_path,
    parse_table,
)


def test_default_table_matches_the_facts():
    table = default_table()
    assert (table.field.length, table.field.width) == (1.2, 0.68)
    assert [r.men for r in table.robot_rods] == [1, 2, 5, 3]
    assert [r.role for r in table.robot_rods] == ["goalkeeper", "defence", "midfield", "attack"]
    assert len(table.rods) == 8
    assert all(r.gear_ratio == 5.0 and r.pulley_radius == 0.02 for r in table.rods)


def test_men_positions_follow_translation():
    rod = default_table().rod("robot_midfield")
    assert rod.men_y(0.0) == pytest.approx((-0.24, -0.12, 0.0, 0.12, 0.24))
    assert rod.men_y(0.05)[0] == pytest.approx(-0.19)
    assert rod.translation_for(4, 0.3) == pytest.approx(0.06)


def test_every_point_of_the_field_width_is_reachable_by_the_defence_pair():
    rod = default_table().rod("robot_defence")
    intervals = rod.reachable_y()
    assert intervals[0][0] < -0.29 and intervals[1][1] > 0.29
    assert intervals[0][1] >= intervals[1][0]  # no gap between the two men's reaches


def _raw():
    return json.loads(default_table_path().read_text())


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["field"].pop("width"), "[field] width: missing"),
        (lambda d: d["rods"][2].update(men="three"), "rods[2] men: an integer"),
        (lambda d: d["rods"][0].update(travel_max=0.5), "rods[0] travel_max: 0.5 is out of range"),
        (lambda d: d["rods"][5].update(team="both"), "rods[5] team: one of"),
        (lambda d: d["rods"][1].update(zero_offset=0.3), "rods[1] zero_offset"),
        (lambda d: d["rods"].pop(), "[rods]: team 'human'"),
        (lambda d: d["ball"].update(diameter=float("nan")), "[ball] diameter: a finite number"),
        (lambda d: d.pop("man"), "[man]: missing"),
        # the same schema as board.toml (foosball.schema): a misspelt key is not ignored
        (lambda d: d["rods"][3].update(wheels=2), "rods[3]: unknown key wheels"),
        (lambda d: d.update(extra=1), "unknown section extra"),
    ],
)
def test_loader_names_the_offending_field(mutate, field):
    data = _raw()
    mutate(data)
    with pytest.raises(GeometryError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_table(data)
