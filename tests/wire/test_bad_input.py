"""Hostile input, case by case: the bugs found, and what the canonical form refuses. The
120,000-frame run over every kind of bad frame is test_fuzz.py."""

import math
import time

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foosball.wire import catalogue, codec
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    GameCommand,
    GameControl,
    Heartbeat,
    SafetyState,
    to_body,
)
from foosball.wire.codec import Drop, WireCodec
from tests.wire.hostile import (
    KEY,
    NOW,
    SLOW_REGEX,
    envelope,
    fixed_clock,
    heartbeat_with_a_huge_cpu_load,
    signed,
    valid_frame,
)

BEAT = Heartbeat(agent=Agent.POLE_DRIVER, state=SafetyState.READY, period_s=0.5, cpu_load=1.0,
                 memory=2.0, temperature=40.0)


def receiver() -> WireCodec:
    return WireCodec(KEY, Agent.STRATEGY, clock=fixed_clock)


def from_pole_driver(payload: bytes) -> bytes:
    return signed(payload, kid=b"pole_driver")


def beat_payload(**changes_by_key) -> bytes:
    body = {**to_body(BEAT), **{int(k[1:]): v for k, v in changes_by_key.items()}}
    return cbor2.dumps(envelope(Heartbeat, Agent.POLE_DRIVER, body))


def test_the_heartbeat_whose_cpu_load_was_2_to_the_1100_is_a_counted_schema_drop():
    """The frame that killed `wire dump`, the pole driver and the ball tracker with an
    OverflowError: int -> float of a CBOR bignum, inside the schema check."""
    frame = heartbeat_with_a_huge_cpu_load()
    assert len(frame) < 260
    codec_ = receiver()
    result = codec_.decode(frame)
    assert (result.reason, result.sender) == ("schema", Agent.POLE_DRIVER)
    assert "cpu_load: an integer of 1101 bits outside" in result.detail
    assert codec_.drops == {"schema": 1} and codec_.unexpected == 0


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 2**64, -(2**1100), True, "1"])
def test_a_number_field_takes_finite_in_range_numbers_only(value):
    result = receiver().decode(from_pole_driver(beat_payload(k3=value)))  # key 3: period_s
    assert result.reason == "schema" and "period_s" in result.detail


def test_a_heartbeat_or_alarm_in_another_agents_name_is_a_sender_drop():
    tool = WireCodec(KEY, Agent.TOOL, clock=fixed_clock)
    codec_ = receiver()
    result = codec_.decode(tool.encode(BEAT))
    assert (result.reason, result.sender) == ("sender", Agent.TOOL)
    assert result.detail == "Heartbeat.agent is POLE_DRIVER, sent by TOOL"
    alarm = Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT, text="", latched=True,
                  axis=0)
    assert codec_.decode(tool.encode(alarm)).reason == "sender"
    own = Alarm(source=Agent.TOOL, code=AlarmCode.OVERCURRENT, text="", latched=True, axis=0)
    assert codec_.decode(tool.encode(own)).message == own


_CANONICAL = cbor2.dumps(envelope(GameControl, Agent.TOOL, {1: 2}))  # ends 06 a1 01 02


@pytest.mark.parametrize(
    ("payload", "sender"),
    [
        pytest.param(_CANONICAL.replace(b"\x07\x04\x01\x05", b"\x07\x04\x1a\0\0\0\x01\x05"),
                     Agent.TOOL, id="seq in a 4-byte head"),
        pytest.param(_CANONICAL[:-3] + b"\xbf\x01\x02\xff", Agent.TOOL, id="indefinite map"),
        pytest.param(_CANONICAL[:-3] + b"\xa2\x01\x02\x01\x02", Agent.TOOL, id="key twice"),
        pytest.param(_CANONICAL[:-3] + b"\xa1\xf5\x02", Agent.TOOL, id="key 1 as true"),
        pytest.param(_CANONICAL[:-3] + b"\xa1\xfb\x3f\xf0\0\0\0\0\0\0\x02", Agent.TOOL,
                     id="key 1 as 1.0"),
        pytest.param(_CANONICAL[:-3] + b"\xa1\x01\xc2\x41\x02", Agent.TOOL,
                     id="small integer as a bignum"),
        pytest.param(_CANONICAL + b"\x00", Agent.TOOL, id="a byte after the payload"),
        pytest.param(cbor2.dumps(dict(reversed(envelope(GameControl, Agent.TOOL, {1: 2}).items()))),
                     Agent.TOOL, id="envelope keys in reverse"),
        pytest.param(beat_payload().replace(cbor2.dumps(0.5), b"\xf9\x38\x00"),
                     Agent.POLE_DRIVER, id="float16"),
    ],
)
def test_a_payload_not_written_as_our_encoder_writes_it_is_refused(payload, sender):
    result = receiver().decode(signed(payload, kid=sender.name.lower().encode()))
    assert (result.reason, result.sender) == ("schema", sender)


