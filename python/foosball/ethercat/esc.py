# Over 500 lines: one emulated ESC answering SOEM's bring-up in the order SOEM asks
# (facts/ethercat-soem.md); its sections (SII, object dictionary, the slave) follow that order.
"""An EtherCAT slave controller (ESC) in software: enough of one for SOEM to reach OP.

One `EscSlave` per drive: register space and process RAM, the SII EEPROM (identity,
mailbox, General, FMMU and SyncManager categories), the AL state machine, FMMU logical
mapping, mailbox SyncManagers carrying CoE SDO upload/download (with aborts), and the
process-data SyncManager watchdog. `EscChain` passes each datagram through the slaves in
order, as the frame would travel down the line, and counts the working counter.

What SOEM reads and writes, and in which order, is written down in
../shared/facts/ethercat-soem.md; this module answers exactly that, nothing more (no
distributed clocks, no EoE/FoE, no redundancy).
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from foosball.ethercat import layout as L
from foosball.ethercat.drive import Cia402Drive

MEMORY_SIZE = 0x1400

# datagram commands
NOP, APRD, APWR, APRW, FPRD, FPWR, FPRW, BRD, BWR, BRW, LRD, LWR, LRW, ARMW, FRMW = range(15)
_READS = {APRD, APRW, FPRD, FPRW, BRD, BRW, LRD, LRW, ARMW, FRMW}
_WRITES = {APWR, APRW, FPWR, FPRW, BWR, BRW, LWR, LRW}

REG_STATION_ADDRESS = 0x0010
REG_DL_STATUS = 0x0110
REG_AL_CONTROL = 0x0120
REG_AL_STATUS = 0x0130
REG_AL_STATUS_CODE = 0x0134
REG_WD_DIVIDER = 0x0400
REG_WD_TIME_PD = 0x0420
REG_WD_STATUS_PD = 0x0440
REG_EEPROM_CONTROL = 0x0502
REG_EEPROM_ADDRESS = 0x0504
REG_EEPROM_DATA = 0x0508
REG_FMMU = 0x0600
REG_SM = 0x0800
# distributed clocks: receive times latched by a write to 0x0900, the local time of that
# latch (0x0918), the system time (0x0910) and its offset (0x0920), SYNC0 activation
# (0x0981) and cycle (0x09A0)
REG_DC_RECEIVE_TIMES = 0x0900
REG_DC_SYSTEM_TIME = 0x0910
REG_DC_RECEIVE_TIME_UNIT = 0x0918
REG_DC_SYSTEM_OFFSET = 0x0920
REG_DC_ACTIVATION = 0x0981
REG_DC_SYNC0_CYCLE = 0x09A0
DC_SYNC0_ACTIVE = 0x03  # cyclic operation and SYNC0 on

SDO_ABORT_UNSUPPORTED = 0x0504_0001  # client/server command specifier not valid
SDO_ABORT_READ_ONLY = 0x0601_0002
SDO_ABORT_WRITE_ONLY = 0x0601_0001
SDO_ABORT_NO_OBJECT = 0x0602_0000
SDO_ABORT_NO_SUBINDEX = 0x0609_0011
SDO_ABORT_LENGTH = 0x0607_0010
SDO_ABORT_STATE = 0x0800_0022  # not possible in the present device state
SDO_ABORT_NOT_MAPPABLE = 0x0604_0041  # object cannot be mapped to the PDO
SDO_ABORT_VALUE_RANGE = 0x0609_0030  # value range of parameter exceeded


# --- SII EEPROM ------------------------------------------------------------------------------
def _crc8_sii(data: bytes) -> int:
    crc = 0xFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def _category(kind: int, payload: bytes) -> bytes:
    if len(payload) % 2:
        payload += b"\x00"
    return struct.pack("<HH", kind, len(payload) // 2) + payload


def build_sii(identity: L.Identity, name: str = L.DEVICE_NAME, serial: int = 0,
              coe_details: int = L.COE_DETAILS, outputs_size: int = L.RXPDO_SIZE,
              inputs_size: int = L.TXPDO_SIZE) -> bytes:
    words = bytearray(0x80)  # words 0x00-0x3F
    struct.pack_into("<HHHHH", words, 0, 0x0005, 0x0000, 0x0000, 0x0000, 0x0000)
    words[14] = _crc8_sii(bytes(words[:14]))
    struct.pack_into("<IIII", words, 0x08 * 2, identity.vendor_id, identity.product_code,
                     identity.revision, serial)
    struct.pack_into("<HHHH", words, 0x18 * 2, L.MAILBOX_OUT_ADDRESS, L.MAILBOX_SIZE,
                     L.MAILBOX_IN_ADDRESS, L.MAILBOX_SIZE)
    struct.pack_into("<H", words, 0x1C * 2, L.MAILBOX_PROTOCOL_COE)
    struct.pack_into("<HH", words, 0x3E * 2, 0x0001, 0x0001)
    encoded_name = name.encode("ascii")
    strings = bytes([1, len(encoded_name)]) + encoded_name
    general = bytearray(32)
    general[3] = 1  # name = string 1
    general[5] = coe_details
    fmmu = bytes([0x01, 0x02])  # FMMU0 outputs, FMMU1 inputs
    sm = b"".join(struct.pack("<HHBBBB", start, length, control, 0, 1, kind) for
                  start, length, control, kind in (
                      (L.MAILBOX_OUT_ADDRESS, L.MAILBOX_SIZE, L.SM_CONTROL_MAILBOX_OUT, 1),
                      (L.MAILBOX_IN_ADDRESS, L.MAILBOX_SIZE, L.SM_CONTROL_MAILBOX_IN, 2),
                      (L.OUTPUTS_ADDRESS, outputs_size, L.SM_CONTROL_OUTPUTS, 3),
                      (L.INPUTS_ADDRESS, inputs_size, L.SM_CONTROL_INPUTS, 4)))
    body = (_category(10, strings) + _category(30, bytes(general)) + _category(40, fmmu)
            + _category(41, sm) + b"\xff\xff")
    return bytes(words) + body


# --- object dictionary -----------------------------------------------------------------------
class SdoAbort(Exception):
    """A download the object refuses; `code` is the SDO abort code sent back."""

    def __init__(self, code: int) -> None:
        super().__init__(f"SDO abort 0x{code:08x}")
        self.code = code


@dataclass
class OdEntry:
    fmt: str  # struct code, or "s" for a visible string
    value: int | str
    writable: bool = False
    getter: Callable[[], int] | None = None
    setter: Callable[[int], None] | None = None  # may raise SdoAbort

    def encode(self) -> bytes:
        if self.fmt == "s":
            return str(self.value).encode("ascii")
        value = self.getter() if self.getter else self.value
        return struct.pack("<" + self.fmt, value)


# Objects a PDO may carry besides the layout's: the torque pair another drive's default
# mapping has (an emulator option), never mapped by our master.
TARGET_TORQUE = L.PdoEntry(0x6071, 0, 16, "target_torque", "h")
TORQUE_ACTUAL = L.PdoEntry(0x6077, 0, 16, "torque_actual", "h")
MAPPABLE_RX = {(e.index, e.subindex): e for e in (*L.RXPDO_ENTRIES, TARGET_TORQUE)}
MAPPABLE_TX = {(e.index, e.subindex): e for e in (*L.TXPDO_ENTRIES, TORQUE_ACTUAL)}
MAX_MAPPED_ENTRIES = 8

# Another stack's default PDO mapping (an emulator option): other order, other objects,
# other sizes. A master that trusts the defaults maps 13 / 15 bytes and garbles the fields.
_RX = {e.name: e for e in L.RXPDO_ENTRIES}
_TX = {e.name: e for e in L.TXPDO_ENTRIES}
OTHER_DEFAULT_RX = (_RX["controlword"], _RX["target_position"], _RX["target_velocity"],
                    _RX["modes_of_operation"], TARGET_TORQUE)
OTHER_DEFAULT_TX = (_TX["statusword"], _TX["position_actual"], _TX["velocity_actual"],
                    TORQUE_ACTUAL, _TX["error_code"], _TX["modes_of_operation_display"])
DEFAULT_MAPPINGS: dict[str, tuple[tuple[L.PdoEntry, ...], tuple[L.PdoEntry, ...]]] = {
    "layout": (L.RXPDO_ENTRIES, L.TXPDO_ENTRIES),
    "other": (OTHER_DEFAULT_RX, OTHER_DEFAULT_TX),
}


class PdoChannel:
    """One direction's PDO configuration as the slave holds it: the assignment object
    (0x1C12/0x1C13, one PDO) and the mapping object (0x1600/0x1A00), writable in PRE-OP
    only, with CiA 301's rules (entries change only while subindex 0 is 0; a count is
    accepted only when every entry names a mappable object of this direction). A `fixed`
    channel is a drive with a fixed PDO mapping: readable, every write aborted read-only."""

    def __init__(self, assign_index: int, pdo_index: int,
                 mappable: dict[tuple[int, int], L.PdoEntry],
                 default: tuple[L.PdoEntry, ...], layout: tuple[L.PdoEntry, ...],
                 in_preop: Callable[[], bool], fixed: bool = False) -> None:
        self.assign_index, self.pdo_index = assign_index, pdo_index
        self.fixed = fixed
        self.writes_refused = 0
        self.mappable, self.layout, self.in_preop = mappable, layout, in_preop
        self.raw = [e.mapping_value for e in default] + [0] * (MAX_MAPPED_ENTRIES - len(default))
        self.count = len(default)
        self.assigned = 1
        self.entries: tuple[L.PdoEntry, ...] = tuple(default)
        self.struct = struct.Struct("<" + "".join(e.fmt for e in self.entries))

    @property
    def size(self) -> int:
        return self.struct.size if self.assigned else 0

    @property
    def is_layout(self) -> bool:
        return self.assigned == 1 and self.entries == self.layout

    def objects(self) -> dict[tuple[int, int], OdEntry]:
        od = {(self.assign_index, 0): OdEntry("B", 0, True, lambda: self.assigned,
                                               self._set_assigned),
              (self.assign_index, 1): OdEntry("H", 0, True, lambda: self.pdo_index,
                                               self._set_assigned_pdo),
              (self.pdo_index, 0): OdEntry("B", 0, True, lambda: self.count, self._set_count)}
        for sub in range(1, MAX_MAPPED_ENTRIES + 1):
            od[(self.pdo_index, sub)] = OdEntry(
                "I", 0, True, lambda sub=sub: self.raw[sub - 1],
                lambda value, sub=sub: self._set_entry(sub, value))
        return od

    def _writable(self) -> None:
        if self.fixed:
            self.writes_refused += 1
            raise SdoAbort(SDO_ABORT_READ_ONLY)
        if not self.in_preop():
            raise SdoAbort(SDO_ABORT_STATE)

    def _set_assigned(self, value: int) -> None:
        self._writable()
        if value > 1:
            raise SdoAbort(SDO_ABORT_VALUE_RANGE)
        self.assigned = value

    def _set_assigned_pdo(self, value: int) -> None:
        self._writable()
        if self.assigned:
            raise SdoAbort(SDO_ABORT_STATE)  # change the assignment only while it is off
        if value != self.pdo_index:
            raise SdoAbort(SDO_ABORT_VALUE_RANGE)  # this slave has one PDO per direction

    def _set_entry(self, sub: int, value: int) -> None:
        self._writable()
        if self.count:
            raise SdoAbort(SDO_ABORT_STATE)
        self.raw[sub - 1] = value

    def _set_count(self, count: int) -> None:
        self._writable()
        if count > MAX_MAPPED_ENTRIES:
            raise SdoAbort(SDO_ABORT_VALUE_RANGE)
        entries = []
        for value in self.raw[:count]:
            entry = self.mappable.get((value >> 16, (value >> 8) & 0xFF))
            if entry is None or entry.bits != value & 0xFF:
                raise SdoAbort(SDO_ABORT_NOT_MAPPABLE)
            entries.append(entry)
        self.count = count
        self.entries = tuple(entries)
        self.struct = struct.Struct("<" + "".join(e.fmt for e in self.entries))


def build_object_dictionary(identity: L.Identity, serial: int,
                            drive: Cia402Drive) -> dict[tuple[int, int], OdEntry]:
    od: dict[tuple[int, int], OdEntry] = {
        (0x1000, 0): OdEntry("I", L.DEVICE_TYPE),
        (0x1008, 0): OdEntry("s", L.DEVICE_NAME),
        (0x1018, 0): OdEntry("B", 4),
        (0x1018, 1): OdEntry("I", identity.vendor_id),
        (0x1018, 2): OdEntry("I", identity.product_code),
        (0x1018, 3): OdEntry("I", identity.revision),
        (0x1018, 4): OdEntry("I", serial),
        (0x1C00, 0): OdEntry("B", 4),
        (0x6085, 0): OdEntry("I", round(drive.params.quick_stop_deceleration
                                        * L.VELOCITY_COUNTS_PER_RAD_S)),
        (0x607F, 0): OdEntry("I", round(drive.params.max_speed * L.VELOCITY_COUNTS_PER_RAD_S)),
        (0x60C5, 0): OdEntry("I", round(drive.params.max_acceleration
                                        * L.VELOCITY_COUNTS_PER_RAD_S)),
        (L.ALIGNMENT_OBJECT, 0): OdEntry("B", 0, getter=lambda: int(drive.aligned)),
        (L.HOMING_SPEEDS, 0): OdEntry("B", 2),
        (TARGET_TORQUE.index, 0): OdEntry("h", 0),
        (TORQUE_ACTUAL.index, 0): OdEntry("h", 0),
    }
    for sub, kind in enumerate((1, 2, 3, 4), start=1):
        od[(0x1C00, sub)] = OdEntry("B", kind)
    # the drive's own homing: method and speeds, kept by the drive model
    for index, sub, fmt in ((L.HOMING_METHOD, 0, "b"), (L.HOMING_SPEEDS, 1, "I"),
                            (L.HOMING_SPEEDS, 2, "I")):
        od[(index, sub)] = OdEntry(
            fmt, 0, writable=True,
            getter=lambda i=index, k=sub: drive.read_object(i, k),
            setter=lambda v, i=index, k=sub: drive.write_object(i, k, v))
    # the process objects are readable by SDO too (the supervisory tools use that)
    for entry in L.TXPDO_ENTRIES:
        od[(entry.index, entry.subindex)] = OdEntry(
            entry.fmt, 0, getter=lambda name=entry.name: getattr(drive.tx(), _tx_field(name)))
    for entry in L.RXPDO_ENTRIES:
        od[(entry.index, entry.subindex)] = OdEntry(
            entry.fmt, 0, getter=lambda name=entry.name: getattr(drive.rx, _rx_field(name)))
    return od


def _tx_field(name: str) -> str:
    return {"modes_of_operation_display": "mode_display"}.get(name, name)


def _rx_field(name: str) -> str:
    return {"modes_of_operation": "mode"}.get(name, name)


# --- the slave ------------------------------------------------------------------------------------
@dataclass
class _Fmmu:
    logical_start: int
    length: int
    physical_start: int
    kind: int  # 1 read (slave -> master), 2 write (master -> slave)


class EscSlave:
    def __init__(self, drive: Cia402Drive, identity: L.Identity = L.EXPECTED_IDENTITY,
                 serial: int = 0, last_in_line: bool = False,
                 complete_access_quirk: bool = False,
                 watchdog_divider: int = L.WATCHDOG_DIVIDER,
                 default_mapping: str = "layout", fixed_mapping: bool = False,
                 needs_dc: bool = False) -> None:
        self.drive = drive
        # a drive run from distributed clocks: it says it has them (feature register bit 2)
        # and goes to SAFE-OP only with SYNC0 active at a cycle (AL code 0x0030 else)
        self.needs_dc = needs_dc
        self.identity = identity
        # The quirk reproduces the slave stack of the facts' Complete-Access pitfall: it
        # advertises Complete Access, answers subindex 0 of 0x1C00 without the 16-bit
        # padding, and accepts whatever process-data SyncManager set-up it is given.
        self.complete_access_quirk = complete_access_quirk
        self.watchdog_divider_reset = watchdog_divider  # another stack resets it to 0
        self.al_state = L.AlState.INIT
        default_rx, default_tx = DEFAULT_MAPPINGS[default_mapping]

        def in_preop() -> bool:
            return self.al_state == L.AlState.PREOP

        self.rx_pdo = PdoChannel(L.RXPDO_ASSIGN, L.RXPDO_INDEX, MAPPABLE_RX, default_rx,
                                 L.RXPDO_ENTRIES, in_preop, fixed_mapping)
        self.tx_pdo = PdoChannel(L.TXPDO_ASSIGN, L.TXPDO_INDEX, MAPPABLE_TX, default_tx,
                                 L.TXPDO_ENTRIES, in_preop, fixed_mapping)
        coe = L.COE_DETAILS | (0x20 if complete_access_quirk else 0)
        self.sii = build_sii(identity, serial=serial, coe_details=coe,
                             outputs_size=self.rx_pdo.size, inputs_size=self.tx_pdo.size)
        self.od = build_object_dictionary(identity, serial, drive)
        self.od.update(self.rx_pdo.objects())
        self.od.update(self.tx_pdo.objects())
        self.mem = bytearray(MEMORY_SIZE)
        # an emulated line fault: error counter register -> the count it shows (see write)
        self.line_errors: dict[int, int] = {}
        self.al_error = False
        self.al_code = 0
        self.fmmus: list[_Fmmu] = []
        self.mailbox_responses: deque[bytes] = deque()
        self._emergency_sent = 0  # the error code of the last emergency queued
        # emulated loss on the way back: the frames that read this many answers out of the
        # mailbox are not returned (the ESC took the answer; the master never sees it)
        self.mailbox_answers_to_lose = 0
        self.answer_lost = False  # the frame being processed read one of those
        # ETG.1000.4: a mailbox request with the counter of the one before is a repeat and
        # is not carried out again (SOEM resends a write whose answer came back late; done
        # twice, its second answer would wait in the mailbox and pass for the next one's)
        self._last_request_counter = 0
        self.last_outputs_s = 0.0
        self.watchdog_trips = 0
        self.now_s = 0.0
        # Outputs taken from a frame reach the drive at once, or (hold_outputs) only when
        # apply_held_outputs() is called: the emulator answers first and moves the drives on
        # after, with the outputs they had until that frame.
        self.hold_outputs = False
        self._held: L.RxPdo | None = None
        self._init_registers(last_in_line)

    # --- registers -------------------------------------------------------------------------
    def _init_registers(self, last_in_line: bool) -> None:
        m = self.mem
        m[0x0000] = 0x04  # type
        m[0x0004] = 3  # FMMUs
        m[0x0005] = 4  # SyncManagers
        m[0x0006] = 4  # process RAM, KB
        m[0x0007] = 0x0F  # port descriptor
        struct.pack_into("<H", m, 0x0008, 0x0004 if self.needs_dc else 0x0000)  # features
        m[0x0140] = 0x05
        dl_status = 0x5000 | 0x0200 | 0x0011  # port 0 open + communication, PDI operational
        dl_status |= 0x0400 if last_in_line else 0x0800 | 0x0020  # port 1 closed / open
        struct.pack_into("<H", m, REG_DL_STATUS, dl_status)
        struct.pack_into("<H", m, REG_WD_DIVIDER, self.watchdog_divider_reset)
        struct.pack_into("<H", m, REG_WD_TIME_PD, 1000)
        struct.pack_into("<H", m, REG_EEPROM_CONTROL, 0x0040)  # 8-byte reads
        self._write_al_status()

    def _write_al_status(self) -> None:
        struct.pack_into("<H", self.mem, REG_AL_STATUS,
                         int(self.al_state) | (L.AL_ERROR_FLAG if self.al_error else 0))
        struct.pack_into("<H", self.mem, REG_AL_STATUS_CODE, self.al_code)

    @property
    def station_address(self) -> int:
        return struct.unpack_from("<H", self.mem, REG_STATION_ADDRESS)[0]

    def _sm(self, n: int) -> tuple[int, int, int, int]:
        start, length, control, _status, activate, _pdi = struct.unpack_from(
            "<HHBBBB", self.mem, REG_SM + 8 * n)
        return start, length, control, activate

    def _sm_active(self, n: int) -> bool:
        return bool(self._sm(n)[3] & 0x01)

    def _set_sm_full(self, n: int, full: bool) -> None:
        address = REG_SM + 8 * n + 5
        self.mem[address] = (self.mem[address] | 0x08) if full else (self.mem[address] & ~0x08)

    def watchdog_time_s(self) -> float:
        divider = struct.unpack_from("<H", self.mem, REG_WD_DIVIDER)[0]
        ticks = struct.unpack_from("<H", self.mem, REG_WD_TIME_PD)[0]
        return ticks * (divider + 2) * 40e-9

    # --- memory access with side effects ---------------------------------------------------
    def read(self, address: int, length: int) -> bytes:
        if self.needs_dc and address < REG_DC_SYSTEM_TIME + 8 and address + length > \
                REG_DC_SYSTEM_TIME:
            struct.pack_into("<Q", self.mem, REG_DC_SYSTEM_TIME, self._system_time_ns())
        data = bytes(self.mem[address:address + length]).ljust(length, b"\x00")
        start, size, _, _ = self._sm(1)
        if (self._sm_active(1) and size and address <= start + size - 1 < address + length
                and self.mem[REG_SM + 8 + 5] & 0x08):
            if self.mailbox_answers_to_lose > 0:
                self.mailbox_answers_to_lose -= 1
                self.answer_lost = True
            self._set_sm_full(1, False)
            self._next_mailbox_response()
        return data

    def write(self, address: int, data: bytes) -> None:
        end = address + len(data)
        if address >= MEMORY_SIZE:
            return
        keep = {}
        for ro in (REG_AL_STATUS, REG_AL_STATUS + 1, REG_AL_STATUS_CODE, REG_AL_STATUS_CODE + 1,
                   REG_DL_STATUS, REG_DL_STATUS + 1, *(REG_SM + 8 * n + 5 for n in range(4))):
            if address <= ro < end:
                keep[ro] = self.mem[ro]
        self.mem[address:min(end, MEMORY_SIZE)] = data[:MEMORY_SIZE - address]
        for ro, value in keep.items():
            self.mem[ro] = value
        if self.needs_dc and address <= REG_DC_RECEIVE_TIMES < end:  # latch receive times
            local = self._local_time_ns()
            struct.pack_into("<IIII", self.mem, REG_DC_RECEIVE_TIMES, *(local & 0xFFFFFFFF,) * 4)
            struct.pack_into("<Q", self.mem, REG_DC_RECEIVE_TIME_UNIT, local)

        def touches(lo: int, hi: int) -> bool:
            return address < hi and end > lo

        if self.line_errors and touches(0x0300, 0x0314):
            # a write clears the error counters; a line that keeps erroring counts again
            for register, count in self.line_errors.items():
                self.mem[register] = count

        if touches(REG_SM, REG_SM + 32):
            self._sm_config_changed()
        if touches(REG_FMMU, REG_FMMU + 0x100):
            self._parse_fmmus()
        if touches(REG_EEPROM_CONTROL, REG_EEPROM_CONTROL + 2):
            self._eeprom_command()
        if touches(REG_AL_CONTROL, REG_AL_CONTROL + 2):
            self._al_request(struct.unpack_from("<H", self.mem, REG_AL_CONTROL)[0])
        start, size, _, _ = self._sm(0)
        if self._sm_active(0) and size and address <= start + size - 1 < end:
            self._mailbox_received(bytes(self.mem[start:start + size]))
        start, size, _, _ = self._sm(2)
        if self._sm_active(2) and size and touches(start, start + size):
            self._outputs_written(bytes(self.mem[start:start + size]))

    # --- AL state machine --------------------------------------------------------------------
    def _al_request(self, value: int) -> None:
        requested, ack = value & 0x0F, bool(value & 0x10)
        if self.al_error and not ack and requested >= self.al_state:
            return  # an error must be acknowledged before going up (or staying)
        if ack:
            self.al_error, self.al_code = False, 0
        current = self.al_state
        error = 0
        if requested not in {int(s) for s in L.AlState}:
            error = L.AL_CODE_UNKNOWN_STATE
        elif requested == L.AlState.INIT:
            self._enter(L.AlState.INIT)
        elif requested == L.AlState.PREOP:
            if current == L.AlState.INIT:
                error = 0 if self._mailbox_config_ok() else L.AL_CODE_INVALID_MAILBOX_CONFIG
            if not error:
                self._enter(L.AlState.PREOP)
        elif requested == L.AlState.SAFEOP:
            if current == L.AlState.PREOP:
                error = self._process_data_config_error()
            elif current not in (L.AlState.SAFEOP, L.AlState.OP):
                error = L.AL_CODE_INVALID_STATE_CHANGE
            if not error:
                self._enter(L.AlState.SAFEOP)
        elif requested == L.AlState.OP:
            if current not in (L.AlState.SAFEOP, L.AlState.OP):
                error = L.AL_CODE_INVALID_STATE_CHANGE
            else:
                self.last_outputs_s = self.now_s
                self._enter(L.AlState.OP)
        else:  # BOOT: no firmware update through this emulator
            error = L.AL_CODE_INVALID_STATE_CHANGE
        if error:
            self.al_error, self.al_code = True, error
        self._write_al_status()

    def _enter(self, state: L.AlState) -> None:
        if self.al_state == L.AlState.OP and state != L.AlState.OP:
            self.drive.lose_process_data()
        if state == L.AlState.INIT:
            self.mailbox_responses.clear()
            self._last_request_counter = 0
            for n in (0, 1):
                self._set_sm_full(n, False)
        self.al_state = state

    def _mailbox_config_ok(self) -> bool:
        out_start, out_size, _, out_act = self._sm(0)
        in_start, in_size, _, in_act = self._sm(1)
        return (out_start == L.MAILBOX_OUT_ADDRESS and out_size == L.MAILBOX_SIZE
                and in_start == L.MAILBOX_IN_ADDRESS and in_size == L.MAILBOX_SIZE
                and bool(out_act & 1) and bool(in_act & 1))

    def _local_time_ns(self) -> int:
        return round(self.now_s * 1e9)

    def _system_time_ns(self) -> int:
        offset = struct.unpack_from("<Q", self.mem, REG_DC_SYSTEM_OFFSET)[0]
        return (self._local_time_ns() + offset) & 0xFFFF_FFFF_FFFF_FFFF

    def dc_sync0_ns(self) -> int:
        """The SYNC0 cycle the master set up, 0 while SYNC0 is not active."""
        if self.mem[REG_DC_ACTIVATION] & DC_SYNC0_ACTIVE != DC_SYNC0_ACTIVE:
            return 0
        return int(struct.unpack_from("<I", self.mem, REG_DC_SYNC0_CYCLE)[0])

    def _process_data_config_error(self) -> int:
        if self.needs_dc and not self.dc_sync0_ns():
            return L.AL_CODE_INVALID_DC_SYNC
        if self.complete_access_quirk:
            return 0
        start, size, _, active = self._sm(2)
        if start != L.OUTPUTS_ADDRESS or size != self.rx_pdo.size or not active & 1:
            return L.AL_CODE_INVALID_OUTPUT_CONFIG
        start, size, _, active = self._sm(3)
        if start != L.INPUTS_ADDRESS or size != self.tx_pdo.size or not active & 1:
            return L.AL_CODE_INVALID_INPUT_CONFIG
        return 0

    def _sm_config_changed(self) -> None:
        for n in (0, 1):
            if not self._sm_active(n):
                self._set_sm_full(n, False)
                if n == 1:
                    self.mailbox_responses.clear()

    def _parse_fmmus(self) -> None:
        fmmus = []
        for n in range(3):
            logical, length, _, _, physical, _, kind, active = struct.unpack_from(
                "<IHBBHBBB", self.mem, REG_FMMU + 16 * n)
            if active & 1 and length and kind in (1, 2):
                fmmus.append(_Fmmu(logical, length, physical, kind))
        self.fmmus = fmmus

    # --- SII EEPROM -------------------------------------------------------------------------
    def _eeprom_command(self) -> None:
        control = struct.unpack_from("<H", self.mem, REG_EEPROM_CONTROL)[0]
        command = (control >> 8) & 0x07
        if command == 0x01:  # read 8 bytes from the word address
            word = struct.unpack_from("<I", self.mem, REG_EEPROM_ADDRESS)[0]
            chunk = self.sii[word * 2:word * 2 + 8].ljust(8, b"\xff")
            self.mem[REG_EEPROM_DATA:REG_EEPROM_DATA + 8] = chunk
        # command done at once, never busy, no error bits; keep "8-byte reads" (bit 6)
        struct.pack_into("<H", self.mem, REG_EEPROM_CONTROL, 0x0040)

    # --- mailbox and CoE -------------------------------------------------------------------
    def _mailbox_received(self, frame: bytes) -> None:
        self._set_sm_full(0, False)  # the application took it
        if self.al_state == L.AlState.INIT:
            return
        length, _address, _channel, kind = struct.unpack_from("<HHBB", frame, 0)
        counter = (kind >> 4) & 0x07
        if kind & 0x0F != 0x03 or length < 2:
            return  # only CoE here; other protocols are not advertised
        coe = struct.unpack_from("<H", frame, 6)[0]
        service = coe >> 12
        if service != 2 or length < 10:
            return
        if counter and counter == self._last_request_counter:
            return  # the last request sent again (its answer came back late): done once
        self._last_request_counter = counter
        command, index, sub = struct.unpack_from("<BHB", frame, 8)
        payload = frame[12:6 + length]
        response = self._sdo(command, index, sub, payload)
        self._queue_mailbox(response, counter)

    def _queue_emergency(self) -> None:
        """The drive's CoE emergency (CoE service 1) in the mailbox for the master."""
        code, register, data = self.drive.emergency()
        payload = struct.pack("<HHB", 1 << 12, code, register)
        self._queue_mailbox(payload + data.to_bytes(5, "little"), 0)

    def _queue_mailbox(self, coe_payload: bytes, counter: int) -> None:
        header = struct.pack("<HHBB", len(coe_payload), 0, 0, 0x03 | (counter << 4))
        frame = (header + coe_payload).ljust(L.MAILBOX_SIZE, b"\x00")
        self.mailbox_responses.append(frame)
        if not self.mem[REG_SM + 8 + 5] & 0x08:
            self._next_mailbox_response()

    def _next_mailbox_response(self) -> None:
        if not self.mailbox_responses:
            return
        frame = self.mailbox_responses.popleft()
        start = L.MAILBOX_IN_ADDRESS
        self.mem[start:start + L.MAILBOX_SIZE] = frame
        self._set_sm_full(1, True)

    def _sdo(self, command: int, index: int, sub: int, payload: bytes) -> bytes:
        specifier = command >> 5
        if specifier == 2:  # upload request
            if command & 0x10:
                if not self.complete_access_quirk:
                    return _abort(index, sub, SDO_ABORT_UNSUPPORTED)  # no Complete Access
                return self._upload_complete(index, sub)
            return self._upload(index, sub)
        if specifier == 1:  # download request
            expedited, size_given = bool(command & 0x02), bool(command & 0x01)
            if expedited:
                n = 4 - ((command >> 2) & 0x03) if size_given else 4
                data = payload[:n]
            else:
                size = struct.unpack_from("<I", payload, 0)[0]
                data = payload[4:4 + size]
            return self._download(index, sub, data)
        return _abort(index, sub, SDO_ABORT_UNSUPPORTED)

    def _upload(self, index: int, sub: int) -> bytes:
        entry = self.od.get((index, sub))
        if entry is None:
            known = any(i == index for i, _ in self.od)
            return _abort(index, sub, SDO_ABORT_NO_SUBINDEX if known else SDO_ABORT_NO_OBJECT)
        data = entry.encode()
        if len(data) <= 4:
            command = 0x43 | ((4 - len(data)) << 2)
            return struct.pack("<HBHB", 3 << 12, command, index, sub) + data.ljust(4, b"\x00")
        return struct.pack("<HBHBI", 3 << 12, 0x41, index, sub, len(data)) + data

    def _upload_complete(self, index: int, sub: int) -> bytes:
        """Complete Access upload: every subindex of the object in one buffer."""
        subs = sorted(k for i, k in self.od if i == index and k >= sub)
        if not subs:
            return _abort(index, sub, SDO_ABORT_NO_OBJECT)
        data = b""
        for k in subs:
            data += self.od[(index, k)].encode()
            if k == 0 and not (self.complete_access_quirk and index == 0x1C00):
                data += b"\x00"  # subindex 0 is padded to 16 bits (the quirk leaves it out)
        return struct.pack("<HBHBI", 3 << 12, 0x41, index, sub, len(data)) + data

    def _download(self, index: int, sub: int, data: bytes) -> bytes:
        entry = self.od.get((index, sub))
        if entry is None:
            known = any(i == index for i, _ in self.od)
            return _abort(index, sub, SDO_ABORT_NO_SUBINDEX if known else SDO_ABORT_NO_OBJECT)
        if not entry.writable:
            return _abort(index, sub, SDO_ABORT_READ_ONLY)
        size = struct.calcsize("<" + entry.fmt)
        if len(data) != size:
            return _abort(index, sub, SDO_ABORT_LENGTH)
        value = struct.unpack("<" + entry.fmt, data)[0]
        if entry.setter:
            try:
                entry.setter(value)
            except SdoAbort as refused:
                return _abort(index, sub, refused.code)
        entry.value = value
        return struct.pack("<HBHBI", 3 << 12, 0x60, index, sub, 0)

    # --- process data ----------------------------------------------------------------------
    def _outputs_written(self, data: bytes) -> None:
        self.last_outputs_s = self.now_s
        struct.pack_into("<H", self.mem, REG_WD_STATUS_PD, 1)
        if self.al_state == L.AlState.OP:
            if self.rx_pdo.is_layout:
                rx = L.RxPdo.unpack(data)
            else:  # another mapping: each mapped object to its field, the rest as they were
                values = dict(zip((_rx_field(e.name) for e in self.rx_pdo.entries),
                                  self.rx_pdo.struct.unpack_from(data), strict=True))
                known = {k: v for k, v in values.items() if k in L.RxPdo._fields}
                rx = (self._held or self.drive.rx)._replace(**known)
            if self.hold_outputs:
                self._held = rx
            else:
                self.drive.apply(rx)

    def apply_held_outputs(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self.drive.apply(held)

    def refresh_inputs(self) -> None:
        if self.al_state not in (L.AlState.SAFEOP, L.AlState.OP):
            return
        tx = self.drive.tx()
        if tx.error_code != self._emergency_sent:  # a new fault: the drive says so by CoE
            self._emergency_sent = tx.error_code
            if tx.error_code:
                self._queue_emergency()
        if self.tx_pdo.is_layout:
            packed = tx.pack()
        else:
            packed = self.tx_pdo.struct.pack(*(getattr(tx, _tx_field(e.name), 0)
                                               for e in self.tx_pdo.entries))
        self.mem[L.INPUTS_ADDRESS:L.INPUTS_ADDRESS + len(packed)] = packed

    def tick(self, now_s: float) -> None:
        """Time passes: the process-data watchdog is checked here."""
        self.now_s = now_s
        if self.al_state != L.AlState.OP:
            return
        _, _, control, _ = self._sm(2)
        limit = self.watchdog_time_s()
        if control & 0x40 and limit > 0 and now_s - self.last_outputs_s > limit:
            self.watchdog_trips += 1
            struct.pack_into("<H", self.mem, REG_WD_STATUS_PD, 0)
            self._enter(L.AlState.SAFEOP)
            self.al_error, self.al_code = True, L.AL_CODE_SM_WATCHDOG
            self._write_al_status()

    def report(self) -> dict[str, object]:
        d = self.drive
        return {
            "station_address": self.station_address,
            "al_state": int(self.al_state) | (L.AL_ERROR_FLAG if self.al_error else 0),
            "al_status_code": self.al_code,
            "watchdog_trips": self.watchdog_trips,
            "watchdog_s": self.watchdog_time_s(),
            "outputs_mapped": [f"0x{e.index:04x}" for e in self.rx_pdo.entries],
            "inputs_mapped": [f"0x{e.index:04x}" for e in self.tx_pdo.entries],
            "mapping_writes_refused": self.rx_pdo.writes_refused + self.tx_pdo.writes_refused,
            "cia402_state": d.state.value,
            "error_code": int(d.error_code),
            "causes": sorted(c.value for c in d.causes),
            "aligned": d.aligned,
            "position": d.position,
            "velocity": d.velocity,
            "switch_position": d.switch_position if d.params.has_end_switch else None,
            "switch_active": d.switch_active,
            "dc_sync0_ns": self.dc_sync0_ns(),
            "homing_method": d.homing_method,
            "homed": d.homing_attained,
            "home_reference": d.home_reference,
        }


def _abort(index: int, sub: int, code: int) -> bytes:
    # CoE service 2 (SDO request) carries aborts: with service 3 SOEM misreads them
    return struct.pack("<HBHBI", 2 << 12, 0x80, index, sub, code)


# --- the line of slaves ---------------------------------------------------------------------
# What a cyclic process-data frame carries: logical reads and writes, and the distributed
# clocks' reference time read and passed down the line. Nothing in it waits for an answer
# to ask again (unlike a mailbox exchange or a state change).
PROCESS_DATA_COMMANDS = frozenset({LRD, LWR, LRW, ARMW, FRMW})


def datagrams(payload: bytes | bytearray) -> Iterator[tuple[int, int, int, int, int]]:
    """Each datagram of an EtherCAT payload (after the EtherType) whose data and working
    counter are inside it: (offset, command, ADP, ADO, data length)."""
    header = struct.unpack_from("<H", payload, 0)[0]
    if header >> 12 != 1:
        return
    end = 2 + (header & 0x07FF)
    offset = 2
    while offset + 12 <= end:
        command, _index, adp, ado, flags = struct.unpack_from("<BBHHH", payload, offset)
        length = flags & 0x07FF
        if offset + 10 + length + 2 > len(payload):
            return
        yield offset, command, adp, ado, length
        offset += 10 + length + 2
        if not flags & 0x8000:
            return


def is_process_data(payload: bytes | bytearray) -> bool:
    """Only process data in this frame (see PROCESS_DATA_COMMANDS)."""
    commands = [command for _, command, _, _, _ in datagrams(payload)]
    return bool(commands) and all(c in PROCESS_DATA_COMMANDS for c in commands)


class EscChain:
    """Slaves in wiring order; one EtherCAT frame in, the same frame back out."""

    def __init__(self, slaves: list[EscSlave]) -> None:
        self.slaves = slaves
        self.frames = 0
        # Slaves that stop exchanging process data (a failing PDI, a half-broken link):
        # the frame still comes back, with a working counter short by their share.
        self.deaf: set[int] = set()
        self.clock_datagrams = 0  # FRMW/ARMW: the reference clock's time sent down the line

    def process_frame(self, payload: bytearray) -> bytearray:
        """`payload` is the EtherCAT part of the Ethernet frame (after the EtherType)."""
        self.frames += 1
        for offset, command, adp, ado, length in datagrams(payload):
            data_at = offset + 10
            wkc_at = data_at + length
            wkc = struct.unpack_from("<H", payload, wkc_at)[0]
            wkc += self._datagram(command, adp, ado, payload, data_at, length)
            if command in (APRD, APWR, APRW, ARMW):
                adp = (adp + len(self.slaves)) & 0xFFFF
                struct.pack_into("<H", payload, offset + 2, adp)
            struct.pack_into("<H", payload, wkc_at, wkc & 0xFFFF)
        return payload

    def _datagram(self, command: int, adp: int, ado: int, buf: bytearray, at: int,
                  length: int) -> int:
        wkc = 0
        if command in (ARMW, FRMW):
            self.clock_datagrams += 1
        if command in (LRD, LWR, LRW):
            logical = adp | (ado << 16)
            for position, slave in enumerate(self.slaves):
                if position not in self.deaf:
                    wkc += _logical(slave, command, logical, buf, at, length)
            return wkc
        for position, slave in enumerate(self.slaves):
            if command in (APRD, APWR, APRW):
                addressed = (adp + position) & 0xFFFF == 0
            elif command in (FPRD, FPWR, FPRW):
                addressed = slave.station_address == adp
            elif command in (BRD, BWR, BRW):
                addressed = True
            elif command in (ARMW, FRMW):
                # read by the addressed slave (the reference clock), written by the others
                reference = ((adp + position) & 0xFFFF == 0 if command == ARMW
                             else slave.station_address == adp)
                if reference:
                    buf[at:at + length] = slave.read(ado, length)
                else:
                    slave.write(ado, bytes(buf[at:at + length]))
                wkc += 1
                continue
            else:
                addressed = False
            if not addressed:
                continue
            data = bytes(buf[at:at + length])
            if command in _READS:
                current = slave.read(ado, length)
                if command in (BRD, BRW):
                    current = bytes(a | b for a, b in zip(buf[at:at + length], current,
                                                          strict=True))
                buf[at:at + length] = current
                wkc += 1
            if command in _WRITES:
                slave.write(ado, data)
                wkc += 2 if command in (APRW, FPRW, BRW) else 1
        return wkc


def _logical(slave: EscSlave, command: int, logical: int, buf: bytearray, at: int,
             length: int) -> int:
    read = written = False
    for fmmu in slave.fmmus:
        lo = max(logical, fmmu.logical_start)
        hi = min(logical + length, fmmu.logical_start + fmmu.length)
        if lo >= hi:
            continue
        physical = fmmu.physical_start + (lo - fmmu.logical_start)
        where = at + (lo - logical)
        if fmmu.kind == 2 and command in (LWR, LRW):
            if slave.al_state != L.AlState.OP:
                continue  # outputs are taken only in OP: a master sees it in the counter
            slave.write(physical, bytes(buf[where:where + hi - lo]))
            written = True
        elif fmmu.kind == 1 and command in (LRD, LRW) and slave.al_state in (
                L.AlState.SAFEOP, L.AlState.OP):
            buf[where:where + hi - lo] = slave.read(physical, hi - lo)
            read = True
    if command == LRW:
        return (1 if read else 0) + (2 if written else 0)
    return 1 if (read or written) else 0
