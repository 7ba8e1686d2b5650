"""The master's PRE-OP configuration steps against a stub slave: each failure names the
slave, the step and the register or object (pysoem's own errors never leave it raw)."""

from __future__ import annotations

import struct

import pytest

from foosball.ethercat import layout as L
from foosball.ethercat.bus import BusConfigurationError

pysoem = pytest.importorskip("pysoem", reason="needs pysoem (pip install 'foosball[ethercat]')")
from foosball.ethercat.master import SlaveStep  # noqa: E402


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
