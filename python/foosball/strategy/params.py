"""Strategy parameters: one TOML file (``foosball/data/strategy.toml``), one dataclass per section.

The defaults below are the documented values; the TOML file repeats them so a board can be
re-tuned without a new image. A key that is unknown or of the wrong type is an error, never
silently ignored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from foosball.files import load_file
from foosball.schema import SettingError, parse, setting


class ParameterError(SettingError):
    """The parameter file is wrong; the message names the offending key (the board file's
    form, `[section] key: why`)."""


@dataclass(frozen=True, slots=True)
class SeedParams:
    """Constants of the seed paper's strategy (000_6123d8720d00d2c5.txt)."""

    fast_ball_speed: float = 0.01  # m/s; the seed text says "ball speed >= 0.01" (unit lost)
    kick_time: float = 0.215  # s: kick start -> foot at the ball; measured (kick-eval, seed)
    latency_factor: float = 1.5  # the "experimental constant value" weighting kick_time
    kick_min_distance: float = 0.05  # m
    kick_power: float = 60.0  # rad/s: "the rotation speed ... determines the power of the kick"
    translation_speed: float = 3.0  # m/s
    passthrough_angle_deg: float = -90.0
    windup_angle_deg: float = -90.0
    strike_angle_deg: float = 50.0

    @property
    def passthrough_angle(self) -> float:
        return math.radians(self.passthrough_angle_deg)

    @property
    def windup_angle(self) -> float:
        return math.radians(self.windup_angle_deg)

    @property
    def strike_angle(self) -> float:
        return math.radians(self.strike_angle_deg)


@dataclass(frozen=True, slots=True)
class PredictionParams:
    drag_rate: float = 0.1  # 1/s: k/m in FC Portugal's v(t) = v0 exp(-k t / m); fitted
    rolling_deceleration: float = 0.05  # m/s^2
    wall_restitution: float = 0.5
    wall_friction: float = 0.1  # Coulomb coefficient of the ball on a wall
    max_bounces: int = 3
    horizon: float = 2.0  # s
    actuation_latency: float = 0.010  # s


@dataclass(frozen=True, slots=True)
class KickEngineParams:
    """The improved strategy's kick. The simulated drives are jerk-limited (36,650 rad/s^3),
    so the foot only gets fast over a long swing: wind up far back (feet nearly up behind)
    and strike towards a target a whole turn on, so the drive is still accelerating at the
    ball (`foosball strategy kick-eval` measured these)."""

    windup_angle_deg: float = -172.0
    strike_angle_deg: float = 344.0
    windup_speed: float = 80.0  # rad/s
    follow_through_time: float = 0.0  # s
    return_speed: float = 40.0  # rad/s
    settle_tolerance_deg: float = 6.0
    phase_timeout_factor: float = 3.0
    strike_translation_speed: float = 1.5  # m/s
    # direction calibration: |offset| of the ball from the striking man's centre along the rod
    # (m) -> |angle| of the shot (deg), measured by `foosball strategy kick-eval`
    aim_offsets: tuple[float, ...] = (0.0, 0.012, 0.015, 0.02, 0.025)
    aim_angles_deg: tuple[float, ...] = (0.0, 0.0, 4.0, 21.7, 43.8)


@dataclass(frozen=True, slots=True)
class ImprovedParams:
    control_speed: float = 0.6  # m/s
    shoot_speed: float = 0.15  # m/s
    strike_power: float = 120.0  # rad/s
    clear_power: float = 80.0  # rad/s
    block_margin: float = 0.004  # m
    translation_speed: float = 4.0  # m/s
    kick_time_to_contact: float = 0.24  # s from kick start to the foot at the ball (kick-eval)
    aim_through_gaps: bool = False  # aim past the human's men the camera measures (HumanRods)


@dataclass(frozen=True, slots=True)
class LearnedParams:
    """Who plays the goalkeeper rod: `improved`'s rules, or a learned policy (an ONNX file,
    `foosball.strategy.learned`; a name alone is a file in foosball/data)."""

    goalkeeper: str = setting("improved", choices=("improved", "policy"))
    model: str = "goalkeeper.onnx"


@dataclass(frozen=True, slots=True)
class StrategyParams:
    seed: SeedParams = field(default_factory=SeedParams)
    prediction: PredictionParams = field(default_factory=PredictionParams)
    kick_engine: KickEngineParams = field(default_factory=KickEngineParams)
    improved: ImprovedParams = field(default_factory=ImprovedParams)
    learned: LearnedParams = field(default_factory=LearnedParams)


_SECTIONS: dict[str, type] = {
    "seed": SeedParams,
    "prediction": PredictionParams,
    "kick_engine": KickEngineParams,
    "improved": ImprovedParams,
    "learned": LearnedParams,
}


def parse_params(data: Any) -> StrategyParams:
    """The parameter file's tables, each checked by the one schema (foosball.schema) that
    reads every configuration file: unknown keys refused, types, choices."""
    if not isinstance(data, dict):
        raise ParameterError("strategy parameters: expected a table at the top level")
    unknown = set(data) - set(_SECTIONS)
    if unknown:
        raise ParameterError(f"unknown sections {sorted(unknown)}; known: {sorted(_SECTIONS)}")
    try:
        parts = {name: parse(cls, data.get(name, {}), f"[{name}]")
                 for name, cls in _SECTIONS.items()}
    except SettingError as exc:
        raise ParameterError(str(exc)) from exc
    return StrategyParams(**parts)


def default_params_path() -> Path:
    return Path(str(resources.files("foosball") / "data" / "strategy.toml"))


def load_params(path: str | Path | None = None) -> StrategyParams:
    return load_file(path if path is not None else default_params_path(), parse_params,
                     ParameterError)


__all__ = [
    "ImprovedParams",
    "KickEngineParams",
    "LearnedParams",
    "ParameterError",
    "PredictionParams",
    "SeedParams",
    "StrategyParams",
    "default_params_path",
    "load_params",
    "parse_params",
    "replace",
]
