"""The game panel's pure core: game states, score, clock, page actions (a passed-in clock)."""

from __future__ import annotations

import base64
import dataclasses
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from foosball.agents.game_panel import (
    GOAL_CONFIRM_S,
    GamePanelConfig,
    GamePanelCore,
    GoalDetector,
)
from foosball.geometry import default_table
from foosball.panels.server import PanelAction
from foosball.runtime import Inputs
from foosball.runtime.latch import SafetyView
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    AxisStatus,
    BallState,
    BallStatus,
    CalibrationStatus,
    DriveState,
    GameCommand,
    GameControl,
    GameState,
    HumanRod,
    HumanRods,
    MotorStatus,
    RodId,
    RodPosition,
    RodStatus,
    SafetyState,
    VisionConfig,
    VisionPreview,
)

TABLE = default_table()
HALF_L = TABLE.field.half_length


def motors(state: DriveState = DriveState.READY) -> MotorStatus:
    return MotorStatus(axes=tuple(AxisStatus(axis=a, state=state, position=0.0, velocity=0.0,
                                             current=0.0, fault_code=0) for a in range(8)))


def ball(x: float, y: float = 0.0, status: BallStatus = BallStatus.DETECTED, t: int = 0,
         vx: float = 0.0) -> BallState:
    return BallState(capture_time=t, frame=0, x=x, y=y, vx=vx, vy=0.0,
                     covariance=(0.0, 0.0, 0.0, 0.0), status=status)


def action(name: str, **args: Any) -> PanelAction:
    return PanelAction(name, args, "192.0.2.7", 1_700_000_000.0)


class Panel:
    """The core stepped as the runtime steps it: its own GameControls come back to it as
    messages on the next turn (runtime/loop.py applies a sender's command to itself too)."""

    def __init__(self, config: GamePanelConfig | None = None) -> None:
        self.core = GamePanelCore(TABLE, config)
        self.now = 100.0
        self.safety = SafetyView()
        self.echo: list[Any] = []
        self.sent: list[Any] = []
        self.out = self.step(motors())

    def step(self, *messages: Any, actions: tuple = (), dt: float = 0.01):
        self.now += dt
        inbox, self.echo = (*self.echo, *messages), []
        out = self.core.step(Inputs(self.now, inbox, actions or None, self.safety))
        self.echo = [m for m in out.messages if isinstance(m, GameControl)]
        self.sent += out.messages
        self.out = out
        return out

    def act(self, name: str, **args: Any):
        out = self.step(actions=(action(name, **args),))
        self.step()  # the echo applies
        return out

    @property
    def states(self) -> list[GameState]:
        return [m for m in self.sent if isinstance(m, GameState)]

    @property
    def game(self) -> dict[str, Any]:
        return self.out.actuation["game"]


def test_boot_until_motor_status_then_drive_phases_then_ready():
    core = GamePanelCore(TABLE)
    assert core.step(Inputs(0.0)).messages[0].state == SafetyState.BOOT
    out = core.step(Inputs(0.2, (motors(DriveState.ALIGNING),)))
    assert out.messages[0].state == SafetyState.ALIGNING
    out = core.step(Inputs(0.4, (motors(DriveState.HOMING),)))
    assert out.messages[0].state == SafetyState.HOMING
    out = core.step(Inputs(0.6, (motors(DriveState.READY),)))
    assert out.messages[0].state == SafetyState.READY and out.state == SafetyState.READY


def test_game_state_at_10_hz_and_at_once_on_a_change():
    p = Panel()
    p.sent.clear()
    for _ in range(100):  # 1 s of 10 ms turns
        p.step()
    assert 9 <= len(p.states) <= 11
    p.sent.clear()
    p.act("start")
    assert [s.state for s in p.states] == [SafetyState.PLAYING]  # on the echo's turn


