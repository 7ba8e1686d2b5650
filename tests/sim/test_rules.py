"""The ITSF rules the match runner enforces: possession limits per zone, no spinning, where
a dead ball goes."""

from __future__ import annotations

import pytest

from foosball.geometry import default_table
from foosball.sim.match import DEAD_BALL_S, Match
from foosball.sim.rules import FIVE_MAN_LIMIT_S, OTHER_LIMIT_S, Referee

TABLE = default_table()


def rod(team: str, role: str):  # type: ignore[no-untyped-def]
    return next(r for r in TABLE.team_rods(team) if r.role == role)


def hold_ball(referee: Referee, x: float, seconds: float, start: float = 0.0):  # type: ignore[no-untyped-def]
    """Frames of 5 ms with the ball at x; the first restart (with its time) or None."""
    for frame in range(round(seconds / 0.005) + 1):
        now = start + frame * 0.005
        restart = referee.possession(x, now)
        if restart is not None:
            return now, restart
    return None


def test_a_ball_held_by_the_five_man_rod_goes_to_the_opponents_five_man_rod_after_10_s() -> None:
    referee = Referee(TABLE)
    at, restart = hold_ball(referee, rod("robot", "midfield").x + 0.01, 20.0)
    assert FIVE_MAN_LIMIT_S < at < FIVE_MAN_LIMIT_S + 0.01
    their_midfield = rod("human", "midfield")
    assert restart.team == "human" and restart.reason == "possession"
    assert 0 < (restart.x - their_midfield.x) * their_midfield.forward < TABLE.man.contact_reach
    assert referee.fouls["robot"].possession == 1 and referee.fouls["human"].possession == 0


def test_the_three_man_rod_loses_the_ball_to_the_opponents_two_man_rod_after_15_s() -> None:
    referee = Referee(TABLE)
    at, restart = hold_ball(referee, rod("human", "attack").x, 20.0)
    assert OTHER_LIMIT_S < at < OTHER_LIMIT_S + 0.01
    defence = rod("robot", "defence")
    assert restart.team == "robot"
    assert 0 < (restart.x - defence.x) * defence.forward < TABLE.man.contact_reach


def test_goalkeeper_and_two_man_rod_count_as_one_zone() -> None:
    referee = Referee(TABLE)
    assert hold_ball(referee, rod("robot", "goalkeeper").x, 8.0) is None
    # the ball moves on to the 2-man rod: the same clock goes on
    at, _ = hold_ball(referee, rod("robot", "defence").x, 10.0, start=8.005)
    assert OTHER_LIMIT_S < at < OTHER_LIMIT_S + 0.01


def test_the_clock_starts_again_in_another_zone_and_after_a_new_ball() -> None:
    referee = Referee(TABLE)
    assert hold_ball(referee, rod("robot", "attack").x, 14.0) is None
    assert hold_ball(referee, rod("human", "defence").x, 14.0, start=14.005) is None
    referee.new_ball()
    assert hold_ball(referee, rod("human", "defence").x, 14.0, start=28.01) is None
    assert referee.fouls["human"].longest_possession_s >= 14.0


def test_a_ball_out_of_every_mans_reach_stops_the_clock_and_coming_back_continues_it() -> None:
    referee = Referee(TABLE)
    attack = rod("robot", "attack")
    assert hold_ball(referee, attack.x, 9.0) is None
    gap = attack.x + (TABLE.man.contact_reach + 0.005)
    assert referee.holder(gap) is None
    assert hold_ball(referee, gap, 7.0, start=9.005) is None  # no man can play it there
    # back within the attack's reach: 9 s are used up, the foul comes 6 s later, not 15 s
    restart = hold_ball(referee, attack.x, 7.0, start=16.01)
    assert restart is not None
    assert abs(restart[0] - (16.01 + OTHER_LIMIT_S - 9.0)) < 0.02


def turn(referee: Referee, rod_index: int, angles: list[float], strike_at: int):  # type: ignore[no-untyped-def]
    restarts = []
    for k, angle in enumerate(angles):
        rotations = tuple(angle if i == rod_index else 0.0 for i in range(len(TABLE.rods)))
        restarts.append(referee.rotations(rotations, {rod_index} if k == strike_at else set()))
    return [r for r in restarts if r is not None]


