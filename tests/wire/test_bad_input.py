"""Hostile input: 100,000 generated bad frames, none accepted, each counted under its reason."""

import random
from collections import Counter

import cbor2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foosball.wire.catalogue import (
    Agent,
    BallState,
    BallStatus,
    GameCommand,
    GameControl,
)
from foosball.wire.codec import (
    DROP_REASONS,
    MAX_FRAME,
    PROTECTED,
    WireCodec,
    mac_structure,
)

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
NOW = 1_700_000_000_000_000_000
BATCH = 100
BATCHES = 1000  # 100 x 1000 = 100,000 frames


def fixed_clock() -> int:
    return NOW


def valid_frame(seq_codec: WireCodec) -> bytes:
    return seq_codec.encode(
        BallState(capture_time=NOW, frame=1, x=0.1, y=0.2, vx=1.0, vy=-1.0,
                  covariance=(0.0, 0.0, 0.0, 0.0), status=BallStatus.DETECTED)
    )


def signed(payload: bytes, key: bytes = KEY, kid: bytes = b"tool") -> bytes:
    import hmac

    tag = hmac.digest(key, mac_structure(PROTECTED, payload), "sha256")
    cose = cbor2.dumps(cbor2.CBORTag(17, [PROTECTED, {4: kid}, payload, tag]))
    return len(cose).to_bytes(2, "big") + cose


# Hypothesis draws a seed per batch of 100 frames; a seeded PRNG expands it into recipes.
# (Drawing 100,000 frames through hypothesis's own machinery takes minutes; this keeps the
# search deterministic and shrinkable by seed while the whole run stays in seconds.)
KINDS = ("truncated", "oversized", "garbage", "wrong_key", "tampered", "schema", "replay",
         "stale")


def recipes_from(seed: int) -> list[tuple[str, object]]:
    rng = random.Random(seed)
    out: list[tuple[str, object]] = []
    for _ in range(BATCH):
        kind = rng.choice(KINDS)
        if kind == "truncated":
            params: object = rng.randrange(10_000)
        elif kind == "oversized":
            params = rng.randbytes(rng.randint(MAX_FRAME + 65, MAX_FRAME + 400))
        elif kind == "garbage":
            body = rng.randbytes(rng.randint(1, 200))
            params = bytes([body[0] ^ 0xD1 or 1]) + body[1:] if body[0] == 0xD1 else body
        elif kind == "wrong_key":
            params = None
        elif kind == "tampered":
            # offsets from the end: 0..31 the tag, 34..80 the payload (32, 33: the tag's head)
            params = (rng.choice([rng.randint(0, 31), rng.randint(34, 80)]), rng.randrange(8))
        elif kind == "schema":
            body = rng.choice([
                {rng.randrange(21): rng.randrange(-(2**40), 2**40)
                 for _ in range(rng.randrange(9))},
                {1: NOW, 2: 1, 3: 9.0, 4: 0.0, 5: 0.0, 6: 0.0, 7: [0.0] * 4, 8: 0},
            ])
            params = (body, rng.choice([3, rng.randint(100, 1000)]))
        elif kind == "replay":
            params = rng.randrange(20)
        else:
            params = rng.randint(501, 10**5)
        out.append((kind, params))
    return out


REASON = {"truncated": "malformed", "oversized": "malformed", "garbage": "malformed",
          "wrong_key": "mac", "tampered": "mac", "schema": "schema", "replay": "replay",
          "stale": "stale"}


def build(kind: str, params, sender: WireCodec, primed: list[bytes]) -> bytes:
    if kind == "truncated":
        frame = valid_frame(sender)
        return frame[: params % len(frame)]
    if kind in ("oversized",):
        return params
    if kind == "garbage":
        return len(params).to_bytes(2, "big") + params
    if kind == "wrong_key":
        return valid_frame(WireCodec(OTHER_KEY, Agent.TOOL, clock=fixed_clock))
    if kind == "tampered":
        frame = bytearray(valid_frame(sender))
        offset, bit = params
        frame[len(frame) - 1 - offset] ^= 1 << bit
        return bytes(frame)
    if kind == "schema":
        body, type_id = params
        return signed(cbor2.dumps({1: type_id, 2: int(Agent.TOOL), 3: 7, 4: 1, 5: NOW, 6: body}))
    if kind == "replay":
        return primed[params]
    stale = WireCodec(KEY, Agent.TOOL, clock=lambda: NOW - params * 10**6)
    return stale.encode(GameControl(command=GameCommand.STOP))


SENDER = WireCodec(KEY, Agent.BALL_TRACKER, clock=fixed_clock)
PRIMED = [valid_frame(SENDER) for _ in range(20)]
TOTAL: Counter[str] = Counter()


@settings(max_examples=BATCHES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.integers(0, 2**64))
def test_bad_frames_are_dropped_and_counted_by_reason(seed):
    recipes = recipes_from(seed)
    receiver = WireCodec(KEY, Agent.STRATEGY, clock=fixed_clock)
    for frame in PRIMED:  # accepted, so any later copy is a replay
        assert not hasattr(receiver.decode(frame), "reason")
    expected: Counter[str] = Counter()
    for kind, params in recipes:
        frame = build(kind, params, SENDER, PRIMED)
        result = receiver.decode(frame)  # must not raise
        assert result.reason == REASON[kind], (kind, result)
        expected[REASON[kind]] += 1
    assert receiver.accepted == len(PRIMED), "a bad frame was accepted"
    assert receiver.drops == expected
    TOTAL.update(expected)


def test_a_hundred_thousand_bad_frames_of_every_kind_were_tried():
    assert sum(TOTAL.values()) >= BATCH * BATCHES
    assert set(TOTAL) == set(DROP_REASONS)


@settings(max_examples=3000, deadline=None)
@given(st.binary(max_size=1600))
def test_arbitrary_bytes_never_raise_and_are_never_accepted(frame):
    receiver = WireCodec(KEY, Agent.STRATEGY, clock=fixed_clock)
    result = receiver.decode(frame)
    assert result.reason in ("malformed", "mac")
