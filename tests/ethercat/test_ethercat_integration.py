"""Real pysoem against the emulator with 8 drives, in a throwaway network namespace.

One namespace and one emulator process carry the main story in order (OP, enable,
alignment, homing, moves, each fault, link loss, then the SyncManager watchdog when the
master hangs); start-up errors use their own emulator. The MDA runs as the board runs it:
`open_motor_driver(...)` and the shared runtime's `run()` (its work half cycling the bus on
a SCHED_FIFO thread, its I/O half on its own), and once as the `foosball agent run
motor_driver` service process. Timing is not asserted here; the figures come from
benchmarks/ethercat_cycle.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from foosball.agents.motor_driver import (
    EtherCatHardware,
    MotorDriverConfig,
    MotorDriverCore,
    open_motor_driver,
)
from foosball.agents.pole_driver import PoleDriverCore
from foosball.ethercat import layout as L
from foosball.ethercat.bus import (
    BusConfig,
    BusConfigurationError,
    Exchange,
    open_bus,
    start_bus,
)
from foosball.geometry import default_table
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
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
    RodCommand,
    RodId,
    RodTarget,
    SafetyState,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports import open_transport
from tests.ethercat.netns import EmulatorProcess, Namespace, inside, needs_netns

pytestmark = [needs_netns, pytest.mark.netns]
TRANSLATION_AXES = (0, 2, 4, 6)
NO_PEERS = SafetySettings(deadlines={})  # the rig runs no other agent to watch


@contextlib.contextmanager
def realtime_thread(priority: int = 80) -> Iterator[None]:
    """The cycling thread under SCHED_FIFO, as on the board, so a loaded CI machine does not
    turn into working-counter alarms."""
    with contextlib.suppress(OSError):  # refused: the test runs with the normal policy
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    yield


class Gate:
    """Between the cycle and the bus: closed, the cycle hangs in its exchange as a stuck
    master would (no frame leaves it), while the runtime's I/O thread runs on."""

    def __init__(self, bus: Any) -> None:
        self._open = threading.Event()
        self._open.set()
        self._exchange = bus.exchange
        bus.exchange = self.exchange

    def exchange(self, outputs: Sequence[L.RxPdo]) -> Exchange:
        self._open.wait()
        return self._exchange(outputs)

    def close(self) -> None:
        self._open.clear()

    def open(self) -> None:
        self._open.set()


