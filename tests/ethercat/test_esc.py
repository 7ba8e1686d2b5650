"""The ESC emulator at the frame level, without sockets: datagrams in, datagrams out."""

from __future__ import annotations

import struct
import time

import pytest

from foosball.ethercat import layout as L
from foosball.ethercat.emulator import DriveEmulator, EmulatorConfig
from foosball.ethercat.esc import (
    APRD,
    APWR,
    BRD,
    BWR,
    FPRD,
    FPWR,
    LRW,
    SDO_ABORT_NO_OBJECT,
    SDO_ABORT_NOT_MAPPABLE,
    SDO_ABORT_READ_ONLY,
    SDO_ABORT_STATE,
)

MASTER_MAC = bytes.fromhex("010101010101")


def frame(*datagrams: tuple[int, int, int, bytes]) -> bytes:
    """An Ethernet frame with EtherCAT datagrams (command, ADP, ADO, data)."""
    body = b""
    for n, (command, adp, ado, data) in enumerate(datagrams):
        more = 0x8000 if n < len(datagrams) - 1 else 0
        body += struct.pack("<BBHHHH", command, n, adp & 0xFFFF, ado, len(data) | more, 0)
        body += data + b"\x00\x00"
    header = struct.pack("<H", len(body) | 0x1000)
    return b"\xff" * 6 + MASTER_MAC + b"\x88\xa4" + header + body


def answers(reply: bytes) -> list[tuple[bytes, int]]:
    """(data, working counter) of each datagram in a returned frame."""
    out = []
    offset = 16
    while True:
        _, _, _, _, flags, _ = struct.unpack_from("<BBHHHH", reply, offset)
        length = flags & 0x7FF
        data = reply[offset + 10:offset + 10 + length]
        wkc = struct.unpack_from("<H", reply, offset + 10 + length)[0]
        out.append((data, wkc))
        offset += 12 + length
        if not flags & 0x8000:
            return out


class Master:
    """Just enough of a master to walk the emulator through start-up by hand."""

    def __init__(self, drives: int = 3, **options: object) -> None:
        self.emu = DriveEmulator(EmulatorConfig(drives=drives, alignment_time_s=0.0,
                                                **options))  # type: ignore[arg-type]
        self.now = 0.0
        self.counter = 0  # mailbox counter, 1..7 as SOEM counts

    def send(self, *datagrams: tuple[int, int, int, bytes]) -> list[tuple[bytes, int]]:
        reply = self.emu.handle_frame(frame(*datagrams), self.now)
        assert reply is not None
        return answers(reply)

    def fpwr(self, station: int, ado: int, data: bytes) -> int:
        return self.send((FPWR, station, ado, data))[0][1]

    def fprd(self, station: int, ado: int, length: int) -> bytes:
        data, wkc = self.send((FPRD, station, ado, bytes(length)))[0]
        assert wkc == 1
        return data

    def addresses(self) -> list[int]:
        stations = []
        for position in range(len(self.emu.drives)):
            station = 0x1001 + position
            assert self.send((APWR, -position, 0x0010, struct.pack("<H", station)))[0][1] == 1
            stations.append(station)
        return stations

    def al(self, station: int, state: int) -> tuple[int, int]:
        self.fpwr(station, 0x0120, struct.pack("<H", state))
        status, _, code = struct.unpack("<HHH", self.fprd(station, 0x0130, 6))
        return status, code

    def sm(self, station: int, n: int, start: int, length: int, control: int) -> None:
        self.fpwr(station, 0x0800 + 8 * n, struct.pack("<HHBBBB", start, length, control, 0, 1, 0))

    def to_preop(self, station: int) -> None:
        self.sm(station, 0, L.MAILBOX_OUT_ADDRESS, L.MAILBOX_SIZE, L.SM_CONTROL_MAILBOX_OUT)
        self.sm(station, 1, L.MAILBOX_IN_ADDRESS, L.MAILBOX_SIZE, L.SM_CONTROL_MAILBOX_IN)
        assert self.al(station, 0x12) == (int(L.AlState.PREOP), 0)

    def sdo_request(self, command: int, index: int, sub: int, data: bytes = b"") -> bytes:
        """A CoE SDO request in a whole mailbox, with the next counter (1..7 as SOEM counts)."""
        coe = struct.pack("<HBHB", 2 << 12, command, index, sub) + data.ljust(4, b"\x00")
        self.counter = self.counter % 7 + 1
        mailbox = struct.pack("<HHBB", len(coe), 0, 0, 0x03 | (self.counter << 4)) + coe
        return mailbox.ljust(L.MAILBOX_SIZE, b"\0")

    def sdo(self, station: int, command: int, index: int, sub: int, data: bytes = b"") -> bytes:
        request = self.sdo_request(command, index, sub, data)
        assert self.fpwr(station, L.MAILBOX_OUT_ADDRESS, request) == 1
        assert self.fprd(station, 0x080D, 1)[0] & 0x08  # response waiting
        reply = self.fprd(station, L.MAILBOX_IN_ADDRESS, L.MAILBOX_SIZE)
        assert not self.fprd(station, 0x080D, 1)[0] & 0x08  # read empties it
        return reply


