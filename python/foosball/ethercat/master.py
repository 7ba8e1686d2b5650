"""The real master: pysoem (SOEM) on a network interface."""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any

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
from foosball.wire.catalogue import DriveEmergency

log = logging.getLogger(__name__)

REG_SM2 = 0x0810
REG_SM3 = 0x0818
REG_RX_ERRORS = 0x0300  # per port: invalid frame counter, RX error counter (1 byte each)
REG_LOST_LINKS = 0x0310  # per port: lost link counter (1 byte)
REG_WD_DIVIDER = 0x0400
REG_WD_TIME_PD = 0x0420
MAILBOX_ERRORS = (pysoem.SdoError, pysoem.MailboxError, pysoem.PacketError, pysoem.WkcError)
SDO_ATTEMPTS = 3  # a configuration SDO without an answer, tried again before it fails
EMERGENCY_READS = 4  # emergencies a drive may have queued before a mailbox answer
# SDO aborts by which a drive says its PDO assignment or mapping cannot be written: read
# only, or not in this state (CiA 301 abort codes)
FIXED_PDO_ABORTS = frozenset({0x0601_0002, 0x0800_0020, 0x0800_0021, 0x0800_0022})


class PysoemBus(EtherCatBus):
    def __init__(self, config: BusConfig, master: Any = None) -> None:
        super().__init__(config)
        # SOEM's master; or an object with its interface (benchmarks/budget.py times this
        # class's own Python per exchange around a stand-in's frames)
        self.master = pysoem.Master() if master is None else master
        self._opened = False
        self._empty_inputs = tuple(L.TxPdo() for _ in range(config.drives))
        self._image = L.ProcessImage(config.drives)
        self._steps: dict[int, SlaveStep] = {}
        # what the last recovery could not do, per slave position (empty: nothing failed)
        self.recovery_errors: dict[int, str] = {}
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
        self.slaves = self._slave_infos()
        return self.slaves

    def _slave_infos(self, counters: Callable[[Any], bool] = lambda _: False,
                     attempts: int = 5) -> list[SlaveInfo]:
        """The slaves with their AL states read from the bus now (pysoem's are a cache of
        its last read, which start() made in PRE-OP); the ESC error counters too of each
        slave `counters` picks (one register read each, `attempts` tries)."""
        self.master.read_state()
        infos = []
        for n, s in enumerate(self.master.slaves):
            rx_errors: tuple[tuple[int, int], ...] = ()
            lost: tuple[int, ...] = ()
            if counters(s):
                try:  # 0x0300-0x0313 in one read: RX errors per port ... lost links per port
                    raw = _read_register(s, REG_RX_ERRORS, REG_LOST_LINKS + 4 - REG_RX_ERRORS,
                                         attempts)
                    rx_errors = tuple((raw[2 * p], raw[2 * p + 1]) for p in range(4))
                    lost = tuple(raw[REG_LOST_LINKS - REG_RX_ERRORS:])
                except BusConfigurationError as exc:
                    log.warning("slave %d: error counters not read: %s", n + 1, exc)
            infos.append(SlaveInfo(
                position=n + 1, name=s.name, identity=L.Identity(s.man, s.id, s.rev),
                al_state=s.state, al_status_code=s.al_status,
                al_status_text=pysoem.al_status_code_to_string(s.al_status),
                rx_errors=rx_errors, lost_links=lost))
        return infos

    def diagnose(self) -> list[SlaveInfo]:
        """Every slave's AL state, AL status code with its text and ESC error counters,
        read now (`foosball ethercat scan`; never from the cycle thread)."""
        return self._slave_infos(counters=lambda _: True)

    def read_states(self) -> list[SlaveInfo]:
        """The bus recovery's read (in the cycle thread, while a fault holds the motors):
        the counters only of a slave that answered but is not in OP, one try each."""
        return self._slave_infos(
            counters=lambda s: s.state not in (pysoem.NONE_STATE, pysoem.OP_STATE), attempts=1)

    def start(self, objects: Sequence[L.StartupObject] = (),
              sync0_s: float = 0.0) -> list[SlaveInfo]:
        """Find and check the slaves, write their configuration in PRE-OP (watchdog,
        PDO assignment and mapping from the layout, the `objects`, each read back; with
        `sync0_s`, distributed clocks and SYNC0 at that period), map, SAFE-OP, OP.
        Any failure is a BusConfigurationError naming the slave, the step and the register
        or object, and leaves every slave in INIT."""
        found = self.scan()
        if not found:
            raise BusConfigurationError(
                f"no EtherCAT slave answered on {self.config.iface!r} "
                f"(expected {self.config.drives} x {L.DEVICE_NAME})")
        try:
            check_slaves(found, self.config.drives, self.config.identity)
            self._configure(objects, sync0_s)
            self._request_op()
            self.slaves = self._slave_infos()
        except Exception as exc:
            self._back_to_init()
            if isinstance(exc, BusConfigurationError):
                raise
            # pysoem's own errors: never a traceback from the service
            raise BusConfigurationError(f"EtherCAT start failed: {_describe(exc)}") from exc
        return self.slaves

    def _configure(self, objects: Sequence[L.StartupObject], sync0_s: float) -> None:
        if self.master.state_check(pysoem.PREOP_STATE, 50_000) != pysoem.PREOP_STATE:
            raise BusConfigurationError(f"slaves did not reach PRE-OP: {self._state_report()}")
        # Every clock set to the first DC slave's (the reference, in each cycle's frame);
        # each slave's SYNC0 is set up by its step (so again after its ESC restarts).
        if sync0_s and not self.master.config_dc():
            raise BusConfigurationError("distributed clocks asked for (distributed_clocks = "
                                        "true), but no slave has them")
        ticks = self._watchdog_ticks()
        self._steps = {}
        for position, slave in enumerate(self.master.slaves, start=1):
            # SOEM calls it in PRE-OP, in config_map and again whenever recovery reconfigures
            # the slave (a drive whose ESC restarted has its reset values back); an error
            # raised in it leaves config_map as it is, and reconfig() says nothing of it:
            # the step keeps its error for recover() to look at
            step = SlaveStep(slave, position, ticks,
                             tuple(o for o in objects if o.position == position),
                             round(sync0_s * 1e9))
            self._steps[position] = step
            # a CoE emergency read by any mailbox exchange (pysoem hands it over here)
            slave.add_emergency_callback(lambda e: self.note_emergency(_emergency(e)))
            slave.setup_func = step.configure
            # the Complete-Access pitfall (facts): not ours, but a replaced board's
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
        self.expected_working_counter = self.master.expected_wkc
        wanted_wkc = 3 * self.config.drives
        if self.expected_working_counter != wanted_wkc:
            raise BusConfigurationError(
                f"expected working counter {self.expected_working_counter}, the layout "
                f"gives {wanted_wkc} (2 per output + 1 per input slave)")

    def _watchdog_ticks(self) -> int:
        ticks = round(self.config.watchdog_ms / 1000.0 / L.WATCHDOG_TICK_S)
        if not 1 <= ticks <= 0xFFFF:
            raise BusConfigurationError(
                f"watchdog_ms = {self.config.watchdog_ms}: the process-data watchdog takes "
                f"{L.WATCHDOG_TICK_S * 1e3:.1f} .. {0xFFFF * L.WATCHDOG_TICK_S * 1e3:.0f} ms")
        return ticks

    def _back_to_init(self) -> None:
        """No slave left beyond INIT by a failed start (asked again after a lost frame)."""
        try:
            for _ in range(3):
                self.master.state = pysoem.INIT_STATE
                self.master.write_state()
                if self.master.state_check(pysoem.INIT_STATE, 50_000) == pysoem.INIT_STATE:
                    return
            log.error("slaves not back in INIT after a failed start: %s", self._state_report())
        except Exception:  # the bus may be gone: the drives' own watchdog stays
            log.exception("could not take the slaves back to INIT")

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
        """The process image packed and unpacked for all drives at once (one precompiled
        struct each way); pysoem gives no view of SOEM's IOmap, so each slave's slice is
        still handed over on its own."""
        slaves = self.master.slaves
        image = self._image
        if len(outputs) != image.drives or len(slaves) != image.drives:  # a short bus
            for slave, rx in zip(slaves, outputs, strict=False):
                slave.output = rx.pack()
        else:
            packed = image.pack_outputs(outputs)
            size = L.RXPDO_SIZE
            for n, slave in enumerate(slaves):
                slave.output = packed[n * size:(n + 1) * size]
        self.master.send_processdata()
        # the wait for the frame lets the other threads (agent-LAN relay) run meanwhile
        wkc = self.master.receive_processdata(self.config.receive_timeout_us, release_gil=True)
        if wkc <= 0:
            return Exchange(wkc, self._empty_inputs)
        if len(slaves) != image.drives:
            return Exchange(wkc, tuple(L.TxPdo.unpack(s.input) for s in slaves))
        return Exchange(wkc, image.unpack_inputs(b"".join([s.input for s in slaves])))

    def reference_time_ns(self) -> int:
        return int(self.master.dc_time)

    def read_object(self, position: int, index: int, subindex: int) -> bytes:
        slave = self.master.slaves[position - 1]
        try:
            # the GIL released: the cycle thread runs while this one waits for the mailbox
            return bytes(slave.sdo_read(index, subindex, release_gil=True))
        except MAILBOX_ERRORS as exc:
            raise BusConfigurationError(f"slave {position}: object 0x{index:04x}:"
                                        f"{subindex:02x}: {_describe(exc)}") from exc

    def read_emergencies(self, position: int) -> None:
        slave = self.master.slaves[position - 1]
        for _ in range(EMERGENCY_READS):
            try:  # an emergency read goes to the slave's callback (note_emergency)
                slave.mbx_receive()
            except MAILBOX_ERRORS as exc:
                log.warning("slave %d: mailbox not read for emergencies: %s", position,
                            _describe(exc))
                return

    def recover(self) -> bool:
        all_op = True
        self.master.read_state()
        for position, slave in enumerate(self.master.slaves, start=1):
            state = slave.state
            if state == pysoem.OP_STATE:
                self.recovery_errors.pop(position, None)
                continue
            all_op = False
            if state == pysoem.SAFEOP_STATE + pysoem.STATE_ERROR:
                slave.state = pysoem.SAFEOP_STATE + pysoem.STATE_ACK
                slave.write_state()
            elif state == pysoem.SAFEOP_STATE:
                slave.state = pysoem.OP_STATE
                slave.write_state()
            elif state > pysoem.NONE_STATE:
                self._reconfigure(position, slave)
            else:
                slave.recover()
        return all_op

    def _reconfigure(self, position: int, slave: Any) -> None:
        """pysoem's reconfig() runs our configuration step and swallows what it raises:
        the step's own record and the state reached say whether it worked."""
        step = self._steps.get(position)
        if step is not None:
            step.error = None
        reached = slave.reconfig()
        problem = None
        if step is not None and step.error is not None:
            problem = str(step.error)
        elif reached != pysoem.SAFEOP_STATE:
            problem = (f"slave {position}: reconfiguration reached state 0x{reached:02x}, not "
                       f"SAFE-OP (AL code 0x{slave.al_status:04x} "
                       f"{pysoem.al_status_code_to_string(slave.al_status)})")
        if problem is None:
            self.recovery_errors.pop(position, None)
        else:
            if self.recovery_errors.get(position) != problem:
                log.error("recovery: %s", problem)
            self.recovery_errors[position] = problem

    def close(self) -> None:
        if self._opened:
            try:
                self.master.state = pysoem.INIT_STATE
                self.master.write_state()
            finally:
                self.master.close()
                self._opened = False


