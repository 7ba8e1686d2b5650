"""Hostile input for the codec tests: valid and invalid catalogue values, frames signed with
the real key (so they pass the MAC and reach the schema checks), a CBOR writer that breaks
canonical form on purpose, and CBOR meant to hurt a decoder. Seeded by the caller's
random.Random, so every run sees the same frames."""

from __future__ import annotations

import dataclasses
import hmac
import math
import random
import struct
from collections.abc import Callable
from typing import Any

import cbor2

from foosball.wire import catalogue
from foosball.wire.catalogue import (
    Agent,
    BallState,
    BallStatus,
    Heartbeat,
    SafetyState,
    Spec,
    specs,
)
from foosball.wire.codec import PROTECTED, WireCodec, mac_structure

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
NOW = 1_700_000_000_000_000_000
HUGE = (2**64, 2**1100, -(2**1100), 2**63, -(2**64) - 1)
NOT_FINITE = (math.nan, math.inf, -math.inf)


def fixed_clock() -> int:
    return NOW


def kid(agent: Agent) -> bytes:
    return agent.name.lower().encode()


def valid_frame(codec: WireCodec) -> bytes:
    return codec.encode(
        BallState(capture_time=NOW, frame=1, x=0.1, y=0.2, vx=1.0, vy=-1.0,
                  covariance=(0.0, 0.0, 0.0, 0.0), status=BallStatus.DETECTED)
    )


def signed(payload: bytes, key: bytes = KEY, kid: bytes = b"tool",
           protected: bytes = PROTECTED) -> bytes:
    """A frame whose tag verifies under `key`, whatever `payload` holds."""
    tag = hmac.digest(key, mac_structure(protected, payload), "sha256")
    cose = cbor2.dumps(cbor2.CBORTag(17, [protected, {4: kid}, payload, tag]))
    return len(cose).to_bytes(2, "big") + cose


def envelope(cls: type, sender: Agent, body: Any, *, boot_id: int = 7, seq: int = 1,
             timestamp: int = NOW) -> dict[int, Any]:
    return {1: cls.TYPE_ID, 2: int(sender), 3: boot_id, 4: seq, 5: timestamp, 6: body}


def heartbeat_with_a_huge_cpu_load() -> bytes:
    """The frame from the issue: a correctly signed Heartbeat whose cpu_load is the CBOR
    integer 2^1100 (float() of it raised OverflowError out of decode)."""
    beat = Heartbeat(agent=Agent.POLE_DRIVER, state=SafetyState.READY, period_s=0.5,
                     cpu_load=1.0, memory=2.0, temperature=40.0)
    body = {**catalogue.to_body(beat), 4: 2**1100}  # key 4: cpu_load
    return signed(cbor2.dumps(envelope(Heartbeat, Agent.POLE_DRIVER, body)), kid=b"pole_driver")


# --- valid messages --------------------------------------------------------------------------


def valid_value(rng: random.Random, spec: Spec) -> Any:
    """A random value the spec accepts, edges included. Text mixes in what a terminal must
    not see raw (escape sequences, non-ASCII); sizes stay well inside one frame."""
    kind = spec.kind
    if kind == "float":
        return rng.choice((spec.low, spec.high, rng.uniform(spec.low, spec.high)))
    if kind == "int":
        low, high = int(spec.low), int(spec.high)
        return rng.choice((low, high, rng.randint(low, high)))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "str":
        return "".join(rng.choice("az09 é☃\n\x1b[") for _ in range(rng.randint(0, 24)))
    if kind == "bytes":
        return rng.randbytes(rng.choice((0, rng.randint(1, 64), spec.max_len)))
    if kind == "enum":
        assert spec.enum is not None
        return rng.choice(list(spec.enum))
    if kind == "floats":
        return tuple(rng.uniform(spec.low, spec.high) for _ in range(spec.max_len))
    assert kind == "records" and spec.record is not None
    return tuple(valid_message(rng, spec.record)
                 for _ in range(rng.randint(0 if spec.optional else 1, spec.max_len)))


def valid_message(rng: random.Random, cls: type) -> Any:
    return cls(**{name: valid_value(rng, spec) for name, spec in specs(cls)})


