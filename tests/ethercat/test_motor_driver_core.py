"""The MDA in the shared agent runtime on the fake bus, with a hand-moved clock (no sleeps,
no sockets): FakeBus -> EtherCatHardware -> MotorDriverCore in an AgentRuntime, whose agent
LAN is a MemoryHub. The pole driver and the game panel are peers on that hub that send
through real codecs (so the codec's sender rules apply) and hear what the MDA sends."""

from __future__ import annotations

import logging
import math
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from foosball.agents.motor_driver import (
    IO_PRIORITY,
    P99_CYCLES,
    AxisSetup,
    BusSample,
    EtherCatHardware,
    MdaInputs,
    MotorDriverConfig,
    MotorDriverCore,
    default_axes,
    open_motor_driver,
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
    start_bus,
)
from foosball.ethercat.drive import FaultKind
from foosball.ethercat.emulator import EmulatorConfig
from foosball.ethercat.fake import FakeBus
from foosball.realtime import set_fifo
from foosball.runtime import AgentRuntime, FloodWatch, Inputs, Outputs, SenderBudget
from foosball.runtime.settings import SafetySettings
from foosball.safety.health import Health
from foosball.safety.ratelog import RateLimitedLog
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
    SchemaError,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

KEY = bytes(range(32))
EPOCH_NS = 1_700_000_000 * 10**9  # the wall clock at monotonic 0 (PTP time on the rig)


def beat(agent: Agent) -> Heartbeat:
    return Heartbeat(agent=agent, state=SafetyState.READY, period_s=0.01, cpu_load=1.0,
                     memory=2.0, temperature=30.0)


class Rig:
    """One MDA as the board runs it, with a clock the test moves: each `cycle()` is one
    I/O turn and one work turn (the hardware's sleep to the cycle deadline moves the clock).
    `heard` is what the game panel heard from the MDA."""

    def __init__(self, config: MotorDriverConfig | None = None,
                 settings: SafetySettings | None = None,
                 bus: FakeBus | None = None) -> None:
        self.t = 0.0
        self.config = config or MotorDriverConfig()
        self.bus = bus or FakeBus(BusConfig(backend="fake"), clock=self.monotonic)
        self.bus.start()
        self.core = MotorDriverCore(self.config)
        self.core.expected_wkc = self.bus.expected_working_counter
        self.hardware = EtherCatHardware(self.bus, self.config.cycle_s, clock=self.monotonic,
                                         sleep=self._sleep, stats_capacity=1000,
                                         wall_ns=self.wall_ns)
        self.hub = MemoryHub()
        self.runtime = AgentRuntime(
            self.core, self.endpoint(Agent.MOTOR_DRIVER),
            settings or SafetySettings(deadlines={}), hardware=self.hardware,
            monotonic=self.monotonic, wall_ns=self.wall_ns,
            health=lambda: Health(12.0, 34.0, 45.0))
        self.pole = self.endpoint(Agent.POLE_DRIVER)
        self.panel = self.endpoint(Agent.GAME_PANEL)
        self.heard: list[Any] = []
        self.last: Outputs | None = None
        self.beating: dict[Agent, Endpoint] = {}  # peers sending heartbeats at 100 Hz
        self._last_beat = -math.inf

    @property
    def clear_s(self) -> float:
        """A cause gone is seen gone after this long: `cause_clear_cycles` clean exchanges,
        the first of them at the end of the turn after the cause went (the step uses the
        inputs of the exchange before it)."""
        return (self.config.cause_clear_cycles + 1) * self.config.cycle_s

    def monotonic(self) -> float:
        return self.t

    def wall_ns(self) -> int:
        return EPOCH_NS + round(self.t * 1e9)

    def _sleep(self, seconds: float) -> None:
        self.t += seconds

    def endpoint(self, agent: Agent, key: bytes = KEY) -> Endpoint:
        return Endpoint(MemoryTransport(self.hub), WireCodec(key, agent, clock=self.wall_ns))

    def cycle(self) -> None:
        if self.beating and self.t - self._last_beat >= 0.01 - 1e-9:
            self._last_beat = self.t
            for agent, endpoint in self.beating.items():
                endpoint.send(beat(agent))
        self.runtime.io_turn(0.0)
        out = self.runtime.work_turn()
        if out is not None:
            self.last = out
        self.heard.extend(r.message for r in self.panel.receive(0.0)
                          if r.sender is Agent.MOTOR_DRIVER)

    def run_until(self, done: Callable[[], bool], seconds: float) -> bool:
        for _ in range(round(seconds / self.config.cycle_s)):
            self.cycle()
            if done():
                return True
        return False

    def run_for(self, seconds: float) -> None:
        self.run_until(lambda: False, seconds)

    def operational(self) -> bool:
        return all(s in (DriveState.READY, DriveState.RUNNING) for s in self.core.drive_states())

    def alarms(self) -> list[Alarm]:
        return [m for m in self.heard if isinstance(m, Alarm)]

    def latched_alarms(self) -> list[Alarm]:
        return [a for a in self.alarms() if a.latched]

    def refusals(self) -> list[Alarm]:
        return [a for a in self.alarms() if a.code == AlarmCode.RESTART_REFUSED]

    def heartbeats(self) -> list[Heartbeat]:
        return [m for m in self.heard if isinstance(m, Heartbeat)]

    def restart(self) -> None:
        self.panel.send(GameControl(command=GameCommand.RESTART))

    def move(self, axis: int, position: float, velocity: float = 100.0) -> None:
        self.pole.send(MotorCommand(axes=(AxisTarget(axis=axis, position=position,
                                                     velocity=velocity),)))


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
    assert r.runtime.state is SafetyState.READY and not r.runtime.latch.faulted


