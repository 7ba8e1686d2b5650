"""The CiA 402 drive model and the shared PDO layout, without any bus."""

from __future__ import annotations

import pytest

from foosball.ethercat import layout as L
from foosball.ethercat.drive import Cia402Drive, FaultKind, MotorParameters

DT = 0.0005


def run(drive: Cia402Drive, rx: L.RxPdo, seconds: float) -> list[tuple[float, float]]:
    """Apply `rx` every 1 ms for `seconds`; return (velocity, acceleration) per step."""
    trace = []
    for step in range(round(seconds / DT)):
        if step % 2 == 0:
            drive.apply(rx)
        drive.advance(DT)
        trace.append((drive.velocity, drive.acceleration))
    return trace


def enable(drive: Cia402Drive, mode: L.Mode = L.Mode.CYCLIC_SYNC_POSITION) -> None:
    for control in (L.Control.FAULT_RESET, L.Control.SHUTDOWN, L.Control.SWITCH_ON,
                    L.Control.ENABLE_OPERATION):
        drive.apply(L.RxPdo(int(control), int(mode), 0, 0))


def test_pdo_round_trip_and_sizes_match_the_entries() -> None:
    rx = L.RxPdo(0x0F, 8, -123456, 7890)
    tx = L.TxPdo(0x1237, 8, 2**31 - 1, -(2**31), -5, 0x2310, 0x4)
    assert L.RxPdo.unpack(rx.pack()) == rx
    assert L.TxPdo.unpack(tx.pack()) == tx
    assert len(rx.pack()) == L.RXPDO_SIZE == sum(e.bits for e in L.RXPDO_ENTRIES) // 8
    assert len(tx.pack()) == L.TXPDO_SIZE == sum(e.bits for e in L.TXPDO_ENTRIES) // 8


def test_process_image_packs_and_unpacks_all_drives_as_each_alone() -> None:
    image = L.ProcessImage(3)
    rxs = [L.RxPdo(0x0F, 8, -100 * n, n) for n in range(3)]
    txs = tuple(L.TxPdo(0x27 + n, 8, n, -n, 5, 0x2310 * n, 1 << n) for n in range(3))
    assert image.pack_outputs(rxs) == b"".join(rx.pack() for rx in rxs)
    assert image.unpack_inputs(b"".join(tx.pack() for tx in txs)) == txs


def test_the_state_table_decodes_every_statusword_as_the_cia402_coding() -> None:
    def by_coding(statusword: int) -> L.Cia402State:
        for mask, value, state in L._STATE_CODING:
            if statusword & mask == value:
                return state
        return L.Cia402State.NOT_READY_TO_SWITCH_ON

    assert all(L.decode_state(sw) is by_coding(sw) for sw in range(1 << 16))


@pytest.mark.parametrize("state", list(L.Cia402State))
def test_statusword_coding_round_trips(state: L.Cia402State) -> None:
    word = L.STATE_STATUSWORD[state] | L.Status.REMOTE | L.Status.VOLTAGE_ENABLED
    assert L.decode_state(word) is state


def test_counts_saturate_instead_of_wrapping() -> None:
    assert L.rad_to_counts(1e12) == 2**31 - 1
    assert L.rad_s_to_counts(-1e12) == -(2**31)


def test_enable_sequence_reaches_operation_enabled_then_aligns() -> None:
    drive = Cia402Drive(MotorParameters(alignment_time_s=0.1))
    assert drive.tx().state is L.Cia402State.SWITCH_ON_DISABLED
    enable(drive)
    tx = drive.tx()
    assert tx.state is L.Cia402State.OPERATION_ENABLED
    assert tx.statusword & 0x027F == 0x0237
    assert tx.statusword & L.Status.ALIGNING and not tx.statusword & L.Status.ALIGNED
    run(drive, L.RxPdo(0x0F, 8, L.rad_to_counts(5.0), 0), 0.05)
    assert drive.position == 0.0  # commands are ignored while the rotor aligns
    run(drive, L.RxPdo(0x0F, 8, L.rad_to_counts(5.0), 0), 0.06)
    assert drive.tx().statusword & L.Status.ALIGNED