def sendable(rng: random.Random, cls: type | None = None) -> tuple[Any, Agent]:
    """A random valid message and an agent allowed to send it (SENDERS, SENDER_FIELD)."""
    cls = cls or rng.choice(catalogue.MESSAGE_TYPES)
    sender = rng.choice(sorted(catalogue.SENDERS[cls]))
    message = valid_message(rng, cls)
    field_name = catalogue.SENDER_FIELD.get(cls)
    if field_name is not None:
        message = dataclasses.replace(message, **{field_name: sender})
    return message, sender


# --- invalid values ----------------------------------------------------------------------------


def invalid_values(rng: random.Random, spec: Spec) -> list[Any]:
    """Values the spec must refuse: wrong types (bool for numbers included), NaN and the
    infinities, huge integers, out of range, bad enum members, too long."""
    wrong_types: list[Any] = [None, "1", b"\x01", [], {}]
    kind = spec.kind
    if kind == "float":
        above = spec.high + max(1.0, abs(spec.high))
        below = spec.low - max(1.0, abs(spec.low))
        return [*NOT_FINITE, *HUGE, True, False, above, below, 1e308, *wrong_types]
    if kind == "int":
        return [*HUGE, True, False, 1.0, 0.5, math.nan, int(spec.high) + 1, int(spec.low) - 1,
                *wrong_types]
    if kind == "enum":
        assert spec.enum is not None
        return [max(spec.enum) + 1, -1, *HUGE, True, 1.0, math.nan, "READY", *wrong_types]
    if kind == "bool":
        return [0, 1, 1.0, math.nan, 2**64, None, "true", b"", []]
    if kind == "str":
        return ["x" * (spec.max_len + 1), b"text", 1, 1.5, True, None, ["a"], {}]
    if kind == "bytes":
        return [b"\0" * (spec.max_len + 1), "bytes", 1, True, None, [1], {}]
    if kind == "floats":
        n = spec.max_len
        return [[0.0] * (n - 1), [0.0] * (n + 1), [math.nan] * n, [2**1100] + [0.0] * (n - 1),
                [True] * n, ["x"] * n, [[0.0]] * n, {}, 1.0, None]
    assert kind == "records" and spec.record is not None
    record = catalogue.to_body(valid_message(rng, spec.record))
    broken = invalid_body(rng, spec.record)
    return [[], [record] * (spec.max_len + 1), [1], [{}], [broken], [[record]], record, None, "x"]


def invalid_body(rng: random.Random, cls: type) -> dict[int, Any]:
    """The body of a valid message with one field's value replaced by one it must refuse."""
    body = catalogue.to_body(valid_message(rng, cls))
    _, spec = rng.choice(specs(cls))
    body[spec.key] = rng.choice(invalid_values(rng, spec))
    return body


# --- a CBOR writer that breaks canonical form on purpose ---------------------------------------


class Raw(bytes):
    """Bytes the writer copies as they are: a hostile item inside a well-formed frame."""


def _head(major: int, arg: int, width: int = 0) -> bytes:
    """A CBOR head; `width` (1, 2, 4, 8 bytes) forces a longer one than the shortest."""
    if not width:
        if arg < 24:
            return bytes((major << 5 | arg,))
        width = next(w for w in (1, 2, 4, 8) if arg < 1 << (8 * w))
    return bytes((major << 5 | {1: 24, 2: 25, 4: 26, 8: 27}[width],)) + arg.to_bytes(width, "big")


def _wider(arg: int, rng: random.Random) -> int:
    """A head width longer than the shortest for `arg`, or 0 when there is none."""
    shortest = 0 if arg < 24 else next(w for w in (1, 2, 4, 8) if arg < 1 << (8 * w))
    longer = [w for w in (1, 2, 4, 8) if w > shortest]
    return rng.choice(longer) if longer else 0


