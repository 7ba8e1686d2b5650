"""The ITSF rules the match runner enforces: possession limits per zone, no spinning."""

from __future__ import annotations

from foosball.geometry import default_table
from foosball.sim.match import Match
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