def test_start_pause_stop_and_the_clock_runs_only_while_playing():
    p = Panel()
    assert p.game["allowed"] == {"start": True, "pause": False, "stop": False, "restart": False}
    out = p.act("start")
    assert [m.command for m in out.messages if isinstance(m, GameControl)] == [GameCommand.START]
    assert p.core.state == SafetyState.PLAYING
    for _ in range(100):
        p.step()
    assert p.core.clock_s == pytest.approx(1.01, abs=0.011)
    p.act("pause")
    assert p.core.state == SafetyState.PAUSED
    clock = p.core.clock_s
    for _ in range(50):
        p.step()
    assert p.core.clock_s == clock
    p.act("start")
    assert p.core.state == SafetyState.PLAYING
    p.act("stop")
    assert p.core.state == SafetyState.READY and p.core.match == "idle"
    assert p.game["allowed"]["stop"] is False


def test_a_wire_game_control_moves_the_game_like_the_page():
    p = Panel()
    p.step(GameControl(command=GameCommand.START))
    assert p.core.state == SafetyState.PLAYING
    p.step(GameControl(command=GameCommand.PAUSE))
    assert p.core.state == SafetyState.PAUSED


def test_a_page_action_that_cannot_apply_is_refused_and_not_sent():
    p = Panel()
    out = p.act("pause")
    assert not [m for m in out.messages if isinstance(m, GameControl)]
    assert p.game["log"][0] == {"when": "2023-11-14T22:13:20+00:00", "who": "192.0.2.7",
                                "action": "pause", "result": "nothing to pause in READY"}
    assert "refused" in p.game["notice"]


def test_fault_shows_its_causes_halts_the_match_and_restart_waits_for_them():
    p = Panel()
    p.act("start")
    p.safety = SafetyView(True, ("motor_driver: overcurrent axis 3",), "alarm from motor_driver")
    p.step()
    assert p.core.state == SafetyState.FAULT
    assert p.states[-1].state == SafetyState.FAULT
    assert p.states[-1].alarm_text == "motor_driver: overcurrent axis 3"
    assert p.game["causes"] == ["motor_driver: overcurrent axis 3"]
    assert p.game["allowed"]["restart"] is False and p.game["allowed"]["start"] is False
    out = p.act("restart")
    assert not [m for m in out.messages if isinstance(m, GameControl)]
    p.safety = SafetyView(True, (), "alarm from motor_driver")  # the cause is gone
    p.step()
    assert p.game["allowed"]["restart"] is True
    out = p.step(actions=(action("restart"),))
    assert [m.command for m in out.messages if isinstance(m, GameControl)] == \
        [GameCommand.RESTART]
    p.safety = SafetyView(False, (), "", restarts=1)  # the runtime's latch accepted it
    p.step()
    assert p.core.state == SafetyState.PAUSED  # waits for a START, never resumes by itself
    p.act("start")
    assert p.core.state == SafetyState.PLAYING


def test_drives_rehoming_pause_the_match():
    p = Panel()
    p.act("start")
    p.step(motors(DriveState.HOMING))
    assert p.core.state == SafetyState.HOMING
    p.step(motors(DriveState.READY))
    assert p.core.state == SafetyState.PAUSED


def one_drive(axis: int, state: DriveState) -> MotorStatus:
    ready = motors()
    return dataclasses.replace(ready, axes=tuple(
        dataclasses.replace(a, state=state) if a.axis == axis else a for a in ready.axes))


def test_a_halted_drive_pauses_the_match_until_released_and_homed_again():
    """Issue 29: "halt" on one drive row froze every rod (the strategy sends nothing while a
    drive is in quick stop) while the match played on, clock running, goals counted, and
    the page said "Drives: READY"."""
    p = Panel()
    p.act("start")
    p.step(dt=1.0)
    clock = p.core.clock_s
    p.step(one_drive(3, DriveState.QUICK_STOP))
    assert p.core.state == SafetyState.PAUSED and p.states[-1].state == SafetyState.PAUSED
    assert p.game["drives"] == "PAUSED"
    assert p.game["drives_text"].startswith("HALTED: drive 3 (defence rotation) in quick stop")
    p.step(dt=5.0)
    assert p.core.clock_s == pytest.approx(clock, abs=0.02)  # the clock stopped
    goal_run(p, [0.5, 0.55, 0.59, HALF_L + 0.01])
    assert p.core.score == {"robot": 0, "human": 0}  # no goal counts
    p.act("start")
    assert p.core.state == SafetyState.PAUSED and not p.game["allowed"]["start"]
    assert p.core.log[0]["result"].startswith("cannot start: HALTED: drive 3")
    p.step(one_drive(3, DriveState.HOMING))  # released: aligned and homed again
    assert p.core.state == SafetyState.HOMING and p.game["drives_text"] == "HOMING"
    p.step(motors())
    assert p.core.state == SafetyState.PAUSED and p.game["allowed"]["start"]  # waits for START
    p.act("start")
    assert p.core.state == SafetyState.PLAYING