class Writer:
    """Encodes like cbor2 with our settings, except that the node numbered `quirk_at` (in
    writing order) is written in a form cbor2 decodes to the same value but that our
    encoder never writes: a longer head, an indefinite length, a float16/32, a bignum for
    a small integer; for a map, keys swapped, a key repeated, or a key 1 written as 1.0 or
    True (equal in Python, another key on the wire). quirk_at=-1 writes canonical CBOR."""

    def __init__(self, rng: random.Random, quirk_at: int = -1) -> None:
        self.rng = rng
        self.quirk_at = quirk_at
        self.nodes = 0
        self.quirked = False

    def write(self, value: Any) -> bytes:
        index = self.nodes
        self.nodes += 1
        quirk = index == self.quirk_at
        out = self._quirky(value) if quirk else None
        if out is not None:
            self.quirked = True
            return out
        return self._plain(value)

    def _plain(self, value: Any) -> bytes:
        if isinstance(value, Raw):
            return bytes(value)
        if value is None:
            return b"\xf6"
        if type(value) is bool:
            return b"\xf5" if value else b"\xf4"
        if type(value) is int:
            if 0 <= value < 2**64:
                return _head(0, value)
            if -(2**64) <= value < 0:
                return _head(1, -1 - value)
            return cbor2.dumps(value)  # a bignum
        if type(value) is float:
            return cbor2.dumps(value)
        if type(value) is bytes:
            return _head(2, len(value)) + value
        if type(value) is str:
            data = value.encode()
            return _head(3, len(data)) + data
        if isinstance(value, list | tuple):
            return _head(4, len(value)) + b"".join(self.write(v) for v in value)
        assert isinstance(value, dict), type(value)
        return _head(5, len(value)) + b"".join(
            self.write(k) + self.write(v) for k, v in value.items())

    def _quirky(self, value: Any) -> bytes | None:
        rng = self.rng
        if isinstance(value, Raw) or value is None or type(value) is bool:
            return None
        if type(value) is int and -(2**64) <= value < 2**64:
            major, arg = (0, value) if value >= 0 else (1, -1 - value)
            width = _wider(arg, rng)
            if width and rng.random() < 0.7:
                return _head(major, arg, width)
            raw = arg.to_bytes(max(1, (arg.bit_length() + 7) // 8), "big")  # tag 2/3 bignum
            return bytes((0xC2 + major,)) + _head(2, len(raw)) + raw
        if type(value) is float:
            for code, fmt in ((b"\xf9", ">e"), (b"\xfa", ">f")):
                try:
                    packed = struct.pack(fmt, value)
                except OverflowError:
                    continue
                if struct.unpack(fmt, packed)[0] == value:
                    return code + packed
            return None
        if type(value) in (bytes, str):
            major, data = (2, value) if type(value) is bytes else (3, value.encode())
            if rng.random() < 0.5:  # indefinite length: two chunks, cut between characters
                cut = len(value[: rng.randint(0, len(value))].encode()) if major == 3 \
                    else rng.randint(0, len(data))
                chunks = (data[:cut], data[cut:])
                return bytes((major << 5 | 31,)) + b"".join(
                    _head(major, len(c)) + c for c in chunks) + b"\xff"
            return _head(major, len(data), _wider(len(data), rng)) + data
        if isinstance(value, list | tuple):
            items = b"".join(self._plain_child(v) for v in value)
            if rng.random() < 0.5:
                return b"\x9f" + items + b"\xff"
            return _head(4, len(value), _wider(len(value), rng)) + items
        assert isinstance(value, dict)
        pairs = [self._plain_child(k) + self._plain_child(v) for k, v in value.items()]
        choices: list[Callable[[], bytes]] = [
            lambda: b"\xbf" + b"".join(pairs) + b"\xff",
            lambda: _head(5, len(pairs), _wider(len(pairs), rng)) + b"".join(pairs),
            lambda: _head(5, len(pairs) + 1) + b"".join(pairs) + rng.choice(pairs),
        ]
        if len(pairs) >= 2:
            i = rng.randrange(len(pairs) - 1)
            swapped = [*pairs[:i], pairs[i + 1], pairs[i], *pairs[i + 2:]]
            choices.append(lambda: _head(5, len(pairs)) + b"".join(swapped))
        if 1 in value:
            first = rng.choice((b"\xfb" + struct.pack(">d", 1.0), b"\xf5"))  # 1.0, True
            renamed = [first + self._plain_child(value[1]) if k == 1 else pair
                       for k, pair in zip(value, pairs, strict=True)]
            choices.append(lambda: _head(5, len(pairs)) + b"".join(renamed))
        return rng.choice(choices)()

    def _plain_child(self, value: Any) -> bytes:
        # Children of a quirked node are written canonically (one quirk per payload).
        return Writer(self.rng).write(value)


def noncanonical(rng: random.Random, value: Any) -> bytes:
    """CBOR that cbor2 decodes to `value` but that is not what our encoder writes for it."""
    nodes = Writer(rng)
    assert nodes.write(value) == cbor2.dumps(value), "the writer must agree with cbor2"
    for _ in range(20):
        writer = Writer(rng, rng.randrange(nodes.nodes))
        out = writer.write(value)
        if writer.quirked:
            return out
    return cbor2.dumps(value) + b"\x00"  # nothing quirkable drawn: a byte after the item


# --- CBOR meant to hurt a decoder --------------------------------------------------------------

# Case-insensitive classes over all of Unicode: re.compile spends about a second of CPU on
# these 1.3 kB. cbor2 compiles the text of a tag 35 item; the codec must never let it.
SLOW_REGEX = "(?i)" + "".join(f"[{chr(0x100 + i)}-\U0010ffff]" for i in range(150))


def hostile_item(rng: random.Random) -> bytes:
    """One CBOR item (or the start of one) chosen to cost a decoder time, memory or a stack:
    deep nesting, lengths larger than the frame, huge numbers, tags with expensive or
    failing decoders, bytes that are not CBOR at all."""
    depth = rng.choice((9, 50, 400, 1400))
    pick = rng.randrange(15)
    if pick == 0:
        return rng.choice((b"\x81", b"\x9f", b"\xa1\x01", b"\xc6", b"\xd8\x1c")) * depth + b"\x00"
    if pick == 1:  # a length up to 2^64 - 1, with no bytes behind it
        major = rng.choice((2, 3, 4, 5))
        return _head(major, rng.choice((2**64 - 1, 2**32, 65535, 1400)))
    if pick == 2:
        return cbor2.dumps(rng.choice((*HUGE, *NOT_FINITE, 1e308, -0.0)))
    if pick == 3:
        return cbor2.dumps(cbor2.CBORTag(35, SLOW_REGEX))
    if pick == 4:
        mime = "Content-Type: multipart/mixed; boundary=a\n\n" + "--a\n\nx\n" * 100
        return cbor2.dumps(cbor2.CBORTag(36, mime))
    if pick == 5:  # decimal fraction and bigfloat with huge exponents; a rational over 0
        return cbor2.dumps(rng.choice((cbor2.CBORTag(4, [2**64, 3]), cbor2.CBORTag(5, [2**63, 3]),
                                       cbor2.CBORTag(5, [-(2**1000), 1]),
                                       cbor2.CBORTag(30, [1, 0]))))
    if pick == 6:  # dates, UUID, IP address, set: malformed content
        return cbor2.dumps(rng.choice((cbor2.CBORTag(0, "not a date"), cbor2.CBORTag(1, 2**70),
                                       cbor2.CBORTag(37, b"x"), cbor2.CBORTag(260, b"xx"),
                                       cbor2.CBORTag(258, [[1]]))))
    if pick == 7:  # shared references: a list that holds itself; an undefined reference
        return rng.choice((b"\xd8\x1c\x81\xd8\x1d\x00", b"\xd8\x1d\x05", b"\xd8\x19\x00"))
    if pick == 8:  # a bignum as long as a frame
        return b"\xc2\x59\x05\x00" + rng.randbytes(1280)
    if pick == 9:  # undefined, simple values, a lone break, invalid UTF-8, reserved heads
        return rng.choice((b"\xf7", b"\xf8\xff", b"\xf8\x10", b"\xff", b"\x62\xff\xfe", b"\x1c",
                           b"\xfc", b"\x5f\x61a\xff"))
    if pick == 10:  # maps keyed by containers (cbor2 makes them immutable on the way)
        return rng.choice((b"\xa1\x81\x00\x00", b"\xa1\xa1\x00\x00\x00",
                           b"\xa1" + b"\x81" * depth + b"\x00\x00"))
    if pick == 11:  # an unknown tag around a huge integer, a self-described bignum
        return cbor2.dumps(cbor2.CBORTag(rng.choice((6, 99, 2**32, 2**64 - 1)), 2**1100))
    if pick == 12:  # string references across a namespace
        return b"\xd9\x01\x00\x83\x63abc\x63abc\xd8\x19" + bytes((rng.randrange(40),))
    if pick == 13:
        return rng.randbytes(rng.randint(1, 200))
    return cbor2.dumps([rng.choice((*HUGE, math.nan, "x" * 10, b"y", None)) for _ in range(50)])
