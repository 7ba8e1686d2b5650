"""A CiA 402 drive with a simple BLDC motor behind it: what one emulated STEVAL-ETH001 does.

Pure model: no clock, no I/O. `apply(rx)` takes the master's process data, `advance(dt)`
moves time on, `tx()` gives the drive's process data. The emulator and the fake bus both
wrap it.

Motor: velocity follows a time-optimal approach to the target (speed and acceleration
limited); translation axes have a mechanical travel with an end-of-travel switch at the
negative end (the homing switch); every start-up and every fault needs a rotor alignment
phase before the drive follows commands.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from foosball.ethercat.layout import (
    CURRENT_COUNTS_PER_A,
    HOMING_CURRENT_POSITION,
    HOMING_HARD_STOP_NEGATIVE,
    HOMING_METHOD,
    HOMING_NEGATIVE_SWITCH,
    HOMING_SPEEDS,
    POSITION_COUNTS_PER_RAD,
    STATE_STATUSWORD,
    VELOCITY_COUNTS_PER_RAD_S,
    Cia402State,
    Control,
    DigitalInput,
    ErrorCode,
    Mode,
    RxPdo,
    Status,
    TxPdo,
    rad_s_to_counts,
    rad_to_counts,
)

EMERGENCY_ERROR_REGISTER = 0x01  # 0x1001 bit 0: generic error
DEFAULT_HOMING_SPEED = 10.0  # rad/s: the search speed while 0x6099:01 is not written


class FaultKind(enum.Enum):
    EMERGENCY_BUTTON = "emergency_button"
    OVERCURRENT = "overcurrent"
    MOTOR_LOCKED = "motor_locked"


FAULT_ERROR_CODE = {
    FaultKind.EMERGENCY_BUTTON: ErrorCode.EMERGENCY_BUTTON,
    FaultKind.OVERCURRENT: ErrorCode.OVERCURRENT,
    FaultKind.MOTOR_LOCKED: ErrorCode.MOTOR_LOCKED,
}
FAULT_INPUT = {
    FaultKind.EMERGENCY_BUTTON: DigitalInput.EMERGENCY_BUTTON_PRESSED,
    FaultKind.OVERCURRENT: DigitalInput.OVERCURRENT_PRESENT,
    FaultKind.MOTOR_LOCKED: DigitalInput.MOTOR_LOCKED_PRESENT,
}


@dataclass(frozen=True)
class MotorParameters:
    max_speed: float = 400.0  # rad/s at the motor shaft
    max_acceleration: float = 20_000.0  # rad/s^2
    quick_stop_deceleration: float = 40_000.0  # rad/s^2
    alignment_time_s: float = 0.2
    # STEVAL-ETH001 reports its alignment in statusword bits 14/15; a plain CiA 402 drive
    # aligns at enable and says only "follows the command value" (bit 12) once done.
    alignment_bits: bool = True
    # a drive whose firmware takes no quick stop from the controlword (an emulator option:
    # it stays in operation enabled, following the last target, until voltage is disabled)
    ignores_quick_stop: bool = False
    position_gain: float = 300.0  # 1/s: how hard CSP pulls towards the target
    # translation axes only: mechanical travel in motor radians between two hard stops,
    # relative to the switch edge (where a drive without the switch would have it)
    has_end_switch: bool = False
    has_hard_stops: bool = False
    travel_below_switch: float = 0.5  # hard stop this far beyond the switch edge
    travel_above_switch: float = 50.0  # hard stop at the other end of the travel
    locked_detect_time_s: float = 0.15  # commanded motion but no motion for this long
    current_idle_a: float = 0.3
    current_per_acceleration: float = 2e-4  # A per rad/s^2
    current_locked_a: float = 6.0


@dataclass
class MotorSample:
    """What a coupled simulator needs per axis after each step."""

    position: float  # rad, raw (encoder count since power-up)
    velocity: float  # rad/s
    enabled: bool


@dataclass
class Cia402Drive:
    params: MotorParameters = field(default_factory=MotorParameters)
    # raw encoder position at power-up is 0; the switch edge is at -start_above_switch
    start_above_switch: float = 10.0

    def __post_init__(self) -> None:
        self.state = Cia402State.SWITCH_ON_DISABLED
        self.position = 0.0
        self.velocity = 0.0
        self.acceleration = 0.0
        self.error_code = ErrorCode.NONE
        self.aligned = False
        self.alignment_left_s = 0.0
        self.causes: set[FaultKind] = set()
        self.mechanically_locked = False
        self.locked_for_s = 0.0
        self._last_control = 0
        self.rx = RxPdo(mode=Mode.NONE)
        self.outputs_valid = False  # only true while the ESC is in OP with fresh outputs
        # the drive's own homing (mode 6): method and search speed as written by SDO, and
        # where its home is (reported positions are relative to it; 0 until homed)
        self.homing_method = 0
        self.homing_speeds = [0, 0]
        self.home_reference = 0.0
        self.homing_attained = self.homing_error = False
        self._homing_started = False

    # --- geometry of a translation axis (raw motor radians) --------------------------------
    @property
    def switch_position(self) -> float:
        return -self.start_above_switch

    @property
    def switch_active(self) -> bool:
        return self.params.has_end_switch and self.position <= self.switch_position

    def _travel(self) -> tuple[float, float]:
        if not (self.params.has_end_switch or self.params.has_hard_stops):
            return -math.inf, math.inf
        return (self.switch_position - self.params.travel_below_switch,
                self.switch_position + self.params.travel_above_switch)

    # --- faults and the outside world ----------------------------------------------------
    def inject(self, kind: FaultKind) -> None:
        self.causes.add(kind)
        if kind is FaultKind.MOTOR_LOCKED:
            self.mechanically_locked = True
        self._fault(FAULT_ERROR_CODE[kind])

    def clear(self, kind: FaultKind | None = None) -> None:
        """The cause goes away (button released, short removed, rotor freed)."""
        if kind is None:
            self.causes.clear()
        else:
            self.causes.discard(kind)
        if FaultKind.MOTOR_LOCKED not in self.causes:
            self.mechanically_locked = False

    def lose_process_data(self) -> None:
        """The ESC left OP (watchdog or master request): a running motor must stop."""
        self.outputs_valid = False
        if self.state in (Cia402State.OPERATION_ENABLED, Cia402State.QUICK_STOP_ACTIVE):
            self._fault(ErrorCode.COMMUNICATION)

    def _fault(self, code: ErrorCode) -> None:
        if self.state not in (Cia402State.FAULT, Cia402State.FAULT_REACTION_ACTIVE):
            self.state = Cia402State.FAULT_REACTION_ACTIVE
        if self.error_code == ErrorCode.NONE:
            self.error_code = code
        self.aligned = False  # the power stage went off: commutation must be found again

    def write_object(self, index: int, subindex: int, value: int) -> None:
        """An SDO write of one of the drive's homing objects (the ESC's dictionary and the
        fake bus both land here)."""
        if (index, subindex) == (HOMING_METHOD, 0):
            self.homing_method = value
        elif index == HOMING_SPEEDS and subindex in (1, 2):
            self.homing_speeds[subindex - 1] = value

    def read_object(self, index: int, subindex: int) -> int:
        if index == HOMING_SPEEDS and subindex in (1, 2):
            return self.homing_speeds[subindex - 1]
        if (index, subindex) == (HOMING_METHOD, 0):
            return self.homing_method
        raise KeyError(f"0x{index:04x}:{subindex:02x}: not a homing object")

    def emergency(self) -> tuple[int, int, int]:
        """What its CoE emergency says of its fault (CiA 301): the error code, the error
        register (0x1001: generic error) and five manufacturer bytes (here its digital
        inputs, the live causes)."""
        return int(self.error_code), EMERGENCY_ERROR_REGISTER, self.tx().digital_inputs

    # --- process data --------------------------------------------------------------------
    def apply(self, rx: RxPdo) -> None:
        """New outputs from the master (only called while the ESC is in OP)."""
        self.outputs_valid = True
        self.rx = rx
        control = rx.controlword
        rising_reset = bool(control & 0x80) and not (self._last_control & 0x80)
        self._last_control = control
        self._device_control(control, rising_reset)

    def _device_control(self, control: int, fault_reset: bool) -> None:
        s = self.state
        if s is Cia402State.FAULT:
            if fault_reset and not self.causes:
                self.state = Cia402State.SWITCH_ON_DISABLED
                self.error_code = ErrorCode.NONE
            return
        if s is Cia402State.FAULT_REACTION_ACTIVE:
            return
        if not control & 0x02:  # disable voltage
            self.state = Cia402State.SWITCH_ON_DISABLED
            return
        if not control & 0x04:  # quick stop (active low)
            if self.params.ignores_quick_stop:
                return
            if s is Cia402State.OPERATION_ENABLED:
                self.state = Cia402State.QUICK_STOP_ACTIVE
            elif s is not Cia402State.QUICK_STOP_ACTIVE:
                self.state = Cia402State.SWITCH_ON_DISABLED
            return
        low = control & 0x0F
        if low == 0x06:  # shutdown
            self.state = Cia402State.READY_TO_SWITCH_ON if s is not Cia402State.QUICK_STOP_ACTIVE \
                else Cia402State.SWITCH_ON_DISABLED
        elif low == 0x07:  # switch on / disable operation
            if s in (Cia402State.READY_TO_SWITCH_ON, Cia402State.OPERATION_ENABLED):
                self.state = Cia402State.SWITCHED_ON
        elif low == 0x0F and s in (Cia402State.SWITCHED_ON, Cia402State.QUICK_STOP_ACTIVE):
            self.state = Cia402State.OPERATION_ENABLED  # enable operation
            if not self.aligned:
                self.alignment_left_s = self.params.alignment_time_s
                self.aligned = self.params.alignment_time_s <= 0.0

    # --- time ------------------------------------------------------------------------------
    def advance(self, dt: float) -> None:
        if dt <= 0:
            return
        p = self.params
        desired = 0.0
        limit = p.max_acceleration
        enabled = self.state in (Cia402State.OPERATION_ENABLED, Cia402State.QUICK_STOP_ACTIVE,
                                 Cia402State.FAULT_REACTION_ACTIVE)
        if self.state is Cia402State.OPERATION_ENABLED:
            if not self.outputs_valid:
                desired = 0.0
            elif self.alignment_left_s > 0.0:
                self.alignment_left_s -= dt
                if self.alignment_left_s <= 0.0:
                    self.alignment_left_s = 0.0
                    self.aligned = True
            elif self.rx.mode == Mode.CYCLIC_SYNC_POSITION:
                target = self.rx.target_position / POSITION_COUNTS_PER_RAD + self.home_reference
                error = target - self.position
                reach = min(p.max_speed, math.sqrt(2.0 * p.max_acceleration * abs(error)),
                            p.position_gain * abs(error))
                desired = math.copysign(reach, error)
            elif self.rx.mode == Mode.CYCLIC_SYNC_VELOCITY:
                desired = self.rx.target_velocity / VELOCITY_COUNTS_PER_RAD_S
                desired = max(-p.max_speed, min(p.max_speed, desired))
            elif self.rx.mode == Mode.HOMING:
                desired = self._homing()
        else:
            limit = p.quick_stop_deceleration
        if not enabled:
            # power stage off: the motor coasts to rest quickly (friction of the skate/rod)
            limit = p.quick_stop_deceleration
        old_velocity = self.velocity
        change = max(-limit * dt, min(limit * dt, desired - self.velocity))
        self.velocity += change
        if self.mechanically_locked:
            self.velocity = 0.0
        self.position += 0.5 * (old_velocity + self.velocity) * dt
        low, high = self._travel()
        if self.position < low or self.position > high:
            self.position = min(high, max(low, self.position))
            self.velocity = 0.0
        self.acceleration = (self.velocity - old_velocity) / dt
        self._detect_locked(dt, desired)
        # quick stop active stays (option code 6) until the master disables or re-enables
        if self.state is Cia402State.FAULT_REACTION_ACTIVE and self.velocity == 0.0:
            self.state = Cia402State.FAULT

    def _homing(self) -> float:
        """The drive's own homing (mode 6, started by controlword bit 4): the velocity it
        wants now. A hard stop is found where the axis stops against it (on a real drive:
        the current passing its threshold)."""
        if not self.rx.controlword & Control.HOMING_START:
            self._homing_started = False
            return 0.0
        if not self._homing_started:  # bit 4 rose: a new homing
            self._homing_started = True
            self.homing_attained = self.homing_error = False
        if self.homing_attained or self.homing_error:
            return 0.0
        method = self.homing_method
        search = -(self.homing_speeds[0] / VELOCITY_COUNTS_PER_RAD_S or DEFAULT_HOMING_SPEED)
        if method in (HOMING_CURRENT_POSITION, 35):
            return self._home_here()
        if method == HOMING_NEGATIVE_SWITCH and self.params.has_end_switch:
            return self._home_here() if self.switch_active else search
        if method == HOMING_HARD_STOP_NEGATIVE and self.params.has_hard_stops:
            return self._home_here() if self.position <= self._travel()[0] else search
        self.homing_error = True  # a method this drive does not have
        return 0.0

    def _home_here(self) -> float:
        self.home_reference = self.position
        self.homing_attained = True
        return 0.0

    def _detect_locked(self, dt: float, desired: float) -> None:
        trying = self.state is Cia402State.OPERATION_ENABLED and abs(desired) > 0.5
        if trying and abs(self.velocity) < 0.01:
            self.locked_for_s += dt
            if self.locked_for_s >= self.params.locked_detect_time_s:
                if self.mechanically_locked:
                    self.causes.add(FaultKind.MOTOR_LOCKED)
                self._fault(ErrorCode.MOTOR_LOCKED)
                self.locked_for_s = 0.0
        else:
            self.locked_for_s = 0.0

    def current(self) -> float:
        p = self.params
        if self.state not in (Cia402State.OPERATION_ENABLED, Cia402State.QUICK_STOP_ACTIVE,
                              Cia402State.FAULT_REACTION_ACTIVE):
            return 0.0
        if self.locked_for_s > 0:
            return p.current_locked_a
        return p.current_idle_a + p.current_per_acceleration * abs(self.acceleration)

    def tx(self) -> TxPdo:
        status = STATE_STATUSWORD[self.state] | Status.REMOTE
        if self.state is not Cia402State.SWITCH_ON_DISABLED and self.state is not \
                Cia402State.NOT_READY_TO_SWITCH_ON:
            status |= Status.VOLTAGE_ENABLED
        if self.aligned and self.params.alignment_bits:
            status |= Status.ALIGNED
        if self.alignment_left_s > 0.0 and self.params.alignment_bits:
            status |= Status.ALIGNING
        following = (self.state is Cia402State.OPERATION_ENABLED and self.aligned
                     and self.outputs_valid)
        position = self.position - self.home_reference
        if self.rx.mode == Mode.HOMING:  # bits 10, 12 and 13 say how the homing goes
            if self.homing_attained:
                status |= Status.HOMING_ATTAINED
                if self.velocity == 0.0:
                    status |= Status.TARGET_REACHED
            if self.homing_error:
                status |= Status.HOMING_ERROR
        elif following:
            status |= Status.FOLLOWS_COMMAND
            target = self.rx.target_position / POSITION_COUNTS_PER_RAD
            if self.rx.mode == Mode.CYCLIC_SYNC_POSITION and abs(target - position) < 0.01:
                status |= Status.TARGET_REACHED
        inputs = 0
        if self.switch_active:
            inputs |= DigitalInput.HOME_SWITCH | DigitalInput.NEGATIVE_LIMIT
        for cause in self.causes:
            inputs |= FAULT_INPUT[cause]
        return TxPdo(
            statusword=int(status),
            mode_display=int(self.rx.mode),
            position_actual=rad_to_counts(position),
            velocity_actual=rad_s_to_counts(self.velocity),
            current_actual=max(-32768, min(32767, round(self.current() * CURRENT_COUNTS_PER_A))),
            error_code=int(self.error_code),
            digital_inputs=int(inputs),
        )

    def sample(self) -> MotorSample:
        return MotorSample(self.position, self.velocity,
                           self.state is Cia402State.OPERATION_ENABLED)
