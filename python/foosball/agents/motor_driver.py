"""Motor driving agent (MDA): the EtherCAT master's brain on the pole board.

`MotorDriverCore.step(Inputs) -> Outputs` is pure: the drives' process data and working
counter (a `BusSample`) and the wire messages in; the drives' outputs and the wire messages
out. It runs in the shared agent runtime (foosball.runtime) with `EtherCatHardware`
as its hardware: the cycle thread runs SCHED_FIFO at the top priority, the runtime's I/O
thread (decoding, heartbeats, deadlines) below it.

Per axis: enable (CiA 402: fault reset -> shutdown -> switch on -> enable operation),
rotor alignment, then for translation axes the zero-match homing (run towards the end
switch until it is active, back off slowly until it releases: that edge is zero), then
position commands in motor radians and rad/s, followed with a speed- and
acceleration-limited profile in cyclic synchronous position mode.

Faults (seed paper): a drive fault stops commanding that drive and quick-stops all the
others; so do link loss, working-counter errors beyond a small tolerance and any fault the
runtime's latch holds (another agent's alarm, a silent peer). The MDA's own cause is one of
its Outputs' causes while present, and the runtime announces it. The fault latches: the MDA
watches for the cause to clear, and only a RESTART (which the runtime passes on only when
no cause is left anywhere) re-enables, re-aligns and re-homes. Anything it is unsure of (an
unknown drive state, a timeout) is a fault too.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import copysign, isfinite, sqrt
from typing import Any, NamedTuple

import numpy as np

from foosball.ethercat import layout as L
from foosball.ethercat.bus import (
    BusConfigurationError,
    EtherCatBus,
    Exchange,
    SlaveInfo,
    receive_timeout_for,
)
from foosball.ethercat.dc import PhaseLock
from foosball.realtime import CycleStats, prepare_realtime
from foosball.runtime import AgentRuntime, Inputs, Outputs
from foosball.safety.latch import Cause
from foosball.safety.ratelog import RateLimitedLog
from foosball.safety.settings import SafetySettings
from foosball.safety.systemd import SystemdNotifier
from foosball.schema import SettingError, seconds, setting
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
    SlaveState,
)

log = logging.getLogger(__name__)
# The fewest bad EtherCAT frames in a row that raise the alarm, whatever the cycle: one or
# two lost frames are noise on any bus.
MIN_BUS_ERROR_CYCLES = 3


# --- configuration ---------------------------------------------------------------------------
@dataclass(frozen=True)
class AxisSetup:
    axis: int
    homes: bool  # translation axis: has the end switch and needs the zero-match
    max_speed: float = 800.0  # rad/s: the profile never asks for more
    max_acceleration: float = 20_000.0  # rad/s^2
    soft_min: float = -math.inf  # rad relative to zero: goals are clamped to this travel
    soft_max: float = math.inf


def default_axes(count: int = 8) -> tuple[AxisSetup, ...]:
    """Translation axes even, rotation axes odd (axis = 2 * rod + kind)."""
    return tuple(
        AxisSetup(axis, homes=True, max_speed=850.0, max_acceleration=25_000.0)
        if axis % 2 == 0 else
        AxisSetup(axis, homes=False, max_speed=310.0, max_acceleration=9_000.0)
        for axis in range(count))


def axes_from_table(table: Any) -> tuple[AxisSetup, ...]:
    """Axis setups with soft travel limits from the geometry (robot rods in role order)."""
    axes = []
    for index, rod in enumerate(table.robot_rods):
        per_rad = rod.metres_per_motor_radian()
        axes.append(AxisSetup(2 * index, homes=True, max_speed=850.0,
                              max_acceleration=25_000.0,
                              soft_min=(rod.travel_min - rod.zero_offset) / per_rad,
                              soft_max=(rod.travel_max - rod.zero_offset) / per_rad))
        axes.append(AxisSetup(2 * index + 1, homes=False, max_speed=310.0,
                              max_acceleration=9_000.0))
    return tuple(axes)


def _axis_methods(table: Any, where: str) -> dict[int, int]:
    if not isinstance(table, dict):
        raise SettingError(f"{where}: a table of axis = homing method, e.g. {{\"4\" = 37}}")
    methods = {}
    for axis, method in table.items():
        if not str(axis).isdigit() or isinstance(method, bool) or not isinstance(method, int) \
                or not -128 <= method <= 127:
            raise SettingError(f"{where}: {axis} = {method!r}: an axis number = a homing "
                               "method in -128..127")
        methods[int(axis)] = method
    return methods


@dataclass(frozen=True)
class MotorDriverConfig:
    # from the table geometry, not from board.toml
    axes: tuple[AxisSetup, ...] = setting(default_factory=default_axes, in_file=False)
    cycle_s: float = setting(0.005, low=0.0005, high=0.1, unit="s")
    enable_timeout_s: float = seconds(1.0, high=60.0)
    alignment_timeout_s: float = seconds(3.0, high=60.0)
    homing_timeout_s: float = seconds(20.0, high=600.0)
    # towards the switch
    homing_speed: float = setting(20.0, above=0.0, high=200.0, unit="rad/s")
    # off the switch: the release edge is zero
    homing_leave_speed: float = setting(1.0, above=0.0, high=20.0, unit="rad/s")
    # How translation axes home. 0: the master homes them on their end switch (the two
    # speeds above). Any other value: the drive's own CiA 402 homing mode with this method
    # (0x6098, written in PRE-OP with homing_speed as 0x6099:01/02), for drives without the
    # switch: 37 where the axis stands, -4 into the negative end stop (the usual
    # manufacturer number; check the drive's manual), 17 to the negative limit switch.
    homing_method: int = setting(0, low=-128, high=127)
    # an axis homed otherwise than the rest: {"4" = 37} (axis number = method, 0: switch)
    homing_methods: dict[int, int] = setting(default_factory=dict, convert=_axis_methods)
    # Distributed clocks: every drive's clock set to the first one's and SYNC0 at cycle_s,
    # for drives that need it (they refuse SAFE-OP without it: AL code 0x0030). Off: the
    # drives take each frame's setpoints as they come (free run), as STEVAL-ETH001 does.
    distributed_clocks: bool = False
    # how a drive tells that its rotor alignment is done (the drive profile's option)
    alignment: L.Alignment = L.Alignment.MANUFACTURER_BITS
    # alignment = "sdo": the object read (UNSIGNED8, nonzero = aligned), subindex 0
    alignment_object: int = setting(L.ALIGNMENT_OBJECT, low=0x2000, high=0x5FFF)
    # Bad or missing frames tolerated in a row before the alarm: at least 3 cycles and at
    # most this long, so a 1 ms cycle is not stricter in time than a 5 ms one, and cycles
    # stretched by frames that never return (each waits out the receive timeout) do not
    # stretch it; well inside the drives' 50 ms watchdog, and the drives hold their last
    # setpoint meanwhile.
    bus_error_tolerance_s: float = seconds(0.015, high=0.04)
    # A latched cause is gone only after this many clean cycles in a row (100 ms at 5 ms);
    # a lost frame restarts the count but does not bring a gone cause back: only as many
    # bad frames in a row as raise the alarm do (bus_error_cycles).
    cause_clear_cycles: int = setting(20, low=1, high=10_000)
    # A drive still in operation enabled this long after its quick stop ignores it: its
    # voltage is disabled (the motor coasts) and an alarm names it. Our drives leave
    # operation enabled in the first cycle after the command.
    quick_stop_escalation_s: float = seconds(0.1, high=2.0)
    # the same fault log line at most this often (with a count)
    repeat_log_s: float = setting(10.0, low=0.0, high=3600.0, unit="s")

    def homing_method_of(self, axis: int) -> int:
        """The homing method of one axis (0: the master homes it on its switch)."""
        return self.homing_methods.get(axis, self.homing_method)

    @property
    def bus_error_cycles(self) -> int:
        return max(MIN_BUS_ERROR_CYCLES, round(self.bus_error_tolerance_s / self.cycle_s))
    status_period_s: float = seconds(0.05, high=1.0)


# --- pure core -------------------------------------------------------------------------------
class Phase(enum.Enum):
    OFF = "off"
    ENABLING = "enabling"
    ALIGNING = "aligning"
    HOMING_APPROACH = "homing: towards the switch"
    HOMING_LEAVE = "homing: leaving the switch"
    HOMING_DRIVE = "homing: the drive's own method"
    READY = "ready"
    RUNNING = "running"
    QUICK_STOP = "quick stop"
    FAULT = "fault"


PHASE_STATE = {
    Phase.OFF: DriveState.OFF,
    Phase.ENABLING: DriveState.OFF,
    Phase.ALIGNING: DriveState.ALIGNING,
    Phase.HOMING_APPROACH: DriveState.HOMING,
    Phase.HOMING_LEAVE: DriveState.HOMING,
    Phase.HOMING_DRIVE: DriveState.HOMING,
    Phase.READY: DriveState.READY,
    Phase.RUNNING: DriveState.RUNNING,
    Phase.QUICK_STOP: DriveState.QUICK_STOP,
    Phase.FAULT: DriveState.FAULT,
}

ERROR_ALARM = {
    L.ErrorCode.EMERGENCY_BUTTON: AlarmCode.EMERGENCY_BUTTON,
    L.ErrorCode.OVERCURRENT: AlarmCode.OVERCURRENT,
    L.ErrorCode.MOTOR_LOCKED: AlarmCode.MOTOR_LOCKED,
}
_FAULTY = (L.Cia402State.FAULT, L.Cia402State.FAULT_REACTION_ACTIVE)
# the phases whose drive state makes the MDA's safety state ALIGNING, and HOMING
_ALIGNING_PHASES = tuple(p for p, s in PHASE_STATE.items()
                         if s in (DriveState.OFF, DriveState.ALIGNING))
_HOMING_PHASES = tuple(p for p, s in PHASE_STATE.items() if s is DriveState.HOMING)
# the start-up steps a timeout looks at: axes in the same step are named together
_STEP_GROUP = {Phase.ENABLING: "enabling", Phase.ALIGNING: "aligning",
               Phase.HOMING_APPROACH: "homing", Phase.HOMING_LEAVE: "homing",
               Phase.HOMING_DRIVE: "homing"}
_FOLLOWING = (Phase.READY, Phase.RUNNING)  # homed: the profile drives the setpoint
_OPERATION_ENABLED = L.Cia402State.OPERATION_ENABLED
_STATE_OF_BITS, _STATE_BITS = L.STATE_OF_BITS, L.STATE_BITS
_FAULTY_BITS = tuple(state in _FAULTY for state in _STATE_OF_BITS)  # per statusword & bits
_ENABLE_OPERATION = int(L.Control.ENABLE_OPERATION)
_CSP = int(L.Mode.CYCLIC_SYNC_POSITION)
_HOMING = int(L.Mode.HOMING)
_HOMED_BITS = int(L.Status.HOMING_ATTAINED | L.Status.TARGET_REACHED)
# causes the MDA can see go away itself; any other agent's alarm is cleared by its owner
OBSERVABLE_CAUSES = (AlarmCode.ETHERCAT_LINK, AlarmCode.WORKING_COUNTER,
                     AlarmCode.EMERGENCY_BUTTON, AlarmCode.OVERCURRENT, AlarmCode.MOTOR_LOCKED,
                     AlarmCode.DRIVE_FAULT)


# The records made every cycle are named tuples: the cheapest immutable record to build.
class CycleTiming(NamedTuple):
    period_s: float = 0.0
    wakeup_jitter_p99_s: float = 0.0
    capture_to_setpoint_p50_s: float = 0.0  # over the commands of the last window
    capture_to_setpoint_p99_s: float = 0.0


class MdaInputs(NamedTuple):
    now_s: float
    exchange: Exchange
    messages: tuple[Any, ...] = ()
    timing: CycleTiming = CycleTiming()
    al_state: int = int(L.AlState.OP)  # lowest AL state read when the bus was last checked
    alignment_objects: tuple[int, ...] = ()  # alignment = "sdo": per axis, as last read
    slaves_not_op: tuple[SlaveState, ...] = ()  # see EtherCatHardware.slaves_not_op


class MdaOutputs(NamedTuple):
    drives: tuple[L.RxPdo, ...]
    messages: tuple[Any, ...] = ()
    recover_bus: bool = False
    read_alignment: tuple[int, ...] = ()  # axes whose alignment object to read by SDO
    ball_capture_time: int = 0  # of the newest command these drives' setpoints answer


@dataclass(slots=True)  # slots: the cycle reads and writes these eight times a period
class _Axis:
    setup: AxisSetup
    # the profile's per-cycle constants, worked out once (the same floats as the profile
    # worked out every cycle): the largest speed change in one cycle, 2 x max acceleration
    largest_change: float
    twice_acceleration: float
    phase: Phase = Phase.OFF
    since_s: float = 0.0
    zero: float = 0.0  # raw motor position of the switch edge (translation axes)
    setpoint: float = 0.0  # raw profile position sent to the drive
    speed: float = 0.0  # profile velocity
    goal: float = 0.0  # raw goal position
    goal_speed: float = 0.0
    reset_toggle: bool = False
    # when the quick stop now sent to it began (NaN: none); escalation counts from here
    quick_stop_since_s: float = math.nan
    last: L.TxPdo = field(default_factory=L.TxPdo)
    # the outputs while following the profile, and the setpoint they hold (rebuilt when
    # the setpoint moves; NaN: none yet)
    following: L.RxPdo = field(default_factory=L.RxPdo)
    following_setpoint: float = math.nan


@dataclass
class Latched:
    code: AlarmCode
    text: str
    axis: int
    since_s: float
    cleared: bool = False
    clean_cycles: int = 0  # cycles in a row without the cause (see cause_clear_cycles)


class MotorDriverCore:
    agent = Agent.MOTOR_DRIVER
    reads = (MotorCommand, DriveControl)  # and the runtime's RUNTIME_READS

    def __init__(self, config: MotorDriverConfig) -> None:
        self.config = config
        self.axes = [_Axis(setup, setup.max_acceleration * config.cycle_s,
                           2.0 * setup.max_acceleration) for setup in config.axes]
        self.latched: Latched | None = None
        self.alarmed: set[tuple[AlarmCode, int]] = set()  # (code, axis) already raised
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
                                   sample.slaves_not_op))
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
        return MdaOutputs(drives, tuple(out), recover, read, answering)

    # -- bus health ------------------------------------------------------------------------
    def _bus_health(self, exchange: Exchange, now: float, out: list[Any]) -> bool:
        wkc = exchange.working_counter
        self.last_wkc = max(0, wkc)
        if wkc < 0:
            self.consecutive_no_frame += 1
            self.bad_working_counters += 1
            if self.consecutive_no_frame == 1:
                self._bad_since_s = now
            if self._past_tolerance(self.consecutive_no_frame, now):
                self._latch(AlarmCode.ETHERCAT_LINK, -1, now, out,
                            f"EtherCAT link lost: no frame returned for "
                            f"{self.consecutive_no_frame} cycles "
                            f"({1e3 * (now - self._bad_since_s):.0f} ms)")
            return False
        self.consecutive_no_frame = 0
        if wkc != self.expected_wkc:
            self.consecutive_bad_wkc += 1
            self.bad_working_counters += 1
            if self.consecutive_bad_wkc == 1:
                self._bad_since_s = now
            if self._past_tolerance(self.consecutive_bad_wkc, now):
                self._latch(AlarmCode.WORKING_COUNTER, -1, now, out,
                            f"working counter {wkc}, expected {self.expected_wkc}, for "
                            f"{self.consecutive_bad_wkc} cycles "
                            f"({1e3 * (now - self._bad_since_s):.0f} ms)")
            return False
        self.consecutive_bad_wkc = 0
        return True

    def _past_tolerance(self, bad_in_a_row: int, now: float) -> bool:
        """So many bad frames in a row are past the bus error tolerance: more cycles than it
        holds, or (at least 3 cycles) its time gone since the first of them."""
        config = self.config
        return bad_in_a_row > config.bus_error_cycles or (
            bad_in_a_row > MIN_BUS_ERROR_CYCLES
            and now - self._bad_since_s >= config.bus_error_tolerance_s)

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
            slaves_not_op=inputs.slaves_not_op)


def _bounded(value: float, limit: float, low: float | None = None) -> float:
    """0.0 if not finite, else held within low (-limit unless given) .. limit (compared:
    the same floats as max(low, min(limit, value)), 24 times a status)."""
    if not isfinite(value):
        return 0.0
    value = value if value < limit else limit
    low = -limit if low is None else low
    return value if value > low else low


# --- the real-time edge ---------------------------------------------------------------------
IO_PRIORITY = 50  # SCHED_FIFO of the runtime's I/O thread: below the cycle (99), above the rest
P99_CYCLES = 2000  # the p99 in EtherCatStatus covers the latest cycles: cheap in the cycle


class BusSample(NamedTuple):
    """One cycle's reading of the bus: the runtime hands it to the core as `sensed`."""

    exchange: Exchange
    timing: CycleTiming = CycleTiming()
    al_state: int = int(L.AlState.OP)
    alignment_objects: tuple[int, ...] = ()
    slaves_not_op: tuple[SlaveState, ...] = ()


