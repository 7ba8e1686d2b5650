"""Realism parameters of the simulated table, with defaults and randomisation ranges.

Every physical constant, rod limit and delay the simulator uses is a named field of
`SimParams`; defaults come from ``shared/facts/table-and-ball.md`` (sources cited there).
`draw_params(rng)` draws every field that has a range in `RANGES` uniformly, so a match can
run on a table that is not exactly the default one (domain randomisation); `as_dict()` is
what results report, so every figure says which table it came from.

Men geometry fields default to ``None``: "use the geometry file's value". A drawn table sets
them explicitly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class AxisLimits:
    """Limits of one actuated axis (translation in m, rotation in rad)."""

    max_speed: float
    max_accel: float
    max_jerk: float


# Robot drives. The translation motor turns the pulley through the seed's gearbox, so a rod
# moves `pulley_radius / gear_ratio` metres per motor radian (both from the geometry file).
# The motor limits are chosen so that through the seed's 5:1 gearbox and 20 mm pulley the rod
# gets TU Darmstadt's BLDC figures (facts file): 3.48 m/s, 104 m/s^2, 406 m/s^3 (the motor at
# 870 rad/s = 8,300 rpm). The rotation motor drives the rod directly.
SEED_METRES_PER_MOTOR_RADIAN = 0.02 / 5.0
TRANSLATION_MOTOR = AxisLimits(max_speed=870.0, max_accel=26000.0, max_jerk=101500.0)
ROBOT_TRANSLATION = AxisLimits(
    max_speed=TRANSLATION_MOTOR.max_speed * SEED_METRES_PER_MOTOR_RADIAN,
    max_accel=TRANSLATION_MOTOR.max_accel * SEED_METRES_PER_MOTOR_RADIAN,
    max_jerk=TRANSLATION_MOTOR.max_jerk * SEED_METRES_PER_MOTOR_RADIAN,
)
ROBOT_ROTATION = AxisLimits(max_speed=314.0, max_accel=9425.0, max_jerk=36650.0)


@dataclass(frozen=True, slots=True)
class SimParams:
    # ball on the field (FC Portugal free-ball model: constant rolling deceleration plus a
    # drag proportional to speed: dv/dt = -rolling_decel * v/|v| - drag * v)
    rolling_decel: float = 0.05  # m/s^2; facts: estimate 0.02-0.1
    drag: float = 0.1  # 1/s; air drag of a 35 mm ball at ~10 m/s, linearised
    # contacts (spin-free Coulomb friction on the tangential relative velocity)
    wall_restitution: float = 0.5
    wall_friction: float = 0.1
    post_restitution: float = 0.5
    man_restitution: float = 0.5
    man_friction: float = 0.15
    # men geometry overrides (None: the geometry file's value); the foot reach (rod axis ->
    # foot tip) follows as rod_height - foot_clearance
    rod_height: float | None = None
    foot_clearance: float | None = None
    foot_width: float | None = None
    foot_thickness: float | None = None
    # robot drives: translation at the motor shaft (rad/s, rad/s^2, rad/s^3; the rod gets
    # them times its pulley_radius / gear_ratio), rotation at the rod (direct drive)
    translation_motor_speed: float = TRANSLATION_MOTOR.max_speed
    translation_motor_accel: float = TRANSLATION_MOTOR.max_accel
    translation_motor_jerk: float = TRANSLATION_MOTOR.max_jerk
    robot_rotation_speed: float = ROBOT_ROTATION.max_speed
    robot_rotation_accel: float = ROBOT_ROTATION.max_accel
    robot_rotation_jerk: float = ROBOT_ROTATION.max_jerk
    # perception and actuation delays (s)
    camera_fps: float = 200.0
    camera_height: float = 1.05  # m above the field: parallax of rods and men over the ball
    exposure: float = 0.001
    tracker_latency: float = 0.008  # frame end -> BallState leaves the vision board
    command_latency: float = 0.005  # RodCommand sent -> drives start following it
    # tracker quality as the strategy sees it
    position_noise: float = 0.0007  # m, 1 sigma, per detection (the tracker model's filter
    # is the ball tracker's, vision.track, told this noise)
    tracker_alpha: float = 0.5  # the human opponents' sight (perception.HumanSight): an
    tracker_beta: float = 0.15  # alpha-beta filter, velocity noise ~0.025 m/s, settles in ~7 frames
    detect_fraction: float = 0.5  # visible fraction below which the ball is not detected
    lost_after: float = 0.1  # s of non-detection before PREDICTED becomes LOST

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def frame_period(self) -> float:
        return 1.0 / self.camera_fps

    def robot_limits(
        self, metres_per_motor_radian: float = SEED_METRES_PER_MOTOR_RADIAN
    ) -> tuple[AxisLimits, AxisLimits]:
        """(translation, rotation) limits of a robot rod whose translation drive moves it
        `metres_per_motor_radian` (`Rod.metres_per_motor_radian()`)."""
        k = metres_per_motor_radian
        return (
            AxisLimits(
                self.translation_motor_speed * k,
                self.translation_motor_accel * k,
                self.translation_motor_jerk * k,
            ),
            AxisLimits(
                self.robot_rotation_speed, self.robot_rotation_accel, self.robot_rotation_jerk
            ),
        )


# Ranges seen in public models and measurements (facts file); delays are our estimates.
RANGES: dict[str, tuple[float, float]] = {
    "rolling_decel": (0.02, 0.1),
    "drag": (0.03, 0.2),
    "wall_restitution": (0.4, 0.9),
    "wall_friction": (0.05, 0.2),
    "post_restitution": (0.4, 0.9),
    "man_restitution": (0.4, 0.5),
    "man_friction": (0.1, 0.4),
    "rod_height": (0.078, 0.085),
    "foot_clearance": (0.005, 0.011),
    "foot_width": (0.0226, 0.030),
    "foot_thickness": (0.0084, 0.012),
    "translation_motor_speed": (625.0, 870.0),  # 2.5-3.48 m/s through the seed gearbox
    "translation_motor_accel": (17500.0, 26000.0),  # 70-104 m/s^2
    "robot_rotation_speed": (200.0, 314.0),
    "robot_rotation_accel": (6000.0, 9425.0),
    "tracker_latency": (0.004, 0.02),
    "command_latency": (0.002, 0.012),
    "position_noise": (0.0003, 0.0015),
}


def draw_params(rng: np.random.Generator, base: SimParams | None = None) -> SimParams:
    """A table drawn from `RANGES` (uniform per field); fields without a range keep `base`."""
    base = base or SimParams()
    names = {f.name for f in fields(SimParams)}
    drawn = {name: float(rng.uniform(lo, hi)) for name, (lo, hi) in RANGES.items()}
    assert set(drawn) <= names
    return replace(base, **drawn)
