"""Pole driving agent (PDA) on the pole board: RodCommand (metres, radians) ->
MotorCommand (motor radians), within each rod's travel, only while the axes are homed.

The package: `core` (PoleDriverCore, the pure step), `config` (PoleDriverConfig, its
`[pole_driver]` settings). It has no hardware; its build is its entry in
foosball.agent_registry (three lines). What other modules use is named here.
"""

from foosball.agents.pole_driver.config import PoleDriverConfig
from foosball.agents.pole_driver.core import HOMED_STATES, RESTART_STATES, PoleDriverCore

__all__ = ["HOMED_STATES", "RESTART_STATES", "PoleDriverConfig", "PoleDriverCore"]
