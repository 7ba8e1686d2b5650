"""`foosball/Goalkeeper-v0`: the simulator as a Gymnasium environment for our goalkeeper.

One episode is one cell of the shot battery (`foosball.sim.shots.battery_match`): the ball
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
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from foosball.geometry import Table, default_table
from foosball.sim.shots import EPISODE_S, KINDS, battery_match
from foosball.strategy.improved import ImprovedStrategy
from foosball.strategy.learned import OBS_SIZE, KeeperObservation, keeper_target
from foosball.wire.catalogue import BallState, HumanRods, RodCommand, RodId, RodStatus

SPEEDS = (3.0, 15.0)  # m/s: the human's shot speed is drawn from this range


class _Team(ImprovedStrategy):
    """`improved` on our four rods that sends nothing itself: each ball state it keeps the
    observation and improved's command, and the environment sends that command with the
    goalkeeper's target replaced by the agent's action (`Match.queue_command`)."""

    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self.observation = KeeperObservation(table)
        self.latest: np.ndarray | None = None
        self.command: RodCommand | None = None

    @property
    def wants_human_rods(self) -> bool:
        return True

    def observe_human_rods(self, rods: HumanRods) -> None:
        self.observation.observe_human_rods(rods)

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        self.command = super().step(ball, rods, now_ns)
        self.latest = self.observation(ball, rods, now_ns)
        return None


class GoalkeeperEnv(gymnasium.Env):
    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, *, randomise: bool = True, kinds: tuple[str, ...] = KINDS,
                 speeds: tuple[float, float] = SPEEDS, foul_penalty: float = 0.5,
                 save_reward: float = 0.0) -> None:
        self.randomise = randomise
        self.kinds = tuple(kinds)
        self.speeds = speeds
        self.foul_penalty = foul_penalty
        self.save_reward = save_reward
        self.table = default_table()
        self.observation_space = spaces.Box(-3.0, 3.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.match: Any = None
        self.team: _Team | None = None
        self.episode: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        kind = str(rng.choice(self.kinds))
        speed = float(rng.uniform(*self.speeds))
        match_seed = int(rng.integers(0, 2**31 - 1))
        self.team = _Team(self.table)
        self.match, ball_y = battery_match(self.team, self.table, speed, match_seed, kind,
                                           randomise=self.randomise)
        self.episode = {"kind": kind, "speed": speed, "seed": match_seed, "ball_y": ball_y}
        self._counts = self._tally()
        observation = self._advance()
        return observation, dict(self.episode)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self.match is not None and self.team is not None, "reset() first"
        keeper = keeper_target(action, self.table.robot_rods[0])
        others = self.team.command.rods if self.team.command is not None else ()
        self.match.queue_command("robot", RodCommand(
            ball_capture_time=self.team.command.ball_capture_time if self.team.command else 0,
            rods=(keeper, *(t for t in others if t.rod != RodId.GOALKEEPER))))
        observation = self._advance()
        counts = self._tally()
        goals, fouls, saves = (now - before for now, before in zip(counts, self._counts,
                                                                      strict=True))
        self._counts = counts
        reward = -float(goals) - self.foul_penalty * fouls + self.save_reward * saves
        truncated = self._over()
        info = {"goals_against": counts[0], "fouls": counts[1], "saves": counts[2]}
        return observation, reward, False, truncated, info

    def _over(self) -> bool:
        return self.match.world.time >= EPISODE_S - 1e-9

    def _advance(self) -> np.ndarray:
        """Frames until the next ball state reaches our controller (or the episode ends):
        the observation it makes."""
        assert self.team is not None
        self.team.latest = None
        while self.team.latest is None and not self._over():
            self.match.step_frame()
        if self.team.latest is None:  # the episode ended between ball states
            return np.zeros(OBS_SIZE, dtype=np.float32)
        return self.team.latest

    def _tally(self) -> tuple[int, int, int]:
        """(goals against, our fouls, our saves) so far."""
        fouls = self.match.referee.fouls["robot"]
        return (self.match.world.score.human, fouls.possession + fouls.spinning,
                self.match.result.saves_robot)
