"""Drives that are not ours, against the emulator over veth (issue 31): a drive with a fixed
PDO mapping and a drive that ignores quick stop each come up, play and stop under the motor
driver service; a fixed mapping that differs from the layout is refused by name; a slave
that stops exchanging process data is named in EtherCatStatus from what its registers say."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from foosball.ethercat import layout as L
from foosball.ethercat.bus import BusConfigurationError, start_bus
from foosball.wire.catalogue import (
    Alarm,
    AlarmCode,
    AxisTarget,
    DriveCommand,
    DriveControl,
    DriveState,
    EtherCatStatus,
    MotorCommand,
    MotorStatus,
    SafetyState,
)
from foosball.wire.endpoint import Endpoint
from tests.ethercat.netns import Namespace, needs_netns
from tests.ethercat.test_ethercat_integration import (
    _al_codes,
    _all_at,
    _all_in,
    _exit_report,
    _listen,
    _running_service,
    _start_bus,
    _stop_service,
)

pytestmark = [needs_netns, pytest.mark.netns]
TARGETS = {axis: 5.0 if axis % 2 == 0 else 1.0 for axis in range(8)}


def _play(pole: Endpoint, agent: object, states: list[SafetyState]) -> bool:
    command = MotorCommand(axes=tuple(AxisTarget(axis=a, position=p, velocity=100.0)
                                      for a, p in TARGETS.items()))

    def arrived(status: MotorStatus) -> bool:
        pole.send(command)  # the pole driver repeats its targets
        return all(a.state is DriveState.RUNNING and abs(a.position - TARGETS[a.axis]) < 0.01
                   for a in status.axes)

    return _listen(pole, agent, 10.0, arrived, states)  # type: ignore[arg-type]


def _heard_until(endpoint: Endpoint, kind: type, timeout_s: float,
                 done: Callable[[Any], bool]) -> list[Any]:
    """The messages of one kind heard until one satisfies `done` (it last) or the timeout."""
    heard: list[Any] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for received in endpoint.receive(0.05):
            if isinstance(received.message, kind):
                heard.append(received.message)
                if done(received.message):
                    return heard
    return heard


def _mapping_read_not_written(emulator: Any, _panel: Endpoint) -> None:
    # equal to the layout: read, not written (a write would have been refused)
    slaves = emulator.slaves()
    assert all(s["mapping_writes_refused"] == 0 for s in slaves), slaves


def _halted_drive_disabled(emulator: Any, panel: Endpoint) -> None:
    # halted from the panel, the drive stays in operation enabled: after the bound its
    # voltage is disabled and the alarm names it
    panel.send(DriveControl(axis=4, command=DriveCommand.HALT))
    heard = _heard_until(panel, Alarm, 3.0, lambda a: a.code == AlarmCode.DRIVE_FAULT)
    assert heard and heard[-1].axis == 4 and "drive ignored quick stop" in heard[-1].text, heard
    assert emulator.slaves()[4]["cia402_state"] != "operation enabled"


def _homed_by_the_drive(emulator: Any, _panel: Endpoint) -> None:
    # the method written in PRE-OP to every translation drive, each homed at its end stop
    slaves = emulator.slaves()
    assert [s["homing_method"] for s in slaves] == [L.HOMING_HARD_STOP_NEGATIVE, 0] * 4
    assert all(s["homed"] for s in slaves[::2]), slaves


def _synchronised(emulator: Any, _panel: Endpoint) -> None:
    # SYNC0 at the 5 ms cycle on every drive; the reference time in every cycle's frame
    slaves = emulator.slaves()
    assert [s["dc_sync0_ns"] for s in slaves] == [5_000_000] * 8, slaves
    assert emulator.command("status")["clock_datagrams"] > 100


def _phase_locked(log: str) -> None:
    # the master's cycle steered to the reference clock: frames near half a cycle from
    # SYNC0 (the emulator's clock is this host's, so no drift, only its wake-up jitter).
    # The median, not a tail: the tail is the shared test host's stalls (a CPU-bound
    # neighbour took the p95 to 1292 us with the p50 at 145 us); an unsteered cycle keeps
    # the phase it started with, anywhere up to 2500 us off (median 1250 us).
    phase = re.search(r"frame phase to SYNC0 off its target by p50 ([\d.]+) us, p95 "
                      r"([\d.]+) us, p99 ([\d.]+) us", log)
    assert phase is not None, log[-2000:]
    print(f"phase error p50 {phase.group(1)} us, p95 {phase.group(2)} us, "
          f"p99 {phase.group(3)} us")
    assert float(phase.group(1)) < 400.0, phase.group(0)  # 8 % of the 5 ms cycle


@dataclass(frozen=True)
class FieldDrive:
    """Drives that are not ours: the emulator's flags, board.toml's [motor_driver] keys for
    them, what to check once every axis is READY and has played, and in the service's log."""

    flags: tuple[str, ...]
    board: str = ""
    played: Callable[[Any, Endpoint], None] = lambda _emulator, _panel: None
    stopped: Callable[[str], None] = lambda _log: None


