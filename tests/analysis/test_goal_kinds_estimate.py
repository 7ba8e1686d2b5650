"""The recording's goal-kind estimate follows a shot deflected more than once as sim.match
does: the tracked touches between the shot and the last one, checked by
`_deflection_run` on a ball track written by hand."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from foosball.analysis.match import _deflection_run

ROBOT, HUMAN = SimpleNamespace(team="robot"), SimpleNamespace(team="human")


def track(speeds: list[float], period: float = 0.01) -> tuple[np.ndarray, ...]:
    """A ball moving along -x at each sample's speed, samples `period` apart."""
    t = np.arange(len(speeds)) * period
    return t, -np.asarray(speeds, dtype=float), np.zeros(len(speeds))


def test_no_touch_between_is_the_shot_itself() -> None:
    t, vx, vy = track([12.0, 12.0, 12.0])
    assert _deflection_run([], 2, "robot", t, vx, vy)


def test_touches_of_the_defending_team_that_slow_the_ball_quickly_are_one_deflection() -> None:
    # defence at sample 3 (12 -> 7 m/s), goalkeeper at sample 12 (0.09 s later)
    t, vx, vy = track([12.0] * 3 + [7.0] * 9 + [3.0] * 3)
    assert _deflection_run([(3, ROBOT)], 12, "robot", t, vx, vy)


def test_a_touch_that_speeds_the_ball_up_or_comes_late_ends_the_deflection() -> None:
    t, vx, vy = track([12.0] * 3 + [14.0] * 9 + [3.0] * 3)
    assert not _deflection_run([(3, ROBOT)], 12, "robot", t, vx, vy)  # sped up
    t, vx, vy = track([12.0] * 3 + [0.5] * 40 + [0.8] * 3)
    assert not _deflection_run([(3, ROBOT)], 43, "robot", t, vx, vy)  # 0.4 s later


def test_a_touch_of_the_other_team_between_ends_it() -> None:
    t, vx, vy = track([12.0] * 3 + [7.0] * 9 + [3.0] * 3)
    assert not _deflection_run([(3, HUMAN)], 12, "robot", t, vx, vy)
