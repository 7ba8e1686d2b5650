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
malformed (not our framing, or not a COSE_Mac0 whose unprotected header is plain CBOR), mac
(a protected header other than ours, or a tag that does not verify), schema (not a catalogue
message, or not in canonical form), sender (that agent may not send that message, or the
body names another agent: catalogue.SENDERS), replay (sequence not above the last one seen
from that sender boot), stale (older than `max_age_s`, or from the future by more than that).
Decoding never raises: whatever a peer sends ends as a counted Drop.

An agent's codec may be told which messages it reads (`read_only`) and whose heartbeats
it hears (`hear_heartbeats_only_from`, the peers it watches): a frame whose header names
another catalogue message, or a heartbeat claiming another sender, is set aside as NOT_READ
before anything is checked (SetAside), since authenticating what will not be acted on costs
every agent the whole LAN's traffic. Nothing is trusted that way (the frame is not used),
and a forged flood of any type is still seen by the agents that read that type (an unknown
type is always checked).

The short way (after the MAC, never instead of it): a payload laid out exactly as our
encoder writes it is read in one pass (wire/reader.py: the envelope and the body in our
canonical form, with from_body's value checks), not decoded, built and encoded again; and a
body that is byte for byte the last one of that type that passed from that sender (a
heartbeat's, which changes once a second) is taken as it decoded then. The kid, the
sender's right to send it, replay and age are checked as ever. Whatever is not in exactly
that form takes the full checks below, which decide and say why; the short way decides
nothing they would not (tests/wire/test_codec.py changes every byte of every type).

Canonical: the payload must be byte for byte what our encoder writes for the value it decodes
to (shortest heads, definite lengths, floats as float64, each map's keys once, as integers, in
ascending order, nothing after the item), so no two parsers can read one payload differently.
An integer in a number field is such a value, and accepted, as to_body and from_json accept
it.
"""

from __future__ import annotations

import hmac
import io
import os
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import cbor2

from foosball.wire import catalogue
from foosball.wire.catalogue import Agent, SchemaError
from foosball.wire.reader import read_body

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

DROP_REASONS = ("malformed", "mac", "schema", "sender", "replay", "stale")
# Our payloads nest 4 deep (envelope > body > records > record); deeper CBOR is refused
# before it costs anything.
MAX_DEPTH = 8


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
    # Set when the MAC verified and the payload named a known agent (schema, sender, replay,
    # stale drops): tells which authenticated peer misbehaves, e.g. one whose clock stepped.
    sender: Agent | None = None


NOT_READ = Drop("not_read", "a message this agent does not read")  # not a drop: not counted


@dataclass(frozen=True)
class SetAside:
    """The frames a codec sets aside unchecked (NOT_READ), by what their header claims
    (`claim`, before any check): every frame claiming a catalogue type in `types`, and the
    heartbeats claiming a sender in `heartbeat_senders` (peers the agent does not watch). A
    transport may leave the same frames out before they reach Python (Transport.set_aside;
    the raw transport's socket filter reads the same bytes in the kernel)."""

    types: frozenset[int] = frozenset()
    heartbeat_senders: frozenset[int] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.types or self.heartbeat_senders)

    def covers(self, frame: bytes) -> bool:
        claimed = claim(frame)
        if claimed is None:
            return False
        type_id, sender = claimed
        return type_id in self.types or (
            type_id == catalogue.Heartbeat.TYPE_ID and sender in self.heartbeat_senders)


class _Cbor:
    """A CBOR encoder and decoder kept for their owner's life: cbor2.dumps builds a new
    encoder per call, which costs more than encoding a whole BallState. Not thread-safe."""

    def __init__(self) -> None:
        self._out = io.BytesIO()
        self._encoder = cbor2.CBOREncoder(self._out)
        self._decoder = self._new_decoder()

    @staticmethod
    def _new_decoder() -> cbor2.CBORDecoder:
        try:
            return cbor2.CBORDecoder(io.BytesIO(), max_depth=MAX_DEPTH)
        except TypeError:  # cbor2 < 5.5 (the boards' 5.4): the recursion limit stops it
            return cbor2.CBORDecoder(io.BytesIO())

    def dumps(self, value: Any) -> bytes:
        self._out.seek(0)
        self._out.truncate()
        self._encoder.encode(value)
        return self._out.getvalue()

    def loads(self, data: bytes) -> Any:
        """The CBOR item `data` starts with (bytes after it are not looked at). Raises on
        garbage: cbor2 raises several types (OverflowError and decimal.Overflow among
        them), so callers catch Exception."""
        try:
            return self._decoder.decode_from_bytes(data)
        except Exception:
            # cbor2 5.9 can keep state from a failed decode (seen: a nesting-depth error
            # inside a map key left every later map a FrozenDict), so start afresh.
            self._decoder = self._new_decoder()
            raise


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


OWN_PREFIX = b"\xd1\x84" + _PROTECTED_BSTR + b"\xa1\x04"  # tag 17 [protected, {4: kid...


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


def _skip(data: bytes, at: int, depth: int = 0) -> int:
    """The index after the CBOR item at `at`, which must be plain CBOR: definite lengths, no
    tags, at most MAX_DEPTH deep (IndexError, ValueError otherwise). Checks form only, and
    builds nothing."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deep")
    head = data[at]
    major, info = head >> 5, head & 0x1F
    at += 1
    if info < 24:
        arg = info
    elif info < 28:
        end = at + (1 << (info - 24))
        if end > len(data):
            raise IndexError("truncated head")
        arg, at = int.from_bytes(data[at:end], "big"), end
    else:
        raise ValueError("indefinite length or reserved head")
    if major == 6:
        raise ValueError("a tag")
    if major == 2 or major == 3:
        at += arg
        if at > len(data):
            raise IndexError("truncated string")
    elif major == 4 or major == 5:
        items = arg if major == 4 else 2 * arg
        if items > len(data) - at:  # each item takes a byte at least: refuse 2^64 up front
            raise IndexError("more items than bytes")
        for _ in range(items):
            at = _skip(data, at, depth + 1)
    return at


def _is_plain(data: bytes) -> bool:
    """Whether `data` is exactly one plain CBOR item (see _skip)."""
    try:
        return _skip(data, 0) == len(data)
    except (IndexError, ValueError):
        return False


def _split_cose(cose: bytes) -> tuple[bytes, bytes | None, bytes, bytes]:
    """(protected, kid, payload, tag) of a COSE_Mac0 in any layout whose unprotected header
    is plain CBOR (IndexError, ValueError when it is not one). Parsed by hand, not by cbor2:
    no byte the MAC has not verified reaches cbor2, which compiles regular expressions and
    parses MIME from tagged values (a second of CPU for a crafted 1.3 kB expression)."""
    if cose.startswith(OWN_PREFIX):  # as our encoder writes it: {4: kid} alone
        protected = PROTECTED
        kid, at = _read_bstr(cose, len(OWN_PREFIX))
    else:
        if not cose.startswith(b"\xd1\x84"):  # tag 17, array of 4
            raise ValueError("not a COSE_Mac0")
        protected, at = _read_bstr(cose, 2)
        head = cose[at]  # the unprotected header: a map of fewer than 24 entries
        if not 0xA0 <= head < 0xB8:
            raise ValueError("unprotected header is not a small map")
        at += 1
        kid = None
        for _ in range(head - 0xA0):
            if cose[at] == HEADER_KID:  # the key 4 is the byte 0x04 in CBOR
                if kid is not None:
                    raise ValueError("two kids")
                kid, at = _read_bstr(cose, at + 1)
            else:
                at = _skip(cose, _skip(cose, at))  # a key and its value
    payload, at = _read_bstr(cose, at)
    tag, at = _read_bstr(cose, at)
    if at != len(cose):
        raise ValueError("bytes after the COSE_Mac0")
    return protected, kid, payload, tag


def _may_hold_costly_tags(payload: bytes) -> bool:
    """cbor2 compiles a regular expression for tag 35 and parses MIME for tag 36. Every head
    of either ends in 0x23 or 0x24 after a 0xd8 (or after a 0x00, closing a longer head): a
    payload without such a pair cannot make cbor2 do that work; one with it (1 valid payload
    in 500, by chance in its numbers) must be plain CBOR (_skip) before cbor2 sees it."""
    if 0x23 not in payload and 0x24 not in payload:  # memchr: cheaper than searching pairs
        return False
    for number in (0x23, 0x24):
        at = payload.find(number, 1)
        while at != -1:
            if payload[at - 1] in (0x00, 0xD8):
                return True
            at = payload.find(number, at + 1)
    return False


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
        # HMAC's key schedule done once: each tag copies it (cheaper than hmac.digest).
        self._mac = hmac.new(key, digestmod="sha256")
        self.sender = Agent(sender)
        self._kid = self.sender.name.lower().encode()
        self._unprotected_cbor = cbor2.dumps({HEADER_KID: self._kid})
        self._clock = clock
        self._max_age_ns = int(max_age_s * 1e9)
        self.boot_id = boot_id if boot_id is not None else int.from_bytes(os.urandom(8), "big") >> 1
        self._seq = 0
        self._send_cbor = _Cbor()  # under _lock: agents may send from several threads
        self._lock = threading.Lock()
        # decode() runs on one receiving thread, with its own CBOR state.
        self._receive_cbor = _Cbor()
        # (sender, boot id) -> highest sequence accepted. Only authenticated peers get an
        # entry, and a peer gets a new one per boot, so the table stays small.
        self._last_seq: dict[tuple[int, int], int] = {}
        # (type id, sender number) -> (body bytes, message) of the last payload of that type
        # from that sender that passed every check but replay and age: at most one per
        # catalogue message and agent (_short_way).
        self._known: dict[tuple[int, int], tuple[bytes, Any]] = {}
        self.drops: Counter[str] = Counter()
        self.accepted = 0
        self._reads: frozenset[int] | None = None  # type ids worth authenticating; None: all
        self._heartbeats_from: frozenset[int] | None = None  # senders heard; None: all
        self.set_aside = SetAside()  # what the two above leave unread (NOT_READ)
        self.not_read = 0
        # Drops made by decode()'s last-resort guard (also counted in `drops`): each one is a
        # check missing from this module or the catalogue, so the fuzz test wants 0.
        self.unexpected = 0

    # --- sending ----------------------------------------------------------------------------

    def encode(self, message: Any) -> bytes:
        body = catalogue.to_body(message)  # validates: a sender cannot emit a bad message
        with self._lock:  # agents may send from several threads (the MDA does)
            self._seq += 1
            payload = self._send_cbor.dumps(
                {1: catalogue.type_id(message), 2: int(self.sender), 3: self.boot_id,
                 4: self._seq, 5: self._clock(), 6: body}
            )
        tag = self._tag(payload)
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

    def _tag(self, payload: bytes) -> bytes:
        mac = self._mac.copy()
        mac.update(mac_structure(PROTECTED, payload))
        return mac.digest()

    # --- receiving --------------------------------------------------------------------------

    def read_only(self, messages: Iterable[type]) -> None:
        """Authenticate and decode only these catalogue messages; the others become NOT_READ
        (see the module's notes)."""
        reads = frozenset(messages)
        unknown = [cls.__name__ for cls in reads if cls not in catalogue.MESSAGE_TYPES]
        if unknown:
            raise ValueError(f"not catalogue messages: {', '.join(sorted(unknown))}")
        self._reads = frozenset(cls.TYPE_ID for cls in reads)  # type: ignore[attr-defined]
        self._update_set_aside()

    def hear_heartbeats_only_from(self, agents: Iterable[Agent]) -> None:
        """Authenticate the heartbeats of these agents only (the peers this agent watches);
        any other agent's become NOT_READ."""
        self._heartbeats_from = frozenset(int(a) for a in agents)
        self._update_set_aside()

    def _update_set_aside(self) -> None:
        every = frozenset(catalogue.BY_TYPE_ID)
        types = frozenset() if self._reads is None else every - self._reads
        senders = frozenset() if self._heartbeats_from is None else \
            frozenset(int(a) for a in Agent) - self._heartbeats_from
        self.set_aside = SetAside(types, senders)

    def decode(self, frame: bytes) -> Received | Drop:
        """Never raises: anything wrong becomes a Drop, counted under its reason. One
        receiving thread per codec."""
        if self.set_aside and self.set_aside.covers(frame):
            self.not_read += 1
            return NOT_READ
        try:
            result = self._decode(frame)
        except Exception as exc:  # last resort: see `unexpected`
            result = self._unexpected("malformed", exc)
        if isinstance(result, Drop):
            self.drops[result.reason] += 1
        else:
            self.accepted += 1
        return result

    def _unexpected(self, reason: str, exc: Exception) -> Drop:
        self.unexpected += 1
        return Drop(reason, f"unexpected {type(exc).__name__} while decoding")

    def _decode(self, frame: bytes) -> Received | Drop:
        if len(frame) < 2 or len(frame) > MAX_FRAME + 64:
            return Drop("malformed", f"frame of {len(frame)} bytes")
        (length,) = _LENGTH.unpack_from(frame)
        if length + 2 > len(frame):
            return Drop("malformed", "truncated frame")
        try:
            protected, kid, payload, tag = _split_cose(frame[2 : 2 + length])
        except (IndexError, ValueError) as exc:
            return Drop("malformed", f"not a COSE_Mac0: {exc}")
        if protected != PROTECTED:  # our one algorithm, and no other protected parameter
            return Drop("mac", "protected header is not {alg: HMAC 256/256}")
        if not hmac.compare_digest(self._tag(payload), tag):
            return Drop("mac", "tag does not verify")
        try:
            return self._authenticated(payload, kid)
        except Exception as exc:  # last resort, past the MAC: see `unexpected`
            return self._unexpected("schema", exc)

    def _authenticated(self, payload: bytes, kid: Any) -> Received | Drop:
        """The checks after the MAC verified: schema, canonical form, sender, replay, age."""
        short = self._short_way(payload, kid)
        if short is not None:
            return short
        if _may_hold_costly_tags(payload) and not _is_plain(payload):
            return Drop("schema", "payload is not plain CBOR (tags or indefinite lengths)")
        try:
            envelope = self._receive_cbor.loads(payload)
        except Exception:  # see _Cbor.loads
            return Drop("schema", "payload is not CBOR")
        if type(envelope) is not dict or len(envelope) != 6:
            return Drop("schema", "envelope needs exactly keys 1..6")
        try:
            type_id, sender, boot_id, seq, timestamp, body = (
                envelope[1], envelope[2], envelope[3], envelope[4], envelope[5], envelope[6])
        except KeyError:
            return Drop("schema", "envelope needs exactly keys 1..6")
        known = _AGENT_KIDS.get(sender) if type(sender) is int else None
        if known is None:
            return Drop("schema", f"unknown sender {catalogue.brief(sender)}")
        agent, agent_kid = known
        if kid != agent_kid:
            return Drop("schema", "kid does not name the sender", agent)
        if not (type(boot_id) is int and type(seq) is int and type(timestamp) is int
                and 0 <= boot_id < _U63 and 0 <= seq < _U63 and 0 <= timestamp < _U63):
            return Drop("schema", "envelope boot id, seq and timestamp must be integers in "
                        "[0, 2^63)", agent)
        cls = catalogue.BY_TYPE_ID.get(type_id) if type(type_id) is int else None
        if cls is None:
            return Drop("schema", f"unknown message type {catalogue.brief(type_id)}", agent)
        try:
            message = catalogue.from_body(cls, body)
        except SchemaError as exc:
            return Drop("schema", str(exc), agent)
        # What our encoder writes for what came must be what came. The body's values are
        # plain ints, floats, str, bytes, bools, lists and maps now (keys integers, in order:
        # from_body), and the envelope's keys are ours, so this cannot fail; it catches all
        # that decoding forgave: long heads, indefinite lengths, float16/32, envelope keys
        # reordered or written as 1.0 or True, keys repeated, bytes after the end.
        canonical = {1: type_id, 2: sender, 3: boot_id, 4: seq, 5: timestamp, 6: body}
        if self._receive_cbor.dumps(canonical) != payload:
            return Drop("schema", "payload is not in canonical form", agent)
        try:
            catalogue.check_sender(message, agent)
        except SchemaError as exc:
            return Drop("sender", str(exc), agent)
        envelope_head = _canonical_envelope(payload)
        if envelope_head is not None:  # remember the body: see _short_way
            self._known[(type_id, sender)] = (payload[envelope_head[5]:], message)
        return self._fresh(message, agent, sender, boot_id, seq, timestamp)

    def _short_way(self, payload: bytes, kid: Any) -> Received | Drop | None:
        """The checks after the MAC for a payload in exactly the form our encoder writes
        (the envelope: _canonical_envelope; the body: reader.read_body), in one pass
        instead of decode, build and encode again; or, cheaper still, whose body is byte
        for byte the last body of that type that passed every check from that sender (a
        heartbeat's, which changes once a second). None for any other payload, valid or
        not: the full checks then decide, and say what is wrong."""
        head = _canonical_envelope(payload)
        if head is None:
            return None
        type_id, sender, boot_id, seq, timestamp, body_at = head
        known = _AGENT_KIDS.get(sender)
        if known is None or kid != known[1]:
            return None
        agent = known[0]
        body = payload[body_at:]
        seen = self._known.get((type_id, sender))
        if seen is not None and seen[0] == body:
            return self._fresh(seen[1], agent, sender, boot_id, seq, timestamp)
        cls = catalogue.BY_TYPE_ID.get(type_id)
        message = read_body(cls, payload, body_at) if cls is not None else None
        if message is None:
            return None
        try:
            catalogue.check_sender(message, agent)
        except SchemaError:
            return None
        self._known[(type_id, sender)] = (body, message)
        return self._fresh(message, agent, sender, boot_id, seq, timestamp)

    def _fresh(self, message: Any, agent: Agent, sender: int, boot_id: int, seq: int,
               timestamp: int) -> Received | Drop:
        """The last checks: not a replay, not stale."""
        stream = (sender, boot_id)
        last = self._last_seq.get(stream, 0)
        if seq <= last:
            return Drop("replay", f"seq {seq} <= {last} from {agent.name}", agent)
        age = self._clock() - timestamp
        if abs(age) > self._max_age_ns:
            return Drop("stale", f"age {age / 1e6:.1f} ms", agent)
        self._last_seq[stream] = seq
        return Received(message, agent, boot_id, seq, timestamp)


def claim(frame: bytes) -> tuple[int, int | None] | None:
    """(type id, sender) that a frame laid out as our encoder writes it says it carries
    (before any check: a claim), the sender None when the bytes after the type are not
    `02 <sender below 24>`; None when the frame is laid out otherwise or names no known type.
    The raw transport's socket filter (transports/raw.py) reads the same bytes in the kernel."""
    at = 2 + len(OWN_PREFIX)
    if not frame.startswith(OWN_PREFIX, 2):
        return None
    try:
        kid_head = frame[at]
        if not 0x40 <= kid_head < 0x58:
            return None
        at += 1 + kid_head - 0x40
        head = frame[at]  # the payload's byte-string head
        at += 1 if head < 0x58 else 2 if head == 0x58 else 3
        if frame[at] != 0xA6 or frame[at + 1] != 0x01:  # map(6) {1: type id, 2: sender, ...
            return None
        claimed = frame[at + 2]
    except IndexError:
        return None
    if claimed >= 24 or claimed not in catalogue.BY_TYPE_ID:
        return None
    sender = frame[at + 4] if len(frame) > at + 4 and frame[at + 3] == 0x02 else None
    return claimed, sender if sender is not None and sender < 24 else None


_U63 = 2**63
# A canonical unsigned integer's head (major type 0) -> (bytes after it, smallest value that
# needs that many): a value written longer than it needs is not canonical.
_UINT_HEADS = {0x18: (1, 24), 0x19: (2, 0x100), 0x1A: (4, 0x10000), 0x1B: (8, 0x1_0000_0000)}
# The envelope as it nearly always is: a boot id and a timestamp of 8 bytes (a random 63-bit
# id, nanoseconds since 1970), a sequence number of any size between them.
_USUAL_HEAD = struct.Struct(">HBBBBBQB")  # a6 01, type, 02, sender, 03, 1b, boot id, 04
_USUAL_TAIL = struct.Struct(">BBQB")  # 05, 1b, timestamp, 06
_USUAL_LENGTH = _USUAL_HEAD.size + 1 + _USUAL_TAIL.size


def _canonical_envelope(payload: bytes) -> tuple[int, int, int, int, int, int] | None:
    """(type id, sender, boot id, seq, timestamp, where the body starts) when the payload's
    envelope up to its body is exactly what our encoder writes: map(6) {1: type id, 2: sender,
    3: boot id, 4: seq, 5: timestamp, 6: ...}, type id and sender below 24 (one byte each),
    the three numbers in their shortest heads and below 2^63. None for anything else (it
    may still be valid; the full decode decides)."""
    if len(payload) >= _USUAL_LENGTH:  # the usual layout: one struct each side of the seq
        head = _USUAL_HEAD.unpack_from(payload)
        if head[0] == 0xA601 and head[2] == 2 and head[4] == 3 and head[5] == 0x1B \
                and head[7] == 4 and head[1] < 24 and head[3] < 24 \
                and 0x1_0000_0000 <= head[6] < _U63:
            at = _USUAL_HEAD.size
            seq = payload[at]
            if seq < 24:
                at += 1
            else:
                size, smallest = _UINT_HEADS.get(seq, (0, 0))
                end = at + 1 + size
                seq = int.from_bytes(payload[at + 1 : end], "big")
                if not size or not smallest <= seq < _U63:
                    return None
                at = end
            if len(payload) >= at + _USUAL_TAIL.size:
                tail = _USUAL_TAIL.unpack_from(payload, at)
                if tail[0] == 5 and tail[1] == 0x1B and tail[3] == 6 \
                        and 0x1_0000_0000 <= tail[2] < _U63:
                    return head[1], head[3], head[6], seq, tail[2], at + _USUAL_TAIL.size
    if payload[:2] != b"\xa6\x01" or len(payload) < 12 or payload[3] != 2 or payload[5] != 3:
        return None
    type_id, sender = payload[2], payload[4]
    if type_id >= 24 or sender >= 24:
        return None
    numbers = []
    at = 6
    for key in (4, 5, 6):  # the key that follows each number
        head = payload[at]
        if head < 24:
            value, at = head, at + 1
        else:
            size, smallest = _UINT_HEADS.get(head, (0, 0))
            end = at + 1 + size
            if not size or end > len(payload):
                return None
            value, at = int.from_bytes(payload[at + 1 : end], "big"), end
            if not smallest <= value < _U63:
                return None
        if at >= len(payload) or payload[at] != key:
            return None
        numbers.append(value)
        at += 1
    return type_id, sender, numbers[0], numbers[1], numbers[2], at


# sender number -> (Agent, the kid it must use)
_AGENT_KIDS = {int(a): (a, a.name.lower().encode()) for a in Agent}
