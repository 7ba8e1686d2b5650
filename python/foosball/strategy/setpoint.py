"""What a behaviour asks of one rod; converted to a wire ``RodTarget`` at the agent's edge."""

from __future__ import annotations

from typing import NamedTuple


class RodSetpoint(NamedTuple):  # a tuple: made four times per ball state, cheaply
    translation: float  # m, rod translation (centre man offset from y = 0)
    rotation: float  # rad, 0 = feet down, + = feet towards the opponent goal
    translation_speed: float  # m/s, speed to move at
    rotation_speed: float  # rad/s
