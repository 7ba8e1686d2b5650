"""Strategy Agent (SA): ball state in, rod commands out, once per ball state.

Core: `StrategyAgentCore.step(now_ns, ball=..., game=..., motors=..., rods=...)`, pure apart
from the controller's own memory. It emits one RodCommand per new BallState (the ball state
rate) while the game is PLAYING, holds every rod still where it is in PAUSED and READY, and
sends nothing in FAULT, before the drives are homed (BOOT, ALIGNING, HOMING), or while any
drive reports FAULT or QUICK_STOP. Rod positions come from the pole driver's RodStatus; until
one arrives they are derived from the MotorStatus with the geometry file's drive train.

I/O edge: `run(endpoint, core, clock, should_stop)` reads the agent LAN, sends the commands and
a Heartbeat at 100 Hz.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from foosball.geometry import Table
from foosball.safety.health import Health, read_board_health
from foosball.safety.heartbeat import HeartbeatSchedule
from foosball.wire.catalogue import (
    Agent,
    BallState,
    DriveState,
    GameState,
    MotorStatus,
    RodCommand,
    RodId,
    RodPosition,
    RodStatus,
    RodTarget,
    SafetyState,
)

SILENT_STATES = {SafetyState.BOOT, SafetyState.ALIGNING, SafetyState.HOMING, SafetyState.FAULT}
HOLD_STATES = {SafetyState.READY, SafetyState.PAUSED}
BAD_DRIVES = {DriveState.FAULT, DriveState.QUICK_STOP}


class Controller(Protocol):
    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None: ...


def rods_from_motors(motors: MotorStatus, table: Table) -> RodStatus:
    """Rod positions from motor shaft angles: translation axis 2r, rotation axis 2r + 1.
    Translation = zero offset + shaft angle * pulley radius / gear ratio (the pole driver's
    conversion; the homing end switch sits at the zero offset)."""
    by_axis = {axis.axis: axis for axis in motors.axes}
    out = []
    for index, rod in enumerate(table.robot_rods):
        t_axis, r_axis = by_axis.get(2 * index), by_axis.get(2 * index + 1)
        if t_axis is None or r_axis is None:
            continue
        scale = rod.metres_per_motor_radian()
        out.append(
            RodPosition(
                rod=RodId(index),
                translation=rod.zero_offset + t_axis.position * scale,
                rotation=r_axis.position,
                translation_velocity=t_axis.velocity * scale,
                rotation_velocity=r_axis.velocity,
            )
        )
    return RodStatus(rods=tuple(out))


class StrategyAgentCore:
    def __init__(self, controller: Controller, table: Table) -> None:
        self.controller = controller
        self.table = table
        self.game: GameState | None = None
        self.motors: MotorStatus | None = None
        self.rods: RodStatus | None = None
        self.sent = 0
        self.suppressed = 0  # ball states that produced no command (state, fault)

    def _rod_status(self) -> RodStatus | None:
        if self.rods is not None:
            return self.rods
        if self.motors is not None:
            return rods_from_motors(self.motors, self.table)
        return None

    def _drives_ok(self) -> bool:
        return self.motors is None or all(a.state not in BAD_DRIVES for a in self.motors.axes)

    def hold(self, ball: BallState, status: RodStatus) -> RodCommand:
        """Every rod stays exactly where it is measured now."""
        targets = tuple(
            RodTarget(
                rod=RodId(p.rod),
                translation=p.translation,
                rotation=max(-math.pi, min(math.pi, p.rotation)),
                translation_speed=0.0,
                rotation_speed=0.0,
            )
            for p in status.rods
        )
        return RodCommand(ball_capture_time=ball.capture_time, rods=targets)

    def step(
        self,
        now_ns: int,
        *,
        ball: BallState | None = None,
        game: GameState | None = None,
        motors: MotorStatus | None = None,
        rods: RodStatus | None = None,
    ) -> RodCommand | None:
        if game is not None:
            self.game = game
        if motors is not None:
            self.motors = motors
        if rods is not None:
            self.rods = rods
        if ball is None:
            return None  # commands go out at the ball state rate only
        state = self.game.state if self.game is not None else SafetyState.BOOT
        status = self._rod_status()
        command: RodCommand | None = None
        if state in SILENT_STATES or not self._drives_ok() or status is None:
            command = None
        elif state in HOLD_STATES:
            command = self.hold(ball, status)
        elif state == SafetyState.PLAYING:
            command = self.controller.step(ball, status, now_ns)
        if command is None:
            self.suppressed += 1
        else:
            self.sent += 1
        return command


def run(
    endpoint: Any,
    core: StrategyAgentCore,
    clock: Callable[[], int],
    should_stop: Callable[[], bool],
    poll_timeout: float = 0.005,
    heartbeat_period_s: float = 0.01,
    health: Callable[[], Health] | None = read_board_health,
) -> None:
    """Thin I/O: feed every received message to the core, send what it returns, and send a
    Heartbeat every `heartbeat_period_s` (100 Hz) with the game state the agent acts on and the
    board's health (read once a second)."""
    kinds = {BallState: "ball", GameState: "game", MotorStatus: "motors", RodStatus: "rods"}
    heartbeats = HeartbeatSchedule(Agent.STRATEGY, heartbeat_period_s, health)
    while not should_stop():
        for received in endpoint.receive(timeout=poll_timeout):
            kind = kinds.get(type(received.message))
            if kind is None:
                continue
            command = core.step(clock(), **{kind: received.message})
            if command is not None:
                endpoint.send(command)
        state = core.game.state if core.game is not None else SafetyState.BOOT
        beat = heartbeats.due(clock() * 1e-9, state)
        if beat is not None:
            endpoint.send(beat)


def make_core(strategy: str = "improved", table: Table | None = None) -> StrategyAgentCore:
    """The agent core driving a strategy from the strategy table (`seed-rules`, `improved`)."""
    from foosball.geometry import default_table
    from foosball.strategy.registry import strategy_factory

    table = table or default_table()
    return StrategyAgentCore(strategy_factory(strategy)(table, 0), table)
