"""The supervisory panel's per-drive halt and release, on the MDA as the board runs it."""

from __future__ import annotations

from foosball.ethercat import layout as L
from foosball.wire.catalogue import Agent, DriveCommand, DriveControl, DriveState
from tests.ethercat.test_motor_driver_core import Rig


def homed_rig() -> Rig:
    rig = Rig()
    assert rig.run_until(rig.operational, 5.0), rig.core.drive_states()
    return rig


def test_a_halted_drive_quick_stops_alone_and_ignores_commands_until_released() -> None:
    rig = homed_rig()
    panel = rig.endpoint(Agent.SUPERVISORY_PANEL)
    panel.send(DriveControl(axis=2, command=DriveCommand.HALT))
    rig.run_for(0.1)
    states = rig.core.drive_states()
    assert states[2] == DriveState.QUICK_STOP
    assert all(s in (DriveState.READY, DriveState.RUNNING) for i, s in enumerate(states)
               if i != 2)
    assert rig.bus.drives[2].state is not L.Cia402State.OPERATION_ENABLED
    before = rig.bus.drives[2].position
    rig.move(2, before + 20.0)
    rig.run_for(0.3)
    assert abs(rig.bus.drives[2].position - before) < 0.05, "a halted drive moved"
    assert not rig.latched_alarms(), "a person's halt is not a fault"
    panel.send(DriveControl(axis=2, command=DriveCommand.RELEASE))
    assert rig.run_until(rig.operational, 5.0), rig.core.drive_states()


def test_a_restart_leaves_a_halted_drive_halted() -> None:
    rig = homed_rig()
    rig.endpoint(Agent.SUPERVISORY_PANEL).send(DriveControl(axis=5, command=DriveCommand.HALT))
    rig.run_for(0.05)
    rig.restart()  # nothing latched: the restart changes nothing
    rig.run_for(0.5)
    assert rig.core.drive_states()[5] == DriveState.QUICK_STOP


def test_only_the_supervisory_panel_or_a_tool_may_halt_a_drive() -> None:
    rig = homed_rig()
    rig.endpoint(Agent.STRATEGY).send(DriveControl(axis=1, command=DriveCommand.HALT))
    rig.run_for(0.05)
    assert rig.core.drive_states()[1] in (DriveState.READY, DriveState.RUNNING)
    assert rig.runtime.counters.drops["sender"] == 1
