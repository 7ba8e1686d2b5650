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


# Robot drives: TU Darmstadt's BLDC robot model (facts file). Translation goes through the
# seed's 5:1 gearbox and 20 mm pulley; these are the figures at the rod.
ROBOT_TRANSLATION = AxisLimits(max_speed=3.48, max_accel=104.0, max_jerk=406.0)
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
    # robot rod limits
    robot_translation_speed: float = ROBOT_TRANSLATION.max_speed
    robot_translation_accel: float = ROBOT_TRANSLATION.max_accel
    robot_translation_jerk: float = ROBOT_TRANSLATION.max_jerk
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
    position_noise: float = 0.0007  # m, 1 sigma, per detection
    tracker_alpha: float = 0.5  # alpha-beta (steady-state Kalman) gains of the tracker's
    tracker_beta: float = 0.15  # filter: velocity noise ~0.025 m/s, settles in ~7 frames
    detect_fraction: float = 0.5  # visible fraction below which the ball is not detected
    lost_after: float = 0.1  # s of non-detection before PREDICTED becomes LOST

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def frame_period(self) -> float:
        return 1.0 / self.camera_fps

    def robot_limits(self) -> tuple[AxisLimits, AxisLimits]:
        return (
            AxisLimits(
                self.robot_translation_speed,
                self.robot_translation_accel,
                self.robot_translation_jerk,
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
    "robot_translation_speed": (2.5, 3.48),
    "robot_translation_accel": (70.0, 104.0),
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
