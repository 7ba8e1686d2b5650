"""The receive path under fire: 120,000 deterministic hostile frames into one receiver.

Frames come unsigned (framing, COSE, MAC attacks) and signed with the real key (so they pass
the MAC and reach the schema, canonical-form, sender, replay and age checks), mixed with
valid messages that must still get through. Asserted:

- nothing escapes decode(), and its last-resort guard never fires (`unexpected` stays 0:
  every kind of bad input is refused by a check that knows it);
- no decode hangs: the slowest one, re-timed alone on CPU time, is under 50 ms (a hang
  detector, not a timing figure);
- every frame invalid by construction is dropped, under the reason its kind names;
- every accepted message is valid: it re-encodes through catalogue.to_body, its sender may
  send it, and its payload is byte for byte what our encoder writes for what it decodes to;
- every drop is counted, under a reason in DROP_REASONS, all reasons seen.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Any, NamedTuple

import cbor2

from foosball.wire import catalogue
from foosball.wire.catalogue import Agent, Alarm, Heartbeat
from foosball.wire.codec import DROP_REASONS, MAX_FRAME, PROTECTED, Drop, Received, WireCodec
from tests.wire.hostile import (
    KEY,
    NOW,
    OTHER_KEY,
    SLOW_REGEX,
    Raw,
    Writer,
    envelope,
    fixed_clock,
    hostile_item,
    invalid_body,
    kid,
    noncanonical,
    sendable,
    signed,
    valid_frame,
)

FRAMES = 120_000
SEED = 20261201
HANG_S = 0.05
MAX_AGE_S = 0.5
AFTER_MAC = frozenset({"schema", "sender", "replay", "stale"})
NOT_ACCEPTED = frozenset(DROP_REASONS)


class Case(NamedTuple):
    frame: bytes
    # "accept"; a drop reason or a set of them; None: any outcome (accepted ones are still
    # re-validated), for mutations that may by chance yield another valid message.
    expect: str | frozenset[str] | None
    sender: Agent | None = None  # the Drop.sender a post-MAC drop must carry
    message: Any = None  # what an accepted frame must decode to


def _flip_bits(data: bytes, rng: random.Random, count: int) -> bytes:
    """`data` with `count` distinct bits flipped (two flips of one bit would undo each other)."""
    out = bytearray(data)
    for bit in rng.sample(range(len(out) * 8), count):
        out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def _size_checked(frame: bytes, reason: str) -> str:
    # A mutation that grows a frame past what a receiver reads is malformed before anything.
    return "malformed" if len(frame) > MAX_FRAME + 64 else reason


class Fuzzer:
    """Makes one Case per call of a kind; keeps the senders and the frames worth replaying."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.codecs = {a: WireCodec(KEY, a, clock=fixed_clock) for a in Agent}
        self.offset_ns = 0
        self.skewed = {a: WireCodec(KEY, a, clock=lambda: NOW + self.offset_ns) for a in Agent}
        self.stranger = WireCodec(OTHER_KEY, Agent.TOOL, clock=fixed_clock)
        self.replayable: deque[tuple[bytes, Agent]] = deque(maxlen=256)
        self.kinds: dict[str, Callable[[], Case]] = {
            name: getattr(self, name) for name in (
                "valid", "truncated", "oversized", "garbage", "bit_flips", "wrong_key",
                "tampered", "hostile_cose", "hostile_protected", "bad_value",
                "bad_structure", "noncanonical", "hostile_payload", "forbidden_sender",
                "forged_sender_field", "replay", "stale", "signed_bit_flips")
        }

    def _fresh_boot(self) -> int:
        return self.rng.getrandbits(62)

    def _forge(self, payload: bytes, sender: Agent) -> bytes:
        return signed(payload, kid=kid(sender))

    # --- valid, and the MAC's side of the wire -------------------------------------------------

    def valid(self) -> Case:
        message, sender = sendable(self.rng)
        return Case(self.codecs[sender].encode(message), "accept", sender, message)

    def truncated(self) -> Case:
        frame = self.valid().frame
        return Case(frame[: self.rng.randrange(len(frame))], "malformed")

    def oversized(self) -> Case:
        return Case(self.rng.randbytes(self.rng.randint(MAX_FRAME + 65, MAX_FRAME + 400)),
                    "malformed")

    def garbage(self) -> Case:
        body = self.rng.randbytes(self.rng.randint(1, 200))
        if body[0] == 0xD1:  # not the COSE_Mac0 tag, or it might parse that far
            body = b"\x00" + body[1:]
        return Case(len(body).to_bytes(2, "big") + body, "malformed")

    def bit_flips(self) -> Case:
        frame = _flip_bits(self.valid().frame, self.rng, self.rng.randint(1, 4))
        # The kid is outside the MAC: a flip there passes it and fails the schema check.
        return Case(frame, frozenset({"malformed", "mac", "schema"}))

    def wrong_key(self) -> Case:
        return Case(valid_frame(self.stranger), "mac")

    def tampered(self) -> Case:
        frame = bytearray(valid_frame(self.codecs[Agent.BALL_TRACKER]))
        # offsets from the end: 0..31 the tag, 34..80 the payload (32, 33: the tag's head)
        offset = self.rng.choice((self.rng.randint(0, 31), self.rng.randint(34, 80)))
        frame[len(frame) - 1 - offset] ^= 1 << self.rng.randrange(8)
        return Case(bytes(frame), "mac")

    def hostile_cose(self) -> Case:
        """COSE structures the hand parser must refuse, or pass on to a MAC that fails."""
        rng = self.rng
        item = hostile_item(rng)
        kid_entry = b"\x04" + cbor2.dumps(b"tool")
        unprotected = rng.choice((
            b"\xa1" + kid_entry,  # ours: other parts carry the attack
            b"\xa1\x04" + item,  # the kid is hostile
            b"\xa2" + kid_entry + b"\x18\x63" + item,  # another header is
            b"\xa1" + item + cbor2.dumps(b"x"),  # a key is
            b"\xa2" + kid_entry + kid_entry,  # two kids
            b"\xbf" + kid_entry + b"\xff",  # indefinite length
            b"\xb8\x18" + kid_entry * 24,  # 24 entries
            b"\x81" + kid_entry,  # not a map
        ))
        head = rng.choice((b"\xd1\x84",) * 4 + (b"\x84", b"\xd2\x84", b"\xd1\x83", b"\xd1\x85",
                                                b"\xd1\x9f", b"\xd8\x11\x84"))
        tail = rng.choice((b"", b"", b"\x00", b"\xff"))  # a byte after the COSE, inside it
        payload = cbor2.dumps(envelope(Heartbeat, Agent.TOOL, {}))
        body = head + cbor2.dumps(PROTECTED) + unprotected + cbor2.dumps(payload) + \
            cbor2.dumps(rng.randbytes(32)) + tail
        return Case(len(body).to_bytes(2, "big") + body, frozenset({"malformed", "mac"}))

    def hostile_protected(self) -> Case:
        """Protected headers other than ours, signed with the real key."""
        message, sender = sendable(self.rng)
        payload = cbor2.dumps(envelope(type(message), sender, catalogue.to_body(message),
                                       boot_id=self._fresh_boot()))
        protected = self.rng.choice((
            cbor2.dumps({1: 6}), cbor2.dumps({1: "HS256"}), cbor2.dumps({}),
            b"\xa1\x18\x01\x05",  # {1: 5} with a long key head
            cbor2.dumps({1: 5, 4: b"x"}),
            cbor2.dumps({1: 5, 99: cbor2.CBORTag(35, SLOW_REGEX)}),
            hostile_item(self.rng),
        ))
        if protected == PROTECTED:
            protected += b"\x00"
        frame = signed(payload, kid=kid(sender), protected=protected)
        return Case(frame, _size_checked(frame, "mac"))

    # --- signed: past the MAC, into the schema ---------------------------------------------

    def bad_value(self) -> Case:
        """One field of a valid message replaced: wrong type, bool for a number, NaN, the
        infinities, 2^64, +-2^1100, out of range, not an enum member, too long."""
        message, sender = sendable(self.rng)
        body = invalid_body(self.rng, type(message))
        frame = self._forge(cbor2.dumps(envelope(type(message), sender, body)), sender)
        return Case(frame, _size_checked(frame, "schema"), sender)

    def bad_structure(self) -> Case:
        rng = self.rng
        message, sender = sendable(rng)
        cls = type(message)
        body: Any = catalogue.to_body(message)
        env: Any = envelope(cls, sender, body)
        key_of_sender = kid(sender)
        choice = rng.randrange(9)
        if choice == 0:  # a body key missing, unknown, or out of order
            keys = list(body)
            if len(keys) > 1 and rng.random() < 0.5:
                keys[0], keys[1] = keys[1], keys[0]
                env[6] = {k: body[k] for k in keys}
            elif rng.random() < 0.5:
                env[6] = {k: body[k] for k in keys[1:]}
            else:
                env[6] = {**body, max(keys) + rng.choice((1, 100)): 0}
        elif choice == 1:  # a body that is not a map
            env[6] = rng.choice((list(body.values()), 0, None, b"", "body", True))
        elif choice == 2:  # an envelope key missing, extra, out of order; not a map
            missing = rng.randint(1, 6)
            env = rng.choice((
                {k: v for k, v in env.items() if k != missing},
                {**env, 7: 0},
                {k: env[k] for k in (1, 2, 3, 4, 6, 5)},
                list(env.values()),
            ))
        elif choice == 3:
            env[1] = rng.choice((0, max(catalogue.BY_TYPE_ID) + 1, 255, -1, 2**64, True, 1.0,
                                 "3", None))
        elif choice == 4:
            env[2] = rng.choice((0, max(Agent) + 1, -1, 2**64, True, 4.0, "tool", None))
        elif choice in (5, 6, 7):  # boot id, seq, timestamp
            env[choice - 2] = rng.choice((-1, 2**63, 2**64, 2**1100, 1.5, True, None, "1"))
        else:  # the kid names someone else, or is missing or empty
            key_of_sender = rng.choice([kid(a) for a in Agent if a != sender] + [b"", b"TOOL"])
        return Case(signed(cbor2.dumps(env), kid=key_of_sender), "schema")

    def noncanonical(self) -> Case:
        """A valid message whose payload is written in one way our encoder never writes."""
        message, sender = sendable(self.rng)
        env = envelope(type(message), sender, catalogue.to_body(message),
                       boot_id=self._fresh_boot())
        frame = self._forge(noncanonical(self.rng, env), sender)
        return Case(frame, _size_checked(frame, "schema"))

    def hostile_payload(self) -> Case:
        """Decoder-hurting CBOR as the whole payload or as a message body."""
        rng = self.rng
        message, sender = sendable(rng)
        item = hostile_item(rng)
        payload = item if rng.random() < 0.5 else Writer(rng).write(
            envelope(type(message), sender, Raw(item), boot_id=self._fresh_boot()))
        frame = self._forge(payload, sender)
        return Case(frame, _size_checked(frame, "schema"))

    def forbidden_sender(self) -> Case:
        cls = self.rng.choice([c for c, who in catalogue.SENDERS.items() if who != set(Agent)])
        message, _ = sendable(self.rng, cls)
        agent = self.rng.choice(sorted(set(Agent) - catalogue.SENDERS[cls]))
        return Case(self.codecs[agent].encode(message), "sender", agent)

    def forged_sender_field(self) -> Case:
        """A Heartbeat or Alarm in another agent's name."""
        message, sender = sendable(self.rng, self.rng.choice((Heartbeat, Alarm)))
        field_name = catalogue.SENDER_FIELD[type(message)]
        named = self.rng.choice([a for a in Agent if a != sender])
        forged = dataclasses.replace(message, **{field_name: named})
        return Case(self.codecs[sender].encode(forged), "sender", sender)

    def replay(self) -> Case:
        if not self.replayable:
            return self.valid()
        frame, sender = self.rng.choice(self.replayable)
        return Case(frame, "replay", sender)

    def stale(self) -> Case:
        """Older than the receiver's max age, or from its future, by 1 ms to 47 years."""
        message, sender = sendable(self.rng)
        margin = int(self.rng.choice((1e6, 1e9, 3.6e12, 1e18)) * self.rng.uniform(1.0, 1.5))
        self.offset_ns = self.rng.choice((-1, 1)) * (int(MAX_AGE_S * 1e9) + margin)
        return Case(self.skewed[sender].encode(message), "stale", sender)

    def signed_bit_flips(self) -> Case:
        """A valid payload with bits flipped, signed again: may happen to be another valid
        message (a flipped mantissa bit), which must then pass every re-validation."""
        message, sender = sendable(self.rng)
        payload = cbor2.dumps(envelope(type(message), sender, catalogue.to_body(message),
                                       boot_id=self._fresh_boot()))
        return Case(self._forge(_flip_bits(payload, self.rng, self.rng.randint(1, 3)), sender),
                    None)


