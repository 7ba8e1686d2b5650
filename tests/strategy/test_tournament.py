"""Tournament runner: totals arithmetic, and one tiny match through the real runner."""

from __future__ import annotations

from foosball.lab.tournament import run_tournament, totals


def fouls(possession, longest):
    return {"possession": possession, "spinning": 0, "longest_possession_s": longest,
            "longest_zone": "midfield"}


def match(seed, gf, ga, saves, against_speeds, human_fouls=(0, 1.0)):
    return {
        "duration_s": 60.0,
        "fouls": {"robot": fouls(0, 2.0), "human": fouls(*human_fouls)},
        "seed": seed,
        "goals_for": gf,
        "goals_against": ga,
        # all conceded goals own play in odd seeds, clean in even ones
        "goals_against_by_kind": {"clean": ga * (1 - seed % 2), "deflected": 0,
                                  "own_play": ga * (seed % 2), "untouched": 0},
        "saves": saves,
        "on_target_against": saves + ga,
        "save_bands": {"0-5": [saves, saves + ga], "5-10": [0, 0], "10-15": [0, 0],
                       "15-99": [0, 0]},
        "shots_for": [{"speed": 5.0, "on_target": True, "outcome": "goal"}] * gf,
        "shots_against": [{"speed": v, "on_target": True, "outcome": "saved"}
                          for v in against_speeds],
        "serves": 1 + gf + ga + seed % 2,
        "restarts": seed,
        "dead_balls": {"served": seed % 2, "goalkeeper": seed},
    }


def test_totals():
    t = totals([match(0, 2, 1, 3, [4.0, 6.0]), match(1, 0, 0, 1, [8.0], (2, 10.0)),
                match(2, 1, 2, 0, [], (1, 4.0))])
    assert (t["wins"], t["draws"], t["losses"]) == (1, 1, 1)
    assert t["goals_for"] == 3 and t["goals_against"] == 3 and t["goals_ratio"] == 1.0
    assert t["save_rate"] == round(4 / 7, 4)
    assert t["shots_against"]["mean_speed"] == 6.0
    assert t["shots_against"]["max_speed"] == 8.0
    assert t["goals_per_minute"] == {"for": 1.0, "against": 1.0}
    assert t["fouls"]["human"]["possession"] == 3 and t["fouls"]["robot"]["possession"] == 0
    assert t["fouls"]["human"]["longest_possession_s"] == 10.0
    assert t["serves"] == 3 + 6 + 1 and t["restarts"] == 3
    assert t["dead_balls"] == {"served": 1, "goalkeeper": 3}
    # seeds 0 and 2 conceded 1 + 2 clean goals, seed 1 none
    assert t["goals_against_by_kind"] == {"clean": 3, "deflected": 0, "own_play": 0,
                                          "untouched": 0}
    assert t["own_play_share"] == 0.0


def test_one_short_match_runs_and_is_reproducible():
    a = run_tournament("improved", "seed-rules", 1, 1, 7, 2.0, False, show_progress=False)
    b = run_tournament("improved", "seed-rules", 1, 1, 7, 2.0, False, show_progress=False)
    assert a["total"]["matches"] == 1
    assert a["per_match"] == [{**m, "wall_time": a["per_match"][0]["wall_time"]}
                              for m in b["per_match"]]


def test_a_local_ray_plays_the_same_matches_as_one_process():
    def played(jobs: int) -> list[dict]:
        report = run_tournament("improved", "club", 2, jobs, 40, 1.0, True, show_progress=False)
        return [{**m, "wall_time": None} for m in report["per_match"]]

    assert played(2) == played(1)


def test_a_cluster_address_nothing_answers_at_is_a_clear_error():
    import pytest

    from foosball.strategy.engine import Engine, EngineError

    with pytest.raises(EngineError, match=r"no Ray cluster answers at 127\.0\.0\.1:1"), \
            Engine(2, "127.0.0.1:1"):
        pass
    with pytest.raises(EngineError, match="HOST:PORT"), Engine(2, "nonsense"):
        pass