class SlaveStep:
    """One slave's configuration writes in PRE-OP, each read back and compared; errors name
    the slave, the step and the register or object."""

    def __init__(self, slave: pysoem.CdefSlave, position: int, watchdog_ticks: int = 0,
                 objects: tuple[L.StartupObject, ...] = (), sync0_ns: int = 0) -> None:
        self.slave = slave
        self.position = position
        self.watchdog_ticks = watchdog_ticks
        self.objects = objects
        self.sync0_ns = sync0_ns  # SYNC0 period (distributed clocks); 0: free run
        self.error: BusConfigurationError | None = None  # of the last configure()

    def configure(self, _slave: object = None) -> None:
        """Watchdog divider and time; the PDO assignment and mapping of the layout, written
        only where the drive's differ (a drive with a fixed mapping equal to the layout is
        left as it is; one that differs is refused)."""
        try:
            self._configure()
        except BusConfigurationError as exc:
            self.error = exc  # pysoem's reconfig() would swallow it
            raise

    def _configure(self) -> None:
        self.write_register("watchdog divider", REG_WD_DIVIDER, L.WATCHDOG_DIVIDER)
        self.write_register("process-data watchdog", REG_WD_TIME_PD, self.watchdog_ticks)
        self.configure_pdo(L.RXPDO_ASSIGN, L.RXPDO_INDEX, L.RXPDO_ENTRIES)
        self.configure_pdo(L.TXPDO_ASSIGN, L.TXPDO_INDEX, L.TXPDO_ENTRIES)
        if self.sync0_ns:
            self.slave.dc_sync(True, self.sync0_ns)
        if self.objects:
            self.write_objects("startup objects", [(o.index, o.subindex, o.fmt, o.value)
                                                   for o in self.objects])

    def configure_pdo(self, assign: int, pdo: int, entries: tuple[L.PdoEntry, ...]) -> None:
        wanted = [e.mapping_value for e in entries]
        found = self.read_pdo(assign)
        if found is not None and found[1] == wanted:
            return  # already the layout (or fixed and equal to it): nothing to write
        try:
            self.write_pdo(assign, pdo, entries)
        except BusConfigurationError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, pysoem.SdoError) and cause.abort_code in FIXED_PDO_ABORTS):
                raise
            shown = "unreadable" if found is None else (
                f"{_pdo_list(found[0])} mapping {_entries_text(found[1])}")
            raise self.fail(
                f"PDO 0x{pdo:04x}", f"object 0x{assign:04x}",
                f"the drive's PDO mapping is fixed ({_describe(cause)}) and differs from the "
                f"layout: expected 0x{pdo:04x} mapping {_entries_text(wanted)}, found "
                f"{shown}") from cause

    def read_pdo(self, assign: int) -> tuple[list[int], list[int]] | None:
        """The PDOs the drive assigns to this SyncManager and their entries in a row (the
        process image they give); None where the drive does not answer with them."""
        def read(index: int, sub: int, fmt: str) -> int:
            size = struct.calcsize("<" + fmt)
            data = bytes(self.slave.sdo_read(index, sub)[:size]).ljust(size, b"\x00")
            return int(struct.unpack("<" + fmt, data)[0])

        try:
            pdos = [read(assign, n, "H") for n in range(1, read(assign, 0, "B") + 1)]
            mapped = [read(pdo, n, "I") for pdo in pdos
                      for n in range(1, read(pdo, 0, "B") + 1)]
        except MAILBOX_ERRORS as exc:
            log.info("slave %d: PDO assignment 0x%04x not read (%s): writing the layout",
                     self.position, assign, _describe(exc))
            return None
        return pdos, mapped

    def fail(self, step: str, what: str, problem: str) -> BusConfigurationError:
        return BusConfigurationError(
            f"slave {self.position} ({self.slave.name}): {step}: {what}: {problem}")

    def write_register(self, step: str, address: int, value: int) -> None:
        what = f"register 0x{address:04x}"
        data = struct.pack("<H", value)
        try:
            _retry(lambda: self.slave._fpwr(address, data, 20_000))
            back = struct.unpack("<H", _read_register(self.slave, address, 2))[0]
        except (pysoem.WkcError, BusConfigurationError) as exc:
            raise self.fail(step, what, f"not written ({_describe(exc)})") from exc
        if back != value:
            raise self.fail(step, what, f"wrote {value}, read back {back}")

    def write_pdo(self, assign: int, pdo: int, entries: tuple[L.PdoEntry, ...]) -> None:
        """CiA 301's order: assignment off, mapping count 0, entries, count, assignment on."""
        writes = [(assign, 0, "B", 0), (pdo, 0, "B", 0),
                  *((pdo, n, "I", e.mapping_value) for n, e in enumerate(entries, start=1)),
                  (pdo, 0, "B", len(entries)), (assign, 1, "H", pdo), (assign, 0, "B", 1)]
        self.write_objects(f"PDO 0x{pdo:04x} from the layout", writes, check_from=2)

    def write_objects(self, step: str, writes: Sequence[tuple[int, int, str, int]],
                      check_from: int = 0) -> None:
        """Each (index, subindex, struct code, value) written in turn, then those from
        `check_from` on read back and compared."""
        for index, sub, fmt, value in writes:
            self._sdo(step, index, sub, lambda i=index, k=sub, f=fmt, v=value:
                      self.slave.sdo_write(i, k, struct.pack("<" + f, v)))
        for index, sub, fmt, value in writes[check_from:]:
            back = self._sdo(f"{step} (read back)", index, sub,
                             lambda i=index, k=sub: self.slave.sdo_read(i, k))
            size = struct.calcsize("<" + fmt)
            got = struct.unpack("<" + fmt, bytes(back[:size]).ljust(size, b"\x00"))[0]
            if got != value:
                raise self.fail(f"{step} (read back)", f"object 0x{index:04x}:{sub:02x}",
                                f"wrote 0x{value:x}, read back 0x{got:x}")

    def _sdo(self, step: str, index: int, sub: int, call: Callable[[], Any]) -> Any:
        """One SDO exchange. One that got no answer (a frame lost, or the slave's answer
        late on a loaded host: WkcError) is tried again, as SOEM empties the mailbox before
        each exchange and every write here is idempotent; an abort is the drive's answer
        and is not repeated."""
        what = f"object 0x{index:04x}:{sub:02x}"

        def again() -> None:
            log.warning("slave %d: %s: %s: no answer, trying again", self.position, step, what)

        try:
            return _retry(call, SDO_ATTEMPTS, again)
        except pysoem.WkcError as exc:
            raise self.fail(step, what, f"no answer in {SDO_ATTEMPTS} tries "
                            f"({_describe(exc)})") from exc
        except MAILBOX_ERRORS as exc:
            raise self.fail(step, what, _describe(exc)) from exc


