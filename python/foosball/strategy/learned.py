"""A learned goalkeeper: the goalkeeper rod from a small policy network, the other rods from
`improved`.

The policy sees what the strategy agent receives and nothing else (`KeeperObservation`):
the BallState as the tracker sends it (noisy, delayed, PREDICTED or LOST when hidden), the
measured positions of our four rods (RodStatus), and the human's rods as the camera last
measured them (HumanRods). Its action is two numbers in [-1, 1] (`keeper_target`): the
goalkeeper's translation across its whole travel and its rotation within +-pi, both inside
the pole driver's limits (travel, +-2 pi), at the axes' full speed.

The same two functions build the training environment's observations and actions
(`foosball.learning.env`), so the board runs exactly what was trained. The network runs
through onnxruntime (`OnnxPolicy`), imported only when a learned goalkeeper is chosen
(`[learned] goalkeeper = "policy"` in the strategy's parameter file): a board that keeps
`improved` needs no onnxruntime.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from foosball.geometry import Rod, Table
from foosball.strategy.base import BallView, RodView, to_target
from foosball.strategy.improved import ImprovedStrategy
from foosball.strategy.params import StrategyParams
from foosball.strategy.setpoint import RodSetpoint
from foosball.wire.catalogue import (
    BallState,
    BallStatus,
    HumanRods,
    RodCommand,
    RodId,
    RodStatus,
    RodTarget,
)

ROTATION_RANGE = math.pi  # rad: the action's rotation spans +-this (the pole driver: +-2 pi)
SPEED_SCALE = 10.0  # m/s: ball velocities are divided by this
ROD_SPEED_SCALE = 4.0  # m/s
ROD_TURN_SCALE = 100.0  # rad/s
AGE_SCALE = 0.05  # s
CROSS_TIME_MAX = 1.0  # s: a ball further (in time) from the goalkeeper's line than this
OBS_SIZE = 10 + 4 * 5 + 4 * 2  # the ball (and its crossing), our rods, the human's rods


class KeeperObservation:
    """The policy's input, made from the messages the strategy agent receives. Keeps the
    last HumanRods (they come every fourth frame). Robot frame, every value about +-1."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.rods = table.robot_rods
        self.human = table.human_rods
        self.half_length = table.field.half_length
        self.half_width = table.field.half_width
        self.wall = table.field.half_width - table.ball.radius
        self.keeper_x = self.rods[0].x
        self.human_rods: HumanRods | None = None

    def observe_human_rods(self, rods: HumanRods) -> None:
        self.human_rods = rods

    def __call__(self, ball: BallState | None, rods: RodStatus | None,
                 now_ns: int) -> np.ndarray:
        out = [0.0] * OBS_SIZE  # a list: item by item, much cheaper than into an array
        # 0-3 the ball (robot frame), 4-6 its status, 7 its age, 8-9 where and when it
        # crosses the goalkeeper's line; 10-29 our rods; 30-37 the human's rods
        if ball is not None and ball.status != BallStatus.LOST:
            out[0] = ball.x / self.half_length
            out[1] = ball.y / self.half_width
            out[2] = ball.vx / SPEED_SCALE
            out[3] = ball.vy / SPEED_SCALE
            out[4 + int(ball.status)] = 1.0
            out[7] = (now_ns - ball.capture_time) * 1e-9 / AGE_SCALE
            out[8], out[9] = self._crossing(ball)
        else:
            out[6] = 1.0
        i = 10
        if rods is not None:
            for p in rods.rods:
                if p.rod >= len(self.rods):
                    continue
                j = i + 5 * p.rod
                out[j] = _travel_fraction(self.rods[p.rod], p.translation)
                out[j + 1] = math.sin(p.rotation)
                out[j + 2] = math.cos(p.rotation)
                out[j + 3] = p.translation_velocity / ROD_SPEED_SCALE
                out[j + 4] = p.rotation_velocity / ROD_TURN_SCALE
        i += 20
        if self.human_rods is not None:
            for h in self.human_rods.rods:
                if h.rod < len(self.human):
                    out[i + 2 * h.rod] = _travel_fraction(self.human[h.rod], h.translation)
                    out[i + 2 * h.rod + 1] = h.rotation / math.pi
        return np.clip(np.array(out, dtype=np.float32), -3.0, 3.0)

    def _crossing(self, ball: BallState) -> tuple[float, float]:
        """Where the ball's straight line (folded at the side walls) crosses the
        goalkeeper's line (y, scaled) and in how long (scaled to [0, 1]); (0, 1) when it
        rolls away from our goal."""
        if ball.vx >= -1e-3:
            return 0.0, 1.0
        t = (self.keeper_x - ball.x) / ball.vx
        if t < 0:
            return 0.0, 0.0  # already past the line
        y = ball.y + ball.vy * t
        period = 4 * self.wall
        folded = (y + self.wall) % period
        folded = (folded if folded <= 2 * self.wall else period - folded) - self.wall
        return folded / self.half_width, min(1.0, t / CROSS_TIME_MAX)


