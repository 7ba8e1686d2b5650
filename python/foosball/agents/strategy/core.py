"""Strategy Agent (SA): ball state in, rod commands out, once per ball state.

Core: `StrategyAgentCore.step(Inputs) -> Outputs` (foosball.runtime), pure apart from
the controller's own memory. It emits one RodCommand per new BallState (the ball state
rate; after a backlog, for the newest only) while the game is PLAYING, holds every rod
still where it is in PAUSED and READY, and
sends nothing in FAULT, before the drives are homed (BOOT, ALIGNING, HOMING), or while any
drive reports FAULT or QUICK_STOP. Rod positions come from the pole driver's RodStatus; until
one arrives they are derived from the MotorStatus with the geometry file's drive train.

It follows the game panel's GameState: without one it stays in BOOT and sends nothing.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol

from foosball.drivetrain import rods_from_motors
from foosball.geometry import Table
from foosball.runtime import Inputs, Outputs
from foosball.wire.catalogue import (
    Agent,
    BallState,
    DriveState,
    GameCommand,
    GameControl,
    GameState,
    HumanRods,
    MotorStatus,
    RodCommand,
    RodId,
    RodStatus,
    RodTarget,
    SafetyState,
)

SILENT_STATES = {SafetyState.BOOT, SafetyState.ALIGNING, SafetyState.HOMING, SafetyState.FAULT}
HOLD_STATES = {SafetyState.READY, SafetyState.PAUSED}
PAUSING = {GameCommand.PAUSE: SafetyState.PAUSED, GameCommand.STOP: SafetyState.READY}
BAD_DRIVES = {DriveState.FAULT, DriveState.QUICK_STOP}


class Controller(Protocol):
    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None: ...


class StrategyAgentCore:
    agent = Agent.STRATEGY
    # and the runtime's RUNTIME_READS; HumanRods only for a strategy that asks for them
    reads = (BallState, GameState, MotorStatus, RodStatus, HumanRods)

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

    def step(self, inputs: Inputs) -> Outputs:
        ball: BallState | None = None
        for message in inputs.messages:
            if isinstance(message, BallState):
                ball = message  # only the newest: after a stall, older ones are history
            elif isinstance(message, GameState):
                self.game = message
            elif isinstance(message, GameControl) and self.game is not None:
                # PAUSE and STOP hold the rods from the command itself, not only from the
                # game panel's GameState after it (which a loaded board may bring late).
                held = PAUSING.get(message.command)
                if held is not None and self.game.state == SafetyState.PLAYING:
                    self.game = dataclasses.replace(self.game, state=held)
            elif isinstance(message, MotorStatus):
                self.motors = message
            elif isinstance(message, RodStatus):
                self.rods = message
            elif isinstance(message, HumanRods) and getattr(self.controller, "wants_human_rods",
                                                             False):
                self.controller.observe_human_rods(message)  # type: ignore[attr-defined]
        command = None
        if ball is not None:
            command = self.decide(ball, inputs.wall_ns, inputs.safety.faulted)
        return Outputs((command,) if command is not None else (), state=self.state)

    @property
    def state(self) -> SafetyState:
        """The game state the agent acts on; FAULT is the latch's to report, not ours."""
        state = self.game.state if self.game is not None else SafetyState.BOOT
        return SafetyState.READY if state == SafetyState.FAULT else state

    def decide(self, ball: BallState, wall_ns: int, faulted: bool = False) -> RodCommand | None:
        """One command for one ball state, or None when the rods must not be commanded."""
        state = self.game.state if self.game is not None else SafetyState.BOOT
        status = self._rod_status()
        command: RodCommand | None = None
        if faulted or state in SILENT_STATES or not self._drives_ok() or status is None:
            command = None
        elif state in HOLD_STATES:
            command = self.hold(ball, status)
        elif state == SafetyState.PLAYING:
            command = self.controller.step(ball, status, wall_ns)
        if command is None:
            self.suppressed += 1
        else:
            self.sent += 1
        return command


def make_core(strategy: str = "improved", table: Table | None = None) -> StrategyAgentCore:
    """The agent core driving a strategy from the strategy table (`seed-rules`, `improved`)."""
    from foosball.geometry import default_table
    from foosball.strategy.registry import strategy_factory

    table = table or default_table()
    return StrategyAgentCore(strategy_factory(strategy)(table, 0), table)
