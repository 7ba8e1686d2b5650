"""What every strategy shares: the robot-frame inputs a rod behaviour sees, and the controller
shell that turns catalogue messages into per-rod decisions and back into a ``RodCommand``.

Frame: the robot's (the table frame of ``foosball.geometry`` seen from the robot's side): x
towards the opponent's goal, origin at the field centre. The simulator mirrors the other side.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Protocol

from foosball.geometry import Rod, Table, default_table
from foosball.strategy.params import StrategyParams, load_params
from foosball.strategy.setpoint import RodSetpoint
from foosball.wire.catalogue import (
    BallState,
    BallStatus,
    RodCommand,
    RodId,
    RodPosition,
    RodStatus,
    RodTarget,
)


class BallView(NamedTuple):
    """The ball as a behaviour sees it (robot frame), with how old the measurement is (a
    tuple, like RodView: made every step, cheaply)."""

    x: float
    y: float
    vx: float
    vy: float
    age: float = 0.0  # s between the frame's capture and now

    @property
    def speed(self) -> float:
        return math.hypot(self.vx, self.vy)


class RodView(NamedTuple):
    translation: float
    rotation: float
    translation_velocity: float = 0.0
    rotation_velocity: float = 0.0


class RodBehaviour(Protocol):
    rod: Rod

    def step(self, now: float, ball: BallView | None, here: RodView) -> RodSetpoint: ...


_ROD_IDS = tuple(RodId)
_TURN = 2 * math.pi
_AT_REST = RodView(0.0, 0.0)


def rod_views(status: RodStatus | None, rods: list[Rod]) -> dict[RodId, RodView]:
    """Measured rod positions by RodId; a rod the status does not mention is taken as at rest
    in the middle of its travel."""
    views = {_ROD_IDS[i]: _AT_REST for i in range(len(rods))}
    if status is not None:
        for position in status.rods:
            views[position.rod] = _view(position)  # RodId is an int enum: same key
    return views


def rod_view_list(status: RodStatus | None, count: int) -> list[RodView]:
    """`rod_views` as a list in RodId order (what a team plan reads, without the dict)."""
    views = [_AT_REST] * count
    if status is not None:
        for p in status.rods:
            if p.rod < count:
                views[p.rod] = RodView(p.translation, p.rotation, p.translation_velocity,
                                       p.rotation_velocity)
    return views


def _view(position: RodPosition) -> RodView:
    return RodView(
        translation=position.translation,
        rotation=position.rotation,
        translation_velocity=position.translation_velocity,
        rotation_velocity=position.rotation_velocity,
    )


def to_target(rod_id: RodId, rod: Rod, setpoint: RodSetpoint) -> RodTarget:
    """Wire target; translation clamped to the travel (the pole driver checks again)."""
    translation, rotation, translation_speed, rotation_speed = setpoint
    # each clamp written out as what max(low, min(high, value)) picks (the same value, NaN
    # included), without two calls per field: this runs for most rods every step
    low, high = rod.travel_min, rod.travel_max
    translation = translation if translation > low else low
    rotation = rotation if rotation < _TURN else _TURN
    translation_speed = translation_speed if translation_speed < 20.0 else 20.0
    rotation_speed = rotation_speed if rotation_speed < 1000.0 else 1000.0
    return RodTarget(
        rod_id,
        translation if translation < high else high,
        rotation if rotation > -_TURN else -_TURN,
        translation_speed if translation_speed > 0.0 else 0.0,
        rotation_speed if rotation_speed > 0.0 else 0.0,
    )


class RodStrategy:
    """A controller made of one behaviour per robot rod (the seed's four parallel behaviours).

    `step(ball, rods, now_ns)` is the simulator's controller interface and the agent's core.
    Subclasses build `self.behaviours` (goalkeeper, defence, midfield, attack order) and may
    override `plan` to share information between rods before they decide.
    """

    name = "rods"

    def __init__(self, table: Table | None = None, params: StrategyParams | None = None) -> None:
        self.table = table or default_table()
        self.params = params or load_params()
        self.rods = self.table.robot_rods
        self.behaviours: list[RodBehaviour] = []

    def ball_view(self, ball: BallState | None, now_ns: int) -> BallView | None:
        if ball is None or ball.status == BallStatus.LOST:
            return None
        age = max(0.0, (now_ns - ball.capture_time) * 1e-9)
        return BallView(ball.x, ball.y, ball.vx, ball.vy, age)

    def plan(self, now: float, ball: BallView | None, views: dict[RodId, RodView]) -> None:
        """Hook run once per step before the rod behaviours (team-level decisions)."""

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        now = now_ns * 1e-9
        view = self.ball_view(ball, now_ns)
        views = rod_views(rods, self.rods)
        self.plan(now, view, views)
        targets = tuple(
            to_target(RodId(i), behaviour.rod, behaviour.step(now, view, views[RodId(i)]))
            for i, behaviour in enumerate(self.behaviours)
        )
        capture = ball.capture_time if ball is not None else 0
        return RodCommand(ball_capture_time=capture, rods=targets)