def test_broadcast_read_counts_every_slave_and_auto_increment_addresses_one() -> None:
    master = Master(drives=3)
    assert master.send((BRD, 0, 0x0000, b"\x00\x00"))[0][1] == 3
    assert master.send((APRD, -2, 0x0130, b"\x00\x00"))[0] == (b"\x01\x00", 1)
    assert master.send((BWR, 0, 0x0120, b"\x11\x00"))[0][1] == 3


def test_sii_eeprom_read_gives_identity_and_mailbox_layout() -> None:
    master = Master(drives=2)
    station = master.addresses()[1]
    assert master.fprd(station, 0x0502, 2)[0] & 0x40  # 8-byte reads

    def word(address: int) -> bytes:
        master.fpwr(station, 0x0502, struct.pack("<HI", 0x0100, address))
        return master.fprd(station, 0x0508, 8)

    vendor, product = struct.unpack_from("<II", word(0x08))
    assert (vendor, product) == (L.VENDOR_ID, L.PRODUCT_CODE)
    assert struct.unpack_from("<HHHH", word(0x18)) == (
        L.MAILBOX_OUT_ADDRESS, L.MAILBOX_SIZE, L.MAILBOX_IN_ADDRESS, L.MAILBOX_SIZE)


def test_sdo_upload_download_and_aborts_use_coe_service_two() -> None:
    master = Master(drives=1)
    station = master.addresses()[0]
    master.to_preop(station)
    reply = master.sdo(station, 0x40, 0x1018, 2)
    service, command, index, sub, value = struct.unpack_from("<HBHBI", reply, 6)
    assert (service >> 12, command, index, sub, value) == (3, 0x43, 0x1018, 2, L.PRODUCT_CODE)
    reply = master.sdo(station, 0x40, 0x1008, 0)  # longer than 4 bytes: normal upload
    _, command, _, _, size = struct.unpack_from("<HBHBI", reply, 6)
    assert command == 0x41 and reply[16:16 + size] == L.DEVICE_NAME.encode()
    reply = master.sdo(station, 0x40, 0x2000, 0)
    service, command, _, _, code = struct.unpack_from("<HBHBI", reply, 6)
    assert (service >> 12, command, code) == (2, 0x80, SDO_ABORT_NO_OBJECT)
    reply = master.sdo(station, 0x23, 0x1000, 0, b"\x00\x00\x00\x00")
    _, command, _, _, code = struct.unpack_from("<HBHBI", reply, 6)
    assert (command, code) == (0x80, SDO_ABORT_READ_ONLY)


def test_al_state_machine_refuses_skips_and_bad_process_data_config() -> None:
    master = Master(drives=1)
    station = master.addresses()[0]
    assert master.al(station, 0x04) == (int(L.AlState.INIT) | L.AL_ERROR_FLAG,
                                        L.AL_CODE_INVALID_STATE_CHANGE)
    assert master.al(station, 0x12) == (int(L.AlState.INIT) | L.AL_ERROR_FLAG,
                                        L.AL_CODE_INVALID_MAILBOX_CONFIG)
    master.to_preop(station)
    master.sm(station, 2, L.OUTPUTS_ADDRESS, L.RXPDO_SIZE + 1, L.SM_CONTROL_OUTPUTS)
    master.sm(station, 3, L.INPUTS_ADDRESS, L.TXPDO_SIZE, L.SM_CONTROL_INPUTS)
    assert master.al(station, 0x04) == (int(L.AlState.PREOP) | L.AL_ERROR_FLAG,
                                        L.AL_CODE_INVALID_OUTPUT_CONFIG)


