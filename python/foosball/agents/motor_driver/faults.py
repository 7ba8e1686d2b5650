"""The motor driver's faults: the bus's health (frames lost, working counters wrong),
the drives' faults, the latch that quick-stops every axis, watching a latched cause go
away, and disable voltage for a drive that ignores its quick stop.

Not a second FAULT latch: the system's is the runtime's (foosball.runtime.latch), which
the core's `causes()` feed and whose view latches PEER_FAULT here. This one is the drives'
side of it, and stays here because it acts inside the EtherCAT cycle that saw the fault
(quick stop on every axis that same cycle, per-axis phases, a cause counted gone over
clean bus cycles); the runtime's latch runs on the I/O thread a safety tick later.

`FaultHandling` is one part of `MotorDriverCore` (core.py), in a file of its own to keep
each file readable in one sitting: its methods work on the core's state (axes, config,
latched, alarmed, the bus counters)."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from foosball.agents.motor_driver.config import MIN_BUS_ERROR_CYCLES
from foosball.agents.motor_driver.records import _FAULTY, MdaInputs, Phase, _Axis
from foosball.ethercat import layout as L
from foosball.ethercat.bus import Exchange
from foosball.wire.catalogue import AlarmCode

# the package's logger: its lines keep the name they had in one file
log = logging.getLogger(__package__)

ERROR_ALARM = {
    L.ErrorCode.EMERGENCY_BUTTON: AlarmCode.EMERGENCY_BUTTON,
    L.ErrorCode.OVERCURRENT: AlarmCode.OVERCURRENT,
    L.ErrorCode.MOTOR_LOCKED: AlarmCode.MOTOR_LOCKED,
}
# causes the MDA can see go away itself; any other agent's alarm is cleared by its owner
OBSERVABLE_CAUSES = (AlarmCode.ETHERCAT_LINK, AlarmCode.WORKING_COUNTER,
                     AlarmCode.EMERGENCY_BUTTON, AlarmCode.OVERCURRENT, AlarmCode.MOTOR_LOCKED,
                     AlarmCode.DRIVE_FAULT)


@dataclass
class Latched:
    code: AlarmCode
    text: str
    axis: int
    since_s: float
    cleared: bool = False
    clean_cycles: int = 0  # cycles in a row without the cause (see cause_clear_cycles)


class FaultHandling:
    """The faults part of `MotorDriverCore`: see the module's docstring."""

    # -- bus health ------------------------------------------------------------------------
    def _bus_health(self, exchange: Exchange, now: float, out: list[Any]) -> bool:
        wkc = exchange.working_counter
        self.last_wkc = max(0, wkc)
        if wkc < 0:
            self.consecutive_no_frame += 1
            self._bad_frame(self.consecutive_no_frame, now, out, AlarmCode.ETHERCAT_LINK,
                            "EtherCAT link lost: no frame returned")
            return False
        self.consecutive_no_frame = 0
        if wkc != self.expected_wkc:
            self.consecutive_bad_wkc += 1
            self._bad_frame(self.consecutive_bad_wkc, now, out, AlarmCode.WORKING_COUNTER,
                            f"working counter {wkc}, expected {self.expected_wkc},")
            return False
        self.consecutive_bad_wkc = 0
        return True

    def _bad_frame(self, in_a_row: int, now: float, out: list[Any], code: AlarmCode,
                   what: str) -> None:
        """One more bad frame in a row: the alarm once they are past the tolerance."""
        self.bad_working_counters += 1
        if in_a_row == 1:
            self._bad_since_s = now
        if self._past_tolerance(in_a_row, now):
            self._latch(code, -1, now, out, f"{what} for {in_a_row} cycles "
                        f"({1e3 * (now - self._bad_since_s):.0f} ms)")

    def _past_tolerance(self, bad_in_a_row: int, now: float) -> bool:
        """So many bad frames in a row are past the bus error tolerance: more cycles than it
        holds, or (at least 3 cycles) its time gone since the first of them."""
        config = self.config
        return bad_in_a_row > config.bus_error_cycles or (
            bad_in_a_row > MIN_BUS_ERROR_CYCLES
            and now - self._bad_since_s >= config.bus_error_tolerance_s)

    # -- faults --------------------------------------------------------------------------------
    def _drive_faults(self, now: float, out: list[Any]) -> None:
        for index, axis in enumerate(self.axes):
            tx = axis.last
            if tx.state not in _FAULTY:
                continue
            if axis.phase is Phase.ENABLING and now - axis.since_s < self.config.enable_timeout_s:
                continue  # we are resetting it (restart); a lasting fault times out below
            if axis.phase is not Phase.FAULT:
                axis.phase = Phase.FAULT
            code = ERROR_ALARM.get(L.ErrorCode(tx.error_code) if tx.error_code in
                                   L.ErrorCode._value2member_map_ else L.ErrorCode.GENERIC,
                                   AlarmCode.DRIVE_FAULT)
            if (code, index) in self.alarmed:
                continue
            self.emergencies_wanted.append(index + 1)  # what the drive says of it (CoE)
            self._latch(code, index, now, out,
                        f"drive {index} fault 0x{tx.error_code:04x} ({code.name.lower()})")

    def _latch(self, code: AlarmCode, axis: int, now: float, out: list[Any], text: str,
               own: bool = True) -> None:
        """Quick stop on every axis. `own`: a cause the MDA sees itself and watches clear;
        otherwise the system's latch (another agent's cause) and cleared at once here."""
        if (code, axis) in self.alarmed:
            return  # known since the last restart
        self.alarmed.add((code, axis))
        first = self.latched is None or (own and self.latched.code is AlarmCode.PEER_FAULT)
        if first:
            self.latched = Latched(code, text, axis, now, cleared=not own)
            if self.fault_cycle is None:
                self.fault_cycle = self.cycles
                self.quick_stop_done_cycle = None
            # mono= and cycle= let the rig's fault matrix time the chain across processes
            log.error("FAULT latched: %s; quick stop on every axis (mono=%.6f cycle=%d)",
                      text, now, self.cycles)
        else:
            self.fault_log.log(now, logging.ERROR, "further",
                               "further fault while latched: %s", text)
        for index, a in enumerate(self.axes):
            if a.last.state in _FAULTY or index == axis:
                a.phase = Phase.FAULT
            elif a.phase is not Phase.FAULT:
                a.phase = Phase.QUICK_STOP

    def _watch_fault(self, inputs: MdaInputs, frame_ok: bool, now: float,
                     out: list[Any]) -> None:
        latched = self.latched
        assert latched is not None
        if frame_ok:
            for axis in self.axes:
                if axis.phase is Phase.QUICK_STOP:
                    self._escalate_quick_stop(axis, now, out)
        if self.quick_stop_done_cycle is None and frame_ok and all(
                a.last.state is not L.Cia402State.OPERATION_ENABLED for a in self.axes):
            self.quick_stop_done_cycle = self.cycles
            log.warning("every drive out of operation enabled (mono=%.6f cycle=%d, %d cycles "
                        "after the fault)", inputs.now_s, self.cycles,
                        self.cycles - (self.fault_cycle or self.cycles))
        if latched.code not in OBSERVABLE_CAUSES:
            return
        link_bad = self._past_tolerance(max(self.consecutive_no_frame,
                                            self.consecutive_bad_wkc), now)
        present = (link_bad or inputs.al_state != L.AlState.OP
                   or any(a.last.digital_inputs & L.FAULT_CAUSE_INPUTS for a in self.axes))
        if present:
            latched.clean_cycles = 0
            if latched.cleared:
                latched.cleared = False
                self.fault_log.log(now, logging.WARNING, "back", "fault cause back (%s)",
                                   latched.text)
            return
        # a single lost frame is no evidence either way: it restarts the count only
        latched.clean_cycles = latched.clean_cycles + 1 if frame_ok else 0
        if not latched.cleared and latched.clean_cycles >= self.config.cause_clear_cycles:
            latched.cleared = True
            self.fault_log.log(now, logging.WARNING, "gone",
                               "fault cause gone (%s): waiting for a restart from the game "
                               "panel", latched.text)

    def _escalate_quick_stop(self, axis: _Axis, now: float, out: list[Any]) -> None:
        """A drive that stays in operation enabled under quick stop for longer than the
        bound gets disable voltage (phase FAULT) and an alarm naming it."""
        if axis.last.state is not L.Cia402State.OPERATION_ENABLED:
            return
        if math.isnan(axis.quick_stop_since_s):
            axis.quick_stop_since_s = now
            return
        waited = now - axis.quick_stop_since_s
        if waited < self.config.quick_stop_escalation_s:
            return
        index = self.axes.index(axis)
        axis.phase = Phase.FAULT
        text = (f"axis {index}: drive ignored quick stop for {waited:.2f} s (still operation "
                f"enabled): voltage disabled")
        self._latch(AlarmCode.DRIVE_FAULT, index, now, out, text)  # once per axis and fault
        log.error("%s", text)
