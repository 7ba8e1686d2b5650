"""An example of the variables for the real rig (copy it and fill in your table's).

    robot --variablefile tests/acceptance/variables/real_rig.py --include rig \
          --outputdir results tests/acceptance
    ... --variable PERSON_PRESENT:True ...   someone is at the table: the tests in
          PERSON_NEEDED run, the library asking them (Robot's Dialogs) for each step;
          without, those tests are skipped with what they would need done.

Tests tagged `sim` only need the simulator (its truth: where the ball really is, the
table's own count of saves); `rig` tests run on both. The real rig's library
(`RealRig.py`, not written yet: no table here) provides the same keywords as
SimulatedRig.py from a laptop on the agent LAN: the wire protocol on LAN_IFACE with the
installation's key, the panels at the boards' addresses; what the simulator injects
(drive faults, cut cables, a stopped agent) it either does over SSH on the board or asks
the person at the table to do (PERSON_NEEDED).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sim import fault_limits  # one derivation of the fault limits for both rigs

from foosball.agents.motor_driver import MotorDriverConfig

ACCEPTANCE = Path(__file__).resolve().parents[1]

# The boards' fixed addresses on the agent LAN (image-config/<board>/20-lan0.network).
BOARDS = {"pole": "10.77.0.11", "strategy": "10.77.0.12", "vision": "10.77.0.13"}

# Tests (their names, as in the suites) that need a person at the table, and what for.
PERSON_NEEDED = {
    "Every Drive Is Aligned And Homed After Switching On":
        "switch the table's power on when asked",
    "drive 3: emergency button": "press the emergency button, then release it",
    "drive 5: overcurrent": "hold rod 3 (defence rotation) against the motor",
    "drive 0: motor locked": "block the goalkeeper's rod",
    "EtherCAT link down": "unplug the pole board's EtherCAT cable, then plug it back",
    "working counter: one slave deaf": "unplug drive 6's EtherCAT output, then plug it back",
    "LAN partition: vision board unplugged": "unplug the vision board's LAN cable, then "
                                             "plug it back",
    "camera lost": "unplug the camera's USB cable, then plug it back",
    "The Robot Saves The Scripted Human's Shots": "play the human's side",
    "The Robot Scores Against The Scripted Human": "play the human's side",
}


def get_variables() -> dict[str, Any]:
    return {
        "TABLE_LIBRARY": str(ACCEPTANCE / "RealRig.py"),
        "RIG": {
            "lan_iface": "enp0s31f6",  # this laptop's port on the agent LAN switch
            "key_file": "/etc/foosball/wire.key",  # the installation's key (as on the boards)
            "boards": BOARDS,
            "panel_ports": {"game_panel": 8080, "supervisory_panel": 8081},
            "ssh_user": "root",  # agents signalled over SSH (SIGKILL/SIGSTOP cases)
            "person_needed": PERSON_NEEDED,
        },
        "SINGLE_HOST": False,
        "PERSON_PRESENT": False,
        "RIG_NAME": "the real rig",
        "READY_WITHIN_S": 60,  # the real drives align and home more slowly
        "HEARTBEAT_HZ": 100,
        "TRACKED_PCT": 98,
        "TRACKING_MM": 5,
        "TRACKING_PCT": 95,
        "TRACKING_HIDDEN_MM": 10,
        "CAPTURE_TO_LAN_MS": 20,  # 200 fps camera: the real budget is tighter
        # the boards as shipped: 25 ms heartbeat deadline, the tracker's 0.2 s camera timeout
        **fault_limits(deadline_s=0.025, camera_timeout_s=0.2,
                       bus_error_tolerance_s=MotorDriverConfig().bus_error_tolerance_s),
        "SAVES": 3,
        "PLAY_S": 180,
        "CHROMIUM": shutil.which("chromium") or "/usr/bin/chromium",
        "CHROMEDRIVER": shutil.which("chromedriver") or "/usr/bin/chromedriver",
    }
