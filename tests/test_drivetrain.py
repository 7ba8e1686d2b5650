"""foosball.drivetrain: one numbering, one conversion, one homing zero, one set of limits,
the same wherever a rod meets its motors."""

from __future__ import annotations

import pytest

from foosball.agents.motor_driver import axes_from_table
from foosball.agents.pole_driver import PoleDriverCore
from foosball.drivetrain import (
    is_translation,
    motor_to_translation,
    rod_drives,
    rod_of,
    rods_from_motors,
    rotation_axis,
    translation_axis,
    translation_to_motor,
)
from foosball.geometry import default_table
from foosball.runtime import Inputs
from foosball.wire.catalogue import AxisStatus, DriveState, MotorStatus

TABLE = default_table()


def test_each_robot_rod_has_a_translation_and_a_rotation_axis() -> None:
    axes = [(translation_axis(r), rotation_axis(r)) for r in range(4)]
    assert axes == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert [rod_of(a) for a in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [is_translation(a) for a in range(4)] == [True, False, True, False]


def test_the_homing_zero_is_the_rods_zero_offset() -> None:
    for rod in TABLE.robot_rods:
        assert translation_to_motor(rod, rod.zero_offset) == 0.0
        assert motor_to_translation(rod, translation_to_motor(rod, 0.05)) == pytest.approx(0.05)


def test_the_motor_drivers_soft_limits_are_the_rods_travel() -> None:
    by_axis = {a.axis: a for a in axes_from_table(TABLE)}
    for drive in rod_drives(TABLE):
        low, high = drive.soft_limits()
        assert (by_axis[drive.translation_axis].soft_min,
                by_axis[drive.translation_axis].soft_max) == (low, high)
        assert (low, high) == (translation_to_motor(drive.rod, drive.rod.travel_min),
                               translation_to_motor(drive.rod, drive.rod.travel_max))


def test_the_strategy_and_the_pole_driver_read_motor_status_alike() -> None:
    axes = tuple(AxisStatus(axis=a, state=DriveState.READY, position=0.3 * (a + 1) - 1.0,
                            velocity=0.1 * a, current=0.0, fault_code=0) for a in range(8))
    status = MotorStatus(axes=axes)
    pole = PoleDriverCore(TABLE)
    (rods,) = pole.step(Inputs(0.0, (status,))).messages
    assert rods_from_motors(status, TABLE) == rods