def _emergency(emergency: pysoem.Emergency) -> DriveEmergency:
    data = emergency.b1 | emergency.w1 << 8 | emergency.w2 << 24  # 5 bytes, little-endian
    return DriveEmergency(emergency.slave_pos, emergency.error_code, emergency.error_reg, data)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, pysoem.SdoError):
        return f"SDO abort 0x{exc.abort_code:08x} ({exc.desc})"
    if isinstance(exc, pysoem.PacketError):
        # SOEM met a mailbox answer that is not the SDO reply it waited for: often an
        # abort sent in a form SOEM does not read (CoE service 3 instead of 2, facts)
        return (f"the drive's mailbox answer was not an SDO reply SOEM reads (SOEM packet "
                f"error {exc.args}): look at the drive's SDO abort in a capture")
    return f"{type(exc).__name__}: {exc}"


def _pdo_list(pdos: Sequence[int]) -> str:
    return "assignment [" + ", ".join(f"0x{p:04x}" for p in pdos) + "]"


def _entries_text(values: Sequence[int]) -> str:
    """Mapping entries as index:subindex/bits, the way an ESI file lists them."""
    return "[" + ", ".join(f"0x{v >> 16:04x}:{(v >> 8) & 0xFF:02x}/{v & 0xFF}"
                           for v in values) + "]"


def _retry(call: Callable[[], Any], attempts: int = 5,
           again: Callable[[], None] = lambda: None) -> Any:
    """A frame lost on a loaded machine is not a wrong configuration. `again` is called
    before each further attempt."""
    for attempt in range(attempts):
        try:
            return call()
        except pysoem.WkcError:
            if attempt == attempts - 1:
                raise
            again()
    raise AssertionError("unreachable")


def _read_register(slave: pysoem.CdefSlave, address: int, size: int,
                   attempts: int = 5) -> bytes:
    try:
        return bytes(_retry(lambda: slave._fprd(address, size, 20_000),  # type: ignore[arg-type]
                            attempts))
    except pysoem.WkcError:
        raise BusConfigurationError(
            f"slave {slave.name!r}: register 0x{address:04x} unreadable") from None
