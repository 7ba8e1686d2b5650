"""`foosball/Goalkeeper-v0`: the simulator as a Gymnasium environment for our goalkeeper.

One episode is one cell of the shot battery (`foosball.lab.shots.battery_match`): the ball
in front of the human's attack rod, the simulator's scripted pro shooting it at a speed
drawn from `speeds`, of a kind drawn from `kinds` (rest, rolling, pull, push, pin), on a
table whose realism parameters are drawn from `sim.params.RANGES` (domain randomisation;
`randomise=False` keeps the default table), for `EPISODE_S` (3 s) of simulated time.

Our other three rods play `improved`. The agent plays the goalkeeper:
- observation: `strategy.learned.KeeperObservation` of exactly what the strategy agent is
  handed on the board (the tracker's BallState, delayed and noisy, PREDICTED or LOST when
  hidden; our rods' RodStatus; the human's rods as HumanRods), one per ball state (200 Hz);
- action: two numbers in [-1, 1], the goalkeeper's RodTarget by
  `strategy.learned.keeper_target` (translation over the travel, rotation within +-pi: the
  pole driver's limits), sent with the same command latency as any command;
- reward: -1 for each goal against, -`foul_penalty` for each foul of ours the referee
  calls (possession limit, spinning: `sim.rules`), `save_reward` for each of the human's
  on-target shots saved. The episode is truncated (never terminated) at its end.

`foosball/Team-v0`: the whole team. One episode is `duration` s (20) of a match from the
kick-off serve against a simulator opponent (`pro` by default), randomised tables; the
same observation; the action is eight numbers, each rod's translation and rotation as the
goalkeeper's are (`keeper_setpoint` takes any rod); the reward +1 per goal for, -1 per
goal against, -`foul_penalty` per foul of ours.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from foosball.geometry import Table, default_table
from foosball.lab.shots import EPISODE_S, KINDS, battery_match
from foosball.sim.match import Match
from foosball.strategy.base import to_target
from foosball.strategy.improved import ImprovedStrategy
from foosball.strategy.learned import OBS_SIZE, KeeperObservation, keeper_setpoint, keeper_target
from foosball.wire.catalogue import BallState, HumanRods, RodCommand, RodId, RodStatus

SPEEDS = (3.0, 15.0)  # m/s: the human's shot speed is drawn from this range


class _Side:
    """Our side of the table as the environment plays it: each ball state it keeps the
    observation and (with `plan`) improved's command, and sends nothing itself; the
    environment sends the command its action makes (`Match.queue_command`)."""

    wants_human_rods = True  # the observation reads them

    def __init__(self, table: Table, plan: bool) -> None:
        self.table = table
        self.observation = KeeperObservation(table)
        self.improved = ImprovedStrategy(table) if plan else None
        self.latest: np.ndarray | None = None
        self.command: RodCommand | None = None
        self.capture_time = 0  # of the ball state of the last observation

    def observe_human_rods(self, rods: HumanRods) -> None:
        self.observation.observe_human_rods(rods)

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        if self.improved is not None:
            self.command = self.improved.step(ball, rods, now_ns)
        self.latest = self.observation(ball, rods, now_ns)
        self.capture_time = ball.capture_time if ball is not None else 0
        return None


class _TableEnv(gymnasium.Env, ABC):
    """What both environments share: the match stepped ball state by ball state, the
    observation, the tally of goals, fouls and saves. Subclasses make the match
    (`_new_match`), the command of an action (`_command`) and the reward (`_reward`)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}
    actions = 2

    def __init__(self, *, randomise: bool, foul_penalty: float) -> None:
        self.randomise = randomise
        self.foul_penalty = foul_penalty
        self.table = default_table()
        self.observation_space = spaces.Box(-3.0, 3.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (self.actions,), np.float32)
        self.match: Any = None
        self.team: _Side | None = None
        self.episode: dict[str, Any] = {}

    @abstractmethod
    def _new_match(self, rng: np.random.Generator) -> tuple[_Side, Match, dict[str, Any]]:
        """The episode's match, our side of it and what `reset` reports about it."""

    @abstractmethod
    def _command(self, action: Any) -> RodCommand:
        """The robot's RodCommand for an action of `action_space`."""

    @abstractmethod
    def _reward(self, goals_for: int, goals_against: int, fouls: int, saves: int) -> float:
        """The step's reward from what happened in it."""

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.team, self.match, self.episode = self._new_match(self.np_random)
        self._counts = self._tally()
        return self._advance(), dict(self.episode)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self.match is not None and self.team is not None, "reset() first"
        self.match.queue_command("robot", self._command(action))
        observation = self._advance()
        counts = self._tally()
        deltas = [now - before for now, before in zip(counts, self._counts, strict=True)]
        self._counts = counts
        info = dict(zip(("goals_for", "goals_against", "fouls", "saves"), counts, strict=True))
        return observation, self._reward(*deltas), False, self._over(), info

    def _over(self) -> bool:
        return self.match.world.time >= self.match.duration - 1e-9

    def _advance(self) -> np.ndarray:
        """Frames until the next ball state reaches our side (or the episode ends): the
        observation it makes."""
        assert self.team is not None
        self.team.latest = None
        while self.team.latest is None and not self._over():
            self.match.step_frame()
        if self.team.latest is None:  # the episode ended between ball states
            return np.zeros(OBS_SIZE, dtype=np.float32)
        return self.team.latest

    def _tally(self) -> tuple[int, int, int, int]:
        """(goals for, goals against, our fouls, our saves) so far."""
        fouls = self.match.referee.fouls["robot"]
        score = self.match.world.score
        return (score.robot, score.human, fouls.possession + fouls.spinning,
                self.match.result.saves_robot)