def test_a_drive_fault_reads_fault_on_the_drives_line_not_ready():
    p = Panel()
    p.step(one_drive(5, DriveState.FAULT))
    assert p.game["drives"] == "FAULT"
    assert p.game["drives_text"] == "FAULT: drive 5 (midfield rotation)"
    assert not p.game["allowed"]["start"]
    assert p.core.state == SafetyState.PAUSED  # FAULT itself is the latch's to say
    p.step(MotorStatus(axes=tuple(dataclasses.replace(a, state=DriveState.QUICK_STOP)
                                  for a in motors().axes)))
    assert p.game["drives_text"].startswith("HALTED: drives 0 (goalkeeper translation), 1 ")


CONFIRM_NS = round(GOAL_CONFIRM_S * 1e9)


def goal_run(p: Panel, xs: list[float], y: float = 0.02) -> None:
    """Sightings 5 ms apart, then the ball LOST until a goal would be confirmed."""
    for i, x in enumerate(xs):
        p.step(ball(x, y, t=i * 5_000_000))
    lost = len(xs) * 5_000_000
    p.step(ball(0.0, 0.0, BallStatus.LOST, t=lost))
    p.step(ball(0.0, 0.0, BallStatus.LOST, t=lost + CONFIRM_NS))


def test_a_ball_lost_over_the_goal_line_inside_the_mouth_is_a_goal():
    p = Panel()
    p.act("start")
    goal_run(p, [0.5, 0.55, 0.59, HALF_L + 0.01])
    assert p.core.score == {"robot": 1, "human": 0}
    assert p.states[-1].score_robot == 1
    p.step(ball(0.0, 0.0, BallStatus.LOST, t=2 * CONFIRM_NS))  # still lost: the same goal
    assert p.core.score == {"robot": 1, "human": 0}
    goal_run(p, [-0.5, -0.59, -HALF_L - 0.005])
    assert p.core.score == {"robot": 1, "human": 1}
    assert p.game["score"] == {"robot": 1, "human": 1}


@pytest.mark.parametrize("xs, y", [
    ([0.576, 0.577, 0.578], 0.02),  # lost before the line, slow (under the goalkeeper)
    ([0.5, 0.59, HALF_L + 0.01], TABLE.field.goal_width / 2 + 0.01),  # outside the mouth
])
def test_no_goal_without_crossing_the_line_inside_the_mouth(xs, y):
    p = Panel()
    p.act("start")
    goal_run(p, xs, y)
    assert p.core.score == {"robot": 0, "human": 0}


def test_goals_count_only_while_playing_and_a_new_match_starts_at_zero():
    p = Panel()
    goal_run(p, [0.59, HALF_L + 0.01])
    assert p.core.score == {"robot": 0, "human": 0}
    p.act("start")
    p.step(ball(0.0))  # back in the field: armed again
    goal_run(p, [0.59, HALF_L + 0.01])
    p.act("stop")
    assert p.game["score"] == {"robot": 1, "human": 0}  # the final score stays shown
    p.act("start")
    assert p.core.score == {"robot": 0, "human": 0} and p.core.clock_s < 0.05