def map_and_go_op(master: Master) -> list[int]:
    stations = master.addresses()
    for n, station in enumerate(stations):
        master.to_preop(station)
        master.sm(station, 2, L.OUTPUTS_ADDRESS, L.RXPDO_SIZE, L.SM_CONTROL_OUTPUTS)
        master.sm(station, 3, L.INPUTS_ADDRESS, L.TXPDO_SIZE, L.SM_CONTROL_INPUTS)
        outputs = n * L.RXPDO_SIZE
        inputs = len(stations) * L.RXPDO_SIZE + n * L.TXPDO_SIZE
        fmmus = struct.pack("<IHBBHBBB3x", outputs, L.RXPDO_SIZE, 0, 7, L.OUTPUTS_ADDRESS, 0, 2, 1)
        fmmus += struct.pack("<IHBBHBBB3x", inputs, L.TXPDO_SIZE, 0, 7, L.INPUTS_ADDRESS, 0, 1, 1)
        master.fpwr(station, 0x0600, fmmus)
        assert master.al(station, 0x04) == (int(L.AlState.SAFEOP), 0)
        assert master.al(station, 0x08) == (int(L.AlState.OP), 0)
    return stations


def lrw(master: Master, outputs: list[L.RxPdo]) -> tuple[list[L.TxPdo], int]:
    n = len(outputs)
    data = b"".join(o.pack() for o in outputs) + bytes(n * L.TXPDO_SIZE)
    returned, wkc = master.send((LRW, 0, 0, data))[0]
    base = n * L.RXPDO_SIZE
    inputs = [L.TxPdo.unpack(returned[base + i * L.TXPDO_SIZE:]) for i in range(n)]
    return inputs, wkc


def test_process_data_through_fmmus_counts_three_per_drive_in_op() -> None:
    master = Master(drives=3)
    map_and_go_op(master)
    _, wkc = lrw(master, [L.RxPdo(0x06)] * 3)
    assert wkc == 9
    inputs, _ = lrw(master, [L.RxPdo(0x07)] * 3)
    assert [tx.state for tx in inputs] == [L.Cia402State.READY_TO_SWITCH_ON] * 3


def test_answering_first_replies_with_published_inputs_and_holds_outputs_until_settled(
        ) -> None:
    master = Master(drives=2)
    map_and_go_op(master)
    lrw(master, [L.RxPdo(0x06)] * 2)  # shutdown: ready to switch on
    emu = master.emu
    emu.settle(master.now)  # the drives publish what they are now

    def answer(control: int) -> list[L.Cia402State]:
        data = L.RxPdo(control).pack() * 2 + bytes(2 * L.TXPDO_SIZE)
        reply = emu.answer(frame((LRW, 0, 0, data)), master.now)
        assert reply is not None
        returned, wkc = answers(reply)[0]
        assert wkc == 6
        return [L.TxPdo.unpack(returned[2 * L.RXPDO_SIZE + n * L.TXPDO_SIZE:]).state
                for n in range(2)]

    assert answer(0x07) == [L.Cia402State.READY_TO_SWITCH_ON] * 2
    assert emu.drives[0].state is L.Cia402State.READY_TO_SWITCH_ON  # switch on: held
    master.now += 0.005
    emu.settle(master.now)
    assert emu.drives[0].state is L.Cia402State.SWITCHED_ON
    assert answer(0x07) == [L.Cia402State.SWITCHED_ON] * 2


