"""The motor driver's pure core, `MotorDriverCore.step(Inputs) -> Outputs` (the
package's docstring says what it does). Here: the cycle, the wire messages (motor
commands, game control, the panel's per-drive halt), the motion profile, the drives'
outputs and the status messages. Its faults are in faults.py, each axis's start-up in
startup.py."""

from __future__ import annotations

import logging
import math
from math import copysign, isfinite, sqrt
from typing import Any

from foosball.agents.motor_driver.config import MotorDriverConfig
from foosball.agents.motor_driver.faults import FaultHandling, Latched
from foosball.agents.motor_driver.records import (
    _FAULTY,
    PHASE_STATE,
    BusSample,
    MdaInputs,
    MdaOutputs,
    Phase,
    _Axis,
)
from foosball.agents.motor_driver.startup import StartUp
from foosball.ethercat import layout as L
from foosball.runtime import Inputs, Outputs
from foosball.runtime.latch import Cause
from foosball.safety.ratelog import RateLimitedLog
from foosball.wire.catalogue import (
    Agent,
    AlarmCode,
    AxisStatus,
    DriveCommand,
    DriveControl,
    DriveState,
    EtherCatStatus,
    GameCommand,
    GameControl,
    MotorCommand,
    MotorStatus,
    SafetyState,
)

# the package's logger: its lines keep the name they had in one file
log = logging.getLogger(__package__)

# the phases whose drive state makes the MDA's safety state ALIGNING, and HOMING
_ALIGNING_PHASES = tuple(p for p, s in PHASE_STATE.items()
                         if s in (DriveState.OFF, DriveState.ALIGNING))
_HOMING_PHASES = tuple(p for p, s in PHASE_STATE.items() if s is DriveState.HOMING)
_FOLLOWING = (Phase.READY, Phase.RUNNING)  # homed: the profile drives the setpoint
_OPERATION_ENABLED = L.Cia402State.OPERATION_ENABLED
_STATE_OF_BITS, _STATE_BITS = L.STATE_OF_BITS, L.STATE_BITS
_FAULTY_BITS = tuple(state in _FAULTY for state in _STATE_OF_BITS)  # per statusword & bits
_ENABLE_OPERATION = int(L.Control.ENABLE_OPERATION)
_CSP = int(L.Mode.CYCLIC_SYNC_POSITION)
_HOMING = int(L.Mode.HOMING)