def test_a_goal_that_went_in_before_the_match_started_is_not_the_match_s():
    # Seen on the rig: the previous test's last goal, not yet confirmed when the next test
    # started a new match, was counted in it.
    p = Panel()
    p.step(ball(HALF_L + 0.01, 0.0, t=0))
    p.step(ball(0.0, 0.0, BallStatus.LOST, t=10_000_000))
    p.act("start")
    p.step(ball(0.0, 0.0, BallStatus.LOST, t=10_000_000 + CONFIRM_NS))
    assert p.core.score == {"robot": 0, "human": 0}
    p.step(ball(0.0, 0.3, t=1_000_000_000))  # served
    goal_run(p, [0.59, HALF_L + 0.01])  # the same goal in the match counts
    assert p.core.score == {"robot": 1, "human": 0}


def lost_at(t: int) -> BallState:
    return ball(0.0, status=BallStatus.LOST, t=t)


def confirmed(goals: GoalDetector, lost_ns: int) -> str | None:
    """LOST at `lost_ns`, and still LOST when a goal would be confirmed."""
    assert goals.observe(lost_at(lost_ns)) is None  # not at once: it may bounce back out
    return goals.observe(lost_at(lost_ns + CONFIRM_NS))


def test_goal_detector_rearms_only_after_the_ball_is_back_in_the_field():
    goals = GoalDetector(TABLE)
    assert goals.observe(ball(HALF_L + 0.01)) is None
    assert confirmed(goals, 0) == "robot"
    assert goals.observe(ball(HALF_L + 0.01)) is None
    assert confirmed(goals, 0) is None  # not re-armed
    goals.observe(ball(0.1))
    goals.observe(ball(-HALF_L - 0.01))
    assert confirmed(goals, 0) == "human"


def test_a_ball_that_vanishes_into_the_goal_between_frames_is_a_goal():
    # At 50 fps a 3 m/s shot is last seen 2 mm in front of the line (seen on the rig: the
    # tracker reports LOST at x = 0.598 m the frame after the ball went in).
    goals = GoalDetector(TABLE)
    goals.observe(ball(HALF_L - 0.002, 0.01, t=0, vx=3.0))
    assert confirmed(goals, 20_000_000) == "robot"
    goals.observe(ball(0.0))
    goals.observe(ball(-HALF_L + 0.002, -0.01, t=0, vx=-3.0))
    assert confirmed(goals, 20_000_000) == "human"


def test_a_hard_shot_seen_once_after_the_kick_is_a_goal():
    # Seen on the live table at 50 fps: kicked at 9 m/s, the filter restarts its velocity at
    # 0 on the first sighting after the kick, and the next frame the ball is in the goal.
    goals = GoalDetector(TABLE)
    goals.observe(ball(-0.256, 0.122, t=0, vx=-0.45))
    goals.observe(ball(-0.437, 0.062, t=20_000_000, vx=0.0))
    assert confirmed(goals, 40_000_000) == "human"


def test_a_ball_seen_back_in_the_field_before_the_goal_stands_is_no_goal():
    # Seen on the live table: shot at 10 m/s, last seen 0.1 m in front of the line, then
    # back out off the goalkeeper two frames later.
    goals = GoalDetector(TABLE)
    goals.observe(ball(-0.291, 0.0, t=0))
    goals.observe(ball(-0.499, 0.0, t=20_000_000, vx=-10.4))
    assert goals.observe(lost_at(40_000_000)) is None
    assert goals.observe(ball(-0.293, 0.0, t=60_000_000)) is None
    assert goals.observe(lost_at(40_000_000 + CONFIRM_NS)) is None


def test_a_predicted_state_drifting_out_of_the_mouth_does_not_hide_the_goal():
    # A slow ball entering near a post: the filter's prediction wanders beside the post.
    goals = GoalDetector(TABLE)
    goals.observe(ball(-0.616, 0.085, t=0, vx=-0.18))
    goals.observe(BallState(capture_time=80_000_000, frame=0, x=-0.631, y=0.11, vx=-0.18,
                            vy=0.3, covariance=(0.0, 0.0, 0.0, 0.0),
                            status=BallStatus.PREDICTED))
    assert confirmed(goals, 100_000_000) == "human"


