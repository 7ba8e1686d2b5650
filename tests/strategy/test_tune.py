"""The parameter search: the same seed gives the same trials; the best parameters are
written into the parameter file with its comments kept, and what is written loads."""

from __future__ import annotations

import argparse
import io

import pytest

from foosball.lab.tune import SPACE, search, shipped_values, write_params
from foosball.strategy.engine import Engine
from foosball.strategy.params import default_params_path, parse_params


def tiny(seed: int) -> argparse.Namespace:
    return argparse.Namespace(robot="improved", opponent="club", trials=3, matches=1,
                              duration=1.0, randomise=False, seed=seed, tune_seed=500,
                              held_out_seed=900, held_out_matches=1, min_gain=0.0, jobs=1)


def test_the_same_seed_gives_the_same_trials_and_the_first_is_the_shipped_file() -> None:
    with Engine(1) as engine:
        a = search(tiny(4), engine, log=io.StringIO())
        b = search(tiny(4), engine, log=io.StringIO())
        other = search(tiny(5), engine, log=io.StringIO())
    assert a["trials"] == b["trials"] and a["held_out"] == b["held_out"]
    assert a["trials"][0]["params"] == shipped_values()
    assert [t["params"] for t in a["trials"][1:]] != [t["params"] for t in other["trials"][1:]]
    for trial in a["trials"]:
        for (section, key), (low, high) in SPACE.items():
            assert low <= trial["params"][section][key] <= high


def test_written_parameters_load_and_keep_the_files_comments() -> None:
    import tomllib

    text = default_params_path().read_text()
    written = write_params(text, {"improved": {"strike_power": 150.25, "block_margin": 0.007}})
    params = parse_params(tomllib.loads(written))
    assert params.improved.strike_power == 150.25 and params.improved.block_margin == 0.007
    assert written.count("#") == text.count("#")
    assert [line for line in written.splitlines() if "strike_power" not in line
            and "block_margin" not in line] == [
        line for line in text.splitlines() if "strike_power" not in line
        and "block_margin" not in line]
    with pytest.raises(ValueError, match="no_such_key"):
        write_params(text, {"improved": {"no_such_key": 1.0}})
