"""The master's PRE-OP configuration steps against a stub slave: each failure names the
slave, the step and the register or object (pysoem's own errors never leave it raw)."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from foosball.ethercat import layout as L
from foosball.ethercat.bus import BusConfig, BusConfigurationError

pysoem = pytest.importorskip("pysoem", reason="needs pysoem (pip install 'foosball[ethercat]')")
from foosball.ethercat.master import PysoemBus, SlaveStep  # noqa: E402


class StubSlave:
    """Registers and objects in dicts; `refuse` makes one SDO download abort, `frozen`
    registers keep their value whatever is written (a stack that ignores the write)."""

    name = "OTHER-DRIVE"

    def __init__(self, refuse: tuple[int, int] | None = None,
                 frozen: frozenset[int] = frozenset()) -> None:
        self.registers: dict[int, bytes] = {0x0400: b"\x00\x00", 0x0420: b"\xe8\x03"}
        self.objects: dict[tuple[int, int], bytes] = {}
        self.refuse = refuse
        self.frozen = frozen

    def _fpwr(self, address: int, data: bytes, timeout_us: int) -> None:
        if address not in self.frozen:
            self.registers[address] = data

    def _fprd(self, address: int, size: int, timeout_us: int) -> bytes:
        return self.registers[address][:size]

    def sdo_write(self, index: int, sub: int, data: bytes) -> None:
        if (index, sub) == self.refuse:
            raise pysoem.SdoError(3, index, sub, 0x0604_0041,
                                  "Object cannot be mapped to the PDO")
        self.objects[(index, sub)] = data

    def sdo_read(self, index: int, sub: int) -> bytes:
        return self.objects[(index, sub)]


def test_the_layout_mapping_is_written_in_cia301_order_and_read_back() -> None:
    slave = StubSlave()
    SlaveStep(slave, 3).write_pdo(L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES)
    assert slave.objects[(L.TXPDO_ASSIGN, 0)] == b"\x01"
    assert slave.objects[(L.TXPDO_ASSIGN, 1)] == struct.pack("<H", L.TXPDO_INDEX)
    assert slave.objects[(L.TXPDO_INDEX, 0)] == bytes([len(L.TXPDO_ENTRIES)])
    assert [struct.unpack("<I", slave.objects[(L.TXPDO_INDEX, n)])[0]
            for n in range(1, len(L.TXPDO_ENTRIES) + 1)] == [
        e.mapping_value for e in L.TXPDO_ENTRIES]


def test_a_refused_sdo_write_names_the_slave_step_and_object() -> None:
    slave = StubSlave(refuse=(L.RXPDO_INDEX, 0))
    with pytest.raises(BusConfigurationError) as refused:
        SlaveStep(slave, 3).write_pdo(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES)
    assert str(refused.value) == (
        "slave 3 (OTHER-DRIVE): PDO 0x1600 from the layout: object 0x1600:00: SDO abort "
        "0x06040041 (Object cannot be mapped to the PDO)")


def test_a_register_that_does_not_take_the_write_names_the_slave_and_register() -> None:
    slave = StubSlave(frozen=frozenset({0x0400}))
    step = SlaveStep(slave, 5)
    step.write_register("process-data watchdog", 0x0420, 500)
    assert slave.registers[0x0420] == struct.pack("<H", 500)
    with pytest.raises(BusConfigurationError, match=r"^slave 5 \(OTHER-DRIVE\): watchdog "
                       r"divider: register 0x0400: wrote 2498, read back 0$"):
        step.write_register("watchdog divider", 0x0400, L.WATCHDOG_DIVIDER)


def _holding(assign: int, pdo: int, entries: tuple[L.PdoEntry, ...],
             slave: StubSlave) -> StubSlave:
    """`slave` with `entries` as its present assignment and mapping."""
    slave.objects[(assign, 0)] = b"\x01"
    slave.objects[(assign, 1)] = struct.pack("<H", pdo)
    slave.objects[(pdo, 0)] = bytes([len(entries)])
    for n, entry in enumerate(entries, start=1):
        slave.objects[(pdo, n)] = struct.pack("<I", entry.mapping_value)
    return slave


class FixedSlave(StubSlave):
    """A drive with a fixed PDO mapping: reads answer, every write aborts read-only."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def sdo_write(self, index: int, sub: int, data: bytes) -> None:
        self.writes += 1
        raise pysoem.SdoError(3, index, sub, 0x0601_0002, "Attempt to write a read only object")


def test_a_mapping_equal_to_the_layout_is_not_written() -> None:
    slave = _holding(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES, FixedSlave())
    SlaveStep(slave, 2).configure_pdo(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES)
    assert slave.writes == 0


def test_a_writable_mapping_that_differs_is_written() -> None:
    slave = _holding(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES[:2], StubSlave())
    SlaveStep(slave, 2).configure_pdo(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES)
    assert SlaveStep(slave, 2).read_pdo(L.RXPDO_ASSIGN) == (
        [L.RXPDO_INDEX], [e.mapping_value for e in L.RXPDO_ENTRIES])


