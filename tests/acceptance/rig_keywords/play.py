"""The match on the live table against its scripted human: saves and goals as the table
counts them (its truth), and the score the game panel keeps from what the tracker saw.

Only what happens while the game says PLAYING counts: the table plays on whatever the game
does (the scripted human does not stop for a FAULT), the game panel counts goals only while
PLAYING."""

from __future__ import annotations

import bisect
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from robot.api import logger
from robot.api.deco import keyword

from foosball.agents.game_panel import (
    MOUTH_MARGIN_M,
    NEAR_GOAL_M,
    SERVE_WINDOW_S,
    GoalDetector,
)
from foosball.geometry import default_table
from foosball.wire.catalogue import BallState, BallStatus, GameState, SafetyState
from rig_keywords.context import SimulatedTable
from rig_keywords.waiting import seconds, wait_until

# A DETECTED ball state this near where the table says the ball was: the camera saw the ball
# (the tracker's error is millimetres; one seen 17 cm from it, once, was something else).
SAW_THE_BALL_M = 0.03
# A goal the camera saw go in: the ball seen in the mouth, past where the end wall would
# stop it, this long at most before the table counted the goal (the game panel counts that
# ball whatever its speed; one hidden before the line it judges by where it was heading).
SAW_IN_THE_MOUTH_S = 0.5
MOUTH = GoalDetector(default_table())


def served_after(sightings: list[tuple[int, float, float]], after: int) -> bool:
    """Whether the ball, last seen (sightings[after - 1]) near a goal, was next seen
    (sightings[after]) at the serve, between the 5-man rods, in the window a serve follows a
    goal: what the camera tells of a goal the men hid on its way in (the rules put a ball
    that stopped hidden behind the 5-man rods at that end's goalkeeper instead)."""
    if after == 0 or after >= len(sightings):
        return False
    (last_t, last_x, last_y), (next_t, next_x, _) = sightings[after - 1], sightings[after]
    gap_s = (next_t - last_t) * 1e-9
    return (abs(last_x) >= MOUTH.half_length - NEAR_GOAL_M
            and abs(last_y) <= MOUTH.goal_half + MOUTH_MARGIN_M
            and abs(next_x) <= MOUTH.serve_half
            and SERVE_WINDOW_S[0] <= gap_s <= SERVE_WINDOW_S[1])


def score_changes(items: list[Any], score: Callable[[Any], tuple[int, int]]) -> list[Any]:
    """The items whose score differs from the one before."""
    return [now for before, now in itertools.pairwise(items) if score(now) != score(before)]


@dataclass
class Tally:
    robot: int = 0
    human: int = 0
    saves: int = 0
    not_playing: int = 0  # goals the table counted while the game was not PLAYING
    # goals while playing that the camera cannot tell, by the scoring team: not seen go in
    # (no DETECTED ball state where the ball was, in the mouth, within SAW_IN_THE_MOUTH_S)
    # and not served after the ball vanished near that goal (`served_after`)
    unseen: dict[str, int] = field(default_factory=lambda: {"robot": 0, "human": 0})
    alarms: str = ""

    @property
    def seen(self) -> int:
        """Goals while playing that the camera told: the panel must count each."""
        return self.robot + self.human - sum(self.unseen.values())

    def __str__(self) -> str:
        return (f"while playing since the start: robot {self.robot} : {self.human} human "
                f"(the camera could not tell: robot {self.unseen['robot']}, human "
                f"{self.unseen['human']}), {self.saves} robot saves ({self.not_playing} goals "
                f"while not playing; {self.alarms})")


class PlayKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx

    def _tally(self) -> Tally:
        """The table's goals and saves since the game was started, each counted when the
        last GameState heard before it said PLAYING."""
        ctx = self.ctx
        previous = ctx.start_truth
        if previous is None:
            raise AssertionError("no truth from the live table when the game was started "
                                 "('the game is started' first)")
        tally = Tally(alarms=ctx.alarms_since(ctx.started_s))
        truth_at = ctx.truth.by_stamp(ctx.started_s - 1.0)
        sightings = sorted((ball.capture_time, ball.x, ball.y) for ball in (
            h.message for h in ctx.observer.since(ctx.started_s - 1.0, BallState))
            if ball.status == BallStatus.DETECTED and
            (truth := truth_at.get(ball.capture_time)) is not None and
            math.hypot(ball.x - truth.x, ball.y - truth.y) <= SAW_THE_BALL_M)
        stamps = [t for t, _, _ in sightings]
        in_mouth = [t for t, x, y in sightings
                    if abs(x) > MOUTH.field_x and abs(y) <= MOUTH.goal_half]
        for frame, state in ctx.with_game_state(ctx.truth.since(ctx.started_s)):
            playing = state == SafetyState.PLAYING
            goals = (frame.score_robot - previous.score_robot,
                     frame.score_human - previous.score_human)
            if playing:
                tally.robot += goals[0]
                tally.human += goals[1]
                tally.saves += frame.saves_robot - previous.saves_robot
                last_seen = bisect.bisect_right(in_mouth, frame.t_ns)
                if sum(goals) and (last_seen == 0 or frame.t_ns - in_mouth[last_seen - 1]
                                   > SAW_IN_THE_MOUTH_S * 1e9) and \
                        not served_after(sightings, bisect.bisect_right(stamps, frame.t_ns)):
                    tally.unseen["robot" if goals[0] else "human"] += 1
            else:
                tally.not_playing += sum(goals)
            previous = frame
        return tally

    def _tracked_at_goals(self) -> str:
        """What the tracker reported around each goal the table counted (for a failure)."""
        ctx = self.ctx
        frames = ctx.truth.since(ctx.started_s)
        balls = [h.message for h in ctx.observer.since(ctx.started_s - 1.0, BallState)]
        goals = score_changes(frames, lambda f: (f.score_robot, f.score_human))
        told = []
        for goal in goals:
            near = [b for b in balls if -0.2e9 <= b.capture_time - goal.t_ns <= 0.4e9]
            track = ", ".join(f"{(b.capture_time - goal.t_ns) * 1e-6:+.0f} ms "
                              f"{b.status.name[0]} ({b.x:+.3f}, {b.y:+.3f}) v {b.vx:+.1f}"
                              for b in near)
            told.append(f"goal at ({goal.x:+.3f}, {goal.y:+.3f}): {track or 'no BallState'}")
        return "; ".join(told) or "no goal on the table"

    def _panel_goals(self) -> str:
        """When the game panel's score went up since the start (for a failure)."""
        states = self.ctx.observer.since(self.ctx.started_s - 1.0, GameState)
        told = [f"{h.message.score_robot}:{h.message.score_human} "
                f"{h.at_s - self.ctx.started_s:+.2f} s"
                for h in score_changes(states, lambda h: (h.message.score_robot,
                                                          h.message.score_human))]
        return "its score went " + (", ".join(told) or "nowhere") + " after the start"

    def _left(self, limit: str) -> float:
        return seconds(limit) - (time.monotonic() - self.ctx.started_s)

    @keyword("the robot saves at least ${count} of the human's shots within ${limit} s")
    def saves(self, count: str, limit: str) -> None:
        """Shots of the scripted human on target that a robot man touched before the goal
        (the simulator's own count), `limit` from the start of the game."""
        wanted = int(count)
        wait_until(lambda: self._tally().saves >= wanted, self._left(limit),
                   lambda: f"fewer than {wanted} saves within {limit} s of the start: "
                           f"{self._tally()}")
        logger.info(str(self._tally()))

    @keyword("the robot scores within ${limit} s")
    def robot_scores(self, limit: str) -> None:
        wait_until(lambda: self._tally().robot >= 1, self._left(limit),
                   lambda: f"the robot did not score within {limit} s of the start: "
                           f"{self._tally()}")
        logger.info(str(self._tally()))

    @keyword("a goal is scored within ${limit} s")
    def goal(self, limit: str) -> None:
        def scored() -> bool:
            tally = self._tally()
            return tally.robot + tally.human >= 1
        wait_until(scored, self._left(limit),
                   lambda: f"no goal within {limit} s of the start: {self._tally()}")

    @keyword("a goal the camera can tell is scored within ${limit} s")
    def seen_goal(self, limit: str) -> None:
        """At least one goal while playing that the camera can tell: the ball seen in the
        mouth, or seen vanishing near the goal and next at the serve (the score check after
        it then needs the panel to have counted a goal: one that never counts fails)."""
        wait_until(lambda: self._tally().seen >= 1, self._left(limit),
                   lambda: f"no goal the camera can tell within {limit} s of the start: "
                           f"{self._tally()}; {self._tracked_at_goals()}")

    @keyword("the game panel's score while paused")
    def paused_score(self, within_s: float = 5.0) -> GameState:
        """The last GameState PAUSED heard (sent since the last second): no goal counts
        while paused, so its score stands still."""
        observer = self.ctx.observer
        since = time.monotonic() - 1.0

        def paused() -> GameState | None:
            states = [h.message for h in observer.since(since, GameState)]
            return states[-1] if states and states[-1].state == SafetyState.PAUSED else None
        return wait_until(paused, within_s, lambda: f"the game panel did not say PAUSED "
                                                    f"within {within_s} s; {self._panel_goals()}")

    @keyword("the game panel counts every goal the camera can tell and no other")
    def panel_score(self, within_s: float = 4.0) -> GameState:
        """GameState's score counts, for each team, every goal the table counted while the
        game was playing that the camera can tell (seen in the mouth, or vanished near the
        goal and next seen at the serve), and no goal more (the panel counts a goal once the
        tracker has lost the ball behind the line: allow it a moment). A goal the camera
        cannot tell (hidden, no serve in time) the panel may count from where the ball was
        heading, or leave to the operator (its page asks). Returns that GameState."""
        observer = self.ctx.observer

        def agrees() -> GameState | None:
            tally = self._tally()
            states = observer.since(time.monotonic() - 0.3, GameState)
            if not states:
                return None
            state = states[-1].message
            if all(table - tally.unseen[team] <= panel <= table for team, panel, table in (
                    ("robot", state.score_robot, tally.robot),
                    ("human", state.score_human, tally.human))):
                return state
            return None

        def failure() -> str:
            states = observer.since(time.monotonic() - 1.0, GameState)
            said = (f"{states[-1].message.score_robot}:{states[-1].message.score_human}"
                    if states else "nothing (no GameState)")
            return (f"the game panel says {said}, {self._panel_goals()}; the table "
                    f"{self._tally()}; {self._tracked_at_goals()}")
        state = wait_until(agrees, within_s, failure)
        logger.info(f"game panel {state.score_robot}:{state.score_human}; the table "
                    f"{self._tally()}")
        return state