@pytest.mark.parametrize("x, y, vx, vy, lost_after_ns", [
    (HALF_L - 0.02, 0.0, 0.0, 0.0, 20_000_000),  # stopped under the goalkeeper, then lost
    (HALF_L - 0.002, 0.0, -3.0, 0.0, 20_000_000),  # moving away from the goal
    (HALF_L - 0.08, 0.0, 0.5, 0.0, 2_000_000_000),  # slow: lost long after, not carried on
    # aimed over the line beside the mouth (it would meet the end wall)
    (HALF_L - 0.002, TABLE.field.goal_width / 2 + 0.02, 3.0, 0.0, 20_000_000),
])
def test_a_track_that_ends_outside_a_goal_mouth_is_no_goal(x, y, vx, vy, lost_after_ns):
    goals = GoalDetector(TABLE)
    goals.observe(BallState(capture_time=0, frame=0, x=x, y=y, vx=vx, vy=vy,
                            covariance=(0.0, 0.0, 0.0, 0.0), status=BallStatus.DETECTED))
    assert confirmed(goals, lost_after_ns) is None


def test_a_shot_lost_for_a_frame_on_its_way_in_keeps_its_heading():
    # Seen on the live table at 50 fps: a 5 m/s shot seen, hidden by a man for one frame,
    # seen once more (the filter's velocity restarted at 0), then in the goal.
    goals = GoalDetector(TABLE)
    goals.observe(ball(-0.31, -0.208, t=0))
    assert goals.observe(lost_at(20_000_000)) is None
    goals.observe(ball(-0.524, -0.05, t=40_000_000))
    assert confirmed(goals, 60_000_000) == "human"


def test_a_ball_last_seen_still_at_the_line_inside_the_mouth_is_a_goal():
    # Seen on the live table at 50 fps: seen once on the line (the filter's velocity just
    # restarted at 0), then in the goal; beside the mouth the end wall stops it earlier.
    goals = GoalDetector(TABLE)
    goals.observe(ball(HALF_L - 0.001, 0.064, t=0))
    assert confirmed(goals, 20_000_000) == "robot"


def hidden_near_the_goal(goals: GoalDetector) -> None:
    """Seen on the rig, twice the same sightings: last seen rolling along the end wall
    towards the mouth, then hidden by the men; either in the goal (the table counted it) or
    stopped behind the goalkeeper (a dead ball). Up to here the camera cannot tell."""
    goals.observe(BallState(capture_time=0, frame=0, x=0.568, y=0.141, vx=0.05, vy=-0.4,
                            covariance=(0.0, 0.0, 0.0, 0.0), status=BallStatus.DETECTED))
    assert confirmed(goals, 10_000_000) is None


def test_a_ball_hidden_all_the_way_in_counts_at_the_serve_that_follows():
    goals = GoalDetector(TABLE)
    hidden_near_the_goal(goals)
    assert goals.observe(lost_at(1_200_000_000)) is None
    assert goals.observe(ball(0.0, 0.3, t=1_300_000_000)) == "robot"  # the serve, 1.3 s on
    assert goals.uncertain is None
    assert goals.observe(ball(0.01, 0.28, t=1_310_000_000)) is None  # once


@pytest.mark.parametrize("x, y, after_s", [
    (0.522 - 0.035, 0.0, 3.2),  # a dead ball, put at the goalkeeper after 3 s still
    (0.45, 0.12, 0.6),  # rolled out from behind the men
    (0.04, 0.0, 0.3),  # kicked out hard: seen at the middle sooner than any serve
])
def test_a_hidden_ball_seen_again_anywhere_but_a_timely_serve_is_no_goal(x, y, after_s):
    goals = GoalDetector(TABLE)
    hidden_near_the_goal(goals)
    assert goals.observe(ball(x, y, t=round(after_s * 1e9))) is None
    assert goals.uncertain is None
    assert goals.observe(ball(0.0, 0.3, t=round((after_s + 1.0) * 1e9))) is None  # decided


