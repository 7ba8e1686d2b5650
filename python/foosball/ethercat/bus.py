"""The EtherCAT bus behind one interface, with backends chosen by configuration.

Like python-can's BusABC: `EtherCatBus` has the few operations the motor driving agent
needs (start: find, check, map and bring the drives to OP; exchange: one cycle of process
data; recover; close). `open_bus(config)` imports only the chosen backend:
"pysoem" (the real master on a network interface) or "fake" (in-process drive models for
unit tests). The checks that decide whether the found bus is the expected one are pure
functions here, so both backends and the tests share them.
"""

from __future__ import annotations

import importlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from foosball.ethercat import layout as L
from foosball.schema import setting
from foosball.wire.catalogue import DriveEmergency

log = logging.getLogger(__name__)

# backend name -> (module, class). The one table of backends.
BACKENDS: dict[str, tuple[str, str]] = {
    "pysoem": ("foosball.ethercat.master", "PysoemBus"),
    "fake": ("foosball.ethercat.fake", "FakeBus"),
}


class BusConfigurationError(RuntimeError):
    """The bus is not the one we expect: the motors must not be driven."""


@dataclass(frozen=True)
class BusConfig:
    backend: str = setting("pysoem", choices=tuple(BACKENDS))
    iface: str = ""
    drives: int = setting(8, low=1, high=64)
    identity: L.Identity = setting(L.EXPECTED_IDENTITY, in_file=False)  # the layout's
    # drives stop this long after the master goes silent (the watchdog's 100 us ticks)
    watchdog_ms: float = setting(50.0, low=1.0, high=6000.0, unit="ms")
    # config_init retries while the segment comes up
    discovery_attempts: int = setting(30, low=1, high=1000)
    discovery_pause_s: float = setting(0.1, above=0.0, high=10.0, unit="s")
    # a start that failed (a mailbox answer lost, a slave refusing SAFE-OP) is tried again
    # from INIT this many times in all before the service gives up
    start_attempts: int = setting(3, low=1, high=20)
    # the pause before the second start, doubled before each further one: starts tried back
    # to back can all fall inside one stall of the host (three in under a second did, on CI)
    start_pause_s: float = setting(0.5, low=0.0, high=10.0, unit="s")
    # see receive_timeout_for(): shorter than the cycle
    receive_timeout_us: int = setting(1500, low=50, high=100_000, unit="us")
    # SOEM maps through CoE Complete Access when a slave advertises it; some stacks answer
    # it wrongly (facts). Off by default; the mapped-size check catches it either way.
    use_complete_access: bool = False


@dataclass(frozen=True)
class SlaveInfo:
    position: int  # 1-based, in wiring order
    name: str
    identity: L.Identity
    al_state: int = 0
    al_status_code: int = 0
    al_status_text: str = ""
    # ESC error counters, per port 0..3: RX errors (0x0300 + 2n: invalid frame, physical
    # layer errors) and lost links (0x0310 + n); empty where not read
    rx_errors: tuple[tuple[int, int], ...] = ()
    lost_links: tuple[int, ...] = ()


@dataclass(frozen=True)
class Exchange:
    """One cycle of process data: the working counter and each drive's inputs."""

    working_counter: int  # < 0: no frame came back
    inputs: tuple[L.TxPdo, ...]


class EtherCatBus(ABC):
    def __init__(self, config: BusConfig) -> None:
        self.config = config
        self.slaves: list[SlaveInfo] = []
        self.expected_working_counter = 0
        # the last CoE emergency of each drive that sent one, and how many were noted
        self.emergencies: dict[int, DriveEmergency] = {}
        self.emergencies_noted = 0

    @abstractmethod
    def scan(self) -> list[SlaveInfo]:
        """Find the slaves on the segment (no mapping, no state change beyond PREOP)."""

    @abstractmethod
    def start(self, objects: Sequence[L.StartupObject] = (),
              sync0_s: float = 0.0) -> list[SlaveInfo]:
        """Find, check identity and count, give each slave its `objects` in PRE-OP (and,
        `sync0_s` > 0, distributed clocks with SYNC0 at that period), map, check mapping,
        reach OP. Raises BusConfigurationError naming what is wrong."""

    @abstractmethod
    def exchange(self, outputs: Sequence[L.RxPdo]) -> Exchange:
        """Send one frame of outputs, return what came back."""

    def read_emergencies(self, position: int) -> None:  # noqa: B027 (a bus may have none)
        """Empty one drive's mailbox of the CoE emergencies it sent (a mailbox exchange:
        never from the cycle thread); they land in `emergencies`."""

    def note_emergency(self, emergency: DriveEmergency) -> None:
        self.emergencies[emergency.position] = emergency  # one assignment: thread-safe
        self.emergencies_noted += 1

    def reference_time_ns(self) -> int:
        """With distributed clocks: the reference clock's time the last frame brought back
        (ns since 2000); 0 without them."""
        return 0

    @abstractmethod
    def read_states(self) -> list[SlaveInfo]:
        """Every slave's AL state (with the error flag) and AL status code, read from the
        bus now; the ESC error counters where the backend reads them cheaply."""

    @abstractmethod
    def recover(self) -> bool:
        """Bring slaves that dropped out of OP back to OP; True when all are in OP."""

    @abstractmethod
    def close(self) -> None: ...

    def read_object(self, position: int, index: int, subindex: int) -> bytes:
        """One object of slave `position` (1-based) by SDO: slow (mailbox round trips), so
        only for what the process data do not carry."""
        raise BusConfigurationError(f"the {self.config.backend} bus cannot read objects")

    def __enter__(self) -> EtherCatBus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def receive_timeout_for(cycle_s: float) -> int:
    """How long a cycle waits for its frame (us): well under the period. SOEM busy-polls
    while it waits; a wait as long as the period keeps a SCHED_FIFO thread spinning after
    one lost frame, until the kernel's real-time throttling stops every real-time task
    (the emulator too) for tens of milliseconds."""
    return int(min(1500.0, 0.4 * cycle_s * 1e6))