def _payload(frame: bytes) -> bytes:
    length = int.from_bytes(frame[:2], "big")
    return cbor2.loads(frame[2 : 2 + length]).value[2]  # type: ignore[no-any-return]


def _problem(case: Case, result: Received | Drop) -> str | None:
    """What is wrong with `result` for `case`, or None."""
    if isinstance(result, Drop):
        if result.reason not in DROP_REASONS:
            return f"reason {result.reason!r} is not in DROP_REASONS"
        if case.expect == "accept":
            return f"a valid frame was dropped: {result}"
        if isinstance(case.expect, str) and result.reason != case.expect:
            return f"expected a {case.expect!r} drop: {result}"
        if isinstance(case.expect, frozenset) and result.reason not in case.expect:
            return f"expected one of {sorted(case.expect)}: {result}"
        if result.reason in ("malformed", "mac") and result.sender is not None:
            return f"a drop before the MAC verified names a sender: {result}"
        # Past the MAC a drop names the sender once the envelope is read that far: always
        # for sender, replay and stale drops; for schema drops when the envelope made sense.
        named = result.sender is not None or result.reason in AFTER_MAC - {"schema"}
        if case.sender is not None and named and result.sender != case.sender:
            return f"the drop should name {case.sender.name}: {result}"
        return None
    if case.expect not in ("accept", None):
        return f"accepted, expected {case.expect}: {result}"
    message = result.message
    body = catalogue.to_body(message)  # raises on any invalid field
    if catalogue.from_body(type(message), body) != message:
        return f"does not survive a body round trip: {message}"
    catalogue.check_sender(message, result.sender)
    payload = _payload(case.frame)
    decoded = cbor2.loads(payload)
    if cbor2.dumps(decoded) != payload or [(type(k), k) for k in decoded] != \
            [(int, k) for k in range(1, 7)]:
        return f"accepted a payload our encoder would not write: {payload.hex()}"
    if catalogue.from_body(type(message), decoded[6]) != message:  # its keys: ints, in order
        return f"accepted a body that is not {message}: {payload.hex()}"
    if case.message is not None and message != case.message:
        return f"decoded {message}, sent {case.message}"
    return None