def test_no_serve_in_time_makes_the_goal_uncertain_and_the_next_sighting_may_withdraw_it():
    goals = GoalDetector(TABLE)
    hidden_near_the_goal(goals)
    assert goals.observe(lost_at(2_400_000_000)) is None and goals.uncertain is None
    assert goals.observe(lost_at(2_600_000_000)) is None
    assert goals.uncertain == "robot"
    assert goals.observe(ball(0.487, 0.0, t=3_300_000_000)) is None  # at the goalkeeper
    assert goals.uncertain is None


def test_a_late_serve_leaves_the_goal_uncertain():
    # A person slow to serve, or a possession restart after a ball hidden behind the men.
    goals = GoalDetector(TABLE)
    hidden_near_the_goal(goals)
    assert goals.observe(ball(0.0, 0.3, t=4_000_000_000)) is None
    assert goals.uncertain == "robot"


def uncertain_goal(p: Panel) -> None:
    """A match on, a ball hidden near the robot's goal (the human's scoring), no serve."""
    p.act("start")
    p.step(ball(-0.568, -0.141, t=0, vx=-0.05))
    for t in (10_000_000, 1_000_000_000, 2_600_000_000):
        p.step(lost_at(t))


def test_the_page_asks_about_an_uncertain_goal_and_counting_it_is_one_press():
    p = Panel()
    uncertain_goal(p)
    assert p.game["uncertain"]["team"] == "human"
    assert "camera cannot tell" in p.game["notice"]
    assert p.core.score == {"robot": 0, "human": 0}  # not counted until answered
    p.act("goal", count=True)
    assert p.core.score == {"robot": 0, "human": 1}
    assert p.states[-1].score_human == 1  # on the wire at once
    assert p.game["uncertain"] is None
    assert p.game["log"][0]["action"] == "goal human counted"
    p.act("goal", count=True)  # answered: a second press counts nothing
    assert p.core.score == {"robot": 0, "human": 1}
    assert "refused" in p.game["notice"]


def test_dismissing_an_uncertain_goal_keeps_the_score():
    p = Panel()
    uncertain_goal(p)
    p.act("goal", count=False)
    assert p.core.score == {"robot": 0, "human": 0}
    assert p.game["uncertain"] is None
    assert p.game["log"][0]["action"] == "goal human dismissed"


@pytest.mark.parametrize("args", [{}, {"count": 1}, {"count": "yes"}])
def test_an_answer_that_is_not_yes_or_no_is_refused(args):
    p = Panel()
    uncertain_goal(p)
    p.act("goal", **args)
    assert p.game["uncertain"]["team"] == "human"
    assert p.game["log"][0]["result"] == "needs count true or false"


def test_a_new_match_drops_the_last_match_s_uncertain_goal():
    p = Panel()
    uncertain_goal(p)
    p.act("stop")
    assert p.game["uncertain"] is None
    p.act("start")
    assert p.game["uncertain"] is None and p.core.score == {"robot": 0, "human": 0}


def test_the_operator_corrects_the_score_while_a_match_is_on():
    p = Panel()
    p.act("score", team="robot", change=1)
    assert p.core.score == {"robot": 0, "human": 0}  # no match on
    p.act("start")
    p.act("score", team="robot", change=1)
    p.act("score", team="human", change=1)
    p.act("score", team="human", change=-1)
    assert p.game["score"] == {"robot": 1, "human": 0}
    assert p.states[-1].score_robot == 1  # on the wire at once
    assert p.game["log"][0]["action"] == "score human -1"
    p.act("pause")
    p.act("score", team="robot", change=-1)
    assert p.core.score == {"robot": 0, "human": 0}


@pytest.mark.parametrize("args", [
    {"team": "robot", "change": -1},  # below 0
    {"team": "referee", "change": 1},
    {"team": "robot", "change": 2},
    {"team": "robot", "change": True},
    {"team": "robot", "change": 1.0},
    {"team": "robot"},
])
def test_a_score_correction_out_of_bounds_is_refused_and_changes_nothing(args):
    p = Panel()
    p.act("start")
    p.act("score", **args)
    assert p.core.score == {"robot": 0, "human": 0}
    assert p.game["log"][0]["result"] != "sent"
    assert "refused" in p.game["notice"]


