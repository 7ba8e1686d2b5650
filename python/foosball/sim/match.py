# Over 500 lines: the match loop and the bookkeeping it feeds each frame (contacts, shots,
# saves, the kind of each goal), which needs the loop's own contacts and clock.
"""Match runner: two controllers on the simulated table, headless, faster than real time.

The loop runs at the camera frame period (default 5 ms): step the physics, make the frame's
BallState (see `perception`), deliver it to the controllers once the perception delay has
passed, apply their commands after the command latency. The delivery is rounded up to the
next frame (the controller is told the time it runs at, so it sees the ball's true age); the
command latency is exact: the physics step is split where a command starts acting.

Kick-off rule (serve). The ball is served from the side at the centre line, as on a real
table: at x = 0 against one side wall (side drawn from the seed), rolling across the field
at 0.6-1.2 m/s with a small drift towards one half. It is served at the start and 1 s after
a goal.

Dead ball. The ball is dead when it has lain still (< 5 cm/s) for 3 s where no man can
kick it forward, and when it has rolled for 3 s in a gap between the rods' reach bands,
where no man can touch it. Where it lies then decides (the referee,
`rules.Referee.dead_ball`): behind the 5-man rods it is put at rest in front of the
goalkeeper of that end (a restart), between them it is served again. A still ball that a man
could kick forward is not dead: it lies in that rod's reach, so the possession limit (10 s
or 15 s, `rules`) takes it away. (Until 2026-12-05 such a ball was served again after 10 s,
the possession limit of the days before the referee; given to the goalkeeper instead, a
goalkeeper that does not play it would have kept it for ever.)

Statistics. A shot is a man's contact after which the ball moves towards the other goal at
>= 2 m/s (contacts of the same rod within `SAME_STRIKE_S` are one strike); it is on target if
its straight path, folded at the side walls (bank shots), ends in the goal mouth. A shot is
decided `SAVE_WINDOW_S` (2 s) after it is struck, not at the defender's first touch: a goal
of the shooting team within that time makes it a goal (a touch followed by a goal is not a
save); otherwise an on-target shot that a man of the defending team touched is a save. (Until
2026-12-06 the first touch was the save, and 7 of 21 goals in a held-out battery came within
0.5 s of a shot so labelled.)

Goals against, by how they came about (`GOAL_KINDS`, from the physics' own contacts): the
last man contact before the goal decides. A man of the scoring team: a clean shot. A man of
the conceding team touching a shot in flight without striking it harder (the speed after is
at most the speed before): a deflected shot. Otherwise a man of the conceding team that sent
the ball towards its own goal: own play; one that sent it elsewhere (in by the walls): a
deflected shot too. A shot deflected more than once (off the defence, then the goalkeeper)
stays a deflected shot while each touch follows the last within `DEFLECTION_RUN_S` and
adds no speed (until 2026-12-07 only its first touch was, and the goalkeeper's was own
play). No man contact since the ball was put in play: untouched. Results report every realism
parameter the match ran with.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from foosball.geometry import Table, default_table
from foosball.recording.format import WorldState
from foosball.sim.controllers import Controller, make_controller
from foosball.sim.params import SimParams, draw_params
from foosball.sim.perception import (
    HUMAN_RODS_EVERY,
    HumanSight,
    TrackerModel,
    human_rods,
    mirror_ball,
    rod_status,
    unmirror_target,
    visible_fraction,
)
from foosball.sim.physics import Contact, World
from foosball.sim.rules import Referee, Restart
from foosball.wire.catalogue import BallState, HumanRods, RodCommand, RodStatus, RodTarget

SHOT_MIN_SPEED = 2.0  # m/s
STILL_SPEED = 0.05  # m/s
DEAD_BALL_S = 3.0
SERVE_DELAY_S = 1.0
SAME_STRIKE_S = 0.03  # s: contacts of one rod this close together are one shot
SAVE_WINDOW_S = 2.0  # s: a shot that does not end in a goal this soon after it is struck
DEFLECT_MARGIN = 0.2  # m/s: a touch that adds no more speed than this deflects, not strikes
# s: a defender's touch this soon after his team's deflection of a shot, adding no speed, is
# the same shot running on off his men (a shot off the defence onto the goalkeeper's foot
# and in is a deflected shot, not the robot's play: 0.04-0.11 s apart in the tuning audits,
# where a ball left slow and then mishandled came 0.5 s on); quicker than the robot sees a
# touch and answers it (a frame, the tracker's lag, the step, the drive)
DEFLECTION_RUN_S = 0.15
GOAL_KINDS = ("clean", "deflected", "own_play", "untouched")


@dataclass
class Shot:
    time: float
    team: str
    rod: str
    speed: float
    on_target: bool
    outcome: str = "open"  # open | goal | saved | missed
    touched: bool = False  # a man of the defending team touched it


@dataclass(frozen=True, slots=True)
class Goal:
    """One goal and how it came about (`GOAL_KINDS`); `last_*` is the last man contact."""

    time: float
    scorer: str
    kind: str
    last_team: str = ""
    last_rod: str = ""
    last_speed_before: float = 0.0
    last_speed_after: float = 0.0


@dataclass(frozen=True, slots=True)
class _Touch:
    """The last man contact of the ball in play (for classifying a goal)."""

    time: float
    team: str
    rod: int
    speed_before: float
    speed_after: float
    vx_after: float
    on_shot: bool  # it met a shot of the other team in flight (see `Match._touch`)


def goal_kinds(goals: list[Goal], conceded_by: str) -> dict[str, int]:
    """How many goals the team `conceded_by` let in of each kind."""
    counts = dict.fromkeys(GOAL_KINDS, 0)
    for goal in goals:
        if goal.scorer != conceded_by:
            counts[goal.kind] += 1
    return counts


@dataclass
class MatchResult:
    robot: str
    opponent: str
    seed: int
    duration: float
    goals_robot: int = 0
    goals_human: int = 0
    shots: list[Shot] = field(default_factory=list)
    saves_robot: int = 0  # robot men stopping human shots on target
    saves_human: int = 0
    serves: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    wall_time: float = 0.0
    # per team: possession-limit and spinning violations, the longest possession (rules.py)
    fouls: dict[str, dict[str, Any]] = field(default_factory=dict)
    restarts: int = 0  # possession, spinning and dead balls put at a goalkeeper
    # dead balls served again (between the 5-man rods) and put at a goalkeeper (behind them)
    dead_balls: dict[str, int] = field(default_factory=lambda: {"served": 0, "goalkeeper": 0})
    goals: list[Goal] = field(default_factory=list)  # every goal, classified

    def summary(self) -> dict[str, Any]:
        def team(name: str) -> dict[str, Any]:
            shots = [s for s in self.shots if s.team == name]
            speeds = [s.speed for s in shots]
            return {
                "shots": len(shots),
                "on_target": sum(s.on_target for s in shots),
                "shot_speed_mean": round(float(np.mean(speeds)), 3) if speeds else 0.0,
                "shot_speed_max": round(max(speeds), 3) if speeds else 0.0,
                "shot_speeds": [round(v, 2) for v in speeds],
            }

        return {
            "robot": self.robot,
            "opponent": self.opponent,
            "seed": self.seed,
            "duration_s": self.duration,
            "goals": {"robot": self.goals_robot, "human": self.goals_human},
            "saves": {"robot": self.saves_robot, "human": self.saves_human},
            # goals each team conceded, by kind (clean, deflected, own_play, untouched)
            "goals_against_by_kind": {team: goal_kinds(self.goals, team)
                                      for team in ("robot", "human")},
            "goal_events": [{"time": round(g.time, 3), "scorer": g.scorer, "kind": g.kind,
                             "last_team": g.last_team, "last_rod": g.last_rod,
                             "last_speed_before": round(g.last_speed_before, 2),
                             "last_speed_after": round(g.last_speed_after, 2)}
                            for g in self.goals],
            "shots": {"robot": team("robot"), "human": team("human")},
            "serves": self.serves,
            "restarts": self.restarts,
            "dead_balls": self.dead_balls,
            "fouls": self.fouls,
            "speed_vs_real_time": round(self.duration / self.wall_time, 1)
            if self.wall_time > 0
            else None,
            "params": self.params,
        }


class Match:
    """One match; `run()` plays it. `on_frame(state)` (optional) sees every world state."""

    def __init__(
        self,
        robot: str | Controller,
        opponent: str | Controller,
        *,
        seed: int = 0,
        duration: float = 60.0,
        table: Table | None = None,
        params: SimParams | None = None,
        randomise: bool = False,
        on_frame: Any = None,
    ) -> None:
        self.table = table or default_table()
        self.rng = np.random.default_rng(seed)
        base = params or SimParams()
        self.params = draw_params(self.rng, base) if randomise else base
        self.seed = seed
        self.duration = duration
        self.world = World(self.table, self.params)
        self.robot_name = robot if isinstance(robot, str) else type(robot).__name__
        self.opponent_name = opponent if isinstance(opponent, str) else type(opponent).__name__
        self.controllers: dict[str, Controller] = {
            "robot": make_controller(robot, self.table, seed) if isinstance(robot, str) else robot,
            "human": make_controller(opponent, self.table, seed + 1)
            if isinstance(opponent, str)
            else opponent,
        }
        self.team_rods = {
            team: [self.table.rods.index(r) for r in self.table.team_rods(team)]
            for team in ("robot", "human")
        }
        hands = getattr(self.controllers["human"], "rod_limits", None)
        for i in self.team_rods["human"]:
            drives = self.params.robot_limits(self.table.rods[i].metres_per_motor_radian())
            self.world.set_rod_limits(i, *(hands or drives))
        # the robot sees through the ball tracker's own code (its noise from a stream of its
        # own); the scripted human through the earlier model, with the match's stream as before
        self.tracker = TrackerModel(self.table, self.params, np.random.default_rng([seed, 30]))
        self.human_sight = HumanSight(self.table, self.params, self.rng)
        # the human's rods as the camera measures them, for a robot controller that reads
        # them (`wants_human_rods`); the meter's noise from a stream of its own, so that a
        # match without it draws exactly as before
        self._measure_human = bool(getattr(self.controllers["robot"], "wants_human_rods", False))
        self._rods_rng = np.random.default_rng([seed, 15])
        self.on_frame = on_frame
        self._deliveries: deque[tuple[float, BallState, BallState, HumanRods | None]] = deque()
        self._commands: deque[tuple[float, str, RodCommand]] = deque()
        # the last RodStatus made of each team's rods, in each team's frame (_rod_status)
        self._statuses: dict[tuple[str, str], tuple[list[Any], RodStatus]] = {}
        self._applied: list[RodTarget | None] = [None] * len(self.table.rods)  # per rod
        self.result = MatchResult(
            self.robot_name, self.opponent_name, seed, duration, params=self.params.as_dict()
        )
        self.referee = Referee(self.table)
        self._open_shot: Shot | None = None  # the latest shot, for one strike's contacts
        self._pending: list[Shot] = []  # shots not yet decided (SAVE_WINDOW_S)
        self._last_touch: _Touch | None = None
        self._still_since: float | None = None
        self._out_of_reach_since: float | None = None
        self._serve_at: float | None = 0.0
        self._serve_side = 1.0 if self.rng.random() < 0.5 else -1.0

    # --- loop ------------------------------------------------------------------------------

    def run(self) -> MatchResult:
        import time as _time

        wall = _time.perf_counter()
        for _ in range(round(self.duration / self.params.frame_period)):
            self.step_frame()
        self._decide_shots()
        self.result.goals_robot = self.world.score.robot
        self.result.goals_human = self.world.score.human
        self.result.fouls = self.referee.summary()
        self.result.wall_time = _time.perf_counter() - wall
        return self.result

    def step_frame(self) -> WorldState:
        """One camera frame period of play: commands due, physics, rules, perception, the
        controllers. Headless matches run it as fast as they can; the rig's live table
        runs it in real time."""
        world = self.world
        period = self.params.frame_period
        delivery_delay = self.params.exposure / 2 + self.params.tracker_latency
        frame_end = world.time + period
        contacts: list[Contact] = []
        # a command whose latency ends inside this frame acts at that exact time
        while self._commands and self._commands[0][0] < frame_end - 1e-9:
            due, team, command = self._commands.popleft()
            if due > world.time + 1e-9:
                contacts += world.step(due - world.time)
            self._apply(team, command)
        contacts += world.step(frame_end - world.time)
        now = world.time
        state = world.state()
        ball = world.ball
        self._account(contacts, state)
        self._referee(contacts, state, now)
        self._kick_off_rule(state, now)
        if world.ball is not ball:  # a serve or a restart moved it (place_ball, remove_ball)
            state = world.state()
        fraction = visible_fraction(self.table, state, world.man.reach, self.params.camera_height)
        ball = self.tracker.observe(state, fraction)
        human_ball = self.human_sight.observe(state, fraction)
        rods = None
        if self._measure_human and self.tracker.frame % HUMAN_RODS_EVERY == 0:
            rods = human_rods(self.table.human_rods,
                              world.rod_poses(self.team_rods["human"]),
                              state.time_ns, self.tracker.frame, self._rods_rng)
        self._deliveries.append((now + delivery_delay, ball, human_ball, rods))
        while self._deliveries and self._deliveries[0][0] <= now + 1e-9:
            _, delivered, human_seen, measured = self._deliveries.popleft()
            if measured is not None:  # the robot's frame is the table frame: as measured
                self.controllers["robot"].observe_human_rods(measured)  # type: ignore[attr-defined]
            self._run_controllers(delivered, now, human_seen)
        while self._commands and self._commands[0][0] <= now + 1e-9:
            _, team, command = self._commands.popleft()
            self._apply(team, command)
        if self.on_frame is not None:
            self.on_frame(state)
        return state

    def _run_controllers(self, ball: BallState, now: float,
                         human_ball: BallState | None = None) -> None:
        """`ball`: what the robot's tracker reports; `human_ball`: what the scripted human
        sees (table frame; None: the same)."""
        now_ns = round(now * 1e9)
        poses = {team: self.world.rod_poses(rods) for team, rods in self.team_rods.items()}
        for team, controller in self.controllers.items():
            other = "human" if team == "robot" else "robot"
            observe = getattr(controller, "observe_opponents", None)
            if observe is not None:
                # the other team's rods in this team's frame (mirrored for the human), made
                # only if the controller looks (a scripted human does when it aims a shot)
                observe(partial(self._rod_status, poses[other], other, team))
            seen = ball if team == "robot" else mirror_ball(human_ball or ball)
            command = controller.step(seen, self._rod_status(poses[team], team, team), now_ns)
            if command is not None:
                self._commands.append((now + self.params.command_latency, team, command))

    def queue_command(self, team: str, command: RodCommand) -> None:
        """A command decided outside the controllers' step (a Gymnasium environment's
        action on the last frame's observation), as if the team's controller had returned
        it on this frame: it acts after the command latency."""
        self._commands.append((self.world.time + self.params.command_latency, team, command))

    def _rod_status(self, poses: list[tuple[float, float, float, float]], rods_of: str,
                    frame: str) -> RodStatus:
        """`rod_status`, the same message again while those rods have not moved (most rods
        stand still most of the time; the messages are immutable)."""
        key = (rods_of, frame)
        known = self._statuses.get(key)
        if known is None or known[0] != poses:
            known = self._statuses[key] = (poses, rod_status(poses, frame, known))
        return known[1]

    def _apply(self, team: str, command: RodCommand) -> None:
        rods = self.team_rods[team]
        applied = self._applied
        external = self.world.axes.external
        for target in command.rods:
            index = rods[target.rod]
            if (applied[index] is target or applied[index] == target) and not (
                    external[2 * index] or external[2 * index + 1]):
                continue  # the setpoint the rod already has (and follows): nothing changes
            applied[index] = target
            translation, rotation = unmirror_target(target, team)
            self.world.command_rod(
                index, translation, rotation, target.translation_speed, target.rotation_speed
            )

    # --- rules and statistics --------------------------------------------------------------

    def _referee(self, contacts: list[Contact], state: WorldState, now: float) -> None:
        """Possession limits and the no-spinning rule; a violation restarts play."""
        struck = {c.rod for c in contacts if c.kind == "man"}
        restart = self.referee.rotations(state.rotations, struck)
        if state.ball_in_play:
            restart = restart or self.referee.possession(state.ball_x, now)
        else:
            self.referee.new_ball()
        if restart is not None:
            self._restart(restart)

    def _restart(self, restart: Restart) -> None:
        self._decide_shots()
        self._last_touch = None
        self.world.place_ball(restart.x, restart.y)
        self.referee.new_ball()
        self._still_since = None
        self._out_of_reach_since = None
        self.result.restarts += 1

    def _kick_off_rule(self, state: WorldState, now: float) -> None:
        if not state.ball_in_play:
            if self._serve_at is None:
                self._serve_at = now + SERVE_DELAY_S
            if now >= self._serve_at:
                self._serve(now)
            return
        if self.referee.holder(state.ball_x) is not None:
            self._out_of_reach_since = None
        elif self._out_of_reach_since is None:
            self._out_of_reach_since = now
        elif now - self._out_of_reach_since >= DEAD_BALL_S:
            # rolling along a gap between the reach bands: a dead ball, as if it lay still
            self._dead_ball(state, now)
            return
        if math.hypot(state.ball_vx, state.ball_vy) < STILL_SPEED:
            if self._still_since is None:
                self._still_since = now
            if now - self._still_since >= DEAD_BALL_S and not self._playable(state):
                self._dead_ball(state, now)
        else:
            self._still_since = None

    def _dead_ball(self, state: WorldState, now: float) -> None:
        """At the goalkeeper of its end if it lies behind the 5-man rods, else served."""
        restart = self.referee.dead_ball(state.ball_x)
        if restart is None:
            self._decide_shots()
            self.world.remove_ball()
            self._serve(now)
            self.result.dead_balls["served"] += 1
        else:
            self._restart(restart)
            self.result.dead_balls["goalkeeper"] += 1

    def _playable(self, state: WorldState) -> bool:
        """Whether some man could kick the resting ball forward (it lies in front of a rod,
        within the feet's reach, in y reach of a man)."""
        reach = self.table.man.contact_reach
        for rod in self.table.rods:
            ahead = (state.ball_x - rod.x) * rod.forward
            if 0.0 < ahead < reach and any(
                lo - 0.01 <= state.ball_y <= hi + 0.01 for lo, hi in rod.reachable_y()
            ):
                return True
        return False

    def _serve(self, now: float) -> None:
        r = self.table.ball.radius
        wall = self.table.field.half_width - r - 0.002
        side = self._serve_side
        self._serve_side = -side
        vx = float(self.rng.uniform(0.1, 0.4)) * (1.0 if self.rng.random() < 0.5 else -1.0)
        vy = -side * float(self.rng.uniform(0.6, 1.2))
        self.world.place_ball(0.0, side * wall, vx, vy)
        self._last_touch = None
        self.referee.new_ball()
        self._serve_at = None
        self._still_since = None
        self._out_of_reach_since = None
        self.result.serves += 1

    def _account(self, contacts: list[Contact], state: WorldState) -> None:
        for contact in contacts:
            t = contact.time_ns * 1e-9
            if contact.kind == "goal":
                self._goal(contact.team, t)
                continue
            if contact.kind != "man":
                continue
            team = contact.team
            for shot in self._pending:
                if shot.team != team:
                    shot.touched = True
            self._touch(contact, t)
            forward = 1.0 if team == "robot" else -1.0
            if contact.speed_after >= SHOT_MIN_SPEED and contact.vx_after * forward > 0:
                rod = self.table.rods[contact.rod]
                last = self._open_shot
                if (
                    last is not None
                    and last.team == team
                    and last.rod == rod.role
                    and t - last.time < SAME_STRIKE_S
                ):
                    # the same foot touching again within one strike: still one shot
                    last.speed = float(contact.speed_after)
                    last.on_target = bool(self._on_target(state, contact, forward))
                    continue
                new = Shot(
                    time=t,
                    team=team,
                    rod=rod.role,
                    speed=float(contact.speed_after),
                    on_target=bool(self._on_target(state, contact, forward)),
                )
                self.result.shots.append(new)
                self._pending.append(new)
                self._open_shot = new
        if self._pending and state.time_ns * 1e-9 - self._pending[0].time >= SAVE_WINDOW_S:
            now = state.time_ns * 1e-9
            due = [s for s in self._pending if now - s.time >= SAVE_WINDOW_S]
            self._decide_shots(due)

    def _touch(self, contact: Contact, t: float) -> None:
        """Remember the last man contact and whether it met a shot of the other team in
        flight: the ball's last touch was that shot's strike, or a deflection of it by the
        toucher's team just before (`DEFLECTION_RUN_S`). A strike's later contacts (same rod
        within `SAME_STRIKE_S`) keep what its first met."""
        last = self._last_touch
        if last is not None and last.rod == contact.rod and t - last.time < SAME_STRIKE_S:
            on_shot, speed_before = last.on_shot, last.speed_before
        else:
            shot = self._open_shot
            struck = (shot is not None and shot.team != contact.team and last is not None
                      and last.team == shot.team and last.time >= shot.time)
            # (a deflection sent forward fast enough counts as a shot of the deflecting
            # team: the run is judged by the touches, not by the latest shot)
            deflected = (last is not None and last.team == contact.team and last.on_shot
                         and last.speed_after <= last.speed_before + DEFLECT_MARGIN
                         and t - last.time < DEFLECTION_RUN_S)
            on_shot = struck or deflected
            speed_before = contact.speed_before
        self._last_touch = _Touch(t, contact.team, contact.rod, speed_before,
                                  contact.speed_after, contact.vx_after, on_shot)

    def _goal(self, scorer: str, t: float) -> None:
        """Classify the goal, and decide the open shots: the scorer's within the window
        are goals, the rest are decided as they stand."""
        self.result.goals.append(self._classify_goal(scorer, t))
        scored = [s for s in self._pending if s.team == scorer and t - s.time < SAVE_WINDOW_S]
        for shot in scored:
            shot.outcome = "goal"
            self._pending.remove(shot)
        self._decide_shots()
        self._last_touch = None

    def _classify_goal(self, scorer: str, t: float) -> Goal:
        touch = self._last_touch
        if touch is None:
            return Goal(t, scorer, "untouched")
        rod = self.table.rods[touch.rod].role
        if touch.team == scorer:
            kind = "clean"
        elif touch.on_shot and touch.speed_after <= touch.speed_before + DEFLECT_MARGIN:
            kind = "deflected"
        else:
            own_goal_direction = -1.0 if touch.team == "robot" else 1.0
            kind = "own_play" if touch.vx_after * own_goal_direction > 0 else "deflected"
        return Goal(t, scorer, kind, touch.team, rod, touch.speed_before, touch.speed_after)

    def _decide_shots(self, shots: list[Shot] | None = None) -> None:
        """Shots that can no longer end in a goal in their window: saved if on target and
        touched by a defender, else missed (all open shots when `shots` is None)."""
        for shot in list(self._pending) if shots is None else shots:
            self._pending.remove(shot)
            if shot.on_target and shot.touched:
                shot.outcome = "saved"
                if shot.team == "human":
                    self.result.saves_robot += 1
                else:
                    self.result.saves_human += 1
            else:
                shot.outcome = "missed"
        if not self._pending:
            self._open_shot = None

    def _on_target(self, state: WorldState, contact: Contact, forward: float) -> bool:
        f = self.table.field
        r = self.table.ball.radius
        vx, vy = contact.vx_after, contact.vy_after
        if vx * forward <= 0:
            return False
        goal_x = forward * f.half_length
        y = state.ball_y + vy * (goal_x - state.ball_x) / vx
        wall = f.half_width - r
        period = 4 * wall
        folded = (y + wall) % period
        folded = (folded if folded <= 2 * wall else period - folded) - wall
        return abs(folded) < f.goal_width / 2 - r


def run_match(
    robot: str,
    opponent: str,
    *,
    duration: float = 60.0,
    seed: int = 0,
    randomise: bool = False,
    on_frame: Any = None,
) -> MatchResult:
    return Match(
        robot, opponent, seed=seed, duration=duration, randomise=randomise, on_frame=on_frame
    ).run()
