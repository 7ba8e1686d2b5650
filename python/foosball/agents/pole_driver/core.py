"""Pole driver agent (PDA): table units in, motor units out, nothing out of travel.

`PoleDriverCore.step(Inputs) -> Outputs` is pure (it runs in foosball.runtime).
It knows the geometry (the table JSON) through foosball.drivetrain:
- converts each rod's translation in metres (table frame, origin at the centre) to motor
  radians through the gearbox ratio and pulley radius, measured from the homing switch
  (`zero_offset` is the translation at which the switch trips); rotation radians pass as
  they are; speeds likewise;
- keeps the offsets per rod and forwards targets only while the MDA reports the axes
  homed (READY/RUNNING). Every (re)start of the motors runs the MDA's alignment and
  zero-match again; the PDA holds commands back until that is done and counts it;
- checks every target against the rod's travel before it can reach the MDA: a target
  outside is clamped with a counted warning or rejected (configured), a non-finite one is
  always rejected, and a burst of them is a cause (LIMIT_BURST) while it lasts;
- turns the MDA's MotorStatus into RodStatus in table units for strategy and panels.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from typing import Any

from foosball.agents.pole_driver.config import PoleDriverConfig
from foosball.drivetrain import (
    AXES_PER_ROD,
    is_translation,
    motor_to_translation,
    rod_drives,
    rod_of,
)
from foosball.geometry import Rod, Table
from foosball.runtime import Inputs, Outputs
from foosball.runtime.latch import Cause
from foosball.wire.catalogue import (
    Agent,
    AlarmCode,
    AxisTarget,
    DriveState,
    MotorCommand,
    MotorStatus,
    RodCommand,
    RodId,
    RodPosition,
    RodStatus,
    SafetyState,
)

log = logging.getLogger(__package__)  # its lines keep the name they had in one file

HOMED_STATES = (DriveState.READY, DriveState.RUNNING)
RESTART_STATES = (DriveState.OFF, DriveState.ALIGNING, DriveState.HOMING)


class PoleDriverCore:
    agent = Agent.POLE_DRIVER
    reads = (MotorStatus, RodCommand)  # and the runtime's RUNTIME_READS

    def __init__(self, table: Table, config: PoleDriverConfig | None = None) -> None:
        self.config = config or PoleDriverConfig()
        self.rods = table.robot_rods
        if len(self.rods) != 4:
            raise ValueError(f"the geometry has {len(self.rods)} robot rods, expected 4")
        self._rod_axes = rod_drives(table)
        self.homed = [False] * (AXES_PER_ROD * len(self.rods))
        self.zero_procedures = 0  # completed (re)homings seen
        self.clamped = 0
        self.rejected = 0
        self.forwarded = 0
        self.held_back = 0  # commands not forwarded because the axes were not homed
        self._violations: deque[float] = deque()
        self._last_violation = ""

    def step(self, inputs: Inputs) -> Outputs:
        out: list[Any] = []
        now = inputs.now_s
        for message in inputs.messages:
            if isinstance(message, MotorStatus):
                out.append(self._motor_status(message))
            elif isinstance(message, RodCommand):
                command = self._rod_command(message, now)
                if command is not None:
                    out.append(command)
        return Outputs(tuple(out), self._causes(now),
                       SafetyState.READY if all(self.homed) else SafetyState.HOMING)

    def _causes(self, now: float) -> tuple[Cause, ...]:
        """A burst of out-of-limit targets is a cause for as long as the window holds it:
        something upstream is commanding nonsense."""
        window = self.config.burst_window_s
        while self._violations and now - self._violations[0] > window:
            self._violations.popleft()
        if len(self._violations) < self.config.burst_count:
            return ()
        return (Cause(AlarmCode.LIMIT_BURST,
                      f"{len(self._violations)} out-of-limit targets within {window:g} s; "
                      f"last: {self._last_violation}"),)

    # -- status: motor -> table units ----------------------------------------------------
    def _motor_status(self, status: MotorStatus) -> RodStatus:
        by_axis = {a.axis: a for a in status.axes}
        for axis, homed in enumerate(self.homed):
            a = by_axis.get(axis)
            if a is None:
                continue
            now_homed = a.state in HOMED_STATES
            if now_homed and not homed and is_translation(axis):
                self.zero_procedures += 1
                log.info("rod %s zeroed: offset %.4f m", self.rods[rod_of(axis)].name,
                         self.rods[rod_of(axis)].zero_offset)
            self.homed[axis] = now_homed
        rods = []
        for index, (rod, drive) in enumerate(zip(self.rods, self._rod_axes, strict=True)):
            t, r = by_axis.get(drive.translation_axis), by_axis.get(drive.rotation_axis)
            if t is None or r is None:
                continue
            per_rad = rod.metres_per_motor_radian()
            rods.append(RodPosition(
                rod=RodId(index),
                translation=_clip(motor_to_translation(rod, t.position), 2.0),
                rotation=_clip(r.position, 1e4),
                translation_velocity=_clip(t.velocity * per_rad, 1e3),
                rotation_velocity=_clip(r.velocity, 1e4)))
        return RodStatus(rods=tuple(rods) or (RodPosition(RodId.GOALKEEPER, 0.0, 0.0, 0.0,
                                                          0.0),))

    # -- command: table -> motor units, limit-checked ---------------------------------------
    def _rod_command(self, command: RodCommand, now: float) -> MotorCommand | None:
        targets: list[AxisTarget] = []
        config = self.config
        homed = self.homed
        rod_axes = self._rod_axes
        for target in command.rods:
            index = int(target.rod)
            if not 0 <= index < len(rod_axes):
                self._violation(now, f"unknown rod {index}")
                continue
            r = rod_axes[index]
            if not (homed[r.translation_axis] and homed[r.rotation_axis]):
                self.held_back += 1
                continue
            translation = self._checked(target.translation, r.travel_min, r.travel_max,
                                        r.rod, "translation", now)
            rotation = self._checked(target.rotation, -config.rotation_limit,
                                     config.rotation_limit, r.rod, "rotation", now)
            if translation is None or rotation is None:
                continue
            t_speed = _speed(target.translation_speed, config.max_translation_speed)
            r_speed = _speed(target.rotation_speed, config.max_rotation_speed)
            targets.append(AxisTarget(axis=r.translation_axis,
                                      position=(translation - r.zero_offset) / r.per_rad,
                                      velocity=t_speed / r.per_rad))
            targets.append(AxisTarget(axis=r.rotation_axis, position=rotation,
                                      velocity=r_speed))
        if not targets:
            return None
        self.forwarded += 1
        return MotorCommand(axes=tuple(targets), ball_capture_time=command.ball_capture_time)

    def _checked(self, value: float, low: float, high: float, rod: Rod, what: str,
                 now: float) -> float | None:
        """`value` within [low, high], clamped or None (a violation, counted); the text
        of a violation names the rod and `what` (built only for a violation)."""
        if not math.isfinite(value):
            self.rejected += 1
            self._violation(now, f"{rod.name} {what} not a number ({value})")
            return None
        if low <= value <= high:
            return value
        if self.config.limit_policy == "reject":
            self.rejected += 1
            self._violation(now, f"{rod.name} {what} {value:.4f} outside [{low:.4f}, "
                                 f"{high:.4f}]: rejected")
            return None
        self.clamped += 1
        self._violation(now, f"{rod.name} {what} {value:.4f} outside [{low:.4f}, "
                             f"{high:.4f}]: clamped")
        return min(high, max(low, value))

    def _violation(self, now: float, text: str) -> None:
        log.warning("target limit: %s", text)
        self._violations.append(now)
        self._last_violation = text


def _speed(value: float, limit: float) -> float:
    if not math.isfinite(value) or value < 0:
        return 0.0  # an unusable speed means "do not move"
    return min(value, limit)


def _clip(value: float, limit: float) -> float:
    if not math.isfinite(value):
        return 0.0
    return max(-limit, min(limit, value))