def test_position_mode_reaches_target_within_speed_and_acceleration_limits() -> None:
    params = MotorParameters(max_speed=100.0, max_acceleration=2_000.0, alignment_time_s=0.0)
    drive = Cia402Drive(params)
    enable(drive)
    trace = run(drive, L.RxPdo(0x0F, 8, L.rad_to_counts(20.0), 0), 0.5)
    assert abs(drive.position - 20.0) < 1e-3
    assert max(abs(v) for v, _ in trace) <= params.max_speed + 1e-9
    assert max(abs(a) for _, a in trace) <= params.max_acceleration + 1e-6
    assert drive.tx().statusword & L.Status.TARGET_REACHED


def test_end_switch_is_active_below_the_switch_and_travel_is_bounded() -> None:
    params = MotorParameters(has_end_switch=True, travel_below_switch=0.5, alignment_time_s=0.0)
    drive = Cia402Drive(params, start_above_switch=1.0)
    enable(drive, L.Mode.CYCLIC_SYNC_VELOCITY)
    assert not drive.tx().digital_inputs & L.DigitalInput.HOME_SWITCH
    run(drive, L.RxPdo(0x0F, 9, 0, L.rad_s_to_counts(-10.0)), 0.5)
    assert drive.tx().digital_inputs & L.DigitalInput.HOME_SWITCH
    assert drive.position == pytest.approx(drive.switch_position - 0.5)  # the hard stop


def test_quick_stop_brakes_to_rest_and_stays_there() -> None:
    drive = Cia402Drive(MotorParameters(alignment_time_s=0.0))
    enable(drive, L.Mode.CYCLIC_SYNC_VELOCITY)
    run(drive, L.RxPdo(0x0F, 9, 0, L.rad_s_to_counts(200.0)), 0.1)
    run(drive, L.RxPdo(int(L.Control.QUICK_STOP), 9, 0, L.rad_s_to_counts(200.0)), 0.1)
    assert drive.tx().state is L.Cia402State.QUICK_STOP_ACTIVE
    assert drive.velocity == 0.0


@pytest.mark.parametrize("kind", list(FaultKind))
def test_fault_latches_until_cause_is_gone_and_reset_is_given(kind: FaultKind) -> None:
    drive = Cia402Drive(MotorParameters(alignment_time_s=0.0))
    enable(drive)
    drive.inject(kind)
    run(drive, L.RxPdo(0x0F, 8, 0, 0), 0.01)
    tx = drive.tx()
    assert tx.state is L.Cia402State.FAULT
    assert tx.error_code != 0 and tx.digital_inputs & L.FAULT_CAUSE_INPUTS
    drive.apply(L.RxPdo(0, 8, 0, 0))
    drive.apply(L.RxPdo(int(L.Control.FAULT_RESET), 8, 0, 0))
    assert drive.tx().state is L.Cia402State.FAULT  # cause still present
    drive.clear()
    drive.apply(L.RxPdo(0, 8, 0, 0))
    drive.apply(L.RxPdo(int(L.Control.FAULT_RESET), 8, 0, 0))
    assert drive.tx().state is L.Cia402State.SWITCH_ON_DISABLED
    assert not drive.tx().statusword & L.Status.ALIGNED  # must align again after a fault


def test_a_blocked_rotor_is_detected_as_motor_locked() -> None:
    drive = Cia402Drive(MotorParameters(alignment_time_s=0.0))
    enable(drive)
    drive.mechanically_locked = True
    run(drive, L.RxPdo(0x0F, 8, L.rad_to_counts(10.0), 0), 0.3)
    assert drive.tx().state is L.Cia402State.FAULT
    assert drive.tx().error_code == L.ErrorCode.MOTOR_LOCKED


def test_losing_process_data_while_enabled_is_a_fault() -> None:
    drive = Cia402Drive(MotorParameters(alignment_time_s=0.0))
    enable(drive)
    drive.lose_process_data()
    run_steps = 10
    for _ in range(run_steps):
        drive.advance(DT)
    assert drive.tx().state is L.Cia402State.FAULT
    assert drive.tx().error_code == L.ErrorCode.COMMUNICATION