@pytest.mark.parametrize("silence_s", [0.03, 0.2])
def test_syncmanager_watchdog_trips_only_after_its_time(silence_s: float) -> None:
    master = Master(drives=2)
    stations = map_and_go_op(master)
    for station in stations:  # 50 ms: 500 ticks of 100 us
        master.fpwr(station, 0x0420, struct.pack("<H", 500))
    lrw(master, [L.RxPdo(0)] * 2)
    master.now += silence_s
    master.emu.advance(master.now)
    status, _, code = struct.unpack("<HHH", master.fprd(stations[0], 0x0130, 6))
    if silence_s < 0.05:
        assert (status, code) == (int(L.AlState.OP), 0)
        assert lrw(master, [L.RxPdo(0)] * 2)[1] == 6
    else:
        assert (status, code) == (int(L.AlState.SAFEOP) | L.AL_ERROR_FLAG,
                                  L.AL_CODE_SM_WATCHDOG)
        assert lrw(master, [L.RxPdo(0)] * 2)[1] == 2  # inputs only: outputs refused


def test_process_data_the_emulator_was_late_for_still_feeds_the_watchdog() -> None:
    """The emulator held off its CPU for 60 ms while the master sent a frame every 5 ms:
    on a wire the slaves saw each at its arrival. The late frames go through them then,
    unanswered, so the 50 ms watchdog does not trip; a late mailbox read is left for the
    master to send again (its answer not consumed)."""
    master = Master(drives=2)
    stations = map_and_go_op(master)
    for station in stations:  # 50 ms: 500 ticks of 100 us
        master.fpwr(station, 0x0420, struct.pack("<H", 500))
    lrw(master, [L.RxPdo(0)] * 2)
    start = master.now
    cyclic = frame((LRW, 0, 0, bytes(2 * (L.RXPDO_SIZE + L.TXPDO_SIZE))))
    status_read = frame((FPRD, stations[0], 0x0130, bytes(6)))
    for n in range(1, 12):  # queued while the emulator was away
        assert master.emu.late(cyclic, start + 0.005 * n)
    assert not master.emu.late(status_read, start + 0.058)
    master.now = start + 0.060  # the emulator is back
    master.emu.settle(master.now)
    assert (master.emu.late_frames, master.emu.stale_frames) == (11, 1)
    assert lrw(master, [L.RxPdo(0)] * 2)[1] == 6  # still in OP: outputs taken
    assert all(s.watchdog_trips == 0 for s in master.emu.chain.slaves)


def test_a_deaf_slave_leaves_op_on_its_own_watchdog_and_its_registers_say_so() -> None:
    """`deaf`: the slave takes no process data (the others do). Its ESC sees no outputs, so
    its SyncManager watchdog expires as a real one would: SAFE-OP + ERROR, 0x001B. Register
    reads still reach it, so a master reads which slave it is and why."""
    master = Master(drives=6)
    stations = map_and_go_op(master)
    for station in stations:
        master.fpwr(station, 0x0420, struct.pack("<H", 500))  # 50 ms
    # axis 5, not axis 1 or 3, whose idle drives equal it (the command once took the first)
    assert master.emu.command("deaf 5 on")["deaf"] == [5]
    wkcs = []
    for _ in range(12):  # 60 ms of 5 ms cycles
        master.now += 0.005
        wkcs.append(lrw(master, [L.RxPdo(0)] * 6)[1])
    assert set(wkcs) == {15}  # short by the deaf slave's 3 from the first frame
    read = [struct.unpack("<HHH", master.fprd(s, 0x0130, 6)) for s in stations]
    in_op = (int(L.AlState.OP), 0)
    assert [(status, code) for status, _, code in read] == [in_op] * 5 + [
        (int(L.AlState.SAFEOP) | L.AL_ERROR_FLAG, L.AL_CODE_SM_WATCHDOG)]


def test_control_channel_injects_and_clears_faults_and_mutes() -> None:
    master = Master(drives=2)
    emu = master.emu
    injected = emu.command("fault 1 overcurrent")
    assert injected["ok"] and injected["at_s"] <= time.monotonic()  # when it took effect
    assert emu.drives[1].causes and not emu.drives[0].causes
    assert emu.command("clear all") == {"ok": True}
    assert not emu.drives[1].causes
    assert not emu.command("fault 9 overcurrent")["ok"]
    assert not emu.command("fault 0 melted")["ok"]
    assert emu.command("mute on")["muted"] is True
    assert emu.handle_frame(frame((BRD, 0, 0, b"\0\0")), 0.0) is None