def test_a_strike_after_more_than_a_full_turn_is_a_spinning_foul() -> None:
    referee = Referee(TABLE)
    index = TABLE.rods.index(rod("human", "attack"))
    angles = [0.1 * k for k in range(80)]  # one way, 8 rad
    fouls = turn(referee, index, angles, strike_at=70)  # 7 rad after the run began
    assert len(fouls) == 1 and fouls[0].team == "robot" and fouls[0].reason == "spinning"
    assert referee.fouls["human"].spinning == 1


def test_turning_on_a_full_turn_after_the_strike_is_a_foul_and_a_kick_is_not() -> None:
    index = TABLE.rods.index(rod("robot", "attack"))
    referee = Referee(TABLE)
    # wind up to -3 rad, strike near 0, follow through to +6 rad: 3 before, 6 after
    kick = [-0.1 * k for k in range(31)] + [-3.0 + 0.1 * k for k in range(91)]
    assert turn(referee, index, kick, strike_at=31 + 30) == []
    referee = Referee(TABLE)
    spin = [0.1 * k for k in range(75)]  # strike at 0.5 rad, then on to 7.4 rad
    assert len(turn(referee, index, spin, strike_at=5)) == 1
    assert referee.fouls["robot"].spinning == 1


def test_turning_back_starts_a_new_run() -> None:
    index = TABLE.rods.index(rod("robot", "midfield"))
    referee = Referee(TABLE)
    there_and_back = [0.1 * k for k in range(50)] + [4.9 - 0.1 * k for k in range(50)]
    assert turn(referee, index, there_and_back, strike_at=95) == []
    assert referee.fouls["robot"].spinning == 0


def test_a_match_reports_violations_and_restarts_a_ball_held_too_long() -> None:
    match = Match("hold", "hold", seed=3, duration=12.0)
    midfield = rod("robot", "midfield")
    match.step_frame()
    # a ball rolling to and fro in front of the robot's 5-man rod, as a stall would
    for _ in range(round(11.0 / 0.005)):
        if match.result.restarts:
            break
        state = match.world.state()
        if abs(state.ball_x - midfield.x) > 0.02 or match.world.time < 0.01:
            match.world.place_ball(midfield.x + 0.03, 0.3, 0.0, -0.8)
        match.step_frame()
    result = match.run().summary()
    assert result["restarts"] >= 1
    assert result["fouls"]["robot"]["possession"] >= 1
    assert result["fouls"]["robot"]["longest_possession_s"] >= FIVE_MAN_LIMIT_S


def test_a_ball_rolling_along_a_gap_no_man_reaches_is_served_again_after_3_s() -> None:
    match = Match("hold", "hold", seed=3, duration=10.0)
    match.step_frame()
    serves = match.result.serves
    gap = 0.0  # the centre line: 75 mm from either 5-man rod, beyond every man's reach
    assert match.referee.holder(gap) is None
    match.world.place_ball(gap, -0.2, 0.0, 0.3)  # rolling along the line, not still
    for _ in range(round(3.2 / 0.005)):
        match.step_frame()
    assert match.result.serves == serves + 1
    assert match.result.restarts == 0


# --- dead ball ----------------------------------------------------------------------------

REACH = TABLE.man.contact_reach
ROBOT_FIVE, HUMAN_FIVE = rod("robot", "midfield").x, rod("human", "midfield").x


@pytest.mark.parametrize("team", ["robot", "human"])
@pytest.mark.parametrize("depth", [0.001, 0.07, 0.15, 0.3, 0.45, 0.58])  # m beyond the 5-man rod
def test_a_dead_ball_behind_a_five_man_rod_goes_to_that_ends_goalkeeper(team: str,
                                                                         depth: float) -> None:
    referee = Referee(TABLE)
    five_man = rod(team, "midfield")  # the robot's is on its own half, nearer its goal
    ball_x = five_man.x + depth * (1.0 if five_man.x > 0 else -1.0)
    restart = referee.dead_ball(ball_x)
    keeper = rod(team, "goalkeeper")
    assert restart is not None and restart.team == team and restart.reason == "dead ball"
    # at rest in front of the goalkeeper, within its man's reach and no other rod's
    assert 0 < (restart.x - keeper.x) * keeper.forward < REACH
    assert referee.holder(restart.x) == keeper
    assert keeper.reachable_y()[0][0] <= restart.y <= keeper.reachable_y()[0][1]