def _cpu_seconds_to_decode(frame: bytes) -> float:
    """The least CPU time of three decodes on a fresh receiver: scheduling and other jobs on
    the machine do not count, a slow path does."""
    best = float("inf")
    for _ in range(3):
        receiver = WireCodec(KEY, Agent.STRATEGY, clock=fixed_clock, max_age_s=MAX_AGE_S)
        start = time.thread_time()
        receiver.decode(frame)
        best = min(best, time.thread_time() - start)
    return best


FIGURES: dict[str, Any] = {}


def test_120000_hostile_frames_never_raise_hang_or_get_an_invalid_message_through():
    fuzzer = Fuzzer(SEED)
    receiver = WireCodec(KEY, Agent.STRATEGY, clock=fixed_clock, max_age_s=MAX_AGE_S)
    schedule = [kind for kind in fuzzer.kinds for _ in range(FRAMES // len(fuzzer.kinds) + 1)]
    fuzzer.rng.shuffle(schedule)
    outcomes: Counter[tuple[str, str]] = Counter()
    problems: list[str] = []
    suspects: list[bytes] = []  # slow on the wall clock: re-timed below
    slowest_wall = 0.0
    started = time.perf_counter()
    for kind in schedule:
        case = fuzzer.kinds[kind]()
        start = time.perf_counter()
        result = receiver.decode(case.frame)  # any exception fails the test here
        took = time.perf_counter() - start
        slowest_wall = max(slowest_wall, took)
        if took > HANG_S / 5:
            suspects.append(case.frame)
        problem = _problem(case, result)
        if problem is not None:
            problems.append(f"{kind}: {problem}")
        if isinstance(result, Drop):
            outcomes[kind, result.reason] += 1
        else:
            outcomes[kind, "accepted"] += 1
            fuzzer.replayable.append((case.frame, result.sender))
    elapsed = time.perf_counter() - started
    slowest = max((_cpu_seconds_to_decode(frame) for frame in suspects), default=0.0)

    FIGURES.update(frames=len(schedule), kinds=len(fuzzer.kinds), seconds=round(elapsed, 1),
                   slowest_wall_ms=round(slowest_wall * 1e3, 2), suspects=len(suspects),
                   slowest_suspect_cpu_ms=round(slowest * 1e3, 2),
                   drops=dict(receiver.drops), accepted=receiver.accepted,
                   outcomes={k: {r: n for (kk, r), n in outcomes.items() if kk == k}
                             for k in fuzzer.kinds})
    print(FIGURES)  # pytest -s shows them
    assert not problems, f"{len(problems)} problems, the first: {problems[:5]}"
    assert receiver.unexpected == 0, "the last-resort guard caught what no check refused"
    assert slowest < HANG_S, f"a decode took {slowest * 1e3:.1f} ms of CPU"
    assert receiver.accepted + sum(receiver.drops.values()) == len(schedule) >= FRAMES
    drops: Counter[str] = Counter()
    for (_, reason), n in outcomes.items():
        drops[reason] += n if reason != "accepted" else 0
    assert +receiver.drops == +drops  # every drop counted, under the reason it was given
    assert set(receiver.drops) == set(DROP_REASONS)
    assert all(outcomes[kind, "accepted"] == 0 for kind in fuzzer.kinds
               if kind not in ("valid", "signed_bit_flips"))
    tried = Counter(schedule)
    assert min(tried.values()) >= 5000, tried