def lowest_al_state(states: Sequence[SlaveInfo]) -> int:
    """The lowest AL state of the slaves, with its error flag (SAFE-OP + ERROR, 0x14, is
    below OP, 0x08); 0 for none."""
    return min((s.al_state for s in states), key=lambda v: (v & 0x0F, not v & L.AL_ERROR_FLAG),
               default=0)


def out_of_op(states: Sequence[SlaveInfo]) -> tuple[SlaveState, ...]:
    """The slaves read out of OP (or not answering), as EtherCatStatus carries them."""
    return tuple(SlaveState(
        position=s.position, al_state=s.al_state & 0xFF, al_status_code=s.al_status_code & 0xFFFF,
        al_status_text=s.al_status_text[:40],
        rx_errors=sum(map(sum, s.rx_errors)) if s.rx_errors else -1,
        lost_links=sum(s.lost_links) if s.lost_links else -1)
        for s in states if s.al_state != L.AlState.OP)[:8]


class AlignmentReader:
    """The alignment objects (alignment = "sdo") read by SDO out of the cycle thread: an SDO
    read waits for the drive's mailbox, and pysoem waits up to 700 ms for one that does not
    answer, far past the drives' 50 ms watchdog. The cycle hands over the axes aligning and
    takes the values read so far; one axis at a time, in turn, at most one read a cycle.
    Axes not aligning read as 0, so a value from before a fault never passes for a fresh one.
    `threaded=False` reads one axis inline per request (tests that move a clock by hand)."""

    def __init__(self, read: Callable[[int], int], drives: int, pause_s: float,
                 clock: Callable[[], float], threaded: bool = True) -> None:
        self.read = read
        self.values = [0] * drives
        self.pause_s = pause_s
        self.clock = clock
        self.threaded = threaded
        self._wanted: tuple[int, ...] = ()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._turn = 0
        self._log = RateLimitedLog(log, 10.0)
        self._none_read = (0,) * drives

    def request(self, axes: tuple[int, ...]) -> tuple[int, ...]:
        if axes != self._wanted:
            with self._lock:
                self._wanted = axes
                for axis in range(len(self.values)):
                    if axis not in axes:
                        self.values[axis] = 0
            if axes and self.threaded:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="mailbox",
                                                    daemon=True)
                    self._thread.start()
                self._wake.set()
        if not axes:
            return self._none_read  # nothing aligns (most cycles): nothing to copy
        if not self.threaded:
            self._read_next()
        return tuple(self.values)

    def _read_next(self) -> bool:
        wanted = self._wanted
        if not wanted:
            return False
        axis = wanted[self._turn % len(wanted)]
        self._turn += 1
        try:
            value = self.read(axis)
        except BusConfigurationError as exc:  # retried next turn; the alignment times out
            self._log.log(self.clock(), logging.WARNING, "alignment",
                          "alignment object of axis %d unreadable: %s", axis, exc)
            return True
        with self._lock:
            if axis in self._wanted:
                self.values[axis] = value
        return True

    def _run(self) -> None:
        while not self._stopping:
            if not self._read_next():
                self._wake.wait(1.0)
                self._wake.clear()
                continue
            time.sleep(self.pause_s)

    def close(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)