def _travel_fraction(rod: Rod, translation: float) -> float:
    """A rod translation as -1 (travel_min) .. 1 (travel_max)."""
    span = rod.travel_max - rod.travel_min
    return 2.0 * (translation - rod.travel_min) / span - 1.0 if span > 0 else 0.0


def keeper_setpoint(action: Any, rod: Rod) -> RodSetpoint:
    """The policy's action (two numbers, clipped to [-1, 1]) as the goalkeeper's setpoint:
    the translation across the rod's travel, the rotation within +-ROTATION_RANGE; 0 speed
    means the axis maximum (the pole driver caps it)."""
    a0 = min(1.0, max(-1.0, float(action[0])))
    a1 = min(1.0, max(-1.0, float(action[1])))
    translation = rod.travel_min + (a0 + 1.0) / 2.0 * (rod.travel_max - rod.travel_min)
    return RodSetpoint(translation, a1 * ROTATION_RANGE, 0.0, 0.0)


def keeper_target(action: Any, rod: Rod) -> RodTarget:
    """`keeper_setpoint` as the wire's RodTarget (what the environment sends)."""
    return to_target(RodId.GOALKEEPER, rod, keeper_setpoint(action, rod))


def target_action(target: RodTarget, rod: Rod) -> np.ndarray:
    """`keeper_target` backwards: the action that asks for this target (clipped to the
    action's range; imitation learning reads a teacher's targets with it)."""
    return np.array([_travel_fraction(rod, target.translation),
                     max(-1.0, min(1.0, target.rotation / ROTATION_RANGE))], dtype=np.float32)


class Policy(Protocol):
    def __call__(self, observation: np.ndarray) -> np.ndarray: ...


class OnnxPolicy:
    """A policy network exported to ONNX (input `obs` [1, OBS_SIZE], output `action`
    [1, 2]), run by onnxruntime on one thread."""

    def __init__(self, path: str | Path) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(path), options,
                                                    providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0].name

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        result = self.session.run(None, {self.input: observation.reshape(1, -1)})
        return np.asarray(result[0]).reshape(-1)


def model_path(name: str) -> Path:
    """A model file by name: a path as given if it exists, else the package's data file."""
    given = Path(name)
    if given.is_absolute() or given.exists():
        return given
    return Path(str(resources.files("foosball") / "data" / name))


class LearnedKeeperStrategy(ImprovedStrategy):
    """`improved` for every rod but the goalkeeper, whose target is the policy's action on
    this step's observation. `policy` (tests, training) replaces the parameter file's
    model."""

    name = "learned-keeper"

    def __init__(self, table: Table | None = None, params: StrategyParams | None = None,
                 policy: Policy | None = None) -> None:
        super().__init__(table, params)
        self.observation = KeeperObservation(self.table)
        self._inputs: tuple[BallState | None, RodStatus | None, int] = (None, None, 0)
        self.policy = policy if policy is not None else OnnxPolicy(
            model_path(self.params.learned.model))

    @property
    def wants_human_rods(self) -> bool:
        return True  # the policy sees them

    def observe_human_rods(self, rods: HumanRods) -> None:
        self.observation.observe_human_rods(rods)
        if self.params.improved.aim_through_gaps:
            super().observe_human_rods(rods)

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        self._inputs = (ball, rods, now_ns)  # the messages, for the policy's observation
        return super().step(ball, rods, now_ns)

    def decide(self, now: float, ball: BallView | None, here: list[RodView]) -> list[RodSetpoint]:
        """improved's setpoints, the goalkeeper's replaced by the policy's."""
        setpoints = super().decide(now, ball, here)
        action = self.policy(self.observation(*self._inputs))
        setpoints[0] = keeper_setpoint(action, self.rods[0])
        return setpoints
