"""Supervisory panel core: the motors and the EtherCAT link as the pole board shows them."""

from __future__ import annotations

import json

from foosball.agents.supervisory_panel import SpaInputs, SupervisoryCore
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    AxisStatus,
    DriveState,
    EtherCatStatus,
    MotorStatus,
)

MOTORS = MotorStatus(axes=tuple(
    AxisStatus(axis=a, state=DriveState.FAULT if a == 3 else DriveState.QUICK_STOP,
               position=0.5 * a, velocity=0.0, current=0.3, fault_code=0x2310 if a == 3 else 0)
    for a in range(8)))
LINK = EtherCatStatus(link_up=True, slaves=8, expected_slaves=8, al_state=0x14,
                      working_counter=8, expected_working_counter=24, bad_working_counters=5,
                      cycle_period_s=0.005, wakeup_jitter_p99_s=83e-6)
ALARM = Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT,
              text="drive 3 fault 0x2310 (overcurrent)", latched=True, axis=3)


def test_view_shows_states_faults_link_and_alarms() -> None:
    core = SupervisoryCore()
    view = core.step(SpaInputs(10.0, (MOTORS, LINK, ALARM))).view
    assert [row.label for row in view.axes[:2]] == ["goalkeeper translation",
                                                    "goalkeeper rotation"]
    assert view.axes[3].state == "fault" and view.axes[3].fault == "0x2310 overcurrent"
    assert view.axes[2].state == "quick stop" and view.axes[2].fault == ""
    assert view.link is not None
    assert (view.link.al_state, view.link.working_counter) == ("SAFE-OP + ERROR", "8 / 24")
    assert view.link.jitter_p99_us == 83.0
    assert view.alarms == ("MOTOR_DRIVER OVERCURRENT axis 3: drive 3 fault 0x2310 "
                           "(overcurrent)",)
    assert not view.motors_stale and not view.link_stale
    json.dumps(view.to_json())


def test_a_silent_motor_driver_is_shown_as_stale() -> None:
    core = SupervisoryCore(stale_after_s=0.5)
    assert core.step(SpaInputs(0.0)).view.motors_stale
    core.step(SpaInputs(1.0, (MOTORS, LINK)))
    view = core.step(SpaInputs(1.6)).view
    assert view.motors_stale and view.link_stale
    assert len(view.axes) == 8  # the last values stay visible, marked stale