@pytest.mark.parametrize("ball_x", [ROBOT_FIVE, ROBOT_FIVE + 0.001, -0.03, 0.0, 0.03,
                                    HUMAN_FIVE - 0.001, HUMAN_FIVE])
def test_a_dead_ball_between_the_five_man_rods_is_served_again(ball_x: float) -> None:
    assert Referee(TABLE).dead_ball(ball_x) is None


def play_until_dead(match: Match, seconds: float) -> None:
    """Frames on the match's own clock until a dead ball was served or restarted."""
    dead = dict(match.result.dead_balls)
    for _ in range(round(seconds / match.params.frame_period)):
        match.step_frame()
        if match.result.dead_balls != dead:
            return


def started(seed: int = 3) -> Match:
    match = Match("hold", "hold", seed=seed, duration=60.0)
    match.step_frame()  # the opening serve
    assert match.result.serves == 1
    return match


@pytest.mark.parametrize("team", ["robot", "human"])
@pytest.mark.parametrize("where", ["behind the goalkeeper", "just behind the 5-man rod"])
def test_a_ball_lying_dead_behind_a_five_man_rod_is_put_in_front_of_the_goalkeeper(
        team: str, where: str) -> None:
    match = started()
    keeper = rod(team, "goalkeeper")
    # no man kicks it forward there: between the goal line and the goalkeeper, beside the
    # mouth; or 5 mm behind the 5-man rod's axis, where the other team's 3-man rod is behind
    # it too
    lying = keeper.x - keeper.forward * 0.055
    if where != "behind the goalkeeper":
        lying = rod(team, "midfield").x - keeper.forward * 0.005
    match.world.place_ball(lying, 0.25)
    play_until_dead(match, DEAD_BALL_S + 0.1)
    assert match.result.dead_balls == {"served": 0, "goalkeeper": 1}
    assert match.result.restarts == 1 and match.result.serves == 1
    ball = match.world.state()
    assert ball.ball_in_play and 0 < (ball.ball_x - keeper.x) * keeper.forward < REACH
    assert match.world.time >= 1 / 200 + DEAD_BALL_S


def test_a_ball_rolling_in_a_gap_behind_the_five_man_rod_goes_to_the_goalkeeper() -> None:
    match = started()
    gap = ROBOT_FIVE - REACH - 0.008  # between the robot's 5-man rod and the human's 3-man rod
    assert match.referee.holder(gap) is None
    match.world.place_ball(gap, -0.2, 0.0, 0.3)  # rolling along the gap, never still
    play_until_dead(match, DEAD_BALL_S + 0.1)
    assert match.result.dead_balls == {"served": 0, "goalkeeper": 1}
    keeper = rod("robot", "goalkeeper")
    assert match.referee.holder(match.world.state().ball_x) == keeper


def test_a_ball_lying_dead_between_the_five_man_rods_is_served_again() -> None:
    match = started()
    match.world.place_ball(0.0, 0.25)  # the centre line: beyond both 5-man rods' reach
    play_until_dead(match, DEAD_BALL_S + 0.1)
    assert match.result.dead_balls == {"served": 1, "goalkeeper": 0}
    assert match.result.serves == 2 and match.result.restarts == 0
    assert match.world.state().ball_x == 0.0  # the serve: from the side wall at x = 0


def test_a_still_ball_a_man_could_play_is_not_dead_the_possession_limit_takes_it() -> None:
    """A goalkeeper that leaves the ball lying in front of it loses it after 15 s (before,
    the stall rule called it dead after 10 s and, with the dead-ball rule, gave it back to
    the same goalkeeper every 10 s for ever)."""
    match = started()
    keeper = rod("robot", "goalkeeper")
    match.world.place_ball(keeper.x + 0.035, 0.0)  # still, where the goalkeeper kicks it
    for _ in range(round((OTHER_LIMIT_S + 0.1) / match.params.frame_period)):
        match.step_frame()
        if match.result.restarts:
            break
    assert match.result.dead_balls == {"served": 0, "goalkeeper": 0}
    assert match.referee.fouls["robot"].possession == 1 and match.result.restarts == 1
    their_five_man = rod("human", "midfield")
    assert match.referee.holder(match.world.state().ball_x) == their_five_man