def test_a_fixed_mapping_that_differs_is_refused_naming_expected_and_found() -> None:
    slave = _holding(L.TXPDO_ASSIGN, 0x1A01, L.TXPDO_ENTRIES[:2], FixedSlave())
    with pytest.raises(BusConfigurationError) as refused:
        SlaveStep(slave, 4).configure_pdo(L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES)
    assert str(refused.value) == (
        "slave 4 (OTHER-DRIVE): PDO 0x1a00: object 0x1c13: the drive's PDO mapping is fixed "
        "(SDO abort 0x06010002 (Attempt to write a read only object)) and differs from the "
        "layout: expected 0x1a00 mapping [0x6041:00/16, 0x6061:00/8, 0x6064:00/32, "
        "0x606c:00/32, 0x6078:00/16, 0x603f:00/16, 0x60fd:00/32], found assignment "
        "[0x1a01] mapping [0x6041:00/16, 0x6061:00/8]")


def test_another_abort_while_writing_is_shown_with_its_code_not_as_fixed() -> None:
    slave = _holding(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES[:1],
                     StubSlave(refuse=(L.RXPDO_INDEX, 0)))
    with pytest.raises(BusConfigurationError, match=r"object 0x1600:00: SDO abort 0x06040041 "
                       r"\(Object cannot be mapped to the PDO\)$"):
        SlaveStep(slave, 1).configure_pdo(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES)


class ReconfiguredSlave(FixedSlave):
    """pysoem's slave as recovery meets it: in PRE-OP, and `reconfig()` runs the setup
    step and swallows what it raises (as pysoem does), answering the state reached."""

    def __init__(self) -> None:
        super().__init__()
        self.state = pysoem.PREOP_STATE
        self.al_status = 0
        self.setup_func: Any = None

    def reconfig(self, timeout: int = 500) -> int:
        try:
            self.setup_func(self)
        except Exception:  # what pysoem's callback does with it
            return pysoem.PREOP_STATE
        return pysoem.SAFEOP_STATE


class StubMaster:
    def __init__(self, slaves: list[ReconfiguredSlave]) -> None:
        self.slaves = slaves

    def open(self, iface: str) -> None:
        pass

    def read_state(self) -> None:
        pass


def test_a_reconfiguration_that_fails_in_the_setup_step_is_reported_per_slave() -> None:
    good = _holding(L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES, _holding(
        L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES, ReconfiguredSlave()))
    bad = _holding(L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES, _holding(
        L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES[:2], ReconfiguredSlave()))
    for slave in (good, bad):
        slave.registers[0x0420] = b"\x00\x00"
    bus = PysoemBus(BusConfig(backend="pysoem", iface="stub", drives=2),
                    master=StubMaster([good, bad]))
    for position, slave in enumerate((good, bad), start=1):
        step = SlaveStep(slave, position, 500)
        bus._steps[position] = step
        slave.setup_func = step.configure
    assert bus.recover() is False
    assert list(bus.recovery_errors) == [2]
    assert bus.recovery_errors[2].startswith(
        "slave 2 (OTHER-DRIVE): PDO 0x1600: object 0x1c12: the drive's PDO mapping is fixed")


class SilentSlave(StubSlave):
    """A slave whose first `silent` SDO exchanges get no answer (pysoem's WkcError: a lost
    frame, or an answer too late on a loaded host)."""

    def __init__(self, silent: int) -> None:
        super().__init__()
        self.silent = silent
        self.exchanges = 0

    def _exchange(self) -> None:
        self.exchanges += 1
        if self.silent > 0:
            self.silent -= 1
            raise pysoem.WkcError()

    def sdo_write(self, index: int, sub: int, data: bytes) -> None:
        self._exchange()
        super().sdo_write(index, sub, data)

    def sdo_read(self, index: int, sub: int) -> bytes:
        self._exchange()
        return super().sdo_read(index, sub)


def test_an_sdo_exchange_without_an_answer_is_tried_again() -> None:
    slave = SilentSlave(silent=2)
    SlaveStep(slave, 6).write_pdo(L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES)
    assert SlaveStep(slave, 6).read_pdo(L.TXPDO_ASSIGN) == (
        [L.TXPDO_INDEX], [e.mapping_value for e in L.TXPDO_ENTRIES])


def test_a_slave_that_never_answers_fails_naming_the_object_and_the_tries() -> None:
    slave = SilentSlave(silent=1_000)
    with pytest.raises(BusConfigurationError, match=r"^slave 6 \(OTHER-DRIVE\): PDO 0x1a00 "
                       r"from the layout: object 0x1c13:00: no answer in 3 tries"):
        SlaveStep(slave, 6).write_pdo(L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES)
    assert slave.exchanges == 3


def test_an_abort_is_the_drive_s_answer_and_is_not_tried_again() -> None:
    slave = FixedSlave()
    with pytest.raises(BusConfigurationError, match="SDO abort 0x06010002"):
        SlaveStep(slave, 2).write_pdo(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES)
    assert slave.writes == 1
