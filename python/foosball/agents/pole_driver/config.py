"""The pole driver's settings: `[pole_driver]` in the pole board's board.toml."""

from __future__ import annotations

import math
from dataclasses import dataclass

from foosball.schema import seconds, setting, validate


@dataclass(frozen=True)
class PoleDriverConfig:
    # "clamp" (counted warning) or "reject"
    limit_policy: str = setting("clamp", choices=("clamp", "reject"))
    burst_count: int = setting(10, low=1)  # this many out-of-limit targets ...
    burst_window_s: float = seconds(1.0, high=60.0)  # ... within this window raise an Alarm
    # either way from men vertical
    rotation_limit: float = setting(2 * math.pi, above=0.0, high=100.0, unit="rad")
    max_translation_speed: float = setting(3.5, above=0.0, high=20.0, unit="m/s")
    max_rotation_speed: float = setting(314.0, above=0.0, high=2000.0, unit="rad/s")

    def __post_init__(self) -> None:
        validate(self, "[pole_driver]")
