"""The records of the motor driver's core: an axis's phases and the drive state each one
reports, what one cycle takes in (`BusSample` from the hardware, `MdaInputs`) and gives
out (`MdaOutputs`), and the state the core keeps per axis."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from foosball.agents.motor_driver.config import AxisSetup
from foosball.ethercat import layout as L
from foosball.ethercat.bus import Exchange
from foosball.wire.catalogue import DriveEmergency, DriveState, SlaveState


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
# a drive in one of these CiA 402 states has a fault
_FAULTY = (L.Cia402State.FAULT, L.Cia402State.FAULT_REACTION_ACTIVE)


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
    emergencies: tuple[DriveEmergency, ...] = ()  # the last CoE emergency of each drive


class MdaOutputs(NamedTuple):
    drives: tuple[L.RxPdo, ...]
    messages: tuple[Any, ...] = ()
    recover_bus: bool = False
    read_alignment: tuple[int, ...] = ()  # axes whose alignment object to read by SDO
    read_emergencies: tuple[int, ...] = ()  # slaves (positions) that newly faulted
    ball_capture_time: int = 0  # of the newest command these drives' setpoints answer


class BusSample(NamedTuple):
    """One cycle's reading of the bus: the runtime hands it to the core as `sensed`."""

    exchange: Exchange
    timing: CycleTiming = CycleTiming()
    al_state: int = int(L.AlState.OP)
    alignment_objects: tuple[int, ...] = ()
    slaves_not_op: tuple[SlaveState, ...] = ()
    emergencies: tuple[DriveEmergency, ...] = ()


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
