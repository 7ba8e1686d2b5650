"""Robot Framework keywords for the simulated rig: the six agents as processes on three
namespaced boards (or on one host, `single_host`), the drive emulator under the real pysoem
master, the live table with its scripted human and its camera (foosball.rig), a laptop on
the agent LAN speaking the wire protocol, the emulator's control socket and the table's
truth. The real rig gets a library with the same keywords (variables/real_rig.py).

Components, one per area, each reaching the rig through one context object
(rig_keywords.context.SimulatedTable), as in SeleniumLibrary."""

from __future__ import annotations

from rig_keywords.booted import BootedKeywords
from rig_keywords.context import SimulatedTable
from rig_keywords.faults import FaultKeywords
from rig_keywords.game import GameKeywords
from rig_keywords.panels import PanelKeywords
from rig_keywords.play import PlayKeywords
from rig_keywords.startup import StartupKeywords
from rig_keywords.tracking import TrackingKeywords
from robotlibcore import DynamicCore


class SimulatedRig(DynamicCore):
    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self, single_host: bool = False, fps: float = 50.0,
                 opponent: str = "club", deadline_s: float = 0.025,
                 bus_error_tolerance_s: float = 0.015, mode: str = "auto") -> None:
        """`single_host`: UDP on loopback, the fake EtherCAT bus, no emulator, no namespaces
        (tests tagged needs-emulator or needs-namespaces are skipped with the reason).
        `deadline_s`: every agent's heartbeat deadline for its peers.
        `bus_error_tolerance_s`: the motor driver's, for lost EtherCAT frames.
        `mode` (without single_host): booted (a container per board, its agents run by its
        systemd), processes (each agent a process in its board's namespace) or auto (booted
        where the host can, as `foosball rig up`)."""
        self.ctx = SimulatedTable(single_host, float(fps), opponent, float(deadline_s),
                                  mode, float(bus_error_tolerance_s))
        DynamicCore.__init__(self, [component(self.ctx) for component in (
            GameKeywords, StartupKeywords, TrackingKeywords, PlayKeywords, FaultKeywords,
            PanelKeywords, BootedKeywords)])