def test_motion_listeners_see_every_axis_after_each_step() -> None:
    seen: list[tuple[float, int]] = []
    emu = DriveEmulator(EmulatorConfig(drives=8), [lambda t, s: seen.append((t, len(s)))])
    emu.advance(1.0)
    emu.advance(1.002)
    assert seen == [(1.0, 8), (1.002, 8)]


def test_rod_coupling_turns_motor_radians_into_table_poses() -> None:
    from foosball.ethercat.coupling import RodCoupling
    from foosball.geometry import default_table

    table = default_table()
    poses: dict[str, tuple[float, ...]] = {}
    emu = DriveEmulator(EmulatorConfig(drives=8))
    coupling = RodCoupling(table, emu.drives, lambda name, *pose: poses.__setitem__(name, pose))
    emu.listeners.append(coupling)
    goalkeeper = table.robot_rods[0]
    emu.drives[0].position = emu.drives[0].switch_position + 10.0  # 10 motor rad off the switch
    emu.drives[1].position = 0.5
    emu.advance(0.0)
    translation, rotation, _, _ = poses[goalkeeper.name]
    assert translation == pytest.approx(goalkeeper.zero_offset + 10.0 * 0.02 / 5.0)
    assert rotation == pytest.approx(0.5)
    assert len(poses) == 4


def test_complete_access_is_refused_unless_the_pitfall_stack_is_emulated() -> None:
    plain = Master(drives=1)
    station = plain.addresses()[0]
    plain.to_preop(station)
    reply = plain.sdo(station, 0x50, 0x1C00, 0)  # upload request, Complete Access
    assert struct.unpack_from("<HBHBI", reply, 6)[1] == 0x80  # aborted

    quirky = Master(drives=1)
    quirky.emu.chain.slaves[0].complete_access_quirk = True
    station = quirky.addresses()[0]
    quirky.to_preop(station)

    def complete(index: int) -> bytes:
        reply = quirky.sdo(station, 0x50, index, 0)
        _, command, _, _, size = struct.unpack_from("<HBHBI", reply, 6)
        assert command == 0x41
        return reply[16:16 + size]

    assert complete(0x1C00) == bytes([4, 1, 2, 3, 4])  # subindex 0 without its padding
    assert complete(0x1C12) == bytes([1, 0]) + struct.pack("<H", L.RXPDO_INDEX)  # padded


def download(master: Master, station: int, index: int, sub: int, fmt: str,
             value: int) -> int:
    """An expedited SDO download; 0 when accepted, else the abort code."""
    data = struct.pack("<" + fmt, value)
    command = 0x23 | ((4 - len(data)) << 2)
    reply = master.sdo(station, command, index, sub, data)
    _, answer, _, _, code = struct.unpack_from("<HBHBI", reply, 6)
    return 0 if answer == 0x60 else code


def upload(master: Master, station: int, index: int, sub: int) -> int:
    reply = master.sdo(station, 0x40, index, sub)
    return struct.unpack_from("<I", reply, 12)[0]


def write_layout_mapping(master: Master, station: int) -> None:
    """What the master writes in PRE-OP (CiA 301 order)."""
    for assign, pdo, entries in ((L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES),
                                 (L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES)):
        assert download(master, station, assign, 0, "B", 0) == 0
        assert download(master, station, pdo, 0, "B", 0) == 0
        for sub, entry in enumerate(entries, start=1):
            assert download(master, station, pdo, sub, "I", entry.mapping_value) == 0
        assert download(master, station, pdo, 0, "B", len(entries)) == 0
        assert download(master, station, assign, 1, "H", pdo) == 0
        assert download(master, station, assign, 0, "B", 1) == 0


