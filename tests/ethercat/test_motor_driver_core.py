"""The MDA core on the fake bus, with a hand-moved clock (no sleeps, no sockets)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from types import SimpleNamespace

import pytest

from foosball.agents.motor_driver import (
    AxisSetup,
    MdaInputs,
    MotorDriverConfig,
    MotorDriverCore,
    MotorDriverRunner,
    WireRelay,
    default_axes,
)
from foosball.ethercat import layout as L
from foosball.ethercat.bus import (
    BusConfig,
    BusConfigurationError,
    Exchange,
    MappedSizes,
    SlaveInfo,
    check_mapping,
    check_slaves,
    open_bus,
    receive_timeout_for,
)
from foosball.ethercat.drive import FaultKind
from foosball.ethercat.fake import FakeBus
from foosball.ethercat.realtime import set_fifo
from foosball.safety.health import Health
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    AxisTarget,
    DriveState,
    EtherCatStatus,
    GameCommand,
    GameControl,
    Heartbeat,
    MotorCommand,
    MotorStatus,
    SafetyState,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

USUAL_SENDER = {MotorCommand: Agent.POLE_DRIVER, GameControl: Agent.GAME_PANEL,
                Alarm: Agent.POLE_DRIVER}


class Inbox:
    def __init__(self) -> None:
        self.pending: list[object] = []
        self.sent: list[object] = []

    def receive(self, timeout: float | None = 0.0) -> list[SimpleNamespace]:
        out = [m if isinstance(m, SimpleNamespace) else
               SimpleNamespace(message=m, sender=USUAL_SENDER.get(type(m), Agent.TOOL))
               for m in self.pending]
        self.pending.clear()
        return out

    def send(self, message: object) -> None:
        self.sent.append(message)


class Rig:
    def __init__(self, config: MotorDriverConfig | None = None) -> None:
        self.t = 0.0
        self.bus = FakeBus(BusConfig(backend="fake"), clock=lambda: self.t)
        self.bus.start()
        self.core = MotorDriverCore(config or MotorDriverConfig())
        self.inbox = Inbox()
        self.runner = MotorDriverRunner(self.bus, self.core, self.inbox, clock=lambda: self.t,
                                        sleep=self._sleep, stats_capacity=1000,
                                        health=lambda: Health(12.0, 34.0, 45.0))

    def _sleep(self, seconds: float) -> None:
        self.t += seconds

    def run_until(self, done: Callable[[], bool], seconds: float) -> bool:
        cycles = round(seconds / self.core.config.cycle_s)
        for _ in range(cycles):
            self.runner.run(cycles=1)
            if done():
                return True
        return False

    def operational(self) -> bool:
        return all(s in (DriveState.READY, DriveState.RUNNING) for s in self.core.drive_states())

    def alarms(self) -> list[Alarm]:
        return [m for m in self.inbox.sent if isinstance(m, Alarm)]


@pytest.fixture
def rig() -> Rig:
    r = Rig()
    assert r.run_until(r.operational, 5.0), r.core.drive_states()
    return r


def test_start_up_enables_aligns_and_homes_translation_axes_to_the_switch_edge() -> None:
    r = Rig()
    history: list[list[DriveState]] = []
    r.run_until(lambda: history.append(r.core.drive_states()) or r.operational(), 5.0)
    assert r.operational()
    for axis in range(8):
        states = [h[axis] for h in history]
        assert DriveState.ALIGNING in states
        assert (DriveState.HOMING in states) == (axis % 2 == 0)
    for axis in (0, 2, 4, 6):
        drive = r.bus.drives[axis]
        assert abs(r.core.axes[axis].zero - drive.switch_position) < 0.02
    assert not r.alarms()


def test_commands_move_axes_and_respect_speed_limits(rig: Rig) -> None:
    rig.inbox.pending.append(MotorCommand(axes=(AxisTarget(axis=0, position=10.0, velocity=50.0),
                                                AxisTarget(axis=1, position=-3.0, velocity=100.0))))
    speeds: list[float] = []
    assert rig.run_until(lambda: speeds.append(abs(rig.bus.drives[0].velocity)) or (
        abs(rig.core.position(0) - 10.0) < 0.01 and abs(rig.core.position(1) + 3.0) < 0.01), 2.0)
    assert max(speeds) <= 50.0 * 1.02  # the profile's speed, not the drive's maximum


def test_goals_are_clamped_to_the_soft_travel() -> None:
    axes = tuple(AxisSetup(a.axis, a.homes, soft_min=0.0, soft_max=5.0) if a.axis == 0 else a
                 for a in default_axes())
    r = Rig(MotorDriverConfig(axes=axes))
    assert r.run_until(r.operational, 5.0)
    r.inbox.pending.append(MotorCommand(axes=(AxisTarget(axis=0, position=50.0,
                                                         velocity=100.0),)))
    r.run_until(lambda: False, 1.0)
    assert r.core.position(0) == pytest.approx(5.0, abs=0.01)


def test_drive_fault_quick_stops_all_alarms_and_needs_clear_then_restart(rig: Rig) -> None:
    rig.inbox.pending.append(MotorCommand(axes=(AxisTarget(axis=2, position=20.0,
                                                           velocity=100.0),)))
    rig.run_until(lambda: False, 0.05)
    rig.bus.drives[5].inject(FaultKind.OVERCURRENT)
    assert rig.run_until(lambda: rig.core.quick_stop_done_cycle is not None, 0.1)
    assert rig.core.quick_stop_done_cycle - rig.core.fault_cycle <= 3
    [alarm] = rig.alarms()
    assert (alarm.code, alarm.axis, alarm.latched, alarm.source) == (
        AlarmCode.OVERCURRENT, 5, True, Agent.MOTOR_DRIVER)
    states = rig.core.drive_states()
    assert states[5] is DriveState.FAULT
    assert all(s is DriveState.QUICK_STOP for i, s in enumerate(states) if i != 5)
    rig.run_until(lambda: False, 0.2)
    assert all(d.velocity == 0.0 for d in rig.bus.drives)
    assert rig.bus.drives[5].rx.controlword == L.Control.DISABLE_VOLTAGE  # not commanded
    # commands are ignored while latched
    rig.inbox.pending.append(MotorCommand(axes=(AxisTarget(axis=0, position=9.0,
                                                           velocity=100.0),)))
    rig.inbox.pending.append(GameControl(command=GameCommand.RESTART))
    rig.run_until(lambda: False, 0.2)
    assert rig.core.restarts_refused == 1 and rig.core.latched is not None
    assert all(d.velocity == 0.0 for d in rig.bus.drives)
    rig.bus.drives[5].clear()
    assert rig.run_until(lambda: rig.core.latched.cleared, 0.1)
    rig.run_until(lambda: False, 0.5)
    assert rig.core.latched is not None  # cleared is not enough: a restart is needed
    rig.inbox.pending.append(GameControl(command=GameCommand.RESTART))
    assert rig.run_until(rig.operational, 5.0)
    assert rig.core.latched is None and rig.core.restarts == 1


def test_working_counter_errors_are_tolerated_up_to_the_limit(rig: Rig) -> None:
    rig.bus.missing_working_counter = 2
    rig.run_until(lambda: False, 3 * rig.core.config.cycle_s)
    assert rig.core.latched is None and not rig.alarms()
    rig.run_until(lambda: False, 2 * rig.core.config.cycle_s)
    assert rig.core.latched is not None
    assert [a.code for a in rig.alarms()] == [AlarmCode.WORKING_COUNTER]
    rig.bus.missing_working_counter = 0
    assert rig.run_until(lambda: rig.core.latched.cleared, 0.1)


def test_link_loss_alarms_and_recovers_the_bus_once_frames_return(rig: Rig) -> None:
    rig.bus.link_up = False
    rig.run_until(lambda: False, 0.05)
    assert [a.code for a in rig.alarms()] == [AlarmCode.ETHERCAT_LINK]
    assert rig.runner.last_outputs is not None
    assert not rig.runner.last_outputs.recover_bus  # nothing answers: do not block on it
    assert not rig.core.latched.cleared
    rig.bus.link_up = True
    rig.bus.missing_working_counter = 16  # back, but the drives fell to SAFEOP meanwhile
    rig.run_until(lambda: False, 0.01)
    assert rig.runner.last_outputs.recover_bus and not rig.core.latched.cleared
    rig.bus.missing_working_counter = 0
    assert rig.run_until(lambda: rig.core.latched.cleared, 0.3)


def test_another_agents_alarm_stops_the_motors_until_restart(rig: Rig) -> None:
    rig.inbox.pending.append(Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.LIMIT_BURST,
                                   text="burst", latched=True, axis=-1))
    rig.run_until(lambda: False, 0.1)
    assert all(s is DriveState.QUICK_STOP for s in rig.core.drive_states())
    assert not rig.alarms()  # not echoed: its source already told everybody
    rig.inbox.pending.append(GameControl(command=GameCommand.RESTART))
    assert rig.run_until(rig.operational, 5.0)


def test_pause_holds_the_rods_and_start_resumes(rig: Rig) -> None:
    rig.inbox.pending.append(GameControl(command=GameCommand.PAUSE))
    rig.inbox.pending.append(MotorCommand(axes=(AxisTarget(axis=1, position=4.0,
                                                           velocity=100.0),)))
    rig.run_until(lambda: False, 0.2)
    assert abs(rig.core.position(1)) < 0.01
    rig.inbox.pending.append(GameControl(command=GameCommand.START))
    rig.inbox.pending.append(MotorCommand(axes=(AxisTarget(axis=1, position=4.0,
                                                           velocity=100.0),)))
    assert rig.run_until(lambda: abs(rig.core.position(1) - 4.0) < 0.01, 1.0)


def test_status_messages_are_published_and_fit_the_catalogue(rig: Rig) -> None:
    rig.inbox.sent.clear()
    rig.run_until(lambda: False, 0.2)
    motor = [m for m in rig.inbox.sent if isinstance(m, MotorStatus)]
    bus = [m for m in rig.inbox.sent if isinstance(m, EtherCatStatus)]
    assert len(motor) >= 3 and len(bus) >= 3
    assert bus[-1].working_counter == bus[-1].expected_working_counter == 24
    assert bus[-1].link_up and bus[-1].slaves == 8


def test_alignment_that_never_ends_is_a_fault() -> None:
    r = Rig(MotorDriverConfig(alignment_timeout_s=0.5))
    for drive in r.bus.drives:
        drive.params = type(drive.params)(**{**drive.params.__dict__, "alignment_time_s": 10.0})
    assert r.run_until(lambda: r.core.latched is not None, 2.0)
    assert r.alarms()[0].code == AlarmCode.DRIVE_FAULT
    assert "alignment" in r.alarms()[0].text


def test_non_finite_commands_never_reach_a_drive(rig: Rig) -> None:
    core = rig.core
    before = core.axes[0].goal
    core.step(MdaInputs(now_s=rig.t, exchange=Exchange(24, tuple(d.tx() for d in rig.bus.drives)),
                        messages=(SimpleNamespace(),)))
    core._set_goal(core.axes[0], math.nan, 10.0)
    assert core.axes[0].goal == before


# --- the pure checks the pysoem backend uses ----------------------------------------------
def slaves(count: int, foreign: int | None = None) -> list[SlaveInfo]:
    other = L.Identity(2, 3, 4)
    return [SlaveInfo(n, "x", other if n == foreign else L.EXPECTED_IDENTITY)
            for n in range(1, count + 1)]


def test_identity_check_names_missing_unexpected_and_extra_slaves() -> None:
    check_slaves(slaves(8), 8, L.EXPECTED_IDENTITY)
    with pytest.raises(BusConfigurationError, match=r"missing slave\(s\) at position 7, 8"):
        check_slaves(slaves(6), 8, L.EXPECTED_IDENTITY)
    with pytest.raises(BusConfigurationError, match="unexpected slave at position 4"):
        check_slaves(slaves(8, foreign=4), 8, L.EXPECTED_IDENTITY)
    with pytest.raises(BusConfigurationError, match="unexpected slave at position 9"):
        check_slaves(slaves(9), 8, L.EXPECTED_IDENTITY)


def test_mapping_check_refuses_the_complete_access_pitfall() -> None:
    good = MappedSizes(1, L.RXPDO_SIZE, L.TXPDO_SIZE, L.RXPDO_SIZE, L.TXPDO_SIZE)
    check_mapping([good])
    # outputs silently mapped as inputs: the working counter would still match
    swapped = MappedSizes(2, 0, L.RXPDO_SIZE + L.TXPDO_SIZE, L.RXPDO_SIZE, L.TXPDO_SIZE)
    with pytest.raises(BusConfigurationError, match="slave 2: master mapped 0 output"):
        check_mapping([good, swapped])
    short_sm = MappedSizes(3, L.RXPDO_SIZE, L.TXPDO_SIZE, L.RXPDO_SIZE, 4)
    with pytest.raises(BusConfigurationError, match="slave 3: SyncManager lengths"):
        check_mapping([short_sm])


def test_unknown_backend_is_a_clear_error() -> None:
    with pytest.raises(BusConfigurationError, match="unknown EtherCAT backend 'canopen'"):
        open_bus(BusConfig(backend="canopen"))
    assert isinstance(open_bus(BusConfig(backend="fake")), FakeBus)


def test_refused_scheduler_policy_is_a_logged_fallback(caplog: pytest.LogCaptureFixture) -> None:
    def refuse(pid: int, policy: int, param: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    with caplog.at_level("WARNING"):
        assert set_fifo(setscheduler=refuse) is False
    assert "SCHED_FIFO refused" in caplog.text
    calls: list[tuple[int, int]] = []
    assert set_fifo(7, setscheduler=lambda pid, policy, param: calls.append(
        (policy, param.sched_priority))) is True
    assert calls == [(os.SCHED_FIFO, 7)]


def test_only_the_pole_driver_moves_motors_and_only_the_panel_restarts(rig: Rig) -> None:
    move = MotorCommand(axes=(AxisTarget(axis=1, position=2.0, velocity=100.0),))
    rig.inbox.pending.append(SimpleNamespace(message=move, sender=Agent.STRATEGY))
    rig.inbox.pending.append(SimpleNamespace(message=GameControl(command=GameCommand.PAUSE),
                                             sender=Agent.BALL_TRACKER))
    rig.run_until(lambda: False, 0.2)
    assert rig.runner.refused_messages == 2
    assert abs(rig.core.position(1)) < 0.01 and rig.core.accepting


def test_safety_state_follows_the_axes() -> None:
    r = Rig()
    seen = []
    r.run_until(lambda: seen.append(r.core.safety_state()) or r.operational(), 5.0)
    order = list(dict.fromkeys([*seen, r.core.safety_state()]))
    assert order == [SafetyState.ALIGNING, SafetyState.HOMING, SafetyState.READY]
    r.bus.drives[0].inject(FaultKind.EMERGENCY_BUTTON)
    r.run_until(lambda: False, 0.05)
    assert r.core.safety_state() is SafetyState.FAULT


def test_heartbeats_at_100_hz_carry_the_safety_state_and_board_health(rig: Rig) -> None:
    rig.inbox.sent.clear()
    rig.run_until(lambda: False, 0.5)
    beats = [m for m in rig.inbox.sent if isinstance(m, Heartbeat)]
    assert 45 <= len(beats) <= 55
    assert beats[-1].agent == Agent.MOTOR_DRIVER and beats[-1].state == SafetyState.READY
    assert (beats[-1].cpu_load, beats[-1].memory, beats[-1].temperature) == (12.0, 34.0, 45.0)


def test_wire_relay_filters_and_bounds_what_reaches_the_cycle() -> None:
    inbox = Inbox()
    relay = WireRelay(inbox)
    inbox.pending.extend(MotorCommand(axes=(AxisTarget(axis=0, position=float(n),
                                                       velocity=1.0),)) for n in range(300))
    inbox.pending.append(SimpleNamespace(message=GameControl(command=GameCommand.START),
                                         sender=Agent.STRATEGY))
    relay.outbox.append("status")
    relay.pump()  # the threaded relay runs this same round in a loop (integration suite)
    assert len(relay.inbox) == 256  # bounded: a flood cannot grow memory without limit
    assert relay.refused == 1
    assert inbox.sent == ["status"]


def test_wire_relay_decodes_within_its_budget_and_drops_the_rest_undecoded() -> None:
    key = bytes(32)
    hub = MemoryHub()
    mda = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.MOTOR_DRIVER))
    pole = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.POLE_DRIVER))
    t = [100.0]
    relay = WireRelay(mda, max_rate_hz=100.0, burst=50, clock=lambda: t[0])
    command = MotorCommand(axes=(AxisTarget(axis=0, position=1.0, velocity=1.0),))
    for _ in range(200):
        pole.send(command)
    relay.pump()
    assert (len(relay.inbox), relay.over_budget) == (50, 150)
    t[0] += 0.25  # 25 more tokens
    for _ in range(30):
        pole.send(command)
    relay.pump()
    assert (len(relay.inbox), relay.over_budget) == (75, 155)


def test_bus_error_tolerance_is_a_time_not_a_cycle_count() -> None:
    assert MotorDriverConfig(cycle_s=0.005).bus_error_cycles == 3
    assert MotorDriverConfig(cycle_s=0.001).bus_error_cycles == 15
    assert MotorDriverConfig(cycle_s=0.010).bus_error_cycles == 3  # never fewer than 3


def test_the_frame_wait_stays_well_under_the_cycle() -> None:
    assert receive_timeout_for(0.005) == 1500
    assert receive_timeout_for(0.001) == 400
