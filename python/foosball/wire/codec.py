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

The byte-level reading (COSE_Mac0, the envelope's usual layouts, the header's claim) and
the MAC structure are cose.py's; this module decides and keeps the anti-replay state.

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
from foosball.wire.cose import (
    HEADER_KID,
    MAX_DEPTH,
    PROTECTED,
    PROTECTED_BSTR,
    TAG_HEAD,
    U63,
    bstr_head,
    canonical_envelope,
    claim,
    is_plain,
    mac_structure,
    may_hold_costly_tags,
    split_cose,
)
from foosball.wire.reader import read_body

KEY_LENGTH = 32

# Ethernet payload is 1500 bytes; the whole frame (length prefix included) must fit.
MAX_FRAME = 1500
_LENGTH = struct.Struct(">H")

DROP_REASONS = ("malformed", "mac", "schema", "sender", "replay", "stale")


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
            (b"\xd1\x84", PROTECTED_BSTR, self._unprotected_cbor,
             bstr_head(len(payload)), payload, TAG_HEAD, tag)
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
            protected, kid, payload, tag = split_cose(frame[2 : 2 + length])
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
        if may_hold_costly_tags(payload) and not is_plain(payload):
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
                and 0 <= boot_id < U63 and 0 <= seq < U63 and 0 <= timestamp < U63):
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
        envelope_head = canonical_envelope(payload)
        if envelope_head is not None:  # remember the body: see _short_way
            self._known[(type_id, sender)] = (payload[envelope_head[5]:], message)
        return self._fresh(message, agent, sender, boot_id, seq, timestamp)

    def _short_way(self, payload: bytes, kid: Any) -> Received | Drop | None:
        """The checks after the MAC for a payload in exactly the form our encoder writes
        (the envelope: canonical_envelope; the body: reader.read_body), in one pass
        instead of decode, build and encode again; or, cheaper still, whose body is byte
        for byte the last body of that type that passed every check from that sender (a
        heartbeat's, which changes once a second). None for any other payload, valid or
        not: the full checks then decide, and say what is wrong."""
        head = canonical_envelope(payload)
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


# sender number -> (Agent, the kid it must use)
_AGENT_KIDS = {int(a): (a, a.name.lower().encode()) for a in Agent}
