"""The drivetrain: how the robot's motors move its rods, in one place.

- Axis numbering: robot rod r (role order: goalkeeper, defence, midfield, attack) is
  driven by two motor axes, translation `2r` and rotation `2r + 1`.
- Units: a rotation axis turns the rod itself (radians pass through); a translation axis
  turns a pulley, so metres = `zero_offset` + motor radians x `metres_per_motor_radian`
  (pulley radius / gear ratio, from the table geometry).
- The homing zero: the translation axis reads 0 rad where its end switch trips, which is
  the rod's `zero_offset` metres (table geometry).
- Travel limits: the rod's `travel_min`..`travel_max` (metres), in motor radians from the
  zero for the drives' soft limits.

The pole driver (RodCommand -> MotorCommand, MotorStatus -> RodStatus), the motor driver
(its axes' soft limits), the strategy agent (rod positions from MotorStatus when no
RodStatus comes) and the simulator (its motor axes) all take these from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from foosball.geometry import Rod, Table
from foosball.wire.catalogue import MotorStatus, RodId, RodPosition, RodStatus

AXES_PER_ROD = 2


def translation_axis(rod: int) -> int:
    """The motor axis that slides robot rod `rod` (its index in role order)."""
    return 2 * rod


def rotation_axis(rod: int) -> int:
    """The motor axis that turns robot rod `rod`."""
    return 2 * rod + 1


def rod_of(axis: int) -> int:
    """The robot rod a motor axis drives."""
    return axis // 2


def is_translation(axis: int) -> bool:
    return axis % 2 == 0


def translation_to_motor(rod: Rod, metres: float) -> float:
    return (metres - rod.zero_offset) / rod.metres_per_motor_radian()


def motor_to_translation(rod: Rod, radians: float) -> float:
    return rod.zero_offset + radians * rod.metres_per_motor_radian()


def speed_to_motor(rod: Rod, metres_per_s: float) -> float:
    return metres_per_s / rod.metres_per_motor_radian()


@dataclass(frozen=True, slots=True)
class RodDrive:
    """One robot rod's axes, conversion and limits, worked out once (the pole driver asks
    for them four times a RodCommand, at the frame rate): the same arithmetic as the
    functions above."""

    rod: Rod
    translation_axis: int
    rotation_axis: int
    per_rad: float  # metres per motor radian
    zero_offset: float  # metres at the homing zero (0 rad)
    travel_min: float
    travel_max: float

    @classmethod
    def of(cls, index: int, rod: Rod) -> RodDrive:
        return cls(rod, translation_axis(index), rotation_axis(index),
                   rod.metres_per_motor_radian(), rod.zero_offset, rod.travel_min,
                   rod.travel_max)

    def soft_limits(self) -> tuple[float, float]:
        """The travel in motor radians from the homing zero (the drive's soft limits)."""
        return (translation_to_motor(self.rod, self.travel_min),
                translation_to_motor(self.rod, self.travel_max))


def rod_drives(table: Table) -> tuple[RodDrive, ...]:
    """Every robot rod's drive, in role order (rod index = RodId)."""
    return tuple(RodDrive.of(index, rod) for index, rod in enumerate(table.robot_rods))


def rods_from_motors(motors: MotorStatus, table: Table) -> RodStatus:
    """Rod positions from the motors' (the pole driver's conversion, without its clipping);
    a rod whose two axes are not both in the status is left out."""
    by_axis = {axis.axis: axis for axis in motors.axes}
    out = []
    for index, rod in enumerate(table.robot_rods):
        t_axis, r_axis = by_axis.get(translation_axis(index)), by_axis.get(rotation_axis(index))
        if t_axis is None or r_axis is None:
            continue
        out.append(
            RodPosition(
                rod=RodId(index),
                translation=motor_to_translation(rod, t_axis.position),
                rotation=r_axis.position,
                translation_velocity=t_axis.velocity * rod.metres_per_motor_radian(),
                rotation_velocity=r_axis.velocity,
            )
        )
    return RodStatus(rods=tuple(out))