def test_commands_move_axes_and_respect_speed_limits(rig: Rig) -> None:
    rig.pole.send(MotorCommand(axes=(AxisTarget(axis=0, position=10.0, velocity=50.0),
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
    r.move(0, 50.0)
    r.run_for(1.0)
    assert r.core.position(0) == pytest.approx(5.0, abs=0.01)


def test_drive_fault_quick_stops_all_alarms_and_needs_clear_then_restart(rig: Rig) -> None:
    rig.move(2, 20.0)
    rig.run_for(0.05)
    rig.bus.drives[5].inject(FaultKind.OVERCURRENT)
    assert rig.run_until(lambda: rig.core.quick_stop_done_cycle is not None, 0.1)
    assert rig.core.quick_stop_done_cycle - rig.core.fault_cycle <= 3
    # the runtime's latch announces the MDA's cause: one cause, from the MDA, latched
    assert rig.latched_alarms(), "no alarm by the time every axis is stopped"
    assert {(a.code, a.axis, a.latched, a.source) for a in rig.alarms()} == {
        (AlarmCode.OVERCURRENT, 5, True, Agent.MOTOR_DRIVER)}
    states = rig.core.drive_states()
    assert states[5] is DriveState.FAULT
    assert all(s is DriveState.QUICK_STOP for i, s in enumerate(states) if i != 5)
    rig.run_for(0.2)
    assert all(d.velocity == 0.0 for d in rig.bus.drives)
    assert rig.bus.drives[5].rx.controlword == L.Control.DISABLE_VOLTAGE  # not commanded
    assert len(rig.latched_alarms()) >= 2  # repeated (every 0.1 s) while the cause is present
    assert rig.runtime.state is SafetyState.FAULT
    assert rig.heartbeats()[-1].state is SafetyState.FAULT
    # commands are ignored while latched; a restart is refused, the reason on the wire
    rig.move(0, 9.0)
    rig.restart()
    rig.run_for(0.2)
    [refusal] = rig.refusals()
    assert (refusal.source, refusal.latched, refusal.axis) == (Agent.MOTOR_DRIVER, False, -1)
    assert "drive 5 fault" in refusal.text and "overcurrent" in refusal.text
    assert rig.runtime.counters.restarts_refused == 1
    assert rig.core.latched is not None and rig.core.restarts == 0
    assert all(d.velocity == 0.0 for d in rig.bus.drives)
    rig.bus.drives[5].clear()
    assert rig.run_until(lambda: rig.core.latched.cleared, rig.clear_s)
    rig.run_for(0.1)  # a repeat already under way may still arrive
    rig.heard.clear()
    rig.run_for(0.5)
    assert rig.core.latched is not None  # cleared is not enough: a restart is needed
    assert not rig.latched_alarms()  # the cause is gone, so are its repeats
    assert rig.heartbeats()[-1].state is SafetyState.FAULT
    assert all(d.velocity == 0.0 for d in rig.bus.drives)
    rig.restart()
    assert rig.run_until(rig.operational, 5.0)
    assert rig.core.latched is None and rig.core.restarts == 1
    assert rig.runtime.latch.restarts == 1 and rig.runtime.counters.restarts_refused == 1
    rig.run_for(0.02)
    assert rig.heartbeats()[-1].state is SafetyState.READY


def test_working_counter_errors_are_tolerated_up_to_the_limit(rig: Rig) -> None:
    rig.bus.missing_working_counter = 2
    rig.run_for(3 * rig.config.cycle_s)  # 2 bad frames seen: the first in the 2nd turn
    assert rig.core.latched is None and not rig.alarms()
    rig.run_for(3 * rig.config.cycle_s)  # the 4th latches, its alarm goes out next turn
    assert rig.core.latched is not None
    assert [a.code for a in rig.alarms()] == [AlarmCode.WORKING_COUNTER]
    rig.bus.missing_working_counter = 0
    assert rig.run_until(lambda: rig.core.latched.cleared, rig.clear_s)


def test_link_loss_alarms_and_recovers_the_bus_once_frames_return(rig: Rig) -> None:
    rig.bus.link_up = False
    rig.run_for(0.05)
    assert {a.code for a in rig.alarms()} == {AlarmCode.ETHERCAT_LINK}
    assert rig.last is not None
    assert not rig.last.actuation.recover_bus  # nothing answers: do not block on it
    assert not rig.core.latched.cleared
    rig.bus.link_up = True
    rig.bus.missing_working_counter = 16  # back, but the drives fell to SAFEOP meanwhile
    rig.run_for(0.01)
    assert rig.last.actuation.recover_bus and not rig.core.latched.cleared
    rig.bus.missing_working_counter = 0
    assert rig.run_until(lambda: rig.core.latched.cleared, 0.3)


def test_a_cause_is_gone_after_n_clean_cycles_and_single_lost_frames_do_not_flip_it(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """The rule: a latched cause is gone after `cause_clear_cycles` clean cycles in a row; a
    lost frame restarts that count but brings a gone cause back only when as many frames
    are lost in a row as raise the alarm. (Before: each single lost frame made the cause
    present for a cycle, and "fault cause gone" was logged after each.)"""
    rig.bus.link_up = False
    rig.run_for(0.05)
    rig.bus.link_up = True
    clean = 0
    while not rig.core.latched.cleared and clean < 100:
        rig.cycle()
        clean += 1
    # the turn whose exchange first shows the link back, then the clean cycles
    assert clean == rig.config.cause_clear_cycles + 1
    exchange, cycles = rig.bus.exchange, iter(range(10**9))

    def lossy(outputs: Any) -> Exchange:  # every 7th frame lost, as on a loaded machine
        if next(cycles) % 7 == 0:
            return Exchange(-1, ())
        return exchange(outputs)

    rig.bus.exchange = lossy  # type: ignore[method-assign]
    flips = 0
    caplog.clear()
    with caplog.at_level("WARNING", logger="foosball.agents.motor_driver"):
        for _ in range(2000):  # 10 s
            was = rig.core.latched.cleared
            rig.cycle()
            flips += was != rig.core.latched.cleared
        assert flips == 0
        assert not [r for r in caplog.records if "fault cause" in r.getMessage()]
        rig.bus.exchange = exchange  # type: ignore[method-assign]
        rig.bus.link_up = False  # lost for longer than the alarm's tolerance: back
        rig.run_for(0.05)
    assert not rig.core.latched.cleared
    assert [r.getMessage() for r in caplog.records if "fault cause" in r.getMessage()] == [
        f"fault cause back ({rig.core.latched.text})"]


def test_repeated_log_lines_are_held_back_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    limited = RateLimitedLog(logging.getLogger("test.ratelog"), interval_s=10.0)
    with caplog.at_level("WARNING", logger="test.ratelog"):
        written = [limited.log(t, logging.WARNING, "k", "restart refused: %s", "x")
                   for t in (0.0, 1.0, 2.0, 9.9, 10.0, 10.5)]
        limited.log(0.5, logging.WARNING, "other", "another line")
    assert written == [True, False, False, False, True, False]
    assert [r.getMessage() for r in caplog.records] == [
        "restart refused: x", "restart refused: x (and 3 more like it since the last one)",
        "another line"]


def test_another_agents_alarm_stops_the_motors_until_restart(rig: Rig) -> None:
    burst = Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.LIMIT_BURST, text="burst",
                  latched=True, axis=-1)
    for _ in range(3):  # the pole driver repeats its alarm while its cause lasts
        rig.pole.send(burst)
        rig.run_for(0.1)
        assert all(s is DriveState.QUICK_STOP for s in rig.core.drive_states())
    assert all(d.velocity == 0.0 for d in rig.bus.drives)
    assert not rig.latched_alarms()  # not echoed: its source already told everybody
    assert rig.runtime.state is SafetyState.FAULT
    assert rig.heartbeats()[-1].state is SafetyState.FAULT
    rig.restart()  # its last repeat is recent: the cause still holds
    rig.run_for(0.05)
    [refusal] = rig.refusals()
    assert "pole_driver: burst" in refusal.text
    assert all(s is DriveState.QUICK_STOP for s in rig.core.drive_states())
    rig.run_for(0.4)  # no repeat for longer than the latch holds a peer's alarm: gone
    rig.restart()
    assert rig.run_until(rig.operational, 5.0)
    assert rig.core.latched is None and not rig.runtime.latch.faulted


def test_a_silent_peer_stops_the_motors_until_it_is_back_and_restarted() -> None:
    r = Rig(settings=SafetySettings(deadlines={Agent.POLE_DRIVER: 0.03}))
    r.beating[Agent.POLE_DRIVER] = r.pole
    assert r.run_until(r.operational, 5.0)
    assert not r.alarms()
    del r.beating[Agent.POLE_DRIVER]
    r.run_for(0.05)
    [alarm] = r.latched_alarms()
    assert (alarm.code, alarm.source) == (AlarmCode.HEARTBEAT_MISSING, Agent.MOTOR_DRIVER)
    assert "pole_driver" in alarm.text
    assert all(s is DriveState.QUICK_STOP for s in r.core.drive_states())
    r.restart()
    r.run_for(0.05)
    assert "no heartbeat from pole_driver" in r.refusals()[0].text
    r.beating[Agent.POLE_DRIVER] = r.pole
    r.run_for(0.05)
    r.restart()
    assert r.run_until(r.operational, 5.0)
    assert len(r.refusals()) == 1


def test_pause_holds_the_rods_and_start_resumes(rig: Rig) -> None:
    rig.panel.send(GameControl(command=GameCommand.PAUSE))
    rig.move(1, 4.0)
    rig.run_for(0.2)
    assert abs(rig.core.position(1)) < 0.01
    assert rig.heartbeats()[-1].state is SafetyState.PAUSED
    rig.panel.send(GameControl(command=GameCommand.START))
    rig.move(1, 4.0)
    assert rig.run_until(lambda: abs(rig.core.position(1) - 4.0) < 0.01, 1.0)


def test_status_messages_are_published_and_fit_the_catalogue(rig: Rig) -> None:
    rig.heard.clear()
    rig.run_for(0.2)  # heard through the codec: each one encoded and decoded
    motor = [m for m in rig.heard if isinstance(m, MotorStatus)]
    bus = [m for m in rig.heard if isinstance(m, EtherCatStatus)]
    assert len(motor) >= 3 and len(bus) >= 3
    assert bus[-1].working_counter == bus[-1].expected_working_counter == 24
    assert bus[-1].link_up and bus[-1].slaves == 8
    assert [a.axis for a in motor[-1].axes] == list(range(8))
    assert not rig.runtime.counters.drops


@pytest.mark.parametrize(("alignment", "aligns"), [
    (L.Alignment.MANUFACTURER_BITS, False),  # what a standard drive never says: a timeout
    (L.Alignment.NONE, True),  # statusword bit 12, once the drive follows the setpoints
    (L.Alignment.SDO, True),  # the alignment object, read by SDO while aligning
])
def test_a_plain_cia402_drive_aligns_with_the_profile_option(alignment: L.Alignment,
                                                             aligns: bool) -> None:
    config = MotorDriverConfig(alignment=alignment, alignment_timeout_s=1.0)
    r = Rig(config, bus=None)
    r.bus = FakeBus(BusConfig(backend="fake"), clock=r.monotonic,
                    emulator=EmulatorConfig(plain_cia402=True))
    r.bus.start()
    r.hardware.bus = r.bus
    assert r.run_until(lambda: r.operational() or r.core.latched is not None, 5.0)
    assert r.operational() is aligns, r.core.drive_states()
    if not aligns:
        assert "rotor alignment not done" in r.core.latched.text


def test_alignment_that_never_ends_is_a_fault() -> None:
    r = Rig(MotorDriverConfig(alignment_timeout_s=0.5))
    for drive in r.bus.drives:
        drive.params = type(drive.params)(**{**drive.params.__dict__, "alignment_time_s": 10.0})
    assert r.run_until(lambda: r.core.latched is not None, 2.0)
    r.cycle()  # the runtime announces the cause in its next I/O turn
    assert r.alarms()[0].code == AlarmCode.DRIVE_FAULT
    assert "alignment" in r.alarms()[0].text


def test_non_finite_commands_never_reach_a_drive(rig: Rig) -> None:
    core = rig.core
    before = (core.axes[0].goal, core.axes[1].goal)
    exchange = Exchange(24, tuple(d.tx() for d in rig.bus.drives))
    core.cycle(MdaInputs(now_s=rig.t, exchange=exchange, messages=(SimpleNamespace(),)))
    core._set_goal(core.axes[0], math.nan, 10.0)
    assert core.axes[0].goal == before[0]
    # through the runtime's step too, and the wire refuses to carry them at all
    bad = MotorCommand(axes=(AxisTarget(axis=0, position=math.nan, velocity=10.0),
                             AxisTarget(axis=1, position=1.0, velocity=math.inf)))
    core.step(Inputs(rig.t, (bad, SimpleNamespace()), BusSample(exchange)))
    assert (core.axes[0].goal, core.axes[1].goal) == before
    with pytest.raises(SchemaError):
        rig.pole.send(bad)


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
    strategy = rig.endpoint(Agent.STRATEGY)
    tracker = rig.endpoint(Agent.BALL_TRACKER)
    strategy.send(MotorCommand(axes=(AxisTarget(axis=1, position=2.0, velocity=100.0),)))
    tracker.send(GameControl(command=GameCommand.PAUSE))
    # an alarm in another agent's name: Alarm.source must be the authenticated sender
    strategy.send(Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.LIMIT_BURST, text="forged",
                        latched=True, axis=-1))
    rig.run_for(0.2)
    assert rig.runtime.counters.drops == Counter({"sender": 3})
    assert abs(rig.core.position(1)) < 0.01 and rig.core.accepting
    assert rig.core.latched is None and not rig.runtime.latch.faulted
    # a fault, then a RESTART from an agent that may not send one: still latched
    rig.bus.drives[0].inject(FaultKind.EMERGENCY_BUTTON)
    rig.run_for(0.05)
    rig.bus.drives[0].clear()
    assert rig.run_until(lambda: rig.core.latched.cleared, rig.clear_s)
    tracker.send(GameControl(command=GameCommand.RESTART))
    rig.run_for(0.1)
    assert rig.runtime.counters.drops["sender"] == 4
    assert rig.core.latched is not None and rig.runtime.latch.faulted
    rig.restart()  # the game panel's
    assert rig.run_until(rig.operational, 5.0)


def test_safety_state_follows_the_axes() -> None:
    r = Rig()
    seen = []
    r.run_until(lambda: seen.append(r.core.safety_state()) or r.operational(), 5.0)
    order = list(dict.fromkeys([*seen, r.core.safety_state()]))
    assert order == [SafetyState.ALIGNING, SafetyState.HOMING, SafetyState.READY]
    r.run_for(0.02)
    beats = list(dict.fromkeys(b.state for b in r.heartbeats()))
    assert beats == [SafetyState.BOOT, SafetyState.ALIGNING, SafetyState.HOMING,
                     SafetyState.READY]  # BOOT: the runtime's first beat, before any step
    r.bus.drives[0].inject(FaultKind.EMERGENCY_BUTTON)
    r.run_for(0.05)
    assert r.core.safety_state() is SafetyState.FAULT
    assert r.runtime.state is SafetyState.FAULT
    assert r.heartbeats()[-1].state is SafetyState.FAULT


def test_heartbeats_at_100_hz_carry_the_safety_state_and_board_health(rig: Rig) -> None:
    rig.heard.clear()
    rig.run_for(0.5)
    beats = rig.heartbeats()
    assert 45 <= len(beats) <= 55
    assert beats[-1].agent == Agent.MOTOR_DRIVER and beats[-1].state == SafetyState.READY
    assert (beats[-1].cpu_load, beats[-1].memory, beats[-1].temperature) == (12.0, 34.0, 45.0)
    assert beats[-1].period_s == 0.01


# --- the runtime's per-sender budget (what the MDA's relay once did itself) ---------------
def test_sender_budget_is_a_token_bucket_per_sender() -> None:
    budget = SenderBudget(rate_hz=100.0, burst=50)
    assert sum(budget.spend(Agent.POLE_DRIVER, 100.0) for _ in range(200)) == 50
    assert budget.refused == Counter({"pole_driver": 150})
    # another sender has its own bucket, full however much the first one spent
    assert sum(budget.spend(Agent.GAME_PANEL, 100.0) for _ in range(10)) == 10
    assert sum(budget.spend(Agent.POLE_DRIVER, 100.25) for _ in range(30)) == 25  # refilled
    assert budget.refused == Counter({"pole_driver": 155})
    assert sum(budget.spend(Agent.POLE_DRIVER, 1000.0) for _ in range(60)) == 50  # burst cap


def test_frames_failing_the_mac_never_spend_a_senders_budget(rig: Rig) -> None:
    rig.runtime.budget = SenderBudget(rate_hz=100.0, burst=50)
    # The budgets alone: so many frames failing the MAC at once are also a LAN_FLOOD cause,
    # which tests/agents/test_runtime.py covers.
    rig.runtime.flood = FloodWatch(limit_hz=math.inf, hold_s=1.0)
    forger = rig.endpoint(Agent.POLE_DRIVER, key=bytes(32))  # the pole's name, not its key
    command = MotorCommand(axes=(AxisTarget(axis=1, position=-2.0, velocity=100.0),))
    for _ in range(1000):
        forger.send(command)
    rig.move(1, 2.0)  # the real pole driver, behind the flood
    assert rig.run_until(lambda: abs(rig.core.position(1) - 2.0) < 0.01, 1.0)
    counters = rig.runtime.counters
    assert counters.drops == Counter({"mac": 1000})
    assert counters.over_budget == 0 and not rig.runtime.budget.refused


def test_one_senders_flood_cannot_exhaust_anothers_budget(rig: Rig) -> None:
    rig.runtime.budget = budget = SenderBudget(rate_hz=100.0, burst=50)
    strategy = rig.endpoint(Agent.STRATEGY)
    # Signed frames the motor driver reads (notices, not causes): a peer's heartbeat it does
    # not watch would not reach its codec at all.
    notice = Alarm(source=Agent.STRATEGY, code=AlarmCode.RESTART_REFUSED, text="flood",
                   latched=False, axis=-1)
    for _ in range(250):
        strategy.send(notice)
    rig.move(1, 2.0)
    for _ in range(250):
        strategy.send(notice)
    assert rig.run_until(lambda: abs(rig.core.position(1) - 2.0) < 0.01, 1.0)
    rig.run_for(0.5)  # the strategy's bucket fills again
    for _ in range(250):
        strategy.send(notice)
    rig.panel.send(GameControl(command=GameCommand.PAUSE))
    for _ in range(250):
        strategy.send(notice)
    rig.cycle()  # the flood and the pause in one I/O turn
    assert not rig.core.accepting
    assert budget.refused == Counter({"strategy": 900})
    assert rig.runtime.counters.over_budget == 900


def test_a_flood_is_read_in_bounded_turns_into_a_bounded_inbox() -> None:
    r = Rig(settings=SafetySettings(deadlines={}, sender_burst=10_000))
    for n in range(600):
        r.move(0, float(n))
    r.runtime.io_turn(0.0)
    assert r.runtime.counters.received == 512  # one turn reads at most this many frames
    assert r.runtime.inbox.maxlen is not None and len(r.runtime.inbox) <= r.runtime.inbox.maxlen
    r.runtime.io_turn(0.0)
    assert r.runtime.counters.received == 600  # the rest waited for the next turn
    r.runtime.work_turn()
    assert not r.runtime.inbox  # one step takes them all


# --- the hardware's own safe reactions ------------------------------------------------------
def test_a_failed_step_quick_stops_every_drive_and_is_a_cause(rig: Rig) -> None:
    def broken(inputs: Inputs) -> Outputs:
        raise RuntimeError("bug")

    rig.move(0, 30.0)
    rig.run_for(0.05)
    rig.core.step = broken  # type: ignore[method-assign]
    rig.cycle()
    assert rig.runtime.counters.step_errors == 1
    assert all(rx.controlword == L.Control.QUICK_STOP for rx in rig.hardware.outputs)
    del rig.core.step  # the next steps work again
    rig.run_for(0.2)
    alarms = rig.latched_alarms()  # the runtime's cause, and no drive fault made of it
    assert {(a.code, a.source) for a in alarms} == {(AlarmCode.INTERNAL_ERROR,
                                                      Agent.MOTOR_DRIVER)}
    assert "step failed: RuntimeError: bug" in alarms[0].text
    assert all(d.velocity == 0.0 for d in rig.bus.drives)
    assert all(s is DriveState.QUICK_STOP for s in rig.core.drive_states())
    rig.restart()  # within a second of the failure: still a cause
    rig.run_for(0.05)
    assert "step failed" in rig.refusals()[0].text
    rig.run_for(1.0)
    rig.restart()
    assert rig.run_until(rig.operational, 5.0)


def test_the_quick_stop_after_a_failed_step_holds_before_the_io_turn(rig: Rig) -> None:
    def broken(inputs: Inputs) -> Outputs:
        raise RuntimeError("bug")

    rig.move(0, 30.0)
    rig.run_for(0.05)
    rig.core.step = broken  # type: ignore[method-assign]
    rig.runtime.work_turn()
    del rig.core.step
    for _ in range(3):  # on the board the I/O thread turns every few ms, not every cycle
        rig.runtime.work_turn()
        assert all(rx.controlword == L.Control.QUICK_STOP for rx in rig.hardware.outputs)


class _RecordingTransport:
    """Records how long each I/O turn is allowed to wait for its first frame."""

    def __init__(self, rig: Rig, turns: int) -> None:
        self.rig, self.turns = rig, turns
        self.inner = rig.runtime.endpoint.transport
        self.waits: list[float | None] = []

    def recv(self, timeout: float | None) -> bytes | None:
        self.waits.append(timeout)
        if len(self.waits) >= self.turns:
            self.rig.runtime.stop()
        self.rig.t += 0.001  # the hand-moved clock: each turn costs a millisecond
        return None

    def send(self, frame: bytes) -> None:
        self.inner.send(frame)


def test_a_stalled_step_loop_does_not_make_the_io_thread_spin(rig: Rig) -> None:
    rig.t += 1.0  # the cycle hangs in its exchange; only the I/O thread runs
    recording = _RecordingTransport(rig, turns=5)
    rig.runtime.endpoint.transport = recording
    rig.runtime._running = True
    # The I/O thread's loop, on a thread of its own as in the agent: it blocks SIGTERM and
    # SIGINT for its thread, which on the test's thread every later subprocess would inherit.
    io_thread = threading.Thread(target=rig.runtime._io_loop, args=(False,))
    io_thread.start()
    io_thread.join(10.0)
    assert not io_thread.is_alive()
    assert rig.runtime.stalled(rig.t)
    assert all(wait is not None and wait >= 0.001 for wait in recording.waits), recording.waits


def test_the_cycle_reports_the_p99_of_its_latest_cycles(rig: Rig) -> None:
    """A percentile over the whole ring costs milliseconds inside the cycle; the status
    carries the latest cycles' p99 instead, refreshed every 200 cycles."""
    stats = rig.hardware.stats
    for _ in range(stats.count, 4000):
        stats.add(0.5)  # long ago: late by half a second
    for _ in range(P99_CYCLES):
        stats.add(2e-5)
    assert rig.hardware.recent_p99() == pytest.approx(2e-5)
    while stats.count % 200 != 0:
        stats.add(2e-5)
    rig.run_for(rig.config.status_period_s + 2 * rig.config.cycle_s)
    status = [m for m in rig.heard if isinstance(m, EtherCatStatus)][-1]
    assert status.wakeup_jitter_p99_s < 1e-3
    assert status.cycle_period_s == rig.config.cycle_s


def test_the_status_says_how_long_from_a_frame_to_the_setpoint_that_answers_it(rig: Rig):
    """A command answering a frame captured at C: its setpoints leave in the frame of the
    cycle that took it, right after the step; the status carries capture -> that frame."""
    captured = rig.wall_ns() - 3_000_000  # the camera took the frame 3 ms ago
    rig.pole.send(MotorCommand(axes=(AxisTarget(axis=0, position=1.0, velocity=50.0),),
                               ball_capture_time=captured))
    sent_at: list[int] = []
    exchange = rig.bus.exchange

    def stamped(outputs):  # the wall clock as each frame leaves
        sent_at.append(rig.wall_ns())
        return exchange(outputs)

    rig.bus.exchange = stamped  # type: ignore[method-assign]
    rig.cycle()  # the step takes the command, its frame carries the setpoints
    assert rig.hardware.capture_to_setpoint == [pytest.approx((sent_at[0] - captured) * 1e-9)]
    while rig.hardware.stats.count % 200 != 1:
        rig.cycle()
    rig.run_for(rig.config.status_period_s + 2 * rig.config.cycle_s)
    status = [m for m in rig.heard if isinstance(m, EtherCatStatus)][-1]
    assert status.capture_to_setpoint_p50_s == pytest.approx((sent_at[0] - captured) * 1e-9)
    assert status.capture_to_setpoint_p99_s == pytest.approx(status.capture_to_setpoint_p50_s)


def test_a_motor_driver_started_into_a_halted_game_enables_nothing_until_a_restart() -> None:
    # Seen on the rig: the motor driver killed and started again while the game was halted
    # latched the system's FAULT in its first cycle, then enabled every drive anyway.
    r = Rig(settings=SafetySettings(deadlines={Agent.POLE_DRIVER: 0.03}, startup_grace_s=60.0))
    for drive in r.bus.drives:
        drive.inject(FaultKind.EMERGENCY_BUTTON)  # the drives' watchdog left them faulted
        drive.clear()
    halted = Heartbeat(agent=Agent.POLE_DRIVER, state=SafetyState.FAULT, period_s=0.01,
                       cpu_load=1.0, memory=2.0, temperature=30.0)
    r.pole.send(halted)  # a peer it watches says the game is halted
    r.beating[Agent.POLE_DRIVER] = r.pole  # and beats on (its state is not what is tested)
    r.run_for(0.5)
    assert r.core.latched is not None
    assert not any(d.state is L.Cia402State.OPERATION_ENABLED for d in r.bus.drives)
    assert all(s in (DriveState.QUICK_STOP, DriveState.FAULT) for s in r.core.drive_states())
    r.restart()
    assert r.run_until(r.operational, 5.0)  # the game panel's restart starts them


def test_closing_the_hardware_quick_stops_every_drive_then_closes_the_bus(rig: Rig) -> None:
    rig.move(0, 30.0)
    rig.run_for(0.05)
    frames = rig.bus.frames
    rig.hardware.close()
    assert rig.bus.frames == frames + 3 and not rig.bus.in_op
    assert all(d.rx.controlword == L.Control.QUICK_STOP for d in rig.bus.drives)


def test_run_steps_until_told_to_stop_then_closes_the_hardware() -> None:
    r = Rig()
    r.runtime.run(should_stop=lambda: r.core.cycles >= 50)
    assert r.core.cycles == 50 and not r.bus.in_op
    assert all(d.rx.controlword == L.Control.QUICK_STOP for d in r.bus.drives)
    assert r.runtime.counters.heartbeats_sent >= 1


class _ClosingFakeBus(FakeBus):
    closed = 0

    def close(self) -> None:
        self.closed += 1
        super().close()


def test_open_motor_driver_starts_the_bus_and_closes_it_when_the_start_fails() -> None:
    endpoint = Endpoint(MemoryTransport(MemoryHub()), WireCodec(KEY, Agent.MOTOR_DRIVER))
    short = _ClosingFakeBus(BusConfig(backend="fake"), emulator=EmulatorConfig(drives=7))
    with pytest.raises(BusConfigurationError, match=r"missing slave\(s\) at position 8"):
        open_motor_driver(short, endpoint, MotorDriverConfig(), SafetySettings(),
                          realtime=False)
    assert short.closed == 1
    bus = _ClosingFakeBus(BusConfig(backend="fake"))
    runtime = open_motor_driver(bus, endpoint, MotorDriverConfig(cycle_s=0.001),
                                SafetySettings(), realtime=False)
    assert bus.in_op and bus.closed == 0
    assert isinstance(runtime.hardware, EtherCatHardware) and runtime.hardware.bus is bus
    assert runtime.core.expected_wkc == 24 and runtime.agent is Agent.MOTOR_DRIVER
    # a cycle silent for ten periods stops the heartbeats; the I/O thread below the cycle
    assert runtime.settings.stall_s == pytest.approx(0.05)  # ten cycles, at least 50 ms
    assert runtime.settings.io_priority == IO_PRIORITY == 50


class _FlakyStartBus(_ClosingFakeBus):
    """Its first `failures` starts fail as a lost mailbox answer inside SOEM's mapping reads
    fails one (the slaves refuse SAFE-OP), leaving them in INIT."""

    def __init__(self, config: BusConfig, failures: int) -> None:
        super().__init__(config)
        self.failures = failures
        self.starts = 0

    def start(self, objects: Sequence[L.StartupObject] = (),
              sync0_s: float = 0.0) -> list[SlaveInfo]:
        self.starts += 1
        if self.starts <= self.failures:
            raise BusConfigurationError("slaves did not reach SAFEOP: 2: state 0x12")
        return super().start(objects, sync0_s)


def test_a_failed_bus_start_is_tried_again_up_to_the_configured_attempts() -> None:
    endpoint = Endpoint(MemoryTransport(MemoryHub()), WireCodec(KEY, Agent.MOTOR_DRIVER))
    once = _FlakyStartBus(BusConfig(backend="fake", start_pause_s=0.0), failures=1)
    open_motor_driver(once, endpoint, MotorDriverConfig(), SafetySettings(), realtime=False)
    assert once.starts == 2 and once.in_op and once.closed == 0
    always = _FlakyStartBus(BusConfig(backend="fake", start_attempts=3, start_pause_s=0.0),
                            failures=99)
    with pytest.raises(BusConfigurationError, match="did not reach SAFEOP"):
        open_motor_driver(always, endpoint, MotorDriverConfig(), SafetySettings(),
                          realtime=False)
    assert always.starts == 3 and always.closed == 1 and not always.in_op


def test_further_bus_starts_wait_longer_each_time() -> None:
    # tried back to back, all three starts fell inside one stall of the host
    pauses: list[float] = []
    bus = _FlakyStartBus(BusConfig(backend="fake", start_attempts=4, start_pause_s=0.5),
                         failures=3)
    start_bus(bus, sleep=pauses.append)
    assert bus.starts == 4 and bus.in_op
    assert pauses == [0.5, 1.0, 2.0]


def test_bus_error_tolerance_is_a_time_not_a_cycle_count() -> None:
    assert MotorDriverConfig(cycle_s=0.005).bus_error_cycles == 3
    assert MotorDriverConfig(cycle_s=0.001).bus_error_cycles == 15
    assert MotorDriverConfig(cycle_s=0.010).bus_error_cycles == 3  # never fewer than 3


def test_cycles_stretched_by_lost_frames_do_not_stretch_the_tolerance() -> None:
    # A frame that never returns may hold the exchange past the cycle (the receive's
    # timeout and more on a loaded machine): the tolerance is a time, not only a count.
    rig = Rig(MotorDriverConfig(bus_error_tolerance_s=0.04))
    assert rig.run_until(rig.operational, 10.0)
    exchange = rig.bus.exchange

    def overrunning(outputs: Any) -> Any:
        rig.t += 0.008  # longer than the 5 ms cycle
        return exchange(outputs)
    rig.bus.exchange = overrunning  # type: ignore[method-assign]
    rig.bus.link_up = False
    cycles = 0
    while rig.core.latched is None and cycles < 20:
        rig.cycle()
        cycles += 1
    assert rig.core.latched is not None
    assert cycles < rig.config.bus_error_cycles  # the 8 cycles of 5 ms did not wait
    lasted = re.search(r"no frame returned for \d+ cycles \((\d+) ms\)", rig.core.latched.text)
    assert lasted is not None and 40 <= int(lasted.group(1)) < 40 + 13  # one long cycle past


def test_the_frame_wait_stays_well_under_the_cycle() -> None:
    assert receive_timeout_for(0.005) == 1500
    assert receive_timeout_for(0.001) == 400