@dataclass
class Rig:
    """The MDA's runtime running continuously (as on the board: the drives' watchdog trips
    if the master pauses), the emulator, and a panel and a pole driver on the agent LAN."""

    ns: Namespace
    emulator: EmulatorProcess
    bus: Any
    runtime: AgentRuntime
    panel: Endpoint  # stands for the game panel on the agent LAN
    pole: Endpoint  # stands for the pole driver
    gate: Gate
    key: bytes = b""
    heard: list[Any] = field(default_factory=list)
    heard_at: list[tuple[float, Any]] = field(default_factory=list)
    thread: threading.Thread | None = None

    @property
    def core(self) -> MotorDriverCore:
        return self.runtime.core  # type: ignore[return-value]

    @property
    def hardware(self) -> EtherCatHardware:
        return self.runtime.hardware  # type: ignore[return-value]

    def start(self) -> None:
        def work() -> None:
            with realtime_thread():
                self.runtime.run(realtime=True)  # the I/O thread SCHED_FIFO below the cycle

        self.thread = threading.Thread(target=work, name="mda-work", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """As the service stops: quick stop, then the bus closed."""
        self.gate.open()
        self.runtime.stop()
        if self.thread is not None:
            self.thread.join(timeout=5)
            self.thread = None

    def run_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Wait until `done()` or the timeout; collect what the panel hears meanwhile."""
        deadline = time.monotonic() + timeout_s
        while True:
            for received in self.panel.receive(0.005):
                if received.sender is Agent.MOTOR_DRIVER:
                    self.heard.append(received.message)
                    self.heard_at.append((time.monotonic(), received.message))
            if done():
                return True
            if time.monotonic() > deadline:
                return False

    def endpoint(self, iface: str, agent: Agent) -> Endpoint:
        with inside(self.ns):
            return Endpoint(open_transport("raw", iface=iface), WireCodec(self.key, agent))

    def states(self) -> list[DriveState]:
        return self.core.drive_states()

    def operational(self) -> bool:
        return all(s in (DriveState.READY, DriveState.RUNNING) for s in self.states())

    def alarms(self) -> list[Alarm]:
        return [m for m in self.heard if isinstance(m, Alarm)]

    def refusals(self) -> list[Alarm]:
        return [a for a in self.alarms() if a.code == AlarmCode.RESTART_REFUSED]


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    ns = Namespace()
    emulator = None
    bus = None
    rig = None
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # the cycle thread gets the GIL back quickly
    try:
        emulator = EmulatorProcess(ns, 8)
        key = secrets.token_bytes(32)
        with inside(ns):
            bus = open_bus(BusConfig(backend="pysoem", iface="ecat0", drives=8))
            mda_wire = Endpoint(open_transport("raw", iface="lan0"),
                                WireCodec(key, Agent.MOTOR_DRIVER))
            panel = Endpoint(open_transport("raw", iface="lan1"),
                             WireCodec(key, Agent.GAME_PANEL))
            pole = Endpoint(open_transport("raw", iface="lan1"),
                            WireCodec(key, Agent.POLE_DRIVER))
        gate = Gate(bus)
        # the test process stays an ordinary process: no mlockall, no GC switched off
        runtime = open_motor_driver(bus, mda_wire, MotorDriverConfig(cycle_s=0.005), NO_PEERS,
                                    realtime=False)
        rig = Rig(ns, emulator, bus, runtime, panel, pole, gate, key)
        rig.start()  # at once: the drives' watchdog runs from OP
        yield rig
    finally:
        if rig is not None:
            rig.stop()
        elif bus is not None:
            bus.close()
        if emulator is not None:
            emulator.stop()
        ns.delete()
        sys.setswitchinterval(switch_interval)


def test_bus_reaches_op_with_expected_identity_count_and_working_counter(rig: Rig) -> None:
    assert len(rig.bus.slaves) == 8
    assert all(s.identity == L.EXPECTED_IDENTITY for s in rig.bus.slaves)
    assert [s.name for s in rig.bus.slaves] == [L.DEVICE_NAME] * 8
    assert rig.bus.expected_working_counter == 24
    # the AL states start() returns are read after OP, not pysoem's cache from PRE-OP
    assert [s.al_state for s in rig.bus.slaves] == [int(L.AlState.OP)] * 8
    slaves = rig.emulator.slaves()
    assert all(s["al_state"] == int(L.AlState.OP) for s in slaves)
    assert all(s["watchdog_s"] == pytest.approx(0.05) for s in slaves)  # written by the master
    assert rig.run_until(lambda: any(isinstance(m, EtherCatStatus) for m in rig.heard), 1.0)
    status = next(m for m in rig.heard if isinstance(m, EtherCatStatus))
    assert status.link_up and (status.slaves, status.expected_slaves) == (8, 8)
    assert status.working_counter == status.expected_working_counter == 24
    assert status.al_state == int(L.AlState.OP)


def test_enable_alignment_and_homing_set_zero_at_the_switch(rig: Rig) -> None:
    seen: set[DriveState] = set()

    def all_ready() -> bool:
        seen.update(rig.states())
        return all(s is DriveState.READY for s in rig.states())

    assert rig.run_until(all_ready, timeout_s=10.0), rig.states()
    assert {DriveState.ALIGNING, DriveState.HOMING} <= seen
    slaves = rig.emulator.slaves()
    assert all(s["cia402_state"] == "operation enabled" and s["aligned"] for s in slaves)
    for axis in TRANSLATION_AXES:
        zero = rig.core.axes[axis].zero
        # the zero is the switch's edge, found while leaving it at 1 rad/s in 5 ms cycles
        # (0.005 rad nominal; the margin covers late cycles on a loaded machine)
        assert abs(zero - slaves[axis]["switch_position"]) < 0.03
        assert not slaves[axis]["switch_active"]
        assert abs(rig.core.position(axis)) < 0.05


def test_position_moves_reach_target_within_tolerance(rig: Rig) -> None:
    targets = {0: 20.0, 1: 3.0, 2: 30.0, 3: -2.0, 4: 10.0, 5: 6.0, 6: 25.0, 7: -1.5}
    command = MotorCommand(axes=tuple(AxisTarget(axis=a, position=p, velocity=150.0)
                                      for a, p in targets.items()))
    dropped = rig.runtime.counters.drops["sender"]
    rig.panel.send(command)  # the game panel may not move motors: the codec drops it
    assert rig.run_until(lambda: rig.runtime.counters.drops["sender"] == dropped + 1, 1.0)
    assert all(abs(rig.core.position(a)) < 0.05 for a in targets)
    rig.pole.send(command)

    def arrived() -> bool:
        return all(abs(rig.core.position(a) - p) < 0.01 for a, p in targets.items())

    assert rig.run_until(arrived, timeout_s=5.0), [rig.core.position(a) for a in targets]
    rig.run_until(lambda: False, timeout_s=0.1)  # settle
    slaves = rig.emulator.slaves()
    for axis, target in targets.items():
        zero = rig.core.axes[axis].zero
        assert abs(slaves[axis]["position"] - zero - target) < 0.01
        assert abs(slaves[axis]["velocity"]) < 0.5


def test_strategy_targets_in_metres_reach_the_rods_through_the_pole_driver(rig: Rig) -> None:
    """Strategy -> PDA (table units, limits) -> MDA (motor radians) -> drives, on the wire."""
    table = default_table()
    pda_wire = rig.endpoint("lan1", Agent.POLE_DRIVER)
    strategy = rig.endpoint("lan0", Agent.STRATEGY)  # across the link from the pole driver
    # the pole driver in the same runtime as on its board
    pda = AgentRuntime(PoleDriverCore(table), pda_wire, NO_PEERS)
    pda_thread = threading.Thread(target=pda.run, name="pda", daemon=True)
    pda_thread.start()
    try:
        goalkeeper, attack = table.robot_rods[0], table.robot_rods[3]
        command = RodCommand(ball_capture_time=1, rods=(
            RodTarget(rod=RodId.GOALKEEPER, translation=0.05, rotation=0.3,
                      translation_speed=1.0, rotation_speed=50.0),
            RodTarget(rod=RodId.ATTACK, translation=0.5, rotation=-0.2,  # beyond its travel
                      translation_speed=1.0, rotation_speed=50.0)))

        def motor(rod: object, metres: float) -> float:
            return (metres - rod.zero_offset) / rod.metres_per_motor_radian()  # type: ignore[attr-defined]

        expected = {0: motor(goalkeeper, 0.05), 1: 0.3,
                    6: motor(attack, attack.travel_max), 7: -0.2}  # attack clamped to travel

        def arrived() -> bool:
            return all(abs(rig.core.position(a) - p) < 0.01 for a, p in expected.items())

        deadline = time.monotonic() + 5.0
        while not arrived() and time.monotonic() < deadline:
            strategy.send(command)  # the strategy sends every frame
            rig.run_until(lambda: False, 0.05)
        assert arrived(), [rig.core.position(a) for a in expected]
        slaves = rig.emulator.slaves()
        translation = goalkeeper.zero_offset + (slaves[0]["position"] - slaves[0][
            "switch_position"]) * goalkeeper.metres_per_motor_radian()
        assert translation == pytest.approx(0.05, abs=1e-4)  # metres from the table centre
        assert pda.core.forwarded > 0 and not pda.latch.faulted
    finally:
        pda.stop()
        pda_thread.join(timeout=2)
        pda_wire.close()
        strategy.close()


def _restart_and_home(rig: Rig) -> None:
    rig.panel.send(GameControl(command=GameCommand.RESTART))
    assert rig.run_until(lambda: all(s is DriveState.READY for s in rig.states()), 10.0), \
        rig.states()


@pytest.mark.parametrize(("kind", "code"), [
    ("overcurrent", AlarmCode.OVERCURRENT),
    ("motor_locked", AlarmCode.MOTOR_LOCKED),
    ("emergency_button", AlarmCode.EMERGENCY_BUTTON),
])
def test_fault_quick_stops_every_axis_alarms_and_restarts_only_when_cleared(
        rig: Rig, kind: str, code: AlarmCode) -> None:
    assert rig.run_until(rig.operational, 10.0), rig.states()
    rig.heard.clear()
    faulty = 3 if kind != "emergency_button" else 0
    injected_at = rig.core.cycles
    rig.emulator.command(f"fault {faulty} {kind}")
    assert rig.run_until(lambda: rig.core.quick_stop_done_cycle is not None, 2.0)
    cycles_to_quick_stop = rig.core.quick_stop_done_cycle - injected_at
    print(f"{kind}: {cycles_to_quick_stop} cycles from injection to quick stop on all axes")
    assert rig.run_until(lambda: any(a.code == code for a in rig.alarms()), 1.0)
    alarm = next(a for a in rig.alarms() if a.code == code)
    assert alarm.source == Agent.MOTOR_DRIVER and alarm.latched and alarm.axis == faulty
    assert rig.run_until(lambda: False, 0.3) is False  # let the axes come to rest
    slaves = rig.emulator.slaves()
    assert all(s["cia402_state"] in ("quick stop active", "fault") for s in slaves), slaves
    assert all(abs(s["velocity"]) < 1e-3 for s in slaves)
    assert slaves[faulty]["cia402_state"] == "fault"

    assert rig.runtime.state is SafetyState.FAULT

    # a restart while the cause is present is refused, and the panel is told why
    refused = rig.runtime.counters.restarts_refused
    rig.panel.send(GameControl(command=GameCommand.RESTART))
    assert rig.run_until(lambda: bool(rig.refusals()), 1.0)
    assert rig.runtime.counters.restarts_refused == refused + 1
    [refusal] = rig.refusals()
    assert refusal.source == Agent.MOTOR_DRIVER and not refusal.latched
    assert f"drive {faulty} fault" in refusal.text
    assert rig.core.latched is not None and not rig.core.latched.cleared
    assert all(s in (DriveState.QUICK_STOP, DriveState.FAULT) for s in rig.states())

    # the cause goes: the MDA sees it, but waits for the restart
    rig.emulator.command(f"clear {faulty}")
    assert rig.run_until(lambda: rig.core.latched.cleared, 1.0)
    rig.run_until(lambda: False, 0.2)
    assert all(s in (DriveState.QUICK_STOP, DriveState.FAULT) for s in rig.states())
    assert rig.runtime.state is SafetyState.FAULT
    _restart_and_home(rig)
    assert rig.core.latched is None and not rig.runtime.latch.faulted


def test_link_loss_alarms_and_recovers_after_restart(rig: Rig) -> None:
    assert rig.run_until(rig.operational, 10.0), rig.states()
    rig.heard.clear()
    cut = time.monotonic()
    rig.emulator.command("mute on")
    assert rig.run_until(lambda: any(a.code == AlarmCode.ETHERCAT_LINK
                                     for a in rig.alarms()), 2.0)
    # 15 ms of missing frames, then the I/O thread sends it: a second is a generous bound
    # that still catches a starved I/O thread (a lost frame once held the interpreter lock
    # per cycle)
    assert time.monotonic() - cut < 1.0
    rig.run_until(lambda: False, 0.2)  # longer than the drives' 50 ms watchdog
    rig.emulator.command("mute off")
    # the drives dropped to SAFEOP+error on their watchdog; the master recovers them to OP
    assert rig.run_until(lambda: rig.core.latched is not None and rig.core.latched.cleared, 5.0)
    assert all(s["al_state"] == int(L.AlState.OP) for s in rig.emulator.slaves())
    print(f"longest bus recovery step inside the cycle: "
          f"{rig.hardware.longest_recovery_s * 1e3:.1f} ms")
    _restart_and_home(rig)


def test_status_messages_reach_the_panels(rig: Rig) -> None:
    rig.heard.clear()
    assert rig.run_until(lambda: any(isinstance(m, MotorStatus) for m in rig.heard)
                         and any(isinstance(m, Heartbeat) for m in rig.heard), 1.0)
    status = next(m for m in rig.heard if isinstance(m, MotorStatus))
    assert [a.axis for a in status.axes] == list(range(8))
    beats = [m for m in rig.heard if isinstance(m, Heartbeat)]
    assert beats and beats[-1].agent == Agent.MOTOR_DRIVER
    assert beats[-1].state in (SafetyState.READY, SafetyState.PLAYING)


def test_syncmanager_watchdog_trips_when_the_master_goes_silent(rig: Rig) -> None:
    assert rig.run_until(rig.operational, 10.0)
    assert all(s["al_state"] == int(L.AlState.OP) for s in rig.emulator.slaves())
    rig.heard.clear()
    rig.heard_at.clear()
    rig.gate.close()  # the cycle hangs: the master sends nothing
    hung = time.monotonic()
    rig.run_until(lambda: False, 0.3)  # the drives' watchdog is 50 ms
    slaves = rig.emulator.slaves()
    assert all(s["al_state"] == int(L.AlState.SAFEOP) | L.AL_ERROR_FLAG for s in slaves)
    assert all(s["al_status_code"] == L.AL_CODE_SM_WATCHDOG for s in slaves)
    assert all(s["cia402_state"] in ("fault", "fault reaction active") for s in slaves)
    assert all(s["error_code"] == L.ErrorCode.COMMUNICATION for s in slaves)
    # the runtime's I/O thread saw its step loop go silent: no more heartbeats (ten cycles
    # of silence; the bound is generous), and the cause on the wire
    beats = [at for at, m in rig.heard_at if isinstance(m, Heartbeat)]
    assert not beats or max(beats) - hung < 0.2, [round(at - hung, 3) for at in beats]
    assert any(a.code == AlarmCode.INTERNAL_ERROR and a.latched and "silent" in a.text
               for a in rig.alarms()), rig.alarms()
    rig.stop()  # the end of the main story: the MDA stops as the service does


# --- the service ----------------------------------------------------------------------------
def _service_board(tmp_path: Path, key: bytes, motor_driver_extra: str = "") -> Path:
    key_file = tmp_path / "wire.key"
    key_file.write_text(key.hex())
    key_file.chmod(0o600)
    config = tmp_path / "board.toml"
    config.write_text(f"""
[wire]
transport = "raw"
iface = "lan0"
key_file = "{key_file}"

[safety.deadlines]  # no other agent runs here

[motor_driver]
backend = "pysoem"
iface = "ecat0"
drives = 8
cycle_s = 0.005
# The most a board allows (the drives' watchdog is 50 ms): on a shared 2-core test host the
# emulator or the master is now and then held off its CPU for 10-30 ms, which the shipped
# 15 ms rightly latches as a silent bus. Bus faults are the fault matrix's to test.
bus_error_tolerance_s = 0.04
{motor_driver_extra}
""")
    return config


def _start_service(namespace: Namespace, config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*namespace.exec_args(), sys.executable, "-m", "foosball.cli", "agent", "run",
         "motor_driver", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _listen(endpoint: Endpoint, agent: subprocess.Popen[str], timeout_s: float,
            done: Callable[[MotorStatus], bool], states: list[SafetyState]) -> bool:
    """Collect the motor driver's heartbeat states until a MotorStatus satisfies `done`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and agent.poll() is None:
        for received in endpoint.receive(0.05):
            if received.sender is not Agent.MOTOR_DRIVER:
                continue
            if isinstance(received.message, Heartbeat):
                states.append(received.message.state)
            elif isinstance(received.message, MotorStatus) and done(received.message):
                return True
    return False


def _exit_report(agent: subprocess.Popen[str], states: Sequence[SafetyState],
                 emulator: EmulatorProcess) -> str:
    """Why the service never got there, for a failing assertion: its exit code (None while
    it still ran: it is stopped here), the end of its log, its last heartbeat states, and
    the emulator's side: its stalls over 20 ms (when each ended, how long, of that on a CPU
    and waiting for one: a watchdog trip behind a stall of its own is not the master's) and
    the frames that came while it was away."""
    timing = emulator.command("timing")
    stalls = [stall for stall in timing["stalls"] if stall[1] > 0.02]  # type: ignore[union-attr]
    code = agent.poll()
    if code is None:
        agent.terminate()
    try:
        _, stderr = agent.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        agent.kill()
        _, stderr = agent.communicate()
    return (f"exit code {code}; the end of its log:\n{stderr[-4000:]}\nlast states "
            f"{states[-5:]}\nthe emulator: stalls {stalls}, late frames "
            f"{timing['late_frames']}, stale frames {timing['stale_frames']}")


@contextlib.contextmanager
def _running_service(namespace: Namespace, tmp_path: Path, motor_driver_extra: str = "",
                     panel_agent: Agent = Agent.SUPERVISORY_PANEL
                     ) -> Iterator[tuple[Endpoint, Endpoint, subprocess.Popen[str]]]:
    """The motor driver's service on the namespace's EtherCAT veth (board.toml's
    [motor_driver] with `motor_driver_extra`), and two listeners on the agent LAN: as the
    pole driver and as a panel (`panel_agent`: the game panel sends RESTART). Killed if
    still running when the block ends (a test stops it itself to check how it stops)."""
    key = secrets.token_bytes(32)
    config = _service_board(tmp_path, key, motor_driver_extra)
    with inside(namespace):
        pole = Endpoint(open_transport("raw", iface="lan1"), WireCodec(key, Agent.POLE_DRIVER))
        panel = Endpoint(open_transport("raw", iface="lan1"), WireCodec(key, panel_agent))
    agent = _start_service(namespace, config)
    try:
        yield pole, panel, agent
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.communicate()
        pole.close()
        panel.close()


def _all_at(slaves: Sequence[dict[str, Any]], *states: L.AlState) -> bool:
    """Every slave in one of `states`, its error flag aside: a master held off its CPU as
    it stops lets the drives' watchdog trip first, and a real ESC keeps the flag until the
    master acknowledges it."""
    return all(s["al_state"] & ~L.AL_ERROR_FLAG in {int(a) for a in states} for s in slaves)


def _al_codes(slaves: Sequence[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(s["al_state"], s["al_status_code"]) for s in slaves]


def _all_in(state: DriveState) -> Callable[[MotorStatus], bool]:
    return lambda status: all(a.state is state for a in status.axes)


def _stop_service(agent: subprocess.Popen[str], signum: int) -> str:
    """Signal the service, wait for it to end cleanly; its log."""
    agent.send_signal(signum)
    _, stderr = agent.communicate(timeout=20)
    assert agent.returncode == 0, stderr[-2000:]
    return stderr


def test_the_motor_driver_service_homes_and_stops_the_bus_cleanly_on_sigterm(
        namespace: Namespace, emulator_factory: Callable, tmp_path: Path) -> None:
    """`foosball agent run motor_driver` as the board's unit runs it: raw agent LAN, pysoem,
    SCHED_FIFO; SIGTERM quick-stops the drives and takes the slaves to INIT (the master
    stops them, rather than leaving their watchdog to notice its silence)."""
    emulator = emulator_factory(8)
    states: list[SafetyState] = []
    with _running_service(namespace, tmp_path) as (pole, _panel, agent):
        homed = _listen(pole, agent, 30.0, _all_in(DriveState.READY), states)
        assert homed, _exit_report(agent, states, emulator)
        assert SafetyState.HOMING in states and SafetyState.FAULT not in states
        assert all(s["al_state"] == int(L.AlState.OP) for s in emulator.slaves())
        _stop_service(agent, signal.SIGTERM)
    slaves = emulator.slaves()
    assert _all_at(slaves, L.AlState.INIT), _al_codes(slaves)
    assert all(s["watchdog_trips"] == 0 for s in slaves), slaves


def test_a_start_whose_mailbox_answers_are_lost_is_tried_again_and_homes(
        namespace: Namespace, emulator_factory: Callable, tmp_path: Path) -> None:
    """Slave 2's next five mailbox answers are taken out of its mailbox and lost on the way
    back, as when the master's wait for the frame ran out on a loaded host. Its first SDO
    gets no answer in three tries, so the first start fails and leaves every slave in INIT;
    the second start loses two more answers, asks again, and gets there: every axis homed."""
    emulator = emulator_factory(8)
    emulator.command("lose-mailbox 1 5")  # axis 1: slave 2
    states: list[SafetyState] = []
    with _running_service(namespace, tmp_path) as (pole, _panel, agent):
        homed = _listen(pole, agent, 40.0, _all_in(DriveState.READY), states)
        assert homed, _exit_report(agent, states, emulator)
        log = _stop_service(agent, signal.SIGTERM)
    assert emulator.command("timing")["lost_mailbox_answers"] == 5
    assert "no answer in 3 tries" in log and "EtherCAT start failed (attempt 1 of 3)" in log, \
        log[-3000:]
    assert "attempt 2 of 3" not in log and SafetyState.FAULT not in states, log[-3000:]


@pytest.mark.parametrize("alignment", ["none", "sdo"])
def test_another_slave_stack_reaches_op_and_running_and_stops_safely_on_sigint(
        namespace: Namespace, emulator_factory: Callable, tmp_path: Path,
        alignment: str) -> None:
    """What was met on a third-party stack: the watchdog divider reset to 0 (pysoem's
    set_watchdog raised AttributeError), a default PDO mapping other than the layout's, and
    standard CiA 402 drives without the alignment bits. The master writes the divider and
    the mapping; `alignment = "none"` lets the drives align themselves (statusword bit 12),
    `alignment = "sdo"` reads their alignment object. A slave controller that restarts with
    those reset values is configured again by the recovery."""
    emulator = emulator_factory(8, ("--watchdog-divider", "0", "--default-mapping", "other",
                                    "--plain-cia402"))
    targets = {axis: 5.0 if axis % 2 == 0 else 1.0 for axis in range(8)}
    command = MotorCommand(axes=tuple(AxisTarget(axis=a, position=p, velocity=100.0)
                                      for a, p in targets.items()))
    states: list[SafetyState] = []

    def arrived(status: MotorStatus) -> bool:
        pole.send(command)  # the pole driver repeats its targets
        return all(a.state is DriveState.RUNNING and abs(a.position - targets[a.axis]) < 0.01
                   for a in status.axes)

    with _running_service(namespace, tmp_path, f'alignment = "{alignment}"',
                          Agent.GAME_PANEL) as (pole, panel, agent):
        assert _listen(pole, agent, 30.0, _all_in(DriveState.READY), states), \
            _exit_report(agent, states, emulator)
        slaves = emulator.slaves()
        assert all(s["al_state"] == int(L.AlState.OP) for s in slaves)
        assert all(s["watchdog_s"] == pytest.approx(0.05) for s in slaves)
        layout_rx = [f"0x{e.index:04x}" for e in L.RXPDO_ENTRIES]
        assert all(s["outputs_mapped"] == layout_rx for s in slaves)
        assert _listen(pole, agent, 10.0, arrived, states), \
            _exit_report(agent, states, emulator)
        assert SafetyState.PLAYING in states and SafetyState.FAULT not in states

        # drive 3's slave controller restarts with its reset values (divider 0, the other
        # mapping): the recovery configures it again, so a restart brings it back
        emulator.command("esc-restart 2")
        assert _listen(pole, agent, 5.0, lambda _: SafetyState.FAULT in states, states)

        def homed_again(status: MotorStatus) -> bool:
            panel.send(GameControl(command=GameCommand.RESTART))  # refused until the cause went
            return _all_in(DriveState.READY)(status)

        assert _listen(pole, agent, 30.0, homed_again, states), \
            _exit_report(agent, states, emulator)
        restarted = emulator.slaves()[2]
        assert restarted["al_state"] == int(L.AlState.OP) and restarted["watchdog_s"] == \
            pytest.approx(0.05) and restarted["outputs_mapped"] == layout_rx, restarted
        _stop_service(agent, signal.SIGINT)
    time.sleep(0.3)  # the drives brake to rest on their own (fault reaction)
    slaves = emulator.slaves()
    assert _all_at(slaves, L.AlState.INIT), _al_codes(slaves)
    assert all(s["cia402_state"] != "operation enabled" and abs(s["velocity"]) < 1e-3
               for s in slaves), slaves


def test_a_bus_that_does_not_start_is_an_error_message_not_a_traceback(
        namespace: Namespace, emulator_factory: Callable, tmp_path: Path) -> None:
    emulator = emulator_factory(7)
    agent = _start_service(namespace, _service_board(tmp_path, secrets.token_bytes(32)))
    _, stderr = agent.communicate(timeout=60)
    assert agent.returncode == 1
    assert "missing slave(s) at position 8" in stderr and "Traceback" not in stderr, stderr
    slaves = emulator.slaves()
    assert _all_at(slaves, L.AlState.INIT, L.AlState.PREOP), _al_codes(slaves)


# --- start-up errors ----------------------------------------------------------------------
def _start_bus(ns: Namespace) -> object:
    with inside(ns):
        bus = open_bus(BusConfig(backend="pysoem", iface="ecat0", drives=8))
    return bus


def test_missing_slave_at_startup_gives_a_clear_error(namespace: Namespace,
                                                      emulator_factory: Callable,
                                                      tmp_path: Path) -> None:
    control = tmp_path / "emulator.sock"
    emulator_factory(7, ("--control-socket", str(control)))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as channel:  # the UNIX channel
        channel.connect(str(control))
        channel.sendall(b"status\n")
        reply = json.loads(channel.makefile().readline())
    assert reply["ok"] and len(reply["slaves"]) == 7
    bus = _start_bus(namespace)
    try:
        with pytest.raises(BusConfigurationError, match=r"missing slave\(s\) at position 8"):
            bus.start()
    finally:
        bus.close()


def test_unexpected_slave_is_named_and_scan_lists_it(namespace: Namespace,
                                                     emulator_factory: Callable) -> None:
    emulator = emulator_factory(8, ("--foreign", "3"))
    bus = _start_bus(namespace)
    try:
        with pytest.raises(BusConfigurationError, match="unexpected slave at position 3"):
            bus.start()
        # a failed start leaves no slave beyond PRE-OP
        slaves = emulator.slaves()
        assert _all_at(slaves, L.AlState.INIT, L.AlState.PREOP), _al_codes(slaves)
    finally:
        bus.close()
    result = subprocess.run(
        [*namespace.exec_args(), sys.executable, "-m", "foosball.cli", "ethercat", "scan",
         "--iface", "ecat0", "--json"], check=False, capture_output=True, text=True,
        timeout=60)
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    assert [s["position"] for s in listing["slaves"]] == list(range(1, 9))
    assert [s["expected"] for s in listing["slaves"]] == [True, True, False] + [True] * 5


def test_complete_access_pitfall_is_refused_and_avoided(namespace: Namespace,
                                                        emulator_factory: Callable) -> None:
    """A slave stack that answers Complete Access without the subindex-0 padding (facts):
    mapped through CA its outputs turn into inputs and it still reaches SAFEOP, so only the
    size check stops the master; with CA off (the default) the same bus maps correctly."""
    emulator = emulator_factory(8, ("--complete-access-quirk",))
    with inside(namespace):
        bus = open_bus(BusConfig(backend="pysoem", iface="ecat0", use_complete_access=True))
    try:
        with pytest.raises(BusConfigurationError,
                           match=r"slave 1: master mapped 0 output / 11 input bytes"):
            bus.start()
    finally:
        bus.close()
    emulator.stop()
    emulator_factory(8, ("--complete-access-quirk",))
    with inside(namespace):
        bus = open_bus(BusConfig(backend="pysoem", iface="ecat0"))
    try:
        start_bus(bus)  # as the service starts it (a lost answer on a loaded host: again)
        assert bus.expected_working_counter == 24
    finally:
        bus.close()
