"""Authenticated framing: catalogue message <-> bytes on the wire.

Frame layout (identical on raw Ethernet and UDP):

    u16 big-endian length | COSE_Mac0 (RFC 9052, CBOR tag 17)

The length prefix is there because Ethernet pads short frames to 60 bytes. The COSE_Mac0
structure is [protected, unprotected, payload, tag]:

- protected header: {1 (alg): 5 (HMAC 256/256)}
- unprotected header: {4 (kid): sender agent name, as bytes}
- payload: CBOR map {1: type id, 2: sender agent, 3: per-boot sender id, 4: sequence,
  5: timestamp (ns, sender's clock, PTP-disciplined on the rig), 6: message body}
- tag: HMAC-SHA256 over the MAC_structure ["MAC0", protected, b"", payload]

A receiver checks, in this order, and counts a drop under the first reason that applies:
malformed (not our framing or not COSE), mac (wrong algorithm, sender or tag), schema (not a
catalogue message), replay (sequence not above the last one seen from that sender boot),
stale (older than `max_age_s`, or from the future by more than that).
"""

from __future__ import annotations

import hmac
import io
import os
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import cbor2

from foosball.wire import catalogue
from foosball.wire.catalogue import Agent, SchemaError

COSE_MAC0_TAG = 17
ALG_HMAC_256_256 = 5
HEADER_ALG = 1
HEADER_KID = 4
PROTECTED = cbor2.dumps({HEADER_ALG: ALG_HMAC_256_256})
MAC0_CONTEXT = "MAC0"
TAG_LENGTH = 32
KEY_LENGTH = 32

# Ethernet payload is 1500 bytes; the whole frame (length prefix included) must fit.
MAX_FRAME = 1500
_LENGTH = struct.Struct(">H")

DROP_REASONS = ("malformed", "mac", "schema", "replay", "stale")


class FrameTooLarge(ValueError):
    """An encoded message does not fit one Ethernet frame."""


class Received(NamedTuple):
    """A message that passed every check. A named tuple: built once per message received,
    and cheaper to build than a frozen dataclass."""

    message: Any
    sender: Agent
    boot_id: int
    seq: int
    timestamp: int  # ns, sender's clock


@dataclass(frozen=True, slots=True)
class Drop:
    reason: str  # one of DROP_REASONS
    detail: str


def load_key(path: str | Path) -> bytes:
    """Read the installation key: 64 hex characters (32 bytes) in a file."""
    raw = Path(path).read_text().strip()
    try:
        key = bytes.fromhex(raw)
    except ValueError:
        raise ValueError(f"{path}: the key must be {KEY_LENGTH * 2} hex characters") from None
    if len(key) != KEY_LENGTH:
        raise ValueError(f"{path}: the key must be {KEY_LENGTH} bytes, found {len(key)}")
    return key


def new_key() -> str:
    return os.urandom(KEY_LENGTH).hex()


def _bstr_head(length: int) -> bytes:
    """CBOR head of a byte string of `length` bytes (major type 2)."""
    if length < 24:
        return bytes((0x40 | length,))
    if length < 0x100:
        return bytes((0x58, length))
    return b"\x59" + length.to_bytes(2, "big")


_MAC0_PREFIX = b"\x84\x64MAC0"  # array(4), text(4) "MAC0"
_PROTECTED_BSTR = _bstr_head(len(PROTECTED)) + PROTECTED
_EMPTY_AAD = b"\x40"
_TAG_HEAD = _bstr_head(TAG_LENGTH)


_MAC0_OWN_HEAD = _MAC0_PREFIX + _PROTECTED_BSTR + _EMPTY_AAD  # the usual case, prebuilt


def mac_structure(protected: bytes, payload: bytes) -> bytes:
    """CBOR of ["MAC0", protected, external_aad = b"", payload] (RFC 9052 section 6.3).

    Built by concatenation because it is on every message's path; equal to
    cbor2.dumps(["MAC0", protected, b"", payload]) (a unit test checks).
    """
    head = (
        _MAC0_OWN_HEAD
        if protected == PROTECTED
        else _MAC0_PREFIX + _bstr_head(len(protected)) + protected + _EMPTY_AAD
    )
    return head + _bstr_head(len(payload)) + payload


_OWN_PREFIX = b"\xd1\x84" + _PROTECTED_BSTR + b"\xa1\x04"  # tag 17 [protected, {4: kid...


