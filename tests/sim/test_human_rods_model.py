"""The simulator's model of the ball tracker's rod meter (HumanRods) and its delivery."""

from __future__ import annotations

import math

import numpy as np

from foosball.geometry import default_table
from foosball.sim.match import Match
from foosball.sim.perception import (
    HUMAN_RODS_EVERY,
    ROD_TRANSLATION_NOISE,
    ROTATION_SEEN_MIN,
    human_rods,
)
from foosball.wire.catalogue import BallState, HumanRods, RodCommand, RodStatus

TABLE = default_table()


def test_the_meter_reports_translations_with_its_noise_and_only_a_clear_rotation():
    poses = [(0.05, 0.0, 0.0, 0.0), (-0.02, 0.1, 0.0, 0.0), (0.0, 1.2, 0.0, 0.0),
             (0.01, -1.0 + 4 * math.pi, 0.0, 0.0)]
    rng = np.random.default_rng(3)
    errors = []
    for frame in range(200):
        message = human_rods(TABLE.human_rods, poses, 1000 + frame, frame, rng)
        assert (message.capture_time, message.frame) == (1000 + frame, frame)
        assert [r.men_seen for r in message.rods] == [min(5, r.men) for r in TABLE.human_rods]
        errors += [m.translation - t for m, (t, _, _, _) in zip(message.rods, poses, strict=True)]
        low, small, lifted, wound = message.rods
        assert not low.rotation_seen and low.rotation == 0.0
        assert not small.rotation_seen  # 0.1 rad < 20 deg: the shape does not show it
        assert lifted.rotation_seen and abs(lifted.rotation - 1.2) < 0.5
        assert wound.rotation_seen and abs(wound.rotation + 1.0) < 0.5  # within a turn
    assert 0.5 * ROD_TRANSLATION_NOISE < float(np.std(errors)) < 1.5 * ROD_TRANSLATION_NOISE
    assert abs(float(np.mean(errors))) < ROD_TRANSLATION_NOISE / 3
    assert ROTATION_SEEN_MIN > 0.1


class _Reader:
    """Stands still and keeps what it is handed."""

    wants_human_rods = True

    def __init__(self) -> None:
        self.rods: list[HumanRods] = []
        self.balls: list[BallState] = []

    def observe_human_rods(self, rods: HumanRods) -> None:
        self.rods.append(rods)

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        self.balls.append(ball)
        return None


def test_a_robot_that_reads_them_gets_every_fourth_frame_with_its_ball_state():
    reader = _Reader()
    match = Match(reader, "club", seed=4, duration=1.0)
    match.run()
    assert len(reader.rods) >= len(reader.balls) // HUMAN_RODS_EVERY - 1
    captured = {b.capture_time for b in reader.balls}
    assert all(r.capture_time in captured for r in reader.rods)  # the same frames' delay
    assert {r.frame % HUMAN_RODS_EVERY for r in reader.rods} == {0}


def test_reading_them_leaves_the_match_as_it_was():
    """The meter's noise has a stream of its own: the same play with and without a reader."""
    plain, reading = Match("hold", "pro", seed=5, duration=3.0), Match(_Reader(), "pro", seed=5,
                                                                         duration=3.0)
    a, b = plain.run(), reading.run()
    assert (a.goals_robot, a.goals_human, len(a.shots)) == (b.goals_robot, b.goals_human,
                                                             len(b.shots))
    assert plain.world.state() == reading.world.state()
