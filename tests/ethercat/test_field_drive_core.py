"""A drive that ignores quick stop: after `quick_stop_escalation_s` its voltage is disabled
and an alarm names it (halted from the panel, in a fault, and at shutdown). A drive whose
mailbox does not answer never holds up the cycle (SDO reads run in their own thread)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from foosball.agents.motor_driver import (
    EtherCatHardware,
    MdaOutputs,
    MotorDriverConfig,
    homing_objects,
)
from foosball.ethercat import layout as L
from foosball.ethercat.bus import BusConfig
from foosball.ethercat.drive import FaultKind
from foosball.ethercat.emulator import EmulatorConfig
from foosball.ethercat.fake import FakeBus
from foosball.schema import SettingError, parse
from foosball.wire.catalogue import (
    Agent,
    AlarmCode,
    DriveCommand,
    DriveControl,
    DriveEmergency,
    DriveState,
    EtherCatStatus,
)
from tests.ethercat.test_motor_driver_core import Rig


def ignoring_rig(config: MotorDriverConfig | None = None) -> Rig:
    rig = Rig(config)
    rig.bus = FakeBus(BusConfig(backend="fake"), clock=rig.monotonic,
                      emulator=EmulatorConfig(ignores_quick_stop=True))
    rig.bus.start()
    rig.hardware.bus = rig.bus
    assert rig.run_until(rig.operational, 5.0), rig.core.drive_states()
    return rig


def test_a_halted_drive_that_ignores_quick_stop_gets_disable_voltage_and_an_alarm() -> None:
    rig = ignoring_rig()
    bound = rig.config.quick_stop_escalation_s
    rig.endpoint(Agent.SUPERVISORY_PANEL).send(DriveControl(axis=3, command=DriveCommand.HALT))
    rig.run_for(bound / 2)
    assert rig.bus.drives[3].state is L.Cia402State.OPERATION_ENABLED  # it ignores it
    assert rig.core.drive_states()[3] is DriveState.QUICK_STOP
    # the bound, plus the cycle that first sees it ignored and the one that answers
    assert rig.run_until(lambda: rig.bus.drives[3].state is not
                         L.Cia402State.OPERATION_ENABLED, bound / 2 + 3 * rig.config.cycle_s)
    assert rig.bus.drives[3].rx.controlword == L.Control.DISABLE_VOLTAGE
    rig.run_for(0.02)
    [alarm] = {(a.code, a.axis, a.text) for a in rig.latched_alarms()}
    assert alarm[:2] == (AlarmCode.DRIVE_FAULT, 3)
    assert "axis 3: drive ignored quick stop" in alarm[2] and "voltage disabled" in alarm[2]


def test_a_drive_that_takes_quick_stop_is_not_escalated() -> None:
    rig = Rig()
    assert rig.run_until(rig.operational, 5.0)
    rig.endpoint(Agent.SUPERVISORY_PANEL).send(DriveControl(axis=3, command=DriveCommand.HALT))
    rig.run_for(5 * rig.config.quick_stop_escalation_s)
    assert rig.core.drive_states()[3] is DriveState.QUICK_STOP
    assert rig.bus.drives[3].rx.controlword == L.Control.QUICK_STOP
    assert rig.core.latched is None


def test_in_a_fault_every_drive_ignoring_quick_stop_is_disabled_within_the_bound(
        caplog: pytest.LogCaptureFixture) -> None:
    rig = ignoring_rig(MotorDriverConfig(quick_stop_escalation_s=0.05))
    rig.bus.drives[5].inject(FaultKind.OVERCURRENT)
    with caplog.at_level(logging.ERROR):
        assert rig.run_until(lambda: all(d.state is not L.Cia402State.OPERATION_ENABLED
                                         for d in rig.bus.drives), 0.05 + 0.03)
    assert all(s is DriveState.FAULT for s in rig.core.drive_states())
    # the first cause is the alarm on the wire; each escalation is logged naming its axis
    assert rig.core.latched.code is AlarmCode.OVERCURRENT
    for axis in (0, 1, 2, 3, 4, 6, 7):
        assert f"axis {axis}: drive ignored quick stop" in caplog.text


def test_at_shutdown_a_drive_ignoring_quick_stop_gets_disable_voltage() -> None:
    rig = ignoring_rig()
    rig.hardware.close()
    assert all(d.rx.controlword == L.Control.DISABLE_VOLTAGE for d in rig.bus.drives)
    assert all(d.state is not L.Cia402State.OPERATION_ENABLED for d in rig.bus.drives)


class SilentMailboxBus(FakeBus):
    """A drive whose mailbox does not answer: an SDO read waits (as pysoem does, up to its
    700 ms SDO timeout) until the test lets it go."""

    def __init__(self) -> None:
        super().__init__(BusConfig(backend="fake"))
        self.answer = threading.Event()
        self.reads = 0

    def read_object(self, position: int, index: int, subindex: int) -> bytes:
        self.reads += 1
        self.answer.wait(5.0)
        return b"\x01"


def test_an_sdo_read_that_hangs_does_not_hold_up_the_cycle() -> None:
    bus = SilentMailboxBus()
    bus.start()
    hardware = EtherCatHardware(bus, 0.005)
    try:
        hardware.sense(0.005)
        outputs = MdaOutputs(drives=hardware.outputs, read_alignment=(2,))
        started = time.monotonic()
        for _ in range(20):
            hardware.act(outputs)
        took = time.monotonic() - started
        assert took < 0.5, f"20 cycles' act() took {took:.3f} s with a mailbox hanging"
        assert bus.reads == 1 and hardware.alignment_objects[2] == 0
        bus.answer.set()
        deadline = time.monotonic() + 2.0
        while hardware.alignment_objects[2] != 1 and time.monotonic() < deadline:
            hardware.act(outputs)
            time.sleep(0.005)
        assert hardware.alignment_objects[2] == 1  # read out of the cycle thread
        hardware.act(MdaOutputs(drives=hardware.outputs))  # no axis aligns any more
        assert hardware.alignment_objects[2] == 0
    finally:
        bus.answer.set()
        hardware.close()


def test_homing_without_a_home_switch_alarms_naming_every_translation_axis_and_why() -> None:
    rig = Rig(MotorDriverConfig(homing_timeout_s=0.5))
    rig.bus = FakeBus(BusConfig(backend="fake"), clock=rig.monotonic,
                      emulator=EmulatorConfig(home_switch=False))
    rig.bus.start()
    rig.hardware.bus = rig.bus
    assert rig.run_until(lambda: rig.core.latched is not None, 3.0), rig.core.drive_states()
    text = rig.core.latched.text
    assert text.startswith("homing not done after 0.5 s: "), text
    for axis in (0, 2, 4, 6):
        assert f"axis {axis} (home switch never seen, at raw " in text, text
    assert "axis 1 " not in text
    rig.run_for(0.2)
    assert all(d.state is not L.Cia402State.OPERATION_ENABLED or abs(d.velocity) < 1e-6
               for d in rig.bus.drives)


def homing_rig(method: int, home_switch: bool = False, timeout_s: float = 20.0) -> Rig:
    """Drives without the home switch (unless asked), homed by their own method."""
    config = MotorDriverConfig(homing_method=method, homing_timeout_s=timeout_s)
    bus = FakeBus(BusConfig(backend="fake"), emulator=EmulatorConfig(home_switch=home_switch))
    rig = Rig(config, bus=bus)
    bus.clock = rig.monotonic
    bus.start(homing_objects(config))
    return rig


@pytest.mark.parametrize("method", [L.HOMING_HARD_STOP_NEGATIVE, L.HOMING_CURRENT_POSITION])
def test_drives_without_a_home_switch_home_by_their_own_method(method: int) -> None:
    rig = homing_rig(method)
    assert rig.run_until(rig.operational, 10.0), rig.core.drive_states()
    assert rig.core.latched is None
    for axis in (0, 2, 4, 6):
        drive = rig.bus.drives[axis]
        assert drive.homing_method == method and drive.homing_attained
        # the master's zero is the drive's home: the end stop, or where it stood
        expected = drive._travel()[0] if method == L.HOMING_HARD_STOP_NEGATIVE else 0.0
        assert drive.home_reference == pytest.approx(expected, abs=1e-6)
        assert rig.core.position(axis) == pytest.approx(0.0, abs=1e-3)
    assert all(d.homing_method == 0 for d in rig.bus.drives[1::2])  # rotation: not homed


def test_a_homing_method_the_drive_lacks_is_an_alarm_naming_the_axis() -> None:
    rig = homing_rig(L.HOMING_NEGATIVE_SWITCH)  # needs the switch these drives lack
    assert rig.run_until(lambda: rig.core.latched is not None, 5.0), rig.core.drive_states()
    text = rig.core.latched.text
    assert text.startswith("axis 0: the drive's homing method 17 failed (homing error"), text
    assert rig.core.latched.code is AlarmCode.DRIVE_FAULT


def test_a_drive_homing_that_never_ends_names_every_axis() -> None:
    # the nearest stop is 8.5 rad away at 20 rad/s
    rig = homing_rig(L.HOMING_HARD_STOP_NEGATIVE, timeout_s=0.3)
    assert rig.run_until(lambda: rig.core.latched is not None, 3.0), rig.core.drive_states()
    text = rig.core.latched.text
    assert text.startswith("homing not done after 0.3 s: "), text
    for axis in (0, 2, 4, 6):
        assert f"axis {axis} (the drive's homing method -4 not done, at " in text, text


def test_one_axis_can_home_otherwise_than_the_rest() -> None:
    """Switches on every rod but one: the master homes three on their switch, the drive of
    axis 4 homes itself where it stands."""
    config = MotorDriverConfig(homing_methods={4: L.HOMING_CURRENT_POSITION})
    bus = FakeBus(BusConfig(backend="fake"))
    rig = Rig(config, bus=bus)
    bus.clock = rig.monotonic
    bus.start(homing_objects(config))
    assert rig.run_until(rig.operational, 20.0), rig.core.drive_states()
    assert [d.homing_method for d in bus.drives] == [0, 0, 0, 0, 37, 0, 0, 0]
    assert bus.drives[4].homing_attained and not bus.drives[0].homing_attained
    assert rig.core.latched is None


def test_board_toml_names_an_axis_and_its_method_or_is_refused_saying_how() -> None:
    config = parse(MotorDriverConfig, {"homing_method": -4, "homing_methods": {"4": 37}},
                   "[motor_driver]")
    assert [config.homing_method_of(axis) for axis in (0, 2, 4, 6)] == [-4, -4, 37, -4]
    with pytest.raises(SettingError, match=r"rod = 37: an axis number = a homing method"):
        parse(MotorDriverConfig, {"homing_methods": {"rod": 37}}, "[motor_driver]")


def test_a_drive_that_faults_is_shown_with_its_coe_emergency() -> None:
    """The fault latches in the cycle; the drive's emergency is read by mailbox and comes
    in the next EtherCatStatus, the drive's error code in its own words."""
    rig = Rig()
    assert rig.run_until(rig.operational, 10.0), rig.core.drive_states()
    rig.bus.drives[5].inject(FaultKind.OVERCURRENT)

    def told() -> tuple[DriveEmergency, ...]:
        statuses = [m for m in rig.heard if isinstance(m, EtherCatStatus)]
        return statuses[-1].emergencies if statuses else ()
    assert rig.run_until(lambda: bool(told()), 1.0), rig.core.latched
    overcurrent = int(L.ErrorCode.OVERCURRENT)
    assert told() == (DriveEmergency(6, overcurrent, 0x01, int(
        L.DigitalInput.OVERCURRENT_PRESENT)),)
    assert rig.core.latched is not None and rig.core.latched.axis == 5