def test_ball_view_has_a_trail_of_recent_states_and_a_predicted_path():
    p = Panel()
    for i in range(200):
        p.step(ball(-0.4 + 0.002 * i, 0.05, t=i * 5_000_000, vx=0.4))
    view = p.out.actuation["ball"]
    assert view["x"] == pytest.approx(-0.002, abs=1e-4)
    assert view["t_ms"] == pytest.approx(199 * 5.0)
    trail = view["trail"]
    assert 95 <= len(trail) <= 101  # 0.5 s of 5 ms states
    assert trail[-1] == [view["x"], view["y"]]
    assert view["path"][0] == [view["x"], view["y"]] and view["path"][-1][0] > view["x"]
    p.step(ball(0.0, status=BallStatus.LOST))
    assert p.out.actuation["ball"]["trail"] == [] and p.out.actuation["ball"]["path"] == []


def test_rods_view_places_the_robot_rods_as_measured_and_the_human_rods_unmeasured():
    p = Panel()
    p.step(RodStatus(rods=(RodPosition(rod=RodId.ATTACK, translation=0.05, rotation=0.3,
                                       translation_velocity=0.0, rotation_velocity=0.0),)))
    rods = p.out.actuation["rods"]
    names = [r.name for r in TABLE.rods]
    attack = rods[names.index("robot_attack")]
    assert attack == {"translation": 0.05, "rotation": 0.3, "measured": True}
    assert rods[names.index("human_attack")]["measured"] is False
    assert len(rods) == len(TABLE.rods) == len(p.out.actuation["table"]["rods"])


def test_vision_actions_send_a_checked_vision_config():
    p = Panel()
    out = p.step(actions=(action("vision", hue_low=100, hue_high=130),))
    [config] = [m for m in out.messages if isinstance(m, VisionConfig)]
    assert (config.hue_low, config.hue_high, config.preview) == (100, 130, False)
    out = p.step(actions=(action("preview", on=True),))
    [config] = [m for m in out.messages if isinstance(m, VisionConfig)]
    assert config.preview and config.hue_low == 100
    assert p.out.actuation["vision"]["config"]["hue_low"] == 100
    for bad in ({"sat_low": 250, "sat_high": 10}, {"hue_low": 400}, {"colour": 3},
                {"min_area": "big"}):
        out = p.step(actions=(action("vision", **bad),))
        assert not [m for m in out.messages if isinstance(m, VisionConfig)], bad
        assert p.game["log"][0]["result"] != "sent"


def test_preview_parts_assemble_into_one_mask():
    p = Panel()
    mask = np.zeros((120, 160), bool)
    mask[10:20, 30:40] = True
    packed = np.packbits(mask).tobytes()
    parts = [packed[i:i + 1024] for i in range(0, len(packed), 1024)]
    for i, chunk in enumerate(parts[:-1]):
        p.step(VisionPreview(frame=7, part=i, parts=len(parts), width=160, height=120,
                             mask=chunk))
        assert p.out.actuation["preview"] is None
    p.step(VisionPreview(frame=7, part=len(parts) - 1, parts=len(parts), width=160,
                         height=120, mask=parts[-1]))
    preview = p.out.actuation["preview"]
    bits = np.unpackbits(np.frombuffer(base64.b64decode(preview["bits"]), np.uint8))
    assert (preview["frame"], preview["width"], preview["height"]) == (7, 160, 120)
    assert bits[:160 * 120].reshape(120, 160).sum() == 100


MADE = datetime(2026, 12, 1, 21, 16, 27, tzinfo=UTC)
CALIBRATION = CalibrationStatus(made_at=round(MADE.timestamp() * 1e9), reprojection_rms_px=0.4213,
                                reprojection_max_px=0.9671, table_rms_m=0.00112, width=640,
                                height=480, markers=4)