def open_bus(config: BusConfig) -> EtherCatBus:
    try:
        module_name, class_name = BACKENDS[config.backend]
    except KeyError:
        raise BusConfigurationError(
            f"unknown EtherCAT backend {config.backend!r}; choose one of {sorted(BACKENDS)}"
        ) from None
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(config)  # type: ignore[no-any-return]


# --- pure checks --------------------------------------------------------------------------------
def check_slaves(found: Sequence[SlaveInfo], expected_count: int,
                 identity: L.Identity) -> None:
    """Raise naming the first missing or unexpected slave."""
    wanted = f"{expected_count} x {L.DEVICE_NAME} ({identity.describe()})"
    for slave in found:
        if slave.identity != identity:
            raise BusConfigurationError(
                f"unexpected slave at position {slave.position}: {slave.name!r} "
                f"({slave.identity.describe()}); expected {L.DEVICE_NAME} "
                f"({identity.describe()})")
    if len(found) < expected_count:
        missing = ", ".join(str(p) for p in range(len(found) + 1, expected_count + 1))
        raise BusConfigurationError(
            f"missing slave(s) at position {missing}: found {len(found)} slave(s), "
            f"expected {wanted}")
    if len(found) > expected_count:
        extra = found[expected_count]
        raise BusConfigurationError(
            f"unexpected slave at position {extra.position}: found {len(found)} slaves, "
            f"expected {wanted}")


@dataclass(frozen=True)
class MappedSizes:
    position: int
    outputs: int  # bytes the master mapped as outputs for this slave
    inputs: int
    sm2_length: int  # process-data SyncManager lengths as the slave holds them
    sm3_length: int


def check_mapping(sizes: Sequence[MappedSizes]) -> None:
    """Refuse a mapping that differs from the shared PDO layout.

    Guards the Complete-Access pitfall: a slave stack that answers subindex 0 without the
    padding SOEM expects gets its outputs mapped as inputs while the working counter still
    matches, so only a size check catches it.
    """
    for s in sizes:
        if (s.outputs, s.inputs) != (L.RXPDO_SIZE, L.TXPDO_SIZE):
            raise BusConfigurationError(
                f"slave {s.position}: master mapped {s.outputs} output / {s.inputs} input "
                f"bytes, the PDO layout says {L.RXPDO_SIZE} / {L.TXPDO_SIZE} (a PDO mapping "
                f"read wrongly, e.g. through Complete Access): refusing to drive")
        if (s.sm2_length, s.sm3_length) != (L.RXPDO_SIZE, L.TXPDO_SIZE):
            raise BusConfigurationError(
                f"slave {s.position}: SyncManager lengths {s.sm2_length} / {s.sm3_length} "
                f"differ from the PDO layout {L.RXPDO_SIZE} / {L.TXPDO_SIZE}: refusing to drive")


def start_bus(bus: EtherCatBus, objects: Sequence[L.StartupObject] = (),
              sync0_s: float = 0.0,
              sleep: Callable[[float], None] = time.sleep) -> list[SlaveInfo]:
    """`bus.start`, tried again after a failure (which leaves every slave in INIT), up to
    `start_attempts` tries in all, `start_pause_s` (then twice that, ...) apart: one mailbox
    answer lost inside SOEM's own PDO-map reads gives a wrong SyncManager length that the
    slave refuses at SAFE-OP, and the next start works. What still fails at the last try is
    raised."""
    attempts = bus.config.start_attempts
    pause = bus.config.start_pause_s
    for attempt in range(1, attempts):
        try:
            return bus.start(objects, sync0_s)
        except BusConfigurationError as exc:
            log.warning("EtherCAT start failed (attempt %d of %d), every slave back in INIT, "
                        "starting again in %.1f s: %s", attempt, attempts, pause, exc)
        sleep(pause)
        pause *= 2
    return bus.start(objects, sync0_s)