class EtherCatHardware:
    """The MDA's hardware for the runtime: each `sense()` waits for the next cycle deadline
    and exchanges the outputs the core gave last; `act()` takes the next outputs and runs a
    bus recovery when the core asks. If a step fails, every drive gets a quick stop."""

    def __init__(self, bus: EtherCatBus, cycle_s: float,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 stats_capacity: int = 120_000,
                 wall_ns: Callable[[], int] = time.time_ns,
                 mailbox_thread: bool | None = None) -> None:
        self.bus = bus
        self.cycle_s = cycle_s
        self.clock = clock
        self.sleep = sleep
        self.wall_ns = wall_ns  # the PTP clock the camera stamps frames with
        self._answering = 0  # capture time the next frame's setpoints answer (0: none)
        self.capture_to_setpoint: list[float] = []  # s, this window's commands
        self.stats = CycleStats(stats_capacity)
        self.outputs: tuple[L.RxPdo, ...] = tuple(
            L.RxPdo(controlword=0) for _ in range(bus.config.drives))
        self.al_state = int(L.AlState.OP)
        # The slaves a recovery read found out of OP or not answering, emptied by a full
        # working counter (see _note_slaves_not_op)
        self.slaves_not_op: tuple[SlaveState, ...] = ()
        self.alignment_object = L.ALIGNMENT_OBJECT
        self._log = RateLimitedLog(log, 10.0)
        # SDO reads in their own thread on real time; inline with a clock passed in (a
        # thread cannot keep step with a clock a test moves by hand)
        threaded = clock is time.monotonic if mailbox_thread is None else mailbox_thread
        self.alignment_reader = AlignmentReader(self._alignment_value, bus.config.drives,
                                                cycle_s, clock, threaded=threaded)
        self.alignment_objects = self.alignment_reader.values  # alignment = "sdo": last read
        self.last: Exchange | None = None
        self.phase_lock: PhaseLock | None = None  # distributed clocks: steers the cycle
        self._deadline: float | None = None
        self._last_recover_s = -math.inf
        self.longest_recovery_s = 0.0  # recovery runs in the cycle: how long it held it
        # rebuilt every 200 cycles, with the p99 and the window's frame -> setpoint figures
        self._timing = CycleTiming(cycle_s, 0.0)
        self._alignment_read: tuple[int, ...] = tuple(self.alignment_objects)
        # numpy's first percentile costs tens of milliseconds (lazy set-up): here, not in
        # the first cycle, where it would read as a stalled step loop at 1 ms
        np.percentile(np.zeros(2), 99)

    def sense(self, timeout_s: float) -> BusSample:
        """Waits for the cycle's deadline (the cycle is the pace; `timeout_s` does not
        shorten it) and gives the drives' inputs of the last exchange; `act()` sends the
        step's outputs at once, so a command the step took leaves in this cycle's frame,
        not the next one's (and a drive's fault is answered in as many frames as before)."""
        period = self.cycle_s
        now = self.clock()
        if self._deadline is None:
            self._deadline = now + period
        if self._deadline > now:
            self.sleep(self._deadline - now)
        woke = self.clock()
        late = woke - self._deadline
        self.stats.add(late)
        if late > period:  # overran: do not try to catch up with a burst of frames
            self._deadline = woke
        self._deadline += period
        if self.phase_lock is not None:  # frames half a cycle from the drives' SYNC0
            self._deadline += self.phase_lock.correction_s(self.bus.reference_time_ns())
        if self.last is None:  # the first cycle: the drives' inputs to start from
            self._exchange()
        if self.stats.count % 200 == 1:
            latency = (0.0, 0.0)  # none measured in this window
            if self.capture_to_setpoint:
                p50, p99 = np.percentile(self.capture_to_setpoint, (50, 99))
                latency = (float(p50), float(p99))
                self.capture_to_setpoint.clear()
            self._timing = CycleTiming(period, self.recent_p99(), *latency)
        assert self.last is not None
        return BusSample(self.last, self._timing, self.al_state, self._alignment_read,
                         self.slaves_not_op)

    def _exchange(self) -> None:
        if self._answering:  # these setpoints answer a ball state: they leave now
            self.capture_to_setpoint.append((self.wall_ns() - self._answering) * 1e-9)
            self._answering = 0
        self.last = self.bus.exchange(self.outputs)

    def recent_p99(self) -> float:
        """Wake-up lateness p99 over the latest `P99_CYCLES` cycles (0.1 ms on a PC). Over
        the whole ring (120 000) it took 1-8 ms, inside the cycle every 200 cycles."""
        ring = self.stats.lateness
        count = self.stats.count
        n = min(count, len(ring), P99_CYCLES)
        if n == 0:
            return 0.0
        return float(np.percentile(np.take(ring, np.arange(count - n, count), mode="wrap"), 99))

    def act(self, actuation: MdaOutputs | None) -> None:
        if actuation is None:  # the step failed: stop every drive where it is
            self.outputs = self.quick_stop_outputs()
            self._exchange()
            return
        self.outputs = actuation.drives
        self._answering = actuation.ball_capture_time or self._answering
        self._exchange()
        self._read_alignment(actuation.read_alignment)
        full = self.last is not None and \
            self.last.working_counter == self.bus.expected_working_counter
        if full:  # every slave exchanged its process data: each one is in OP
            self.slaves_not_op = ()
        now = self.clock()
        if actuation.recover_bus and now - self._last_recover_s > 0.1:
            self._last_recover_s = now
            try:
                states = self.bus.read_states()
                self.al_state = lowest_al_state(states)
                self._note_slaves_not_op(out_of_op(states))
                if self.bus.recover():
                    self.al_state = int(L.AlState.OP)
            except Exception:  # a failed recovery is retried; the fault stays
                log.exception("bus recovery attempt failed")
            self.longest_recovery_s = max(self.longest_recovery_s, self.clock() - now)
        elif not actuation.recover_bus and full:
            self.al_state = int(L.AlState.OP)

    def _note_slaves_not_op(self, found: tuple[SlaveState, ...]) -> None:
        """A read replaces the slaves named when it is news: a slave in error (the flag) or
        below SAFE-OP (restarted, not answering). One that finds them only where the
        recovery put them (SAFE-OP acknowledged, OP again) keeps the cause on the screen: a
        deaf slave acknowledged back to OP drops out again on its watchdog."""
        if found and (not self.slaves_not_op or any(
                s.al_state & L.AL_ERROR_FLAG or s.al_state & 0x0F < L.AlState.SAFEOP
                for s in found)):
            self.slaves_not_op = found

    def _read_alignment(self, axes: tuple[int, ...]) -> None:
        self._alignment_read = self.alignment_reader.request(axes)

    def _alignment_value(self, axis: int) -> int:
        data = self.bus.read_object(axis + 1, self.alignment_object, 0)
        return data[0] if data else 0

    def quick_stop_outputs(self) -> tuple[L.RxPdo, ...]:
        inputs = self.last.inputs if self.last is not None else ()
        csp = int(L.Mode.CYCLIC_SYNC_POSITION)
        return tuple(L.RxPdo(int(L.Control.QUICK_STOP), csp,
                             inputs[i].position_actual if i < len(inputs) else 0, 0)
                     for i in range(len(self.outputs)))

    def close(self) -> None:
        """Quick stop on every drive for a few cycles, disable voltage on any that stayed
        in operation enabled (it ignores quick stop), then the bus closed (slaves to INIT,
        where the drives' own watchdog keeps them stopped)."""
        try:
            self.outputs = self.quick_stop_outputs()
            for _ in range(3):
                self.sense(self.cycle_s)
                self._exchange()
            assert self.last is not None
            ignoring = [n for n, tx in enumerate(self.last.inputs)
                        if tx.state is L.Cia402State.OPERATION_ENABLED]
            if ignoring:
                log.error("drive(s) %s ignored quick stop at shutdown: voltage disabled",
                          ", ".join(map(str, ignoring)))
                self.outputs = tuple(
                    rx._replace(controlword=int(L.Control.DISABLE_VOLTAGE)) if n in ignoring
                    else rx for n, rx in enumerate(self.outputs))
                for _ in range(3):
                    self.sense(self.cycle_s)
                    self._exchange()
        except Exception:
            log.exception("quick stop at shutdown failed")
        finally:
            if self.phase_lock is not None:
                log.info("distributed clocks: locked after %s cycles; frame phase to SYNC0 "
                         "off its target by p50 %.1f us, p99 %.1f us (latest cycles)",
                         self.phase_lock.cycles_to_lock, *self.phase_lock.percentiles_us())
            self.alignment_reader.close()
            self.bus.close()


