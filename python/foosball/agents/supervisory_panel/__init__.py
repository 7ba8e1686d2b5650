"""Supervisory panel agent (SPA) on the pole board: what the pole board's page shows
(motor states, positions, speeds, the EtherCAT link, alarms) and the operator's actions.

The package: `core` (SupervisoryCore, the pure step, and the rows of its view). Its page,
web server, settings and build are foosball.panels.supervisory. What other modules use is
named here.
"""

from foosball.agents.supervisory_panel.core import (
    ACTIONS,
    OperatorAction,
    SupervisoryCore,
    SupervisoryView,
)

__all__ = ["ACTIONS", "OperatorAction", "SupervisoryCore", "SupervisoryView"]