FIELD_DRIVES = {
    "fixed mapping": FieldDrive(("--fixed-mapping",), played=_mapping_read_not_written),
    "ignores quick stop": FieldDrive(("--ignore-quick-stop",), played=_halted_drive_disabled),
    # into the negative end stop: the drive's own CiA 402 homing
    "no home switch": FieldDrive(("--no-home-switch",),
                                 f"homing_method = {L.HOMING_HARD_STOP_NEGATIVE}",
                                 played=_homed_by_the_drive),
    "distributed clocks": FieldDrive(("--dc",), "distributed_clocks = true",
                                     played=_synchronised, stopped=_phase_locked),
}


@pytest.mark.parametrize("kind", list(FIELD_DRIVES))
def test_a_field_drive_comes_up_plays_and_stops(namespace: Namespace,
                                                emulator_factory: Callable, tmp_path: Path,
                                                kind: str) -> None:
    drive = FIELD_DRIVES[kind]
    emulator = emulator_factory(8, drive.flags)
    states: list[SafetyState] = []
    with _running_service(namespace, tmp_path, drive.board) as (pole, panel, agent):
        assert _listen(pole, agent, 30.0, _all_in(DriveState.READY), states), \
            _exit_report(agent, states)
        assert SafetyState.HOMING in states
        assert all(s["al_state"] == int(L.AlState.OP) for s in emulator.slaves())
        assert _play(pole, agent, states), states[-5:]
        assert SafetyState.FAULT not in states
        drive.played(emulator, panel)
        drive.stopped(_stop_service(agent, signal.SIGTERM))
    slaves = emulator.slaves()
    assert _all_at(slaves, L.AlState.INIT), _al_codes(slaves)
    assert all(s["cia402_state"] != "operation enabled" for s in slaves), slaves


def test_a_drive_that_faults_says_why_in_a_coe_emergency_on_the_panel(
        namespace: Namespace, emulator_factory: Callable, tmp_path: Path) -> None:
    """A drive faults (overcurrent on axis 5): the master reads the CoE emergency it sent
    from its mailbox (pysoem raises it as `Emergency`) out of the cycle thread, and the
    next EtherCatStatus carries it; the fault itself latched from the process data."""
    emulator = emulator_factory(8)
    states: list[SafetyState] = []
    with _running_service(namespace, tmp_path) as (pole, panel, agent):
        assert _listen(pole, agent, 30.0, _all_in(DriveState.READY), states), \
            _exit_report(agent, states)
        assert emulator.command("fault 5 overcurrent")["ok"]
        heard = _heard_until(panel, EtherCatStatus, 3.0, lambda s: bool(s.emergencies))
        assert heard and heard[-1].emergencies, heard[-3:]
        [emergency] = heard[-1].emergencies
        assert (emergency.position, emergency.error_code, emergency.error_register) == (
            6, int(L.ErrorCode.OVERCURRENT), 0x01), emergency
        assert emergency.data == int(L.DigitalInput.OVERCURRENT_PRESENT)
        _stop_service(agent, signal.SIGTERM)


def _refused_start(namespace: Namespace) -> str:
    """The master started on the emulator's bus as the motor driver starts it, tried again
    after a failure (`start_bus`), and refused: why, at the last try. (One start alone
    fails now and then on a lost configuration frame: fresh-clone run 27 saw slave 2 left in
    INIT, "did not reach PRE-OP", instead of the refusal, with no host hold over 25 ms at the
    time. This master runs inside pytest at the ordinary priority, and the emulator drops a
    frame that waited 2 ms in its socket; which of them lost it is not known.)"""
    bus = _start_bus(namespace)
    try:
        with pytest.raises(BusConfigurationError) as refused:
            start_bus(bus, sleep=lambda _seconds: None)
    finally:
        bus.close()
    return str(refused.value)