def _read_bstr(data: bytes, at: int) -> tuple[bytes, int]:
    """The byte string whose CBOR head is at `at`, and the index after it (IndexError,
    ValueError when it is not one)."""
    head = data[at]
    if 0x40 <= head < 0x58:
        length, at = head - 0x40, at + 1
    elif head == 0x58:
        length, at = data[at + 1], at + 2
    elif head == 0x59:
        length, at = (data[at + 1] << 8) | data[at + 2], at + 3
    else:
        raise ValueError("not a short byte string")
    value = data[at : at + length]
    if len(value) != length:
        raise ValueError("truncated")
    return value, at + length


def _split_own_layout(cose: bytes) -> tuple[bytes, bytes, bytes, bytes] | None:
    """(protected, kid, payload, tag) when `cose` is laid out exactly as our encoder writes
    it; None otherwise, and the general CBOR parser decides. Saves a CBOR parse per message;
    the hostile-frame tests run both paths."""
    if not cose.startswith(_OWN_PREFIX):
        return None
    try:
        kid, at = _read_bstr(cose, len(_OWN_PREFIX))
        payload, at = _read_bstr(cose, at)
        tag, at = _read_bstr(cose, at)
    except (IndexError, ValueError):
        return None
    if at != len(cose) or len(tag) != TAG_LENGTH:
        return None
    return PROTECTED, kid, payload, tag


def _parse_cose(cose_bytes: bytes) -> tuple[bytes, Any, bytes, bytes] | Drop:
    """Any valid COSE_Mac0 encoding (other implementations may lay it out differently)."""
    try:
        cose = cbor2.loads(cose_bytes)
    except Exception as exc:  # cbor2 raises several types on garbage
        return Drop("malformed", f"not CBOR: {type(exc).__name__}")
    if not isinstance(cose, cbor2.CBORTag) or cose.tag != COSE_MAC0_TAG:
        return Drop("malformed", "not a COSE_Mac0")
    parts = cose.value
    if not isinstance(parts, list | tuple) or len(parts) != 4:
        return Drop("malformed", "COSE_Mac0 needs 4 parts")
    protected, unprotected, payload, tag = parts
    if not (
        isinstance(protected, bytes)
        and isinstance(unprotected, Mapping)
        and isinstance(payload, bytes)
        and isinstance(tag, bytes)
    ):
        return Drop("malformed", "COSE_Mac0 parts have the wrong types")
    return protected, unprotected.get(HEADER_KID), payload, tag


