"""The real master: pysoem (SOEM) on a network interface."""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Sequence

import pysoem

from foosball.ethercat import layout as L
from foosball.ethercat.bus import (
    BusConfig,
    BusConfigurationError,
    EtherCatBus,
    Exchange,
    MappedSizes,
    SlaveInfo,
    check_mapping,
    check_slaves,
)

log = logging.getLogger(__name__)

REG_SM2 = 0x0810
REG_SM3 = 0x0818


class PysoemBus(EtherCatBus):
    def __init__(self, config: BusConfig) -> None:
        super().__init__(config)
        self.master = pysoem.Master()
        self._opened = False
        self._empty_inputs = tuple(L.TxPdo() for _ in range(config.drives))
        self._open()  # the socket belongs to the network namespace we are created in

    def _open(self) -> None:
        if self._opened:
            return
        try:
            self.master.open(self.config.iface)
        except ConnectionError as exc:
            raise BusConfigurationError(
                f"cannot open EtherCAT interface {self.config.iface!r}: {exc}") from exc
        self._opened = True

    def scan(self) -> list[SlaveInfo]:
        self._open()
        found = 0
        for _ in range(self.config.discovery_attempts):
            found = self.master.config_init()
            if found > 0:
                break
            time.sleep(self.config.discovery_pause_s)
        if found <= 0:
            self.slaves = []
            return []
        self.slaves = [
            SlaveInfo(position=n + 1, name=s.name, identity=L.Identity(s.man, s.id, s.rev),
                      al_state=s.state, al_status_code=s.al_status)
            for n, s in enumerate(self.master.slaves)
        ]
        return self.slaves

    def start(self) -> list[SlaveInfo]:
        found = self.scan()
        if not found:
            raise BusConfigurationError(
                f"no EtherCAT slave answered on {self.config.iface!r} "
                f"(expected {self.config.drives} x {L.DEVICE_NAME})")
        check_slaves(found, self.config.drives, self.config.identity)
        for slave in self.master.slaves:
            # Belt and braces against the Complete-Access pitfall (facts): our drives do
            # not advertise it, but a replaced board might.
            disable = getattr(slave, "_disable_complete_access", None)
            if disable is not None and not self.config.use_complete_access:
                disable()
        try:
            self.master.config_map()
        except pysoem.ConfigMapError as exc:
            raise BusConfigurationError(f"PDO mapping failed: {exc}") from exc
        if self.master.state_check(pysoem.SAFEOP_STATE, 50_000) != pysoem.SAFEOP_STATE:
            raise BusConfigurationError(f"slaves did not reach SAFEOP: {self._state_report()}")
        check_mapping(self._mapped_sizes())
        for slave in self.master.slaves:
            slave.set_watchdog("processdata", self.config.watchdog_ms)
        self.expected_working_counter = self.master.expected_wkc
        wanted_wkc = 3 * self.config.drives
        if self.expected_working_counter != wanted_wkc:
            raise BusConfigurationError(
                f"expected working counter {self.expected_working_counter}, the layout "
                f"gives {wanted_wkc} (2 per output + 1 per input slave)")
        self._request_op()
        self.slaves = [
            SlaveInfo(position=n + 1, name=s.name, identity=L.Identity(s.man, s.id, s.rev),
                      al_state=s.state, al_status_code=s.al_status)
            for n, s in enumerate(self.master.slaves)
        ]
        return self.slaves

    def _mapped_sizes(self) -> list[MappedSizes]:
        sizes = []
        for n, slave in enumerate(self.master.slaves):
            sm2 = struct.unpack("<HH", _read_register(slave, REG_SM2, 4))[1]
            sm3 = struct.unpack("<HH", _read_register(slave, REG_SM3, 4))[1]
            sizes.append(MappedSizes(n + 1, len(slave.output), len(slave.input), sm2, sm3))
        return sizes

    def _request_op(self) -> None:
        safe = tuple(L.RxPdo(controlword=L.Control.DISABLE_VOLTAGE) for _ in self.master.slaves)
        self.exchange(safe)
        self.master.state = pysoem.OP_STATE
        self.master.write_state()
        for _ in range(200):
            self.exchange(safe)
            if self.master.state_check(pysoem.OP_STATE, 5_000) == pysoem.OP_STATE:
                return
        raise BusConfigurationError(f"slaves did not reach OP: {self._state_report()}")

    def _state_report(self) -> str:
        self.master.read_state()
        return ", ".join(
            f"{n + 1}: state 0x{s.state:02x} AL code 0x{s.al_status:04x} "
            f"({pysoem.al_status_code_to_string(s.al_status)})"
            for n, s in enumerate(self.master.slaves))

    def exchange(self, outputs: Sequence[L.RxPdo]) -> Exchange:
        slaves = self.master.slaves
        for slave, rx in zip(slaves, outputs, strict=False):
            slave.output = rx.pack()
        self.master.send_processdata()
        # the wait for the frame lets the other threads (agent-LAN relay) run meanwhile
        wkc = self.master.receive_processdata(self.config.receive_timeout_us, release_gil=True)
        if wkc <= 0:
            return Exchange(wkc, self._empty_inputs)
        return Exchange(wkc, tuple(L.TxPdo.unpack(s.input) for s in slaves))

    def al_states(self) -> list[tuple[int, int]]:
        self.master.read_state()
        return [(s.state, s.al_status) for s in self.master.slaves]

    def recover(self) -> bool:
        all_op = True
        self.master.read_state()
        for slave in self.master.slaves:
            state = slave.state
            if state == pysoem.OP_STATE:
                continue
            all_op = False
            if state == pysoem.SAFEOP_STATE + pysoem.STATE_ERROR:
                slave.state = pysoem.SAFEOP_STATE + pysoem.STATE_ACK
                slave.write_state()
            elif state == pysoem.SAFEOP_STATE:
                slave.state = pysoem.OP_STATE
                slave.write_state()
            elif state > pysoem.NONE_STATE:
                slave.reconfig()
            else:
                slave.recover()
        return all_op

    def close(self) -> None:
        if self._opened:
            try:
                self.master.state = pysoem.INIT_STATE
                self.master.write_state()
            finally:
                self.master.close()
                self._opened = False


def _read_register(slave: pysoem.CdefSlave, address: int, size: int, attempts: int = 5) -> bytes:
    """FPRD with retries: a frame lost on a loaded machine is not a wrong configuration."""
    for attempt in range(attempts):
        try:
            return bytes(slave._fprd(address, size, timeout_us=20_000))
        except pysoem.WkcError:
            if attempt == attempts - 1:
                raise BusConfigurationError(
                    f"slave {slave.name!r}: register 0x{address:04x} unreadable") from None
    raise AssertionError("unreachable")