class GoalkeeperEnv(_TableEnv):
    def __init__(self, *, randomise: bool = True, kinds: tuple[str, ...] = KINDS,
                 speeds: tuple[float, float] = SPEEDS, foul_penalty: float = 0.5,
                 save_reward: float = 0.0) -> None:
        super().__init__(randomise=randomise, foul_penalty=foul_penalty)
        self.kinds = tuple(kinds)
        self.speeds = speeds
        self.save_reward = save_reward

    def _new_match(self, rng: np.random.Generator) -> tuple[_Side, Match, dict[str, Any]]:
        kind = str(rng.choice(self.kinds))
        speed = float(rng.uniform(*self.speeds))
        match_seed = int(rng.integers(0, 2**31 - 1))
        side = _Side(self.table, plan=True)
        match, ball_y = battery_match(side, self.table, speed, match_seed, kind,
                                      randomise=self.randomise)
        assert match.duration == EPISODE_S
        return side, match, {"kind": kind, "speed": speed, "seed": match_seed, "ball_y": ball_y}

    def _command(self, action: Any) -> RodCommand:
        """improved's command of the last ball state, the goalkeeper's target the action's."""
        assert self.team is not None
        keeper = keeper_target(action, self.table.robot_rods[0])
        planned = self.team.command
        others = tuple(t for t in planned.rods if t.rod != RodId.GOALKEEPER) if planned else ()
        return RodCommand(ball_capture_time=self.team.capture_time, rods=(keeper, *others))

    def _reward(self, goals_for: int, goals_against: int, fouls: int, saves: int) -> float:
        return -float(goals_against) - self.foul_penalty * fouls + self.save_reward * saves


class TeamEnv(_TableEnv):
    actions = 8

    def __init__(self, *, randomise: bool = True, opponent: str = "pro",
                 duration: float = 20.0, foul_penalty: float = 0.5) -> None:
        super().__init__(randomise=randomise, foul_penalty=foul_penalty)
        self.opponent = opponent
        self.duration = duration

    def _new_match(self, rng: np.random.Generator) -> tuple[_Side, Match, dict[str, Any]]:
        match_seed = int(rng.integers(0, 2**31 - 1))
        side = _Side(self.table, plan=False)
        match = Match(side, self.opponent, seed=match_seed, duration=self.duration,
                      table=self.table, randomise=self.randomise)
        return side, match, {"opponent": self.opponent, "seed": match_seed}

    def _command(self, action: Any) -> RodCommand:
        assert self.team is not None
        targets = tuple(
            to_target(RodId(i), rod, keeper_setpoint(action[2 * i:2 * i + 2], rod))
            for i, rod in enumerate(self.table.robot_rods))
        return RodCommand(ball_capture_time=self.team.capture_time, rods=targets)

    def _reward(self, goals_for: int, goals_against: int, fouls: int, saves: int) -> float:
        return float(goals_for - goals_against) - self.foul_penalty * fouls
