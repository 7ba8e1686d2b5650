"""The one definition of the drive's identity, object dictionary subset and PDO layout.

Both the master (which checks what it finds on the bus against this) and the emulator
(which answers with exactly this) import it, so they cannot drift apart. The real
STEVAL-ETH001 ESI file was not available: identity values and the PDO map below are our
own choice and must be checked once against the board's ESI file (see docs/notes/issue-5.md).

Units on the wire are integer "counts" of the CiA 402 objects; the scale factors here are
the only place that turns them into radians, rad/s and amperes.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from functools import partial
from itertools import chain
from typing import NamedTuple

# --- identity (placeholders until checked against the ESI file) -------------------------
VENDOR_ID = 0x0000_5354  # "ST": placeholder, not a registered ETG vendor id
PRODUCT_CODE = 0x0E70_0001  # placeholder
REVISION = 0x0001_0000
DEVICE_NAME = "STEVAL-ETH001"
DEVICE_TYPE = 0x0002_0192  # CiA 402 drive profile, servo drive


@dataclass(frozen=True)
class Identity:
    vendor_id: int
    product_code: int
    revision: int

    def describe(self) -> str:
        return (f"vendor 0x{self.vendor_id:08x} product 0x{self.product_code:08x} "
                f"revision 0x{self.revision:08x}")


EXPECTED_IDENTITY = Identity(VENDOR_ID, PRODUCT_CODE, REVISION)

# --- ESC memory plan ---------------------------------------------------------------------
MAILBOX_OUT_ADDRESS = 0x1000  # SM0: master -> slave
MAILBOX_IN_ADDRESS = 0x1080  # SM1: slave -> master
MAILBOX_SIZE = 128
OUTPUTS_ADDRESS = 0x1100  # SM2: RxPDO
INPUTS_ADDRESS = 0x1180  # SM3: TxPDO
SM_CONTROL_MAILBOX_OUT = 0x26
SM_CONTROL_MAILBOX_IN = 0x22
SM_CONTROL_OUTPUTS = 0x64  # buffered, ECAT writes, watchdog enabled (bit 6)
SM_CONTROL_INPUTS = 0x20
MAILBOX_PROTOCOL_COE = 0x0004
COE_DETAILS = 0x0D  # SDO + PDO assign + PDO config; no Complete Access (0x20) on purpose


@dataclass(frozen=True)
class PdoEntry:
    index: int
    subindex: int
    bits: int
    name: str
    fmt: str  # struct code, little endian

    @property
    def mapping_value(self) -> int:
        """The 32-bit value of a 0x16xx/0x1Axx entry: index, subindex, bit length."""
        return (self.index << 16) | (self.subindex << 8) | self.bits


RXPDO_ASSIGN = 0x1C12  # SyncManager 2 (outputs): which RxPDOs it carries
TXPDO_ASSIGN = 0x1C13  # SyncManager 3 (inputs): which TxPDOs it carries
RXPDO_INDEX = 0x1600
TXPDO_INDEX = 0x1A00
RXPDO_ENTRIES: tuple[PdoEntry, ...] = (
    PdoEntry(0x6040, 0, 16, "controlword", "H"),
    PdoEntry(0x6060, 0, 8, "modes_of_operation", "b"),
    PdoEntry(0x607A, 0, 32, "target_position", "i"),
    PdoEntry(0x60FF, 0, 32, "target_velocity", "i"),
)
TXPDO_ENTRIES: tuple[PdoEntry, ...] = (
    PdoEntry(0x6041, 0, 16, "statusword", "H"),
    PdoEntry(0x6061, 0, 8, "modes_of_operation_display", "b"),
    PdoEntry(0x6064, 0, 32, "position_actual", "i"),
    PdoEntry(0x606C, 0, 32, "velocity_actual", "i"),
    PdoEntry(0x6078, 0, 16, "current_actual", "h"),
    PdoEntry(0x603F, 0, 16, "error_code", "H"),
    PdoEntry(0x60FD, 0, 32, "digital_inputs", "I"),
)
_RX_STRUCT = struct.Struct("<" + "".join(e.fmt for e in RXPDO_ENTRIES))
_TX_STRUCT = struct.Struct("<" + "".join(e.fmt for e in TXPDO_ENTRIES))
RXPDO_SIZE = _RX_STRUCT.size  # bytes the master writes per drive
TXPDO_SIZE = _TX_STRUCT.size  # bytes the master reads per drive
assert sum(e.bits for e in RXPDO_ENTRIES) == RXPDO_SIZE * 8
assert sum(e.bits for e in TXPDO_ENTRIES) == TXPDO_SIZE * 8

# The ESC's watchdog base: 0x0400 holds the divider, one tick = (divider + 2) x 40 ns. 2498
# gives 100 us ticks (the common reset value); the master writes it rather than trusting the
# reset value, since some slave stacks reset it to 0 (80 ns ticks: at most 5.2 ms).
WATCHDOG_DIVIDER = 2498
WATCHDOG_TICK_S = (WATCHDOG_DIVIDER + 2) * 40e-9

# --- scale factors -------------------------------------------------------------------------
POSITION_COUNTS_PER_RAD = 10_000  # 0.1 mrad resolution, +-214 748 rad range
VELOCITY_COUNTS_PER_RAD_S = 1_000  # mrad/s
CURRENT_COUNTS_PER_A = 1_000  # mA


COUNTS_MIN, COUNTS_MAX = -(2**31), 2**31 - 1  # a 32-bit object's range


def rad_to_counts(rad: float) -> int:
    """Rounded and held to the object's range. (Compared rather than min()/max(): the same
    integer, without two calls, eight times a cycle.)"""
    counts = round(rad * POSITION_COUNTS_PER_RAD)
    return COUNTS_MAX if counts > COUNTS_MAX else COUNTS_MIN if counts < COUNTS_MIN else counts


def rad_s_to_counts(rad_s: float) -> int:
    counts = round(rad_s * VELOCITY_COUNTS_PER_RAD_S)
    return COUNTS_MAX if counts > COUNTS_MAX else COUNTS_MIN if counts < COUNTS_MIN else counts


# --- CiA 402 ---------------------------------------------------------------------------------
class Mode(enum.IntEnum):
    NONE = 0
    HOMING = 6
    CYCLIC_SYNC_POSITION = 8
    CYCLIC_SYNC_VELOCITY = 9


class Control(enum.IntEnum):
    """Controlword commands (CiA 402 device control)."""

    DISABLE_VOLTAGE = 0x0000
    QUICK_STOP = 0x0002
    SHUTDOWN = 0x0006
    SWITCH_ON = 0x0007
    ENABLE_OPERATION = 0x000F
    HOMING_START = 0x0010  # bit 4 in homing mode: start the drive's homing method
    FAULT_RESET = 0x0080


class Cia402State(enum.Enum):
    NOT_READY_TO_SWITCH_ON = "not ready to switch on"
    SWITCH_ON_DISABLED = "switch on disabled"
    READY_TO_SWITCH_ON = "ready to switch on"
    SWITCHED_ON = "switched on"
    OPERATION_ENABLED = "operation enabled"
    QUICK_STOP_ACTIVE = "quick stop active"
    FAULT_REACTION_ACTIVE = "fault reaction active"
    FAULT = "fault"


# statusword bit patterns (mask, value) -> state, as in CiA 402 table "state coding"
_STATE_CODING: tuple[tuple[int, int, Cia402State], ...] = (
    (0x4F, 0x00, Cia402State.NOT_READY_TO_SWITCH_ON),
    (0x4F, 0x40, Cia402State.SWITCH_ON_DISABLED),
    (0x6F, 0x21, Cia402State.READY_TO_SWITCH_ON),
    (0x6F, 0x23, Cia402State.SWITCHED_ON),
    (0x6F, 0x27, Cia402State.OPERATION_ENABLED),
    (0x6F, 0x07, Cia402State.QUICK_STOP_ACTIVE),
    (0x4F, 0x0F, Cia402State.FAULT_REACTION_ACTIVE),
    (0x4F, 0x08, Cia402State.FAULT),
)
STATE_STATUSWORD: dict[Cia402State, int] = {
    Cia402State.NOT_READY_TO_SWITCH_ON: 0x0000,
    Cia402State.SWITCH_ON_DISABLED: 0x0040,
    Cia402State.READY_TO_SWITCH_ON: 0x0021,
    Cia402State.SWITCHED_ON: 0x0023,
    Cia402State.OPERATION_ENABLED: 0x0027,
    Cia402State.QUICK_STOP_ACTIVE: 0x0007,
    Cia402State.FAULT_REACTION_ACTIVE: 0x000F,
    Cia402State.FAULT: 0x0008,
}


def _decode_state(statusword: int) -> Cia402State:
    for mask, value, state in _STATE_CODING:
        if statusword & mask == value:
            return state
    return Cia402State.NOT_READY_TO_SWITCH_ON


# Every mask of the coding lies within 0x6F: the state of each of those 128 bit patterns,
# decoded once, so the cycle looks a state up instead of walking the table per drive
# (`STATE_OF_BITS[statusword & STATE_BITS]`: what `decode_state` and `TxPdo.state` give,
# without their Python call, for the loops that look at every drive every cycle).
STATE_BITS = 0x6F
STATE_OF_BITS: tuple[Cia402State, ...] = tuple(_decode_state(bits) for bits in range(128))


def decode_state(statusword: int) -> Cia402State:
    return STATE_OF_BITS[statusword & STATE_BITS]


class Status(enum.IntFlag):
    """Statusword bits other than the state coding."""

    VOLTAGE_ENABLED = 1 << 4
    WARNING = 1 << 7
    REMOTE = 1 << 9
    TARGET_REACHED = 1 << 10
    INTERNAL_LIMIT = 1 << 11
    FOLLOWS_COMMAND = 1 << 12  # CSP/CSV: drive follows the command value
    HOMING_ATTAINED = 1 << 12  # homing mode: the home is set (bit 12's meaning there)
    HOMING_ERROR = 1 << 13  # homing mode: the method failed or is not supported
    ALIGNING = 1 << 14  # manufacturer specific: rotor alignment running
    ALIGNED = 1 << 15  # manufacturer specific: rotor alignment done since power/fault


class Alignment(enum.Enum):
    """How the master learns that a drive's rotor alignment is done: the drive profile's
    one option. STEVAL-ETH001 reports it in its manufacturer bits; a standard CiA 402 drive
    that aligns itself at enable says only what the profile defines."""

    MANUFACTURER_BITS = "manufacturer_bits"  # statusword bit 15 (aligned), 14 (aligning)
    # an object read by SDO while the axis aligns (ALIGNMENT_OBJECT unless configured):
    # nonzero once aligned
    SDO = "sdo"
    # Operation enabled and statusword bit 12 "drive follows the command value" (CSP/CSV),
    # which such a drive sets once it is aligned and follows the setpoints.
    NONE = "none"


# Manufacturer-specific "rotor aligned" (UNSIGNED8) of drives that say it only by SDO.
ALIGNMENT_OBJECT = 0x2010

# The drive's own homing (CiA 402 homing mode), written in PRE-OP where board.toml asks
# for it: the method (INTEGER8) and its speeds (UNSIGNED32, velocity units: :01 while
# searching for the switch or stop, :02 while searching for zero).
HOMING_METHOD = 0x6098
HOMING_SPEEDS = 0x6099
# Methods the emulated drive implements (CiA 402 numbers; negative: manufacturer specific,
# as common drives number their hard-stop methods).
HOMING_NEGATIVE_SWITCH = 17  # run negative to the limit switch, home at its edge
HOMING_CURRENT_POSITION = 37  # home where the axis stands (35 in older drives)
HOMING_HARD_STOP_NEGATIVE = -4  # run negative into the end stop (current threshold)


@dataclass(frozen=True)
class StartupObject:
    """An object a slave is given by SDO in PRE-OP, on every start and reconfiguration
    (an ENI's init command), read back and compared."""

    position: int  # 1-based slave position
    index: int
    subindex: int
    fmt: str  # struct code of its type
    value: int


def alignment_done(alignment: Alignment, statusword: int, object_value: int = 0) -> bool:
    """Whether a drive in operation enabled is aligned, as the profile option tells
    (`object_value`: the alignment object as last read by SDO)."""
    if alignment is Alignment.MANUFACTURER_BITS:
        return bool(statusword & Status.ALIGNED)
    if alignment is Alignment.SDO:
        return object_value != 0
    return bool(statusword & Status.FOLLOWS_COMMAND)


class DigitalInput(enum.IntFlag):
    """0x60FD bits: 0-2 per CiA 402, 16+ manufacturer specific (live fault causes)."""

    NEGATIVE_LIMIT = 1 << 0
    POSITIVE_LIMIT = 1 << 1
    HOME_SWITCH = 1 << 2  # the end-of-travel switch on the translation skate
    EMERGENCY_BUTTON_PRESSED = 1 << 16
    OVERCURRENT_PRESENT = 1 << 17
    MOTOR_LOCKED_PRESENT = 1 << 18


FAULT_CAUSE_INPUTS = (DigitalInput.EMERGENCY_BUTTON_PRESSED | DigitalInput.OVERCURRENT_PRESENT
                      | DigitalInput.MOTOR_LOCKED_PRESENT)


class ErrorCode(enum.IntEnum):
    """0x603F values the drive reports (CiA 301/402 error code ranges)."""

    NONE = 0x0000
    OVERCURRENT = 0x2310
    EMERGENCY_BUTTON = 0x9000  # "external error": the e-stop chain opened
    MOTOR_LOCKED = 0x7121  # "motor blocked"
    COMMUNICATION = 0x8130  # process data lost (SyncManager watchdog / AL state left OP)
    GENERIC = 0x1000


class RxPdo(NamedTuple):
    """Master -> drive, per cycle. A named tuple: the cycle builds eight of them every
    period, and a tuple is the cheapest record Python builds (and packs with `*`)."""

    controlword: int = 0
    mode: int = Mode.CYCLIC_SYNC_POSITION
    target_position: int = 0
    target_velocity: int = 0

    def pack(self) -> bytes:
        return _RX_STRUCT.pack(*self)

    @classmethod
    def unpack(cls, data: bytes) -> RxPdo:
        return cls._make(_RX_STRUCT.unpack_from(data))


class TxPdo(NamedTuple):
    """Drive -> master, per cycle."""

    statusword: int = 0
    mode_display: int = 0
    position_actual: int = 0
    velocity_actual: int = 0
    current_actual: int = 0
    error_code: int = 0
    digital_inputs: int = 0

    def pack(self) -> bytes:
        return _TX_STRUCT.pack(*self)

    @classmethod
    def unpack(cls, data: bytes) -> TxPdo:
        return cls._make(_TX_STRUCT.unpack_from(data))

    @property
    def state(self) -> Cia402State:
        return STATE_OF_BITS[self.statusword & STATE_BITS]

    @property
    def position_rad(self) -> float:
        return self.position_actual / POSITION_COUNTS_PER_RAD

    @property
    def velocity_rad_s(self) -> float:
        return self.velocity_actual / VELOCITY_COUNTS_PER_RAD_S

    @property
    def current_a(self) -> float:
        return self.current_actual / CURRENT_COUNTS_PER_A


_new_tx_pdo = partial(tuple.__new__, TxPdo)


class ProcessImage:
    """The process data of `drives` drives in a row, as the master's IOmap holds them:
    packed and unpacked for all drives at once with one precompiled struct each way."""

    def __init__(self, drives: int) -> None:
        self.drives = drives
        self.outputs = struct.Struct("<" + _RX_STRUCT.format[1:] * drives)
        self.inputs = struct.Struct("<" + _TX_STRUCT.format[1:] * drives)

    def pack_outputs(self, outputs: tuple[RxPdo, ...] | list[RxPdo]) -> bytes:
        return self.outputs.pack(*chain.from_iterable(outputs))

    def unpack_inputs(self, data: bytes) -> tuple[TxPdo, ...]:
        values = iter(self.inputs.unpack_from(data))
        # tuple.__new__ is what TxPdo._make calls, without _make's Python frame and length
        # check (zip hands it exactly one drive's fields)
        return tuple(map(_new_tx_pdo, zip(*[values] * len(TxPdo._fields), strict=True)))


# --- AL (application layer) states and status codes -----------------------------------------
class AlState(enum.IntEnum):
    INIT = 0x01
    PREOP = 0x02
    BOOT = 0x03
    SAFEOP = 0x04
    OP = 0x08


AL_ERROR_FLAG = 0x10
AL_CODE_INVALID_STATE_CHANGE = 0x0011
AL_CODE_UNKNOWN_STATE = 0x0012
AL_CODE_INVALID_MAILBOX_CONFIG = 0x0016
AL_CODE_SM_WATCHDOG = 0x001B
AL_CODE_INVALID_OUTPUT_CONFIG = 0x001D
AL_CODE_INVALID_INPUT_CONFIG = 0x001E
AL_CODE_INVALID_DC_SYNC = 0x0030  # a drive that needs SYNC0 was not given it