def test_drives_that_need_distributed_clocks_are_refused_without_them_by_code(
        namespace: Namespace, emulator_factory: Callable) -> None:
    emulator_factory(8, ("--dc",))
    refusal = _refused_start(namespace)
    assert "AL code 0x0030" in refusal, refusal


def test_a_fixed_mapping_that_differs_from_the_layout_is_refused_by_name(
        namespace: Namespace, emulator_factory: Callable) -> None:
    emulator = emulator_factory(8, ("--fixed-mapping", "--default-mapping", "other"))
    text = _refused_start(namespace)
    assert text.startswith("slave 1 (STEVAL-ETH001): PDO 0x1600: object 0x1c12: the drive's "
                           "PDO mapping is fixed (SDO abort 0x06010002"), text
    assert ("expected 0x1600 mapping [0x6040:00/16, 0x6060:00/8, 0x607a:00/32, 0x60ff:00/32]"
            ", found assignment [0x1600] mapping [0x6040:00/16, 0x607a:00/32, 0x60ff:00/32, "
            "0x6060:00/8, 0x6071:00/16]") in text, text
    slaves = emulator.slaves()
    assert _all_at(slaves, L.AlState.INIT, L.AlState.PREOP), _al_codes(slaves)


def test_scan_shows_al_status_with_its_text_and_the_esc_error_counters(
        namespace: Namespace, emulator_factory: Callable) -> None:
    emulator = emulator_factory(8)
    assert emulator.command("esc-errors 2 7 3 1")["ok"]
    result = subprocess.run(
        [*namespace.exec_args(), sys.executable, "-m", "foosball.cli", "ethercat", "scan",
         "--iface", "ecat0", "--json"], check=False, capture_output=True, text=True,
        timeout=60)
    assert result.returncode == 0, result.stderr
    slaves = json.loads(result.stdout)["slaves"]
    assert [s["rx_errors"][0] for s in slaves] == [[0, 0]] * 2 + [[7, 3]] + [[0, 0]] * 5
    assert [s["lost_links"][0] for s in slaves] == [0, 0, 1, 0, 0, 0, 0, 0]
    assert all(s["al_status_code"] == "0x0000" and s["al_status_text"] for s in slaves)


def test_a_deaf_slave_is_named_in_the_ethercat_status(
        namespace: Namespace, emulator_factory: Callable, tmp_path: Path) -> None:
    """Axis 5's slave (position 6) stops exchanging process data: the working counter falls
    short, its SyncManager watchdog takes it to SAFE-OP + ERROR (0x001B), and the motor
    driver's recovery read names it, from its registers, until it answers again."""
    emulator = emulator_factory(8)
    states: list[SafetyState] = []
    with _running_service(namespace, tmp_path) as (pole, panel, agent):
        assert _listen(pole, agent, 30.0, _all_in(DriveState.READY), states), \
            _exit_report(agent, states)
        assert emulator.command("deaf 5 on")["ok"]
        heard = _heard_until(panel, EtherCatStatus, 5.0, lambda s: s.slaves_not_op)
        assert heard and heard[-1].slaves_not_op, heard[-3:]
        status = heard[-1]
        [slave] = status.slaves_not_op
        assert (slave.position, slave.al_state, slave.al_status_code) == (
            6, int(L.AlState.SAFEOP) | L.AL_ERROR_FLAG, L.AL_CODE_SM_WATCHDOG), status
        assert slave.al_status_text == "Sync manager watchdog"
        assert (slave.rx_errors, slave.lost_links) == (0, 0)  # read: a clean line
        assert status.working_counter < status.expected_working_counter == 24
        # named from then on while the counter stays short (re-acknowledged to OP, the
        # slave drops out again on its watchdog; a read between finds it in OP)
        later = _heard_until(panel, EtherCatStatus, 1.0, lambda s: False)
        assert later and all([s.position for s in m.slaves_not_op] == [6] for m in later), \
            later
        assert emulator.command("deaf 5 off")["ok"]
        back = _heard_until(panel, EtherCatStatus, 5.0, lambda s: s.working_counter == 24
                            and s.al_state == int(L.AlState.OP))
        assert back and back[-1].al_state == int(L.AlState.OP), back[-3:]
        assert back[-1].slaves_not_op == ()  # a full counter: every slave in OP
        _stop_service(agent, signal.SIGTERM)
