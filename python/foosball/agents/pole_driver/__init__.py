"""Pole driving agent (PDA) on the pole board: RodCommand (metres, radians) ->
MotorCommand (motor radians), within each rod's travel, only while the axes are homed.

The package: `core` (PoleDriverCore, the pure step, and PoleDriverConfig, its
`[pole_driver]` settings). What other modules use is named here.
"""

from foosball.agents.pole_driver.core import (
    HOMED_STATES,
    RESTART_STATES,
    PoleDriverConfig,
    PoleDriverCore,
)

__all__ = ["HOMED_STATES", "RESTART_STATES", "PoleDriverConfig", "PoleDriverCore"]
