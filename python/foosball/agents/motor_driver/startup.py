"""The motor driver's start-up of each axis: CiA 402 enable, rotor alignment, homing (on
the end switch, or by the drive's own method), each step with its timeout, and an alarm
for a drive that leaves operation enabled on the way or while it follows the profile.

`StartUp` is one part of `MotorDriverCore` (core.py), in a file of its own to keep each
file readable in one sitting: its methods work on the core's state (axes, config) and
call its latch (faults.py) and profile."""

from __future__ import annotations

import logging
import math
from typing import Any

from foosball.agents.motor_driver.records import _FAULTY, Phase, _Axis
from foosball.ethercat import layout as L
from foosball.wire.catalogue import AlarmCode

# the package's logger: its lines keep the name they had in one file
log = logging.getLogger(__package__)

# the start-up steps a timeout looks at: axes in the same step are named together
_STEP_GROUP = {Phase.ENABLING: "enabling", Phase.ALIGNING: "aligning",
               Phase.HOMING_APPROACH: "homing", Phase.HOMING_LEAVE: "homing",
               Phase.HOMING_DRIVE: "homing"}
_HOMED_BITS = int(L.Status.HOMING_ATTAINED | L.Status.TARGET_REACHED)


class StartUp:
    """The start-up part of `MotorDriverCore`: see the module's docstring."""

    # -- per-axis sequence -----------------------------------------------------------------
    def _enter(self, axis: _Axis, phase: Phase, now: float) -> None:
        axis.phase = phase
        axis.since_s = now
        axis.quick_stop_since_s = math.nan
        axis.setpoint = axis.last.position_rad
        axis.goal = axis.setpoint
        axis.speed = 0.0

    def _timeout(self, axis: _Axis, now: float, limit: float, what: str, out: list[Any]) -> None:
        """One alarm naming every axis still in the same step, each with why: the first to
        time out quick-stops them all, so the others would never time out themselves."""
        if now - axis.since_s <= limit:
            return
        group = _STEP_GROUP[axis.phase]
        stuck = [(n, a) for n, a in enumerate(self.axes) if _STEP_GROUP.get(a.phase) == group]
        reasons = ", ".join(f"axis {n} ({self._why_stuck(a)})" for n, a in stuck)
        self._latch(AlarmCode.DRIVE_FAULT, self.axes.index(axis), now, out,
                    f"{what} not done after {limit:.1f} s: {reasons}")

    def _why_stuck(self, axis: _Axis) -> str:
        tx = axis.last
        if axis.phase is Phase.ENABLING:
            return f"drive {tx.state.value}"
        if axis.phase is Phase.ALIGNING:
            return f"drive {tx.state.value}, not aligned by {self.config.alignment.value}"
        if axis.phase is Phase.HOMING_APPROACH:
            return f"home switch never seen, at raw {tx.position_rad:.1f} rad"
        if axis.phase is Phase.HOMING_DRIVE:
            method = self.config.homing_method_of(self.axes.index(axis))
            return f"the drive's homing method {method} not done, at {tx.position_rad:.1f} rad"
        return f"still on the home switch, at raw {tx.position_rad:.1f} rad"

    def _advance_axis(self, axis: _Axis, now: float, out: list[Any]) -> None:
        tx = axis.last
        state = tx.state
        c = self.config
        if axis.phase is Phase.ENABLING:
            if state is L.Cia402State.OPERATION_ENABLED:
                self._enter(axis, Phase.ALIGNING, now)
            else:
                self._timeout(axis, now, c.enable_timeout_s, "enabling", out)
        elif axis.phase is Phase.ALIGNING:
            if state is not L.Cia402State.OPERATION_ENABLED:
                self._unexpected(axis, now, out)
            elif L.alignment_done(c.alignment, tx.statusword, self._alignment_object(axis)):
                if axis.setup.homes:
                    self._enter(axis, Phase.HOMING_DRIVE
                                if c.homing_method_of(self.axes.index(axis))
                                else Phase.HOMING_APPROACH, now)
                else:
                    axis.zero = 0.0  # rotation: radians as they are
                    self._enter(axis, Phase.READY, now)
            else:
                self._timeout(axis, now, c.alignment_timeout_s, "rotor alignment", out)
        elif axis.phase in (Phase.HOMING_APPROACH, Phase.HOMING_LEAVE):
            on_switch = bool(tx.digital_inputs & L.DigitalInput.HOME_SWITCH)
            if state is not L.Cia402State.OPERATION_ENABLED:
                self._unexpected(axis, now, out)
            elif axis.phase is Phase.HOMING_APPROACH and on_switch:
                axis.phase = Phase.HOMING_LEAVE
            elif axis.phase is Phase.HOMING_LEAVE and not on_switch:
                axis.zero = tx.position_rad
                self._enter(axis, Phase.READY, now)
                log.info("axis %d homed: zero at raw %.4f rad", self.axes.index(axis), axis.zero)
            else:
                self._timeout(axis, now, c.homing_timeout_s, "homing", out)
        elif axis.phase is Phase.HOMING_DRIVE:
            self._drive_homing(axis, now, out)
        elif axis.phase in (Phase.READY, Phase.RUNNING):
            if state is not L.Cia402State.OPERATION_ENABLED:
                self._unexpected(axis, now, out)
            else:
                self._profile(axis)
        elif axis.phase is Phase.QUICK_STOP:  # halted from the panel
            self._escalate_quick_stop(axis, now, out)

    def _drive_homing(self, axis: _Axis, now: float, out: list[Any]) -> None:
        """The drive homes itself (homing mode): done when it says the home is set and it
        stands (statusword bits 12 and 10); its position is then relative to that home."""
        tx = axis.last
        index = self.axes.index(axis)
        method = self.config.homing_method_of(index)
        homing = tx.mode_display == L.Mode.HOMING
        if tx.state is not L.Cia402State.OPERATION_ENABLED:
            self._unexpected(axis, now, out)
        elif homing and tx.statusword & L.Status.HOMING_ERROR:
            self._latch(AlarmCode.DRIVE_FAULT, index, now, out,
                        f"axis {index}: the drive's homing method {method} failed (homing "
                        "error; is the method one this drive has?)")
        elif homing and tx.statusword & _HOMED_BITS == _HOMED_BITS:
            axis.zero = tx.position_rad
            self._enter(axis, Phase.READY, now)
            log.info("axis %d homed by the drive (method %d): zero at %.4f rad", index,
                     method, axis.zero)
        else:
            self._timeout(axis, now, self.config.homing_timeout_s, "homing", out)

    def _alignment_object(self, axis: _Axis) -> int:
        index = self.axes.index(axis)
        objects = self._alignment_objects
        return objects[index] if index < len(objects) else 0

    def _unexpected(self, axis: _Axis, now: float, out: list[Any]) -> None:
        if axis.last.state in _FAULTY:
            return  # reported by _drive_faults
        index = self.axes.index(axis)
        self._latch(AlarmCode.DRIVE_FAULT, index, now, out,
                    f"axis {index} left operation enabled ({axis.last.state.value}) "
                    f"while {axis.phase.value}")