def test_a_plain_cia402_drive_says_aligned_only_through_the_profile() -> None:
    """No manufacturer bits 14/15: the old profile could never leave alignment; with the
    `none` option the drive is aligned once it follows the command value (bit 12)."""
    drive = Cia402Drive(MotorParameters(alignment_time_s=0.1, alignment_bits=False))
    enable(drive)
    words = [drive.tx().statusword]
    run(drive, L.RxPdo(0x0F, 8, 0, 0), 0.05)
    words.append(drive.tx().statusword)
    assert not any(w & (L.Status.ALIGNING | L.Status.ALIGNED) for w in words)
    assert not any(L.alignment_done(L.Alignment.NONE, w) for w in words)  # still aligning
    run(drive, L.RxPdo(0x0F, 8, 0, 0), 0.06)
    word = drive.tx().statusword
    assert L.decode_state(word) is L.Cia402State.OPERATION_ENABLED
    assert L.alignment_done(L.Alignment.NONE, word)
    assert not L.alignment_done(L.Alignment.MANUFACTURER_BITS, word)


def homing_drive(method: int, **params: object) -> Cia402Drive:
    """A translation drive between end stops, enabled, aligned, given its homing method."""
    drive = Cia402Drive(MotorParameters(has_hard_stops=True, alignment_time_s=0.0, **params),
                        start_above_switch=2.0)
    enable(drive, L.Mode.HOMING)
    drive.write_object(L.HOMING_METHOD, 0, method)
    return drive


HOMING_RX = L.RxPdo(int(L.Control.ENABLE_OPERATION | L.Control.HOMING_START), int(L.Mode.HOMING),
                    0, 0)


def test_homing_into_the_end_stop_sets_the_home_there_without_a_locked_motor_fault() -> None:
    drive = homing_drive(L.HOMING_HARD_STOP_NEGATIVE)
    run(drive, HOMING_RX, 0.1)
    assert not drive.homing_attained and drive.velocity < 0  # on its way to the stop
    run(drive, HOMING_RX, 1.0)
    tx = drive.tx()
    assert tx.statusword & L.Status.HOMING_ATTAINED and tx.statusword & L.Status.TARGET_REACHED
    assert drive.state is L.Cia402State.OPERATION_ENABLED and drive.error_code == L.ErrorCode.NONE
    assert drive.position == pytest.approx(-2.5) and tx.position_actual == 0
    # positions and CSP targets are relative to the home from now on
    run(drive, L.RxPdo(int(L.Control.ENABLE_OPERATION), int(L.Mode.CYCLIC_SYNC_POSITION),
                       L.rad_to_counts(1.0), 0), 0.5)
    assert drive.position == pytest.approx(-1.5, abs=1e-3)
    assert drive.tx().position_actual == pytest.approx(L.rad_to_counts(1.0), abs=20)


def test_homing_where_it_stands_is_done_at_once() -> None:
    drive = homing_drive(L.HOMING_CURRENT_POSITION)
    run(drive, L.RxPdo(int(L.Control.ENABLE_OPERATION), int(L.Mode.CYCLIC_SYNC_POSITION),
                       L.rad_to_counts(0.7), 0), 0.5)
    run(drive, HOMING_RX, DT * 2)
    assert drive.homing_attained and drive.home_reference == pytest.approx(0.7, abs=1e-3)
    assert drive.tx().position_actual == 0


def test_a_method_the_drive_lacks_sets_the_homing_error_bit_and_no_motion() -> None:
    drive = homing_drive(L.HOMING_NEGATIVE_SWITCH)  # between stops, but no switch
    run(drive, HOMING_RX, 0.1)
    assert drive.tx().statusword & L.Status.HOMING_ERROR and not drive.homing_attained
    assert drive.velocity == 0.0
    # another method, bit 4 low and high again: a new homing, the error gone with it
    drive.write_object(L.HOMING_METHOD, 0, L.HOMING_CURRENT_POSITION)
    run(drive, L.RxPdo(int(L.Control.ENABLE_OPERATION), int(L.Mode.HOMING), 0, 0), 0.01)
    run(drive, HOMING_RX, 0.01)
    status = drive.tx().statusword
    assert status & L.Status.HOMING_ATTAINED and not status & L.Status.HOMING_ERROR
