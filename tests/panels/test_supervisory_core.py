"""Supervisory panel core: the motors and the EtherCAT link as the pole board shows them,
and the operator's halt / restart actions turned into messages. A passed-in clock, no
sleeps; the last test runs the core in the real runtime on an in-process segment."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from foosball.agents.supervisory_panel import OperatorAction, SupervisoryCore
from foosball.drivetrain import motor_to_translation
from foosball.geometry import default_table
from foosball.runtime import AgentRuntime, Inputs
from foosball.runtime.latch import SafetyView
from foosball.runtime.settings import SafetySettings
from foosball.wire import catalogue
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    AxisStatus,
    DriveCommand,
    DriveControl,
    DriveEmergency,
    DriveState,
    EtherCatStatus,
    GameCommand,
    GameControl,
    MotorStatus,
    SafetyState,
    SlaveState,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

TABLE = default_table()
STATES = (DriveState.ALIGNING, DriveState.HOMING, DriveState.READY, DriveState.RUNNING,
          DriveState.READY, DriveState.FAULT, DriveState.RUNNING, DriveState.QUICK_STOP)
MOTORS = MotorStatus(axes=tuple(
    AxisStatus(axis=a, state=STATES[a], position=0.5 * a, velocity=2.0, current=0.3,
               fault_code=0x2310 if a == 5 else 0)
    for a in range(8)))
LINK = EtherCatStatus(link_up=True, slaves=8, expected_slaves=8, al_state=0x14,
                      working_counter=8, expected_working_counter=24, bad_working_counters=5,
                      cycle_period_s=0.005, wakeup_jitter_p99_s=83e-6)
ALARM = Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT,
              text="drive 5 fault 0x2310 (overcurrent)", latched=True, axis=5)
AT_NS = 1_700_000_000_123_456_789


def core() -> SupervisoryCore:
    return SupervisoryCore(TABLE)


def action(name: str, **kw: Any) -> OperatorAction:
    return OperatorAction(name=name, who=kw.pop("who", "alice@10.0.0.9"), wall_ns=AT_NS, **kw)


def test_view_shows_every_axis_in_radians_and_metres() -> None:
    view = core().step(Inputs(10.0, (MOTORS,))).actuation
    assert [row.label for row in view.axes[:2]] == ["goalkeeper translation",
                                                    "goalkeeper rotation"]
    assert [row.state for row in view.axes] == ["aligning", "homing", "ready", "running",
                                                "ready", "fault", "running", "quick stop"]
    defence = TABLE.robot_rods[1]
    translation, rotation = view.axes[2], view.axes[3]
    assert translation.position_rad == 1.0
    assert translation.position_m == pytest.approx(motor_to_translation(defence, 1.0))
    assert translation.velocity_m_s == pytest.approx(2.0 * defence.metres_per_motor_radian())
    assert rotation.position_m is None and rotation.velocity_m_s is None  # no metres in a turn
    assert (rotation.position_rad, rotation.velocity_rad_s, rotation.current_a) == (1.5, 2.0,
                                                                                     0.3)
    assert view.axes[5].fault == "0x2310 overcurrent" and view.axes[5].fault_code == 0x2310
    assert view.axes[4].fault == ""
    assert not view.motors_stale


def test_view_shows_the_link_and_its_statistics() -> None:
    c = core()
    c.step(Inputs(0.0, (LINK,)))
    later = EtherCatStatus(link_up=True, slaves=8, expected_slaves=8, al_state=0x08,
                           working_counter=24, expected_working_counter=24,
                           bad_working_counters=12, cycle_period_s=0.005,
                           wakeup_jitter_p99_s=41e-6)
    link = c.step(Inputs(30.0, (later,))).actuation.link
    assert link is not None and link.healthy
    assert (link.al_state, link.slaves, link.working_counter) == ("OP", 8, 24)
    assert (link.bad_working_counters, link.bad_working_counters_window) == (12, 7)
    assert link.jitter_p99_us == pytest.approx(41.0)
    assert link.jitter_p99_max_us == pytest.approx(83.0)  # the worst within the window
    assert link.cycle_ms == pytest.approx(5.0)
    link = c.step(Inputs(61.0, (later,))).actuation.link  # the first sample has aged out
    assert link.bad_working_counters_window == 0
    assert link.jitter_p99_max_us == pytest.approx(41.0)
    unhealthy = core().step(Inputs(0.0, (LINK,))).actuation.link
    assert unhealthy.al_state == "SAFE-OP + ERROR" and not unhealthy.healthy


def test_the_slaves_out_of_op_are_named_with_axis_state_and_why() -> None:
    loss = dataclasses.replace(LINK, working_counter=21, slaves_not_op=(
        SlaveState(3, 0, 0, "", -1, -1),
        SlaveState(6, 0x14, 0x001B, "Sync manager watchdog", 0, 0),
        SlaveState(8, 0x04, 0, "No error", 3, 1)))
    link = core().step(Inputs(0.0, (loss,))).actuation.link
    assert link.slave_lines == (
        "slave 3 (axis 2, defence translation): no answer",
        "slave 6 (axis 5, midfield rotation): SAFE-OP + ERROR, 0x001B Sync manager watchdog",
        "slave 8 (axis 7, attack rotation): SAFE-OP · RX errors 3, lost links 1")
    assert core().step(Inputs(0.0, (LINK,))).actuation.link.slave_lines == ()


def test_each_drive_that_faulted_is_shown_with_its_coe_emergency() -> None:
    status = dataclasses.replace(LINK, emergencies=(
        DriveEmergency(4, 0x9000, 0x01, 0x0000_0100),
        DriveEmergency(7, 0x5530, 0x81, 0)))
    assert core().step(Inputs(0.0, (status,))).actuation.link.slave_lines == (
        "slave 4 (axis 3, defence rotation): emergency 0x9000 emergency button, error "
        "register 0x01, data 0x0000000100",
        "slave 7 (axis 6, attack translation): emergency 0x5530, error register 0x81, "
        "data 0x0000000000")


def test_alarms_and_the_latch_are_shown_newest_first_one_row_per_episode() -> None:
    safety = SafetyView(faulted=True, causes=("motor_driver: overcurrent",),
                        fault_text="overcurrent on axis 5", restarts=2)
    estop = Alarm(Agent.GAME_PANEL, AlarmCode.EMERGENCY_BUTTON, "e-stop", True, -1)
    c = core()
    c.step(Inputs(0.0, (ALARM,), wall_ns=AT_NS))
    c.step(Inputs(0.1, (ALARM,), wall_ns=AT_NS + 10**8))  # its 100 ms repeat: the same row
    view = c.step(Inputs(0.2, (estop,), safety=safety, wall_ns=AT_NS + 2 * 10**8)).actuation
    assert [a.text for a in view.alarms] == [
        "GAME_PANEL EMERGENCY_BUTTON: e-stop",
        "MOTOR_DRIVER OVERCURRENT axis 5: drive 5 fault 0x2310 (overcurrent)"]
    assert view.alarms[1].at_ms == AT_NS // 10**6 and view.alarms[1].active
    assert view.faulted and view.fault_text == "overcurrent on axis 5" and view.restarts == 2
    assert view.causes == ("motor_driver: overcurrent",)
    quiet = c.step(Inputs(1.0, safety=safety)).actuation
    assert [a.active for a in quiet.alarms] == [False, False]  # the repeats stopped
    again = c.step(Inputs(5.0, (ALARM,), safety=safety, wall_ns=AT_NS + 5 * 10**9)).actuation
    assert [a.text[:12] for a in again.alarms] == ["MOTOR_DRIVER", "GAME_PANEL E"]
    assert again.alarms[0].active and again.alarms[0].at_ms == AT_NS // 10**6 + 5000


def test_a_silent_motor_driver_is_shown_as_stale() -> None:
    c = SupervisoryCore(TABLE, stale_after_s=0.5)
    assert c.step(Inputs(0.0)).actuation.motors_stale
    c.step(Inputs(1.0, (MOTORS, LINK)))
    view = c.step(Inputs(1.6)).actuation
    assert view.motors_stale and view.link_stale
    assert len(view.axes) == 8  # the last values stay visible, marked stale


HALT_ALL = (*(DriveControl(a, DriveCommand.HALT) for a in range(8)), GameControl(GameCommand.STOP))
RESTART_ALL = (GameControl(GameCommand.RESTART),
               *(DriveControl(a, DriveCommand.RELEASE) for a in range(8)))


def test_halt_all_quick_stops_every_drive_and_stops_the_game_restart_all_undoes_it() -> None:
    """Issue 29: HALT ALL sent only GameControl STOP, and all 8 drives stayed enabled."""
    c = core()
    out = c.step(Inputs(0.0, sensed=(action("halt_all"),)))
    assert out.messages == HALT_ALL
    out = c.step(Inputs(0.1, sensed=(action("restart_all", who="bob"),)))
    assert out.messages == RESTART_ALL
    restart, halt = out.actuation.actions
    assert (halt.who, halt.what, halt.ok) == ("alice@10.0.0.9", "halt all", True)
    assert halt.result == "sent GameControl STOP, DriveControl HALT to drives 0-7"
    assert halt.at_ms == AT_NS // 10**6
    assert (restart.who, restart.result) == ("bob", "sent GameControl RESTART, DriveControl "
                                                    "RELEASE to drives 0-7")
    assert out.state == SafetyState.READY and out.causes == ()


def test_per_drive_halt_and_release_send_drive_control() -> None:
    c = core()
    out = c.step(Inputs(0.0, sensed=(action("drive", axis=3, command="halt"),
                                     action("drive", axis=6, command="release"))))
    assert out.messages == (DriveControl(3, DriveCommand.HALT),
                            DriveControl(6, DriveCommand.RELEASE))
    assert out.actuation.drive_control
    assert out.actuation.actions[0].result == "sent DriveControl axis=6 RELEASE"


@pytest.mark.parametrize(("bad", "why"), [
    (action("drive", axis=8, command="halt"), "axis 8 is not 0..7"),
    (action("drive", axis=2, command="spin"), "drive command 'spin'"),
    (action("launch"), "unknown action 'launch'"),
])
def test_malformed_actions_are_refused_and_logged(bad: OperatorAction, why: str) -> None:
    out = core().step(Inputs(0.0, sensed=(bad,)))
    assert out.messages == ()
    row = out.actuation.actions[0]
    assert not row.ok and why in row.result


def test_a_flood_of_actions_sends_at_most_a_bounded_number() -> None:
    out = core().step(Inputs(0.0, sensed=tuple(action("drive", axis=1, command="halt")
                                               for _ in range(50))))
    assert len(out.messages) == 16
    refused, *sent = out.actuation.actions
    assert (refused.what, refused.ok) == ("34 more actions", False)
    assert len(sent) == 16 and all(row.ok for row in sent)
    out = core().step(Inputs(0.0, sensed=tuple(action("halt_all") for _ in range(5))))
    assert out.messages == HALT_ALL  # nine messages: a second HALT ALL would pass 16
    assert out.actuation.actions[0].what == "4 more actions"


def test_the_view_is_json_for_the_page() -> None:
    view = core().step(Inputs(0.0, (MOTORS, LINK, ALARM), sensed=(action("halt_all"),)))
    data = json.loads(json.dumps(view.actuation.to_json()))
    assert data["axes"][5]["state"] == "fault" and data["axes"][1]["position_m"] is None
    assert data["link"]["healthy"] is False and data["actions"][0]["what"] == "halt all"


class Panel:
    """The page's side of the hardware protocol, in-process: actions in, views out."""

    def __init__(self) -> None:
        self.queued: list[OperatorAction] = []
        self.views: list[Any] = []

    def sense(self, timeout_s: float) -> tuple[OperatorAction, ...]:
        queued, self.queued = tuple(self.queued), []
        return queued

    def act(self, view: Any) -> None:
        self.views.append(view)

    def close(self) -> None:
        pass


def test_in_the_runtime_a_halt_all_goes_on_the_wire_and_motor_status_reaches_the_view() -> None:
    key, t = bytes(range(32)), [100.0]
    hub = MemoryHub()
    wall = lambda: round(t[0] * 1e9)  # noqa: E731
    panel_end = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.SUPERVISORY_PANEL,
                                                         clock=wall))
    mda = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.MOTOR_DRIVER, clock=wall))
    panel = Panel()
    runtime = AgentRuntime(SupervisoryCore(TABLE), panel_end, SafetySettings(),
                           hardware=panel, monotonic=lambda: t[0], wall_ns=wall, health=None)
    mda.send(MOTORS)
    runtime.io_turn()
    panel.queued.append(action("halt_all"))
    runtime.work_turn(0.0)
    assert panel.views[-1].axes[3].state == "running"
    received = [r.message for r in mda.receive() if not isinstance(r.message,
                                                                    catalogue.Heartbeat)]
    assert received == list(HALT_ALL)
