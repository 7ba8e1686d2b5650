"""COSE_Mac0 and our payload's envelope, byte by byte: what the codec (codec.py) and the
raw transport's socket filter read without a CBOR decoder, and the MAC structure they sign.

Parsed by hand, not by cbor2: no byte the MAC has not verified reaches cbor2 (see
`split_cose`), and the usual layouts are read in one pass (`canonical_envelope`, `claim`).
Every function here checks form only and builds no message; codec.py decides.
"""

from __future__ import annotations

import struct

import cbor2

from foosball.wire import catalogue

COSE_MAC0_TAG = 17
ALG_HMAC_256_256 = 5
HEADER_ALG = 1
HEADER_KID = 4
PROTECTED = cbor2.dumps({HEADER_ALG: ALG_HMAC_256_256})
MAC0_CONTEXT = "MAC0"
TAG_LENGTH = 32
# Our payloads nest 4 deep (envelope > body > records > record); deeper CBOR is refused
# before it costs anything.
MAX_DEPTH = 8


def bstr_head(length: int) -> bytes:
    """CBOR head of a byte string of `length` bytes (major type 2)."""
    if length < 24:
        return bytes((0x40 | length,))
    if length < 0x100:
        return bytes((0x58, length))
    return b"\x59" + length.to_bytes(2, "big")


_MAC0_PREFIX = b"\x84\x64MAC0"  # array(4), text(4) "MAC0"
PROTECTED_BSTR = bstr_head(len(PROTECTED)) + PROTECTED
_EMPTY_AAD = b"\x40"
TAG_HEAD = bstr_head(TAG_LENGTH)


_MAC0_OWN_HEAD = _MAC0_PREFIX + PROTECTED_BSTR + _EMPTY_AAD  # the usual case, prebuilt


def mac_structure(protected: bytes, payload: bytes) -> bytes:
    """CBOR of ["MAC0", protected, external_aad = b"", payload] (RFC 9052 section 6.3).

    Built by concatenation because it is on every message's path; equal to
    cbor2.dumps(["MAC0", protected, b"", payload]) (a unit test checks).
    """
    head = (
        _MAC0_OWN_HEAD
        if protected == PROTECTED
        else _MAC0_PREFIX + bstr_head(len(protected)) + protected + _EMPTY_AAD
    )
    return head + bstr_head(len(payload)) + payload


OWN_PREFIX = b"\xd1\x84" + PROTECTED_BSTR + b"\xa1\x04"  # tag 17 [protected, {4: kid...


def read_bstr(data: bytes, at: int) -> tuple[bytes, int]:
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


def skip_item(data: bytes, at: int, depth: int = 0) -> int:
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
            at = skip_item(data, at, depth + 1)
    return at


def is_plain(data: bytes) -> bool:
    """Whether `data` is exactly one plain CBOR item (see skip_item)."""
    try:
        return skip_item(data, 0) == len(data)
    except (IndexError, ValueError):
        return False


def split_cose(cose: bytes) -> tuple[bytes, bytes | None, bytes, bytes]:
    """(protected, kid, payload, tag) of a COSE_Mac0 in any layout whose unprotected header
    is plain CBOR (IndexError, ValueError when it is not one). Parsed by hand, not by cbor2:
    no byte the MAC has not verified reaches cbor2, which compiles regular expressions and
    parses MIME from tagged values (a second of CPU for a crafted 1.3 kB expression)."""
    if cose.startswith(OWN_PREFIX):  # as our encoder writes it: {4: kid} alone
        protected = PROTECTED
        kid, at = read_bstr(cose, len(OWN_PREFIX))
    else:
        if not cose.startswith(b"\xd1\x84"):  # tag 17, array of 4
            raise ValueError("not a COSE_Mac0")
        protected, at = read_bstr(cose, 2)
        head = cose[at]  # the unprotected header: a map of fewer than 24 entries
        if not 0xA0 <= head < 0xB8:
            raise ValueError("unprotected header is not a small map")
        at += 1
        kid = None
        for _ in range(head - 0xA0):
            if cose[at] == HEADER_KID:  # the key 4 is the byte 0x04 in CBOR
                if kid is not None:
                    raise ValueError("two kids")
                kid, at = read_bstr(cose, at + 1)
            else:
                at = skip_item(cose, skip_item(cose, at))  # a key and its value
    payload, at = read_bstr(cose, at)
    tag, at = read_bstr(cose, at)
    if at != len(cose):
        raise ValueError("bytes after the COSE_Mac0")
    return protected, kid, payload, tag