def homing_objects(config: MotorDriverConfig) -> tuple[L.StartupObject, ...]:
    """What each homing axis's drive is given in PRE-OP for its own homing method (none
    when the master homes on the switches)."""
    speed = L.rad_s_to_counts(config.homing_speed)
    return tuple(
        L.StartupObject(setup.axis + 1, index, sub, fmt, value)
        for setup in config.axes if setup.homes and config.homing_method_of(setup.axis)
        for index, sub, fmt, value in (
            (L.HOMING_METHOD, 0, "b", config.homing_method_of(setup.axis)),
            (L.HOMING_SPEEDS, 1, "I", speed), (L.HOMING_SPEEDS, 2, "I", speed)))


def open_motor_driver(bus: EtherCatBus, endpoint: Any, config: MotorDriverConfig,
                      safety: SafetySettings, realtime: bool = True) -> AgentRuntime:
    """Start the bus and build the MDA's runtime (the board's service runs it). A failed
    start closes the bus, so no slave is left where the start stopped."""
    if bus.config.receive_timeout_us > receive_timeout_for(config.cycle_s):
        log.warning("frame wait %d us is long for a %.1f ms cycle; use %d us",
                    bus.config.receive_timeout_us, config.cycle_s * 1e3,
                    receive_timeout_for(config.cycle_s))
    if realtime:  # before OP: the drives' watchdog runs from the moment they reach it
        log.info("real-time setup: %s", prepare_realtime())
    hardware = EtherCatHardware(bus, config.cycle_s)  # before OP too: it warms numpy up
    hardware.alignment_object = config.alignment_object
    if config.distributed_clocks:
        hardware.phase_lock = PhaseLock(config.cycle_s)
    try:
        bus.start(homing_objects(config),
                  sync0_s=config.cycle_s if config.distributed_clocks else 0.0)
    except BaseException:
        bus.close()
        raise
    core = MotorDriverCore(config)
    core.expected_wkc = bus.expected_working_counter
    # A cycle silent for ten periods (at least 50 ms: the drives' watchdog) is a hung master:
    # its heartbeats stop at once.
    safety = dataclasses.replace(safety, stall_s=min(safety.stall_s,
                                                     max(10 * config.cycle_s, 0.05)),
                                 io_priority=IO_PRIORITY)
    return AgentRuntime(core, endpoint, safety, hardware=hardware,
                        notifier=SystemdNotifier())
