"""The motor driver's configuration: its axes (from the table geometry) and its section
of board.toml (`[motor_driver]`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from foosball.drivetrain import is_translation, rod_drives
from foosball.ethercat import layout as L
from foosball.schema import SettingError, seconds, setting

# The fewest bad EtherCAT frames in a row that raise the alarm, whatever the cycle: one or
# two lost frames are noise on any bus.
MIN_BUS_ERROR_CYCLES = 3


@dataclass(frozen=True)
class AxisSetup:
    axis: int
    homes: bool  # translation axis: has the end switch and needs the zero-match
    max_speed: float = 800.0  # rad/s: the profile never asks for more
    max_acceleration: float = 20_000.0  # rad/s^2
    soft_min: float = -math.inf  # rad relative to zero: goals are clamped to this travel
    soft_max: float = math.inf


def default_axes(count: int = 8) -> tuple[AxisSetup, ...]:
    """Translation axes even, rotation axes odd (foosball.drivetrain's numbering)."""
    return tuple(
        AxisSetup(axis, homes=True, max_speed=850.0, max_acceleration=25_000.0)
        if is_translation(axis) else
        AxisSetup(axis, homes=False, max_speed=310.0, max_acceleration=9_000.0)
        for axis in range(count))


def axes_from_table(table: Any) -> tuple[AxisSetup, ...]:
    """Axis setups with soft travel limits from the geometry (robot rods in role order)."""
    axes = []
    for drive in rod_drives(table):
        soft_min, soft_max = drive.soft_limits()
        axes.append(AxisSetup(drive.translation_axis, homes=True, max_speed=850.0,
                              max_acceleration=25_000.0, soft_min=soft_min, soft_max=soft_max))
        axes.append(AxisSetup(drive.rotation_axis, homes=False, max_speed=310.0,
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