class WireCodec:
    """Encodes this agent's messages and decodes everyone's, keeping the anti-replay state."""

    def __init__(
        self,
        key: bytes,
        sender: Agent,
        *,
        clock: Callable[[], int] = time.time_ns,
        max_age_s: float = 0.5,
        boot_id: int | None = None,
    ) -> None:
        if len(key) != KEY_LENGTH:
            raise ValueError(f"key must be {KEY_LENGTH} bytes")
        self._key = key
        self.sender = Agent(sender)
        self._kid = self.sender.name.lower().encode()
        self._unprotected_cbor = cbor2.dumps({HEADER_KID: self._kid})
        self._clock = clock
        self._max_age_ns = int(max_age_s * 1e9)
        self.boot_id = boot_id if boot_id is not None else int.from_bytes(os.urandom(8), "big") >> 1
        self._seq = 0
        # One encoder kept for the codec's life: cbor2.dumps builds a new one per call,
        # which costs more than encoding a whole BallState.
        self._buffer = io.BytesIO()
        self._encoder = cbor2.CBOREncoder(self._buffer)
        self._lock = threading.Lock()
        # (sender, boot id) -> highest sequence accepted. Only authenticated peers get an
        # entry, and a peer gets a new one per boot, so the table stays small.
        self._last_seq: dict[tuple[int, int], int] = {}
        self.drops: Counter[str] = Counter()
        self.accepted = 0

    # --- sending ----------------------------------------------------------------------------

    def encode(self, message: Any) -> bytes:
        body = catalogue.to_body(message)  # validates: a sender cannot emit a bad message
        with self._lock:  # agents may send from several threads (the MDA does)
            self._seq += 1
            self._buffer.seek(0)
            self._buffer.truncate()
            self._encoder.encode(
                {1: catalogue.type_id(message), 2: int(self.sender), 3: self.boot_id,
                 4: self._seq, 5: self._clock(), 6: body}
            )
            payload = self._buffer.getvalue()
        tag = hmac.digest(self._key, mac_structure(PROTECTED, payload), "sha256")
        # tag(17) [protected, unprotected, payload, tag], concatenated for speed; the
        # pycose interoperability test proves it is the same COSE_Mac0.
        cose = b"".join(
            (b"\xd1\x84", _PROTECTED_BSTR, self._unprotected_cbor,
             _bstr_head(len(payload)), payload, _TAG_HEAD, tag)
        )
        frame = _LENGTH.pack(len(cose)) + cose
        if len(frame) > MAX_FRAME:
            raise FrameTooLarge(
                f"{type(message).__name__} encodes to {len(frame)} bytes; "
                f"one Ethernet frame carries at most {MAX_FRAME}"
            )
        return frame

    # --- receiving --------------------------------------------------------------------------

    def decode(self, frame: bytes) -> Received | Drop:
        """Never raises: anything wrong becomes a counted Drop."""
        result = self._decode(frame)
        if isinstance(result, Drop):
            self.drops[result.reason] += 1
        else:
            self.accepted += 1
        return result

    def _decode(self, frame: bytes) -> Received | Drop:
        if len(frame) < 2 or len(frame) > MAX_FRAME + 64:
            return Drop("malformed", f"frame of {len(frame)} bytes")
        (length,) = _LENGTH.unpack_from(frame)
        if length + 2 > len(frame):
            return Drop("malformed", "truncated frame")
        cose_bytes = frame[2 : 2 + length]
        own = _split_own_layout(cose_bytes)
        if own is not None:
            protected, kid, payload, tag = own
        else:
            parts_or_drop = _parse_cose(cose_bytes)
            if isinstance(parts_or_drop, Drop):
                return parts_or_drop
            protected, kid, payload, tag = parts_or_drop
        if protected != PROTECTED:
            try:
                header = cbor2.loads(protected)
            except Exception:
                return Drop("malformed", "protected header is not CBOR")
            if not isinstance(header, Mapping) or header.get(HEADER_ALG) != ALG_HMAC_256_256:
                return Drop("mac", "algorithm is not HMAC 256/256")
        expected = hmac.digest(self._key, mac_structure(protected, payload), "sha256")
        if not hmac.compare_digest(expected, tag):
            return Drop("mac", "tag does not verify")

        try:
            envelope = cbor2.loads(payload)
        except Exception:
            return Drop("schema", "payload is not CBOR")
        try:
            received = self._envelope(envelope, kid)
        except SchemaError as exc:
            return Drop("schema", str(exc))

        stream = (int(received.sender), received.boot_id)
        last = self._last_seq.get(stream, 0)
        if received.seq <= last:
            return Drop("replay", f"seq {received.seq} <= {last} from {received.sender.name}")
        age = self._clock() - received.timestamp
        if abs(age) > self._max_age_ns:
            return Drop("stale", f"age {age / 1e6:.1f} ms")
        self._last_seq[stream] = received.seq
        return received

    @staticmethod
    def _envelope(envelope: Any, kid: Any) -> Received:
        if not isinstance(envelope, dict) and not isinstance(envelope, Mapping):
            raise SchemaError("envelope is not a map")
        if len(envelope) != 6:
            raise SchemaError("envelope needs exactly keys 1..6")
        try:
            type_id, sender, boot_id, seq, timestamp, body = (
                envelope[1], envelope[2], envelope[3], envelope[4], envelope[5], envelope[6]
            )
        except KeyError:
            raise SchemaError("envelope needs exactly keys 1..6") from None
        if not (type(boot_id) is int and type(seq) is int and type(timestamp) is int
                and 0 <= boot_id < _U63 and 0 <= seq < _U63 and 0 <= timestamp < _U63):
            raise SchemaError("envelope boot id, seq and timestamp must be integers in [0, 2^63)")
        known = _AGENT_KIDS.get(sender) if type(sender) is int else None
        if known is None:
            raise SchemaError(f"unknown sender {sender!r}")
        agent, agent_kid = known
        if kid != agent_kid:
            raise SchemaError("kid does not name the sender")
        cls = catalogue.BY_TYPE_ID.get(type_id) if type(type_id) is int else None
        if cls is None:
            raise SchemaError(f"unknown message type {type_id!r}")
        message = catalogue.from_body(cls, body)
        return Received(message, agent, boot_id, seq, timestamp)


_U63 = 2**63
# sender number -> (Agent, the kid it must use)
_AGENT_KIDS = {int(a): (a, a.name.lower().encode()) for a in Agent}