def test_pdo_mapping_is_written_in_preop_only_and_the_process_data_follow_it() -> None:
    master = Master(drives=1, default_mapping="other", watchdog_divider=0)
    station = master.addresses()[0]
    assert struct.unpack("<H", master.fprd(station, 0x0400, 2))[0] == 0  # divider reset to 0
    master.to_preop(station)
    assert upload(master, station, L.RXPDO_INDEX, 0) & 0xFF == 5  # another default mapping
    assert upload(master, station, L.TXPDO_INDEX, 0) & 0xFF == 6
    # CiA 301 rules: entries only while the count is 0; only mappable objects of the direction
    assert download(master, station, L.RXPDO_INDEX, 1, "I", 0x6040_0010) == SDO_ABORT_STATE
    assert download(master, station, L.RXPDO_INDEX, 0, "B", 0) == 0
    assert download(master, station, L.RXPDO_INDEX, 1, "I", 0x6041_0010) == 0  # a TxPDO object
    assert download(master, station, L.RXPDO_INDEX, 0, "B", 1) == SDO_ABORT_NOT_MAPPABLE
    write_layout_mapping(master, station)
    assert [upload(master, station, L.TXPDO_INDEX, n) for n in range(1, 8)] == [
        e.mapping_value for e in L.TXPDO_ENTRIES]
    # the layout's sizes are now right: SAFE-OP, OP, and the fields land where they belong
    master.sm(station, 2, L.OUTPUTS_ADDRESS, L.RXPDO_SIZE, L.SM_CONTROL_OUTPUTS)
    master.sm(station, 3, L.INPUTS_ADDRESS, L.TXPDO_SIZE, L.SM_CONTROL_INPUTS)
    fmmus = struct.pack("<IHBBHBBB3x", 0, L.RXPDO_SIZE, 0, 7, L.OUTPUTS_ADDRESS, 0, 2, 1)
    fmmus += struct.pack("<IHBBHBBB3x", L.RXPDO_SIZE, L.TXPDO_SIZE, 0, 7, L.INPUTS_ADDRESS,
                         0, 1, 1)
    master.fpwr(station, 0x0600, fmmus)
    assert master.al(station, 0x04) == (int(L.AlState.SAFEOP), 0)
    assert master.al(station, 0x08) == (int(L.AlState.OP), 0)
    assert download(master, station, L.RXPDO_ASSIGN, 0, "B", 0) == SDO_ABORT_STATE  # not in OP
    lrw(master, [L.RxPdo(0x06)])
    [tx], wkc = lrw(master, [L.RxPdo(0x07)])
    assert wkc == 3 and tx.state is L.Cia402State.READY_TO_SWITCH_ON


def test_the_other_default_mapping_has_other_sizes_than_the_layout() -> None:
    """A master that keeps the defaults gets 13 / 15 bytes: the layout's SyncManager
    lengths are refused (and pysoem's own would garble every field)."""
    master = Master(drives=1, default_mapping="other")
    station = master.addresses()[0]
    master.to_preop(station)
    master.sm(station, 2, L.OUTPUTS_ADDRESS, L.RXPDO_SIZE, L.SM_CONTROL_OUTPUTS)
    master.sm(station, 3, L.INPUTS_ADDRESS, L.TXPDO_SIZE, L.SM_CONTROL_INPUTS)
    assert master.al(station, 0x04) == (int(L.AlState.PREOP) | L.AL_ERROR_FLAG,
                                        L.AL_CODE_INVALID_OUTPUT_CONFIG)
    report = master.emu.chain.slaves[0].report()
    assert report["outputs_mapped"] == ["0x6040", "0x607a", "0x60ff", "0x6060", "0x6071"]


def test_a_mailbox_request_sent_again_with_its_counter_is_done_once() -> None:
    """SOEM resends a mailbox write whose answer came back late; the slave carries it out
    once, so no second answer waits in the mailbox to pass for the next request's."""
    master = Master(drives=1)
    station = master.addresses()[0]
    master.to_preop(station)
    request = master.sdo_request(0x40, 0x1018, 1)
    for _ in range(2):  # the same frame twice
        assert master.fpwr(station, L.MAILBOX_OUT_ADDRESS, request) == 1
    master.fprd(station, L.MAILBOX_IN_ADDRESS, L.MAILBOX_SIZE)
    assert not master.fprd(station, 0x080D, 1)[0] & 0x08  # nothing more waiting