def may_hold_costly_tags(payload: bytes) -> bool:
    """cbor2 compiles a regular expression for tag 35 and parses MIME for tag 36. Every head
    of either ends in 0x23 or 0x24 after a 0xd8 (or after a 0x00, closing a longer head): a
    payload without such a pair cannot make cbor2 do that work; one with it (1 valid payload
    in 500, by chance in its numbers) must be plain CBOR (skip_item) before cbor2 sees it."""
    if 0x23 not in payload and 0x24 not in payload:  # memchr: cheaper than searching pairs
        return False
    for number in (0x23, 0x24):
        at = payload.find(number, 1)
        while at != -1:
            if payload[at - 1] in (0x00, 0xD8):
                return True
            at = payload.find(number, at + 1)
    return False


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


U63 = 2**63
# A canonical unsigned integer's head (major type 0) -> (bytes after it, smallest value that
# needs that many): a value written longer than it needs is not canonical.
_UINT_HEADS = {0x18: (1, 24), 0x19: (2, 0x100), 0x1A: (4, 0x10000), 0x1B: (8, 0x1_0000_0000)}
# The envelope as it nearly always is: a boot id and a timestamp of 8 bytes (a random 63-bit
# id, nanoseconds since 1970), a sequence number of any size between them.
_USUAL_HEAD = struct.Struct(">HBBBBBQB")  # a6 01, type, 02, sender, 03, 1b, boot id, 04
_USUAL_TAIL = struct.Struct(">BBQB")  # 05, 1b, timestamp, 06
_USUAL_LENGTH = _USUAL_HEAD.size + 1 + _USUAL_TAIL.size


def canonical_envelope(payload: bytes) -> tuple[int, int, int, int, int, int] | None:
    """(type id, sender, boot id, seq, timestamp, where the body starts) when the payload's
    envelope up to its body is exactly what our encoder writes: map(6) {1: type id, 2: sender,
    3: boot id, 4: seq, 5: timestamp, 6: ...}, type id and sender below 24 (one byte each),
    the three numbers in their shortest heads and below 2^63. None for anything else (it
    may still be valid; the full decode decides)."""
    if len(payload) >= _USUAL_LENGTH:  # the usual layout: one struct each side of the seq
        head = _USUAL_HEAD.unpack_from(payload)
        if head[0] == 0xA601 and head[2] == 2 and head[4] == 3 and head[5] == 0x1B \
                and head[7] == 4 and head[1] < 24 and head[3] < 24 \
                and 0x1_0000_0000 <= head[6] < U63:
            at = _USUAL_HEAD.size
            seq = payload[at]
            if seq < 24:
                at += 1
            else:
                size, smallest = _UINT_HEADS.get(seq, (0, 0))
                end = at + 1 + size
                seq = int.from_bytes(payload[at + 1 : end], "big")
                if not size or not smallest <= seq < U63:
                    return None
                at = end
            if len(payload) >= at + _USUAL_TAIL.size:
                tail = _USUAL_TAIL.unpack_from(payload, at)
                if tail[0] == 5 and tail[1] == 0x1B and tail[3] == 6 \
                        and 0x1_0000_0000 <= tail[2] < U63:
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
            if not smallest <= value < U63:
                return None
        if at >= len(payload) or payload[at] != key:
            return None
        numbers.append(value)
        at += 1
    return type_id, sender, numbers[0], numbers[1], numbers[2], at
