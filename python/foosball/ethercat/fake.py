"""In-process bus for unit tests: the emulator's drive models without frames or sockets.

Time comes from a clock passed in (no wall-clock sleeps in tests). Tests reach the drives
(`bus.drives`) to inject faults and can cut the link (`bus.link_up = False`), spoil the
working counter (`bus.missing_working_counter`) and say what a slave's registers read
(`bus.slave_faults[position] = (AL state, AL status code)`: kept through recoveries, as a
slave that keeps dropping out).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from foosball.ethercat import layout as L
from foosball.ethercat.bus import (
    BusConfig,
    EtherCatBus,
    Exchange,
    SlaveInfo,
    check_slaves,
)
from foosball.ethercat.emulator import EmulatorConfig, make_drive
from foosball.wire.catalogue import DriveEmergency


class FakeBus(EtherCatBus):
    def __init__(self, config: BusConfig, clock: Callable[[], float] = time.monotonic,
                 emulator: EmulatorConfig | None = None) -> None:
        super().__init__(config)
        self.clock = clock
        self.emulator_config = emulator or EmulatorConfig(drives=config.drives)
        self.drives = [make_drive(axis, self.emulator_config)
                       for axis in range(self.emulator_config.drives)]
        self.link_up = True
        self.missing_working_counter = 0
        self.in_op = False
        self.slave_faults: dict[int, tuple[int, int]] = {}  # position -> (AL state, code)
        self._last_s: float | None = None
        self.frames = 0

    def _slaves(self) -> list[SlaveInfo]:
        return [SlaveInfo(n + 1, L.DEVICE_NAME, L.EXPECTED_IDENTITY,
                          int(L.AlState.OP if self.in_op else L.AlState.PREOP))
                for n in range(len(self.drives))]

    def scan(self) -> list[SlaveInfo]:
        self.slaves = self._slaves()
        return self.slaves

    def start(self, objects: Sequence[L.StartupObject] = (),
              sync0_s: float = 0.0) -> list[SlaveInfo]:  # no clocks in the fake
        check_slaves(self.scan(), self.config.drives, self.config.identity)
        for o in objects:
            self.drives[o.position - 1].write_object(o.index, o.subindex, o.value)
        self.expected_working_counter = 3 * len(self.drives)
        self.in_op = True
        self.slaves = self._slaves()
        return self.slaves

    def _advance(self) -> None:
        now = self.clock()
        if self._last_s is not None:
            dt = now - self._last_s
            while dt > 1e-9:
                step = min(dt, 0.0005)
                for drive in self.drives:
                    drive.advance(step)
                dt -= step
        self._last_s = now

    def exchange(self, outputs: Sequence[L.RxPdo]) -> Exchange:
        self.frames += 1
        self._advance()
        if not self.link_up:
            return Exchange(-1, tuple(L.TxPdo() for _ in self.drives))
        if self.in_op:
            for drive, rx in zip(self.drives, outputs, strict=False):
                drive.apply(rx)
        return Exchange(self.expected_working_counter - self.missing_working_counter,
                        tuple(drive.tx() for drive in self.drives))

    def read_emergencies(self, position: int) -> None:
        """As the emulated ESC sends it: the drive's emergency, once per fault."""
        code, register, data = self.drives[position - 1].emergency()
        known = self.emergencies.get(position)
        if code and (known is None or known.error_code != code):
            self.note_emergency(DriveEmergency(position, code, register, data))

    def read_object(self, position: int, index: int, subindex: int) -> bytes:
        if (index, subindex) != (L.ALIGNMENT_OBJECT, 0):
            return super().read_object(position, index, subindex)
        return bytes([self.drives[position - 1].aligned])

    def read_states(self) -> list[SlaveInfo]:
        healthy = (int(L.AlState.OP if self.in_op else L.AlState.SAFEOP), 0)
        states = []
        for info in self._slaves():
            state, code = self.slave_faults.get(info.position, healthy)
            states.append(replace(info, al_state=state, al_status_code=code))  # no SOEM text
        return states

    def recover(self) -> bool:
        if self.link_up:
            self.in_op = True
        return self.in_op and self.link_up and not self.slave_faults

    def close(self) -> None:
        self.in_op = False
