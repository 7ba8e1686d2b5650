"""Goals against classified from the physics' contacts, and a save decided 2 s after the shot
(sim.match): the statistics fed with contacts in a known order, no physics run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from foosball.sim.match import SAVE_WINDOW_S, Match, goal_kinds
from foosball.sim.physics import Contact

HUMAN_ATTACK, ROBOT_KEEPER, ROBOT_DEFENCE, ROBOT_ATTACK = 2, 0, 1, 5


def man(t: float, rod: int, team: str, before: float, vx: float, vy: float = 0.0) -> Contact:
    return Contact(round(t * 1e9), "man", rod=rod, man=0, team=team, speed_before=before,
                   speed_after=(vx * vx + vy * vy) ** 0.5, vx_after=vx, vy_after=vy)


def goal(t: float, scorer: str) -> Contact:
    return Contact(round(t * 1e9), "goal", team=scorer)


def feed(events: list[tuple[float, list[Contact]]]) -> Match:
    """Each (time, contacts) as one frame's contacts; the ball on the centre line, y = 0 (a
    straight shot of either team is on target)."""
    match = Match("hold", "hold", seed=0, duration=10.0)
    base = replace(match.world.state(), ball_x=0.0, ball_y=0.0)
    for t, contacts in events:
        match._account(contacts, replace(base, time_ns=round(t * 1e9)))
    match._decide_shots()
    return match


def test_a_shot_that_goes_in_untouched_is_clean() -> None:
    match = feed([(1.0, [man(1.0, HUMAN_ATTACK, "human", 0.0, -12.0)]),
                  (1.05, [goal(1.05, "human")])])
    assert goal_kinds(match.result.goals, "robot")["clean"] == 1
    assert match.result.shots[0].outcome == "goal"


def test_a_shot_brushed_by_the_goalkeeper_is_deflected_and_not_a_save() -> None:
    match = feed([(1.0, [man(1.0, HUMAN_ATTACK, "human", 0.0, -12.0)]),
                  (1.03, [man(1.03, ROBOT_KEEPER, "robot", 12.0, -10.0, 3.0)]),
                  (1.1, [goal(1.1, "human")])])
    assert goal_kinds(match.result.goals, "robot") == {
        "clean": 0, "deflected": 1, "own_play": 0, "untouched": 0}
    assert match.result.saves_robot == 0
    assert match.result.shots[0].outcome == "goal"


def test_a_shot_off_the_defence_and_then_the_goalkeeper_is_deflected() -> None:
    # tuning audit, pro seed 8479: 11.9 m/s off the defence (7.1), then the goalkeeper
    # 0.11 s later (3.2 -> 1.1) and in
    match = feed([(1.0, [man(1.0, HUMAN_ATTACK, "human", 0.0, -11.9)]),
                  (1.013, [man(1.013, ROBOT_DEFENCE, "robot", 11.9, -4.3, 5.7)]),
                  (1.12, [man(1.12, ROBOT_KEEPER, "robot", 3.2, -1.0, 0.3)]),
                  (1.3, [goal(1.3, "human")])])
    goal_event = match.result.goals[0]
    assert goal_event.kind == "deflected"
    assert goal_event.last_rod == "goalkeeper"


def test_a_shot_the_goalkeeper_deflects_forward_and_the_defence_back_in_is_deflected() -> None:
    # tuning audit, pro seed 8473: 14.9 m/s, off the goalkeeper forward at 6.1 m/s (which
    # the statistics count as a robot shot), off the defence 17 ms later back in at 2.9
    match = feed([(1.0, [man(1.0, HUMAN_ATTACK, "human", 0.0, -14.9)]),
                  (1.018, [man(1.018, ROBOT_KEEPER, "robot", 14.9, 6.1, 2.0)]),
                  (1.035, [man(1.035, ROBOT_DEFENCE, "robot", 6.5, -2.85)]),
                  (1.15, [goal(1.15, "human")])])
    assert match.result.goals[0].kind == "deflected"


@pytest.mark.parametrize(("keeper_at", "speed_after", "why"), [
    (1.5, 0.4, "the ball left slow, then played by the goalkeeper"),
    (1.1, 2.0, "the goalkeeper strikes the deflected ball harder"),
])
def test_a_deflected_shot_played_on_into_the_goal_is_own_play(
        keeper_at: float, speed_after: float, why: str) -> None:
    match = feed([(1.0, [man(1.0, HUMAN_ATTACK, "human", 0.0, -8.0)]),
                  (1.02, [man(1.02, ROBOT_DEFENCE, "robot", 8.0, -0.5, 0.5)]),
                  (keeper_at, [man(keeper_at, ROBOT_KEEPER, "robot", 0.6, -speed_after)]),
                  (keeper_at + 0.3, [goal(keeper_at + 0.3, "human")])])
    assert match.result.goals[0].kind == "own_play", why


def test_a_clear_struck_back_into_the_own_goal_is_own_play() -> None:
    # a slow ball the goalkeeper clears; the defence strikes it back at 5 m/s into the goal
    match = feed([(1.0, [man(1.0, ROBOT_KEEPER, "robot", 0.3, 7.6)]),
                  (1.02, [man(1.02, ROBOT_DEFENCE, "robot", 7.6, -5.0)]),
                  (1.2, [goal(1.2, "human")])])
    goal_event = match.result.goals[0]
    assert goal_event.kind == "own_play"
    assert (goal_event.last_team, goal_event.last_rod) == ("robot", "defence")


def test_a_robot_man_striking_a_human_pass_backwards_is_own_play() -> None:
    # a touch on a shot in flight that adds speed is a strike, not a deflection
    match = feed([(1.0, [man(1.0, HUMAN_ATTACK, "human", 0.0, -2.5)]),
                  (1.1, [man(1.1, ROBOT_DEFENCE, "robot", 2.5, -5.5)]),
                  (1.3, [goal(1.3, "human")])])
    assert match.result.goals[0].kind == "own_play"


def test_a_goal_with_no_man_contact_since_the_serve_is_untouched() -> None:
    match = feed([(1.0, [goal(1.0, "human")])])
    assert match.result.goals[0].kind == "untouched"


@pytest.mark.parametrize("goal_after", [0.5, SAVE_WINDOW_S + 0.1])
def test_a_touched_shot_is_a_save_only_if_no_goal_follows_within_the_window(
        goal_after: float) -> None:
    shot, touch = 1.0, 1.03
    match = feed([(shot, [man(shot, HUMAN_ATTACK, "human", 0.0, -12.0)]),
                  (touch, [man(touch, ROBOT_KEEPER, "robot", 12.0, 3.0)]),
                  (shot + goal_after - 0.2, []),
                  (shot + goal_after, [goal(shot + goal_after, "human")])])
    saved = goal_after >= SAVE_WINDOW_S
    assert match.result.saves_robot == int(saved)
    assert match.result.shots[0].outcome == ("saved" if saved else "goal")


def test_a_robot_goal_against_the_human_is_classified_for_the_human() -> None:
    match = feed([(1.0, [man(1.0, ROBOT_ATTACK, "robot", 0.0, 10.0)]),
                  (1.05, [goal(1.05, "robot")])])
    assert goal_kinds(match.result.goals, "human")["clean"] == 1
    assert sum(goal_kinds(match.result.goals, "robot").values()) == 0