def test_the_canonical_payload_itself_is_accepted_and_an_integer_for_a_number_too():
    assert receiver().decode(signed(_CANONICAL)).message == GameControl(GameCommand.PAUSE)
    assert receiver().decode(from_pole_driver(beat_payload())).message == BEAT
    assert receiver().decode(from_pole_driver(beat_payload(k4=1))).message == BEAT


def test_a_costly_cbor_tag_never_reaches_cbor2_signed_or_not():
    """cbor2 compiles the text of a tag 35 as a regular expression: this one takes about a
    second. Unauthenticated (in the unprotected header) and signed (in the payload) alike,
    the frame is refused without decoding it."""
    regex = cbor2.dumps(cbor2.CBORTag(35, SLOW_REGEX))
    payload = cbor2.dumps(envelope(GameControl, Agent.TOOL, {1: 2}))
    unprotected = b"\xa2\x04\x44tool\x18\x63" + regex
    cose = b"\xd1\x84" + cbor2.dumps(codec.PROTECTED) + unprotected + cbor2.dumps(payload) + \
        cbor2.dumps(b"\0" * 32)
    unsigned = len(cose).to_bytes(2, "big") + cose
    in_payload = signed(payload[:-3] + b"\xa1\x01" + regex)
    for frame, reason in ((unsigned, "malformed"), (in_payload, "schema")):
        start = time.thread_time()
        result = receiver().decode(frame)
        assert time.thread_time() - start < 0.05
        assert result.reason == reason


def test_a_decode_that_failed_inside_cbor2_leaves_no_state_behind():
    """cbor2 5.9 decoded every map as a FrozenDict after a nesting-depth error inside a map
    key; the codec then refused every later valid frame."""
    codec_ = receiver()
    deep_key = signed(b"\xa1" + b"\x81" * 20 + b"\x00\x00")
    assert codec_.decode(deep_key).reason == "schema"
    assert codec_.decode(signed(_CANONICAL)).message == GameControl(GameCommand.PAUSE)


def test_the_last_resort_guard_turns_any_exception_into_a_counted_drop(monkeypatch):
    def overflow(*_args):
        raise OverflowError("int too large to convert to float")

    codec_ = receiver()
    monkeypatch.setattr(catalogue, "from_body", overflow)
    monkeypatch.setattr(codec, "read_body", overflow)  # the one pass over canonical bodies
    assert codec_.decode(signed(_CANONICAL)) == codec.Drop(
        "schema", "unexpected OverflowError while decoding")
    monkeypatch.setattr(codec, "split_cose", overflow)
    assert codec_.decode(signed(_CANONICAL)).reason == "malformed"
    assert codec_.drops == {"schema": 1, "malformed": 1} and codec_.unexpected == 2


def test_a_frame_from_another_key_holder_still_gets_through_the_checks():
    """The helpers above must not make valid frames look hostile."""
    sender = WireCodec(KEY, Agent.BALL_TRACKER, clock=fixed_clock)
    assert receiver().decode(valid_frame(sender)).timestamp == NOW


@settings(max_examples=3000, deadline=None)
@given(st.binary(max_size=1600))
def test_arbitrary_bytes_never_raise_and_are_never_accepted(frame):
    result = receiver().decode(frame)
    assert result.reason in ("malformed", "mac")


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=400), st.integers(0, 30), st.binary(max_size=40))
def test_a_codec_that_reads_only_some_messages_never_raises_and_never_accepts(
        head, claimed_type, tail):
    """What `read_only` sets aside unchecked is decided by a peek at bytes nobody has
    authenticated yet: forged layouts, claimed types and lengths must end as a drop."""
    codec = receiver()
    codec.read_only([catalogue.Heartbeat])
    frame = valid_frame(WireCodec(KEY, Agent.BALL_TRACKER, clock=fixed_clock))
    at = frame.index(b"\xa6\x01") if b"\xa6\x01" in frame else len(frame)
    for forged in (head, frame[:at + 2] + bytes([claimed_type]) + tail, frame[:len(head)]):
        result = codec.decode(forged)
        assert isinstance(result, Drop)
        assert result.reason in ("malformed", "mac", "not_read")