def test_the_tracker_calibration_is_shown_until_the_tracker_falls_silent():
    p = Panel()
    shown = p.out.actuation["calibration"]
    assert not shown["reported"] and "not reported by the ball tracker" in shown["warnings"][0]
    p.step(CALIBRATION)
    assert p.out.actuation["calibration"] == {
        "reported": True, "rms_px": 0.42, "max_px": 0.97, "table_rms_mm": 1.1,
        "made": "2026-12-01 21:16 UTC", "image": "640x480", "markers": 4, "warnings": []}
    for _ in range(34):  # 3.4 s without a report: within the 3.5 s the panel allows
        p.step(dt=0.1)
    assert p.out.actuation["calibration"]["reported"]
    p.step(dt=0.2)
    assert not p.out.actuation["calibration"]["reported"]
    p.step(dataclasses.replace(CALIBRATION, width=1280, height=720))
    assert p.out.actuation["calibration"]["image"] == "1280x720"


@pytest.mark.parametrize(("changes", "warnings"), [
    ({"reprojection_rms_px": 1.5}, []),  # the limit itself is still fine
    ({"reprojection_rms_px": 1.51}, ["reprojection error 1.51 px rms is above 1.5 px"]),
    ({"made_at": 0}, ["when it was made is unknown"]),
    ({"made_at": 0, "reprojection_rms_px": 3.0}, ["unknown", "3.00 px rms is above"]),
])
def test_a_poor_or_undated_calibration_is_a_warning(changes, warnings):
    p = Panel()
    p.step(dataclasses.replace(CALIBRATION, **changes))
    shown = p.out.actuation["calibration"]
    assert shown["reported"] and len(shown["warnings"]) == len(warnings)
    assert all(part in text for part, text in zip(warnings, shown["warnings"], strict=True))


def test_the_reprojection_limit_is_a_panel_setting():
    p = Panel(GamePanelConfig(calibration_warn_rms_px=2.0))
    p.step(dataclasses.replace(CALIBRATION, reprojection_rms_px=1.8))
    assert p.out.actuation["calibration"]["warnings"] == []
    p.step(dataclasses.replace(CALIBRATION, reprojection_rms_px=2.2))
    assert "above 2 px" in p.out.actuation["calibration"]["warnings"][0]


def test_alarms_are_listed_and_a_refused_restart_is_a_notice():
    p = Panel()
    p.step(Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.RESTART_REFUSED,
                 text="restart refused: overcurrent", latched=False, axis=-1))
    assert p.game["alarms"] == ["motor_driver RESTART_REFUSED: restart refused: overcurrent"]
    assert p.game["notice"] == "motor_driver: restart refused: overcurrent"


def test_each_alarm_is_one_row_with_its_count_however_often_it_repeats():
    """Issue 29: each 100 ms repeat of an alarm was a new row (two alarms interleaved)."""
    p = Panel()
    overcurrent = Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT,
                        text="drive 3 fault 0x2310", latched=True, axis=3)
    missing = Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.HEARTBEAT_MISSING,
                    text="strategy silent", latched=True, axis=-1)
    for n in range(10):  # one second of repeats, the two interleaved
        wall = (1_700_000_000 + n // 10) * 10**9 + n * 10**8
        p.core.step(Inputs(p.now + 0.1 * n, (overcurrent, missing), None, p.safety, wall))
    p.step(overcurrent)
    rows = p.game["alarms"]
    assert len(rows) == 2
    assert rows[0].startswith("motor_driver OVERCURRENT axis 3: drive 3 fault 0x2310 (x11, ")
    assert rows[1] == "pole_driver HEARTBEAT_MISSING: strategy silent (x10, 22:13:20-22:13:20)"


def test_rods_view_places_the_human_rods_where_the_camera_measured_them():
    p = Panel()
    p.step(HumanRods(capture_time=1, frame=1, rods=(HumanRod(
        rod=RodId.ATTACK, translation=-0.04, rotation=0.0, men_seen=3, rotation_seen=False),)))
    rods = p.out.actuation["rods"]
    names = [r.name for r in TABLE.rods]
    assert rods[names.index("human_attack")] == {"translation": -0.04, "rotation": 0.0,
                                                  "measured": True}
    assert rods[names.index("robot_attack")]["measured"] is False