class MotorDriverCore(FaultHandling, StartUp):
    agent = Agent.MOTOR_DRIVER
    reads = (MotorCommand, DriveControl)  # and the runtime's RUNTIME_READS

    def __init__(self, config: MotorDriverConfig) -> None:
        self.config = config
        self.axes = [_Axis(setup, setup.max_acceleration * config.cycle_s,
                           2.0 * setup.max_acceleration) for setup in config.axes]
        self.latched: Latched | None = None
        self.alarmed: set[tuple[AlarmCode, int]] = set()  # (code, axis) already raised
        self.emergencies_wanted: list[int] = []  # slaves whose drive newly faulted
        self.accepting = True  # GameControl PAUSE/STOP hold the rods; START resumes
        self.halted: set[int] = set()  # axes a person halted from the supervisory panel
        self.started = False
        self.consecutive_bad_wkc = 0
        self.consecutive_no_frame = 0
        self._bad_since_s = 0.0  # the first of the bad frames in a row (either kind)
        self.bad_working_counters = 0
        self.last_wkc = 0
        self.expected_wkc = 3 * len(self.axes)
        self.restarts_refused = 0
        self.restarts = 0
        self.cycles = 0
        self.fault_cycle: int | None = None  # cycle at which the last fault latched
        self.quick_stop_done_cycle: int | None = None  # all axes out of operation enabled
        self._last_status_s = -math.inf
        self.fault_log = RateLimitedLog(log, config.repeat_log_s)
        self._alignment_objects: tuple[int, ...] = ()
        self._answering = 0  # capture time of the newest command taken this cycle
        # read every cycle: the configuration's values kept at hand
        self._cycle_s = config.cycle_s
        self._status_period_s = config.status_period_s
        self._alignment_by_sdo = config.alignment is L.Alignment.SDO

    # -- public view ---------------------------------------------------------------------
    def drive_states(self) -> list[DriveState]:
        return [PHASE_STATE[a.phase] for a in self.axes]

    def safety_state(self) -> SafetyState:
        """The MDA's part of the system safety state (for its Heartbeat): ALIGNING while
        any drive is off or aligning, else HOMING while any homes, else PAUSED while not
        accepting, else PLAYING while any runs, else READY. (Every step asks: phases are
        compared by identity, as a set of them would hash each one in Python.)"""
        if self.latched is not None:
            return SafetyState.FAULT
        homing = running = False
        for axis in self.axes:
            phase = axis.phase
            if phase in _ALIGNING_PHASES:
                return SafetyState.ALIGNING
            if phase in _HOMING_PHASES:
                homing = True
            elif phase is Phase.RUNNING:
                running = True
        if homing:
            return SafetyState.HOMING
        if not self.accepting:
            return SafetyState.PAUSED
        return SafetyState.PLAYING if running else SafetyState.READY

    def position(self, axis: int) -> float:
        a = self.axes[axis]
        return a.last.position_rad - a.zero

    # -- the step ----------------------------------------------------------------------------
    def step(self, inputs: Inputs) -> Outputs:
        """The runtime's step: `inputs.sensed` is this cycle's BusSample. A fault latched
        anywhere in the system (the runtime's latch) quick-stops every axis this cycle."""
        sample: BusSample | None = inputs.sensed
        if sample is None:  # no cycle ran (a test stepping messages only)
            return Outputs(state=self.safety_state(), causes=self.causes())
        if inputs.safety.faulted and self.latched is None:
            self._latch(AlarmCode.PEER_FAULT, -1, inputs.now_s, [],
                        f"system fault: {inputs.safety.fault_text}", own=False)
        out = self.cycle(MdaInputs(inputs.now_s, sample.exchange, inputs.messages, sample.timing,
                                   sample.al_state, sample.alignment_objects,
                                   sample.slaves_not_op, sample.emergencies))
        return Outputs(out.messages, self.causes(), self.safety_state(), out)

    def causes(self) -> tuple[Cause, ...]:
        """The MDA's own cause while it is present (the latch stays until a restart)."""
        latched = self.latched
        if latched is None or latched.cleared:
            return ()
        return (Cause(latched.code, latched.text, latched.axis),)

    def cycle(self, inputs: MdaInputs) -> MdaOutputs:
        """One EtherCAT cycle of the drives' state machines and profiles."""
        self.cycles += 1
        now = inputs.now_s
        out: list[Any] = []
        frame_ok = self._bus_health(inputs.exchange, now, out)
        faulty = False
        if frame_ok:
            for axis, tx in zip(self.axes, inputs.exchange.inputs, strict=False):
                axis.last = tx
                if _FAULTY_BITS[tx.statusword & _STATE_BITS]:
                    faulty = True
        if not self.started:
            self.started = True
            if self.latched is None:  # started into a system in FAULT: nothing enables
                self._start_all(now)  # until a restart (seen: a restarted motor driver
                # re-enabled every drive of a halted game in its first four cycles)
        for message in inputs.messages:
            self._message(message, now, out)
        if faulty:  # no drive reports a fault: nothing to look at
            self._drive_faults(now, out)
        self._alignment_objects = inputs.alignment_objects
        if self.latched is None:
            for axis in self.axes:
                if axis.phase in _FOLLOWING and \
                        _STATE_OF_BITS[axis.last.statusword & _STATE_BITS] is _OPERATION_ENABLED:
                    if axis.setpoint != axis.goal or axis.speed != 0.0:  # else it stands
                        self._profile(axis)
                else:  # the CiA 402 sequence, alignment, homing, or a drive that left it
                    self._advance_axis(axis, now, out)
        else:
            self._watch_fault(inputs, frame_ok, now, out)
        drives = tuple([self._outputs(axis) for axis in self.axes])
        if now - self._last_status_s >= self._status_period_s:
            self._last_status_s = now
            out.append(self._motor_status())
            out.append(self._ethercat_status(inputs))
        # Recover slaves that dropped out of OP once frames come back; while none return,
        # a recovery attempt would only wait for its own timeouts inside the cycle.
        recover = self.latched is not None and self.consecutive_no_frame == 0 and (
            self.consecutive_bad_wkc > 0 or inputs.al_state != L.AlState.OP)
        read = tuple(n for n, a in enumerate(self.axes) if a.phase is Phase.ALIGNING) \
            if self._alignment_by_sdo and self.latched is None else ()
        answering, self._answering = self._answering, 0
        emergencies: tuple[int, ...] = ()
        if self.emergencies_wanted:  # a drive faulted: its CoE emergency read by mailbox
            emergencies, self.emergencies_wanted = tuple(self.emergencies_wanted), []
        return MdaOutputs(drives, tuple(out), recover, read, emergencies, answering)

    # -- messages ----------------------------------------------------------------------------
    def _message(self, message: Any, now: float, out: list[Any]) -> None:
        if isinstance(message, MotorCommand):
            if self.latched is not None or not self.accepting:
                return
            axes = self.axes
            count = len(axes)
            for target in message.axes:
                if 0 <= target.axis < count:
                    self._set_goal(axes[target.axis], target.position, target.velocity)
            self._answering = max(self._answering, message.ball_capture_time)
        elif isinstance(message, GameControl):
            command = message.command
            if command == GameCommand.RESTART:
                self._restart(now)
            elif command in (GameCommand.PAUSE, GameCommand.STOP):
                self.accepting = False
                for axis in self.axes:
                    self._hold(axis)
            elif command == GameCommand.START:
                self.accepting = True
        elif isinstance(message, DriveControl) and 0 <= message.axis < len(self.axes):
            self._drive_control(message, now)

    def _drive_control(self, message: DriveControl, now: float) -> None:
        """The supervisory panel's per-drive halt: a quick stop on that drive, held until
        released (a restart leaves it halted); a release re-enables, aligns and, for a
        translation axis, homes it again, unless a fault is latched."""
        axis = self.axes[message.axis]
        if message.command == DriveCommand.HALT:
            self.halted.add(message.axis)
            if axis.phase is not Phase.FAULT:
                axis.phase = Phase.QUICK_STOP
            log.warning("drive %d halted from the panel", message.axis)
        elif message.axis in self.halted:
            self.halted.discard(message.axis)
            if self.latched is None:
                self._enter(axis, Phase.ENABLING, now)
            log.info("drive %d released from the panel", message.axis)

    def _set_goal(self, axis: _Axis, position: float, speed: float) -> None:
        """The goal within the soft travel, the speed within 0 .. max_speed (compared
        rather than min()/max(): the same floats, without four calls per axis)."""
        if axis.phase not in _FOLLOWING:
            return
        if not (isfinite(position) and isfinite(speed)):
            return
        setup = axis.setup
        low, high = setup.soft_min, setup.soft_max
        position = position if position > low else low
        axis.goal = axis.zero + (position if position < high else high)
        speed = setup.max_speed if setup.max_speed < speed else speed
        axis.goal_speed = speed if speed > 0.0 else 0.0
        axis.phase = Phase.RUNNING

    def _hold(self, axis: _Axis) -> None:
        if axis.phase is Phase.RUNNING:
            stopping = axis.speed * abs(axis.speed) / (2 * axis.setup.max_acceleration)
            axis.goal = axis.setpoint + stopping
            axis.goal_speed = axis.setup.max_speed

    def _restart(self, now: float) -> None:
        if self.latched is None:
            return  # nothing to restart from
        if not self.latched.cleared:
            self.restarts_refused += 1
            self.fault_log.log(now, logging.WARNING, "refused",
                               "restart refused: %s is still present", self.latched.text)
            return
        log.info("restart: re-enabling, aligning and homing every axis")
        self.restarts += 1
        self.latched = None
        self.alarmed.clear()
        self.fault_cycle = self.quick_stop_done_cycle = None
        self._start_all(now)

    def _start_all(self, now: float) -> None:
        for index, axis in enumerate(self.axes):
            if index in self.halted:
                axis.phase = Phase.QUICK_STOP  # halted by a person: stays so until released
            else:
                self._enter(axis, Phase.ENABLING, now)

    # -- motion profile ----------------------------------------------------------------------
    def _profile(self, axis: _Axis) -> None:
        """Trapezoidal setpoint towards the goal; speed and acceleration limited. (The
        limits compared rather than min()/max(), and min(a, b) written as `b if b < a else
        a`, max(a, b) as `b if b > a else a`: the same floats, NaN included.)"""
        goal, setpoint, speed = axis.goal, axis.setpoint, axis.speed
        vmax = axis.goal_speed if axis.phase is Phase.RUNNING else 0.0
        error = goal - setpoint
        distance = abs(error)
        reach = sqrt(axis.twice_acceleration * distance)  # the speed that still stops there
        wanted = copysign(reach if reach < vmax else vmax, error)
        largest_change = axis.largest_change
        change = wanted - speed
        change = change if change < largest_change else largest_change
        speed += change if change > -largest_change else -largest_change
        step = speed * self._cycle_s
        if distance <= abs(step) or (distance < 1e-6 and abs(speed) < largest_change):
            axis.setpoint = goal
            axis.speed = 0.0
        else:
            axis.setpoint = setpoint + step
            axis.speed = speed

    # -- outputs -------------------------------------------------------------------------------
    def _outputs(self, axis: _Axis) -> L.RxPdo:
        phase = axis.phase
        if phase in _FOLLOWING:  # most cycles: the profile's setpoint
            setpoint = axis.setpoint
            if setpoint != axis.following_setpoint:
                axis.following_setpoint = setpoint
                axis.following = L.RxPdo(_ENABLE_OPERATION, _CSP, L.rad_to_counts(setpoint), 0)
            return axis.following
        tx = axis.last
        hold = L.rad_to_counts(axis.setpoint)
        csp = _CSP
        if phase is Phase.ENABLING:
            state = tx.state
            if state in _FAULTY:
                axis.reset_toggle = not axis.reset_toggle  # fault reset acts on a rising edge
                control = L.Control.FAULT_RESET if axis.reset_toggle else 0
            elif state is L.Cia402State.QUICK_STOP_ACTIVE:
                control = L.Control.DISABLE_VOLTAGE
            elif state is L.Cia402State.SWITCH_ON_DISABLED:
                control = L.Control.SHUTDOWN
            elif state is L.Cia402State.READY_TO_SWITCH_ON:
                control = L.Control.SWITCH_ON
            elif state in (L.Cia402State.SWITCHED_ON, L.Cia402State.OPERATION_ENABLED):
                control = L.Control.ENABLE_OPERATION
                axis.setpoint = tx.position_rad
                hold = tx.position_actual
            else:
                control = L.Control.DISABLE_VOLTAGE
            return L.RxPdo(int(control), csp, hold, 0)
        if phase is Phase.ALIGNING:
            return L.RxPdo(int(L.Control.ENABLE_OPERATION), csp, hold, 0)
        if phase is Phase.HOMING_DRIVE:
            axis.setpoint = tx.position_rad
            return L.RxPdo(_ENABLE_OPERATION | int(L.Control.HOMING_START), _HOMING,
                           tx.position_actual, 0)
        if phase in (Phase.HOMING_APPROACH, Phase.HOMING_LEAVE):
            speed = (-self.config.homing_speed if phase is Phase.HOMING_APPROACH
                     else self.config.homing_leave_speed)
            axis.setpoint = tx.position_rad
            return L.RxPdo(int(L.Control.ENABLE_OPERATION), int(L.Mode.CYCLIC_SYNC_VELOCITY),
                           tx.position_actual, L.rad_s_to_counts(speed))
        if phase is Phase.QUICK_STOP:
            return L.RxPdo(int(L.Control.QUICK_STOP), csp, tx.position_actual, 0)
        # FAULT or OFF: stop commanding this drive (no enable, no fault reset)
        return L.RxPdo(int(L.Control.DISABLE_VOLTAGE), csp, tx.position_actual, 0)

    # -- status messages -----------------------------------------------------------------------
    def _motor_status(self) -> MotorStatus:
        return MotorStatus(axes=tuple(
            AxisStatus(
                axis=index,
                state=PHASE_STATE[axis.phase],
                position=_bounded(axis.last.position_rad - axis.zero, 1e4),
                velocity=_bounded(axis.last.velocity_rad_s, 1e4),
                current=_bounded(axis.last.current_a, 1e3),
                fault_code=axis.last.error_code & 0xFFFF)
            for index, axis in enumerate(self.axes[:8])))

    def _ethercat_status(self, inputs: MdaInputs) -> EtherCatStatus:
        return EtherCatStatus(
            link_up=self.consecutive_no_frame == 0,
            slaves=len(inputs.exchange.inputs) if inputs.exchange.working_counter >= 0 else 0,
            expected_slaves=len(self.axes),
            al_state=inputs.al_state & 0xFF,
            working_counter=min(self.last_wkc, 65535),
            expected_working_counter=self.expected_wkc,
            bad_working_counters=self.bad_working_counters,
            cycle_period_s=_bounded(inputs.timing.period_s, 1.0, low=0.0),
            wakeup_jitter_p99_s=_bounded(inputs.timing.wakeup_jitter_p99_s, 10.0, low=0.0),
            capture_to_setpoint_p50_s=_bounded(inputs.timing.capture_to_setpoint_p50_s, 10.0,
                                               low=0.0),
            capture_to_setpoint_p99_s=_bounded(inputs.timing.capture_to_setpoint_p99_s, 10.0,
                                               low=0.0),
            slaves_not_op=inputs.slaves_not_op, emergencies=inputs.emergencies)


def _bounded(value: float, limit: float, low: float | None = None) -> float:
    """0.0 if not finite, else held within low (-limit unless given) .. limit (compared:
    the same floats as max(low, min(limit, value)), 24 times a status)."""
    if not isfinite(value):
        return 0.0
    value = value if value < limit else limit
    low = -limit if low is None else low
    return value if value > low else low
