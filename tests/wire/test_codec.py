import dataclasses
import random
from pathlib import Path

import cbor2
import pytest
from pycose.algorithms import HMAC256
from pycose.headers import KID, Algorithm
from pycose.keys import SymmetricKey
from pycose.messages import Mac0Message

from foosball.wire import catalogue, cose, reader
from foosball.wire import codec as codec_module
from foosball.wire.catalogue import (
    Agent,
    CalibrationStatus,
    GameCommand,
    GameControl,
    Heartbeat,
    SafetyState,
    VisionPreview,
)
from foosball.wire.codec import Drop, FrameTooLarge, WireCodec, load_key, mac_structure
from tests.wire.hostile import sendable, valid_message

KEY = bytes(range(32))


def codec(sender: Agent, clock, key: bytes = KEY) -> WireCodec:
    return WireCodec(key, sender, clock=clock, max_age_s=0.5)


START = GameControl(command=GameCommand.START)


def test_mac_structure_is_the_rfc_9052_cbor_array():
    assert mac_structure(b"\xa1\x01\x05", b"p" * 300) == cbor2.dumps(
        ["MAC0", b"\xa1\x01\x05", b"", b"p" * 300]
    )


def test_pycose_verifies_a_frame_we_made(clock):
    frame = codec(Agent.GAME_PANEL, clock).encode(START)
    message = Mac0Message.decode(frame[2:])
    message.key = SymmetricKey(k=KEY)
    assert message.verify_tag()
    assert message.phdr[Algorithm] is HMAC256
    assert message.uhdr[KID] == b"game_panel"


def test_we_accept_a_frame_pycose_made(clock):
    payload = cbor2.dumps({1: 9, 2: int(Agent.TOOL), 3: 42, 4: 1, 5: clock.now, 6: {1: 2}})
    message = Mac0Message(phdr={Algorithm: HMAC256}, uhdr={KID: b"tool"}, payload=payload)
    message.key = SymmetricKey(k=KEY)
    cose = message.encode()
    frame = len(cose).to_bytes(2, "big") + cose
    received = codec(Agent.STRATEGY, clock).decode(frame)
    assert received.message == GameControl(command=GameCommand.PAUSE)
    assert received.sender == Agent.TOOL and received.seq == 1


def test_calibration_status_crosses_the_wire_from_the_ball_tracker_only(clock):
    status = CalibrationStatus(made_at=1_764_623_787_000_000_000, reprojection_rms_px=0.42,
                               reprojection_max_px=0.97, table_rms_m=0.0011, width=1920,
                               height=1080, markers=50)
    panel = codec(Agent.GAME_PANEL, clock)
    frame = codec(Agent.BALL_TRACKER, clock).encode(status)
    assert len(frame) < 200  # far inside one Ethernet frame
    received = panel.decode(frame)
    assert (received.message, received.sender) == (status, Agent.BALL_TRACKER)
    forged = panel.decode(codec(Agent.STRATEGY, clock).encode(status))
    assert (forged.reason, forged.detail) == ("sender", "STRATEGY may not send CalibrationStatus")


def test_replayed_frame_is_dropped_as_replay(clock):
    sender, receiver = codec(Agent.GAME_PANEL, clock), codec(Agent.STRATEGY, clock)
    first, second = sender.encode(START), sender.encode(START)
    assert receiver.decode(second).seq == 2
    assert receiver.decode(first).reason == "replay"
    assert receiver.decode(second).reason == "replay"
    assert receiver.drops == {"replay": 2}


def test_a_reboot_starts_a_new_sequence(clock):
    receiver = codec(Agent.STRATEGY, clock)
    assert receiver.decode(codec(Agent.GAME_PANEL, clock).encode(START)).seq == 1
    assert receiver.decode(codec(Agent.GAME_PANEL, clock).encode(START)).seq == 1


def test_old_and_future_frames_are_stale(clock):
    sender, receiver = codec(Agent.GAME_PANEL, clock), codec(Agent.STRATEGY, clock)
    old = sender.encode(START)
    clock.advance(0.6)
    assert receiver.decode(old).reason == "stale"
    future = sender.encode(START)
    clock.advance(-1.2)
    assert receiver.decode(future).reason == "stale"


def test_wrong_key_is_a_mac_drop(clock):
    frame = codec(Agent.GAME_PANEL, clock, key=b"\x01" * 32).encode(START)
    assert codec(Agent.STRATEGY, clock).decode(frame).reason == "mac"


def test_a_message_that_does_not_fit_one_frame_is_refused_clearly(clock):
    big = VisionPreview(frame=1, part=0, parts=1, width=640, height=480, mask=b"\xff" * 1024)
    assert len(codec(Agent.BALL_TRACKER, clock).encode(big)) <= 1500
    sender = codec(Agent.BALL_TRACKER, clock)
    sender._unprotected_cbor = cbor2.dumps({4: b"x" * 600})  # a header that pushes it over
    with pytest.raises(FrameTooLarge, match="one Ethernet frame carries at most 1500"):
        sender.encode(big)


def test_key_file_must_hold_32_hex_bytes(tmp_path: Path):
    good = tmp_path / "good.key"
    good.write_text(KEY.hex() + "\n")
    assert load_key(good) == KEY
    short = tmp_path / "short.key"
    short.write_text("abcd")
    with pytest.raises(ValueError, match="32 bytes"):
        load_key(short)
    junk = tmp_path / "junk.key"
    junk.write_text("not hex at all")
    with pytest.raises(ValueError, match="hex"):
        load_key(junk)


def test_a_differently_laid_out_cose_mac0_takes_the_general_parser(clock):
    """Our decoder slices our own layout without a CBOR parse; any other valid layout (an
    extra unprotected header here) must still be accepted, and tampering still caught."""
    sender, receiver = codec(Agent.GAME_PANEL, clock), codec(Agent.STRATEGY, clock)
    ours = cbor2.loads(sender.encode(START)[2:])
    protected, unprotected, payload, tag = ours.value
    relaid = cbor2.dumps(cbor2.CBORTag(17, [protected, {**unprotected, 99: b"x"}, payload, tag]))
    assert receiver.decode(len(relaid).to_bytes(2, "big") + relaid).message == START
    forged = cbor2.dumps(cbor2.CBORTag(17, [protected, dict(unprotected), payload, b"\0" * 32]))
    assert receiver.decode(len(forged).to_bytes(2, "big") + forged).reason == "mac"


@pytest.mark.parametrize("cls", catalogue.MESSAGE_TYPES, ids=lambda cls: cls.__name__)
def test_each_message_is_accepted_from_the_agents_the_sender_table_names_only(cls, clock):
    receiver = codec(Agent.STRATEGY, clock)
    for agent in Agent:
        message = valid_message(random.Random(agent), cls)
        field_name = catalogue.SENDER_FIELD.get(cls)
        if field_name:  # a Heartbeat or Alarm names its sender
            message = dataclasses.replace(message, **{field_name: agent})
        result = receiver.decode(codec(agent, clock).encode(message))
        if agent in catalogue.SENDERS[cls]:
            assert result.message == message
        else:
            assert (result.reason, result.sender) == ("sender", agent)
            assert result.detail == f"{agent.name} may not send {cls.__name__}"


def test_replay_and_stale_drops_name_the_authenticated_sender(clock):
    """So a receiver can tell which peer's clock stepped."""
    sender, receiver = codec(Agent.GAME_PANEL, clock), codec(Agent.STRATEGY, clock)
    frame = sender.encode(START)
    assert receiver.decode(frame).seq == 1
    assert receiver.decode(frame).sender == Agent.GAME_PANEL
    clock.advance(1.2)
    future = sender.encode(START)
    clock.advance(-1.2)
    assert receiver.decode(future) == Drop("stale", "age -1200.0 ms", Agent.GAME_PANEL)
    assert receiver.decode(b"\0\0").sender is None  # before the MAC: nobody is known


def _signed(payload: bytes, kid: bytes) -> bytes:
    message = Mac0Message(phdr={Algorithm: HMAC256}, uhdr={KID: kid}, payload=payload)
    message.key = SymmetricKey(k=KEY)
    cose = message.encode()
    return len(cose).to_bytes(2, "big") + cose


def _outcome(result):
    return ("drop", result.reason, result.detail) if isinstance(result, Drop) else (
        "ok", result.message, result.sender, result.boot_id, result.seq, result.timestamp)


def test_a_body_seen_before_is_taken_as_it_was_and_everything_else_still_checked(clock):
    """A heartbeat's body is the same frame after frame: once it has passed every check from
    a sender, the codec reuses what it decoded to. Whatever the envelope around that body
    says (each of its bytes changed, then signed with the key, as only a peer could), the
    outcome must be the full checks' outcome."""
    beat = Heartbeat(agent=Agent.STRATEGY, state=SafetyState.READY, period_s=0.01,
                     cpu_load=50.0, memory=5.0, temperature=40.0)
    sender = codec(Agent.STRATEGY, clock)
    first = sender.encode(beat)
    payload = cbor2.loads(first[2:]).value[2]
    body_at = payload.index(cbor2.dumps(catalogue.to_body(beat)))
    remembering, checking = codec(Agent.POLE_DRIVER, clock), codec(Agent.POLE_DRIVER, clock)
    checking._short_way = lambda payload, kid: None  # always the full checks
    for receiver in (remembering, checking):
        assert receiver.decode(first).message == beat
    assert remembering._known  # the next one with that body takes the short way
    frames = [sender.encode(beat), first, _signed(payload, b"tool")]
    clock.advance(0.6)
    frames.append(sender.encode(beat))
    clock.advance(-0.6)
    for at in range(body_at):
        for value in (0x00, 0x01, 0x06, 0x17, 0x18, 0x1B, 0x3F, 0xFF, payload[at] ^ 0x01):
            mutated = payload[:at] + bytes((value,)) + payload[at + 1 :]
            frames += [_signed(mutated, b"strategy"), _signed(mutated, b"motor_driver")]
    seq_at = payload.index(b"\x04\x01", 6) + 1  # seq 1 written long: 0x18 0x01
    frames.append(_signed(payload[:seq_at] + b"\x18\x01" + payload[seq_at + 1 :], b"strategy"))
    frames.append(sender.encode(beat))
    outcomes = [(_outcome(remembering.decode(f)), _outcome(checking.decode(f))) for f in frames]
    assert all(fast == full for fast, full in outcomes)
    kinds = {fast[0] if fast[0] == "ok" else fast[1] for fast, _ in outcomes}
    assert {"ok", "replay", "stale", "schema", "sender"} <= kinds
    assert remembering.drops == checking.drops


def _sealed(sender: WireCodec, payload: bytes, kid: bytes) -> bytes:
    """`payload` in a COSE_Mac0 laid out as our encoder lays it, with a valid tag: what only
    a holder of the key could send."""
    sealed = (b"\xd1\x84" + cose.PROTECTED_BSTR + cbor2.dumps({4: kid})
              + cose.bstr_head(len(payload)) + payload
              + cose.TAG_HEAD + sender._tag(payload))
    return len(sealed).to_bytes(2, "big") + sealed


class _CountingReader:
    def __init__(self) -> None:
        self.bodies = 0

    def __call__(self, cls, data, at):
        message = reader.read_body(cls, data, at)
        self.bodies += message is not None
        return message


@pytest.mark.parametrize("cls", catalogue.MESSAGE_TYPES, ids=lambda c: c.__name__)
def test_the_one_pass_reader_accepts_what_the_full_checks_accept_and_nothing_else(
        cls, clock, monkeypatch):
    """Every byte of a valid payload of each type changed (signed with the key, as only a
    peer could), cut short and lengthened: the codec's one pass over our canonical form
    (reader.read_body) and its memory of bodies give the full checks' outcome every time."""
    rng = random.Random(cls.TYPE_ID)
    read = _CountingReader()
    monkeypatch.setattr(codec_module, "read_body", read)
    fast, full = codec(Agent.TOOL, clock), codec(Agent.TOOL, clock)
    full._short_way = lambda payload, kid: None
    for _ in range(2):
        message, agent = sendable(rng, cls)
        sender = codec(agent, clock)
        kid = agent.name.lower().encode()
        payload = cbor2.loads(sender.encode(message)[2:]).value[2]
        changed = [payload[:at] + bytes((value,)) + payload[at + 1 :]
                   for at in range(len(payload))
                   for value in {payload[at] ^ 0x01, payload[at] ^ 0x20, 0x00, 0x18, 0xF6,
                                 0xF9, 0xFA, 0xFB}]
        payloads = [payload, *changed, payload[:-1], payload + b"\x00", payload, payload]
        outcomes = []
        for p in payloads[:-2]:
            for receiver in (fast, full):  # each changed payload a first: compared whole
                receiver._last_seq.clear()
            outcomes.append((_outcome(fast.decode(_sealed(sender, p, kid))),
                             _outcome(full.decode(_sealed(sender, p, kid)))))
        for _ in range(2):  # accepted, then a replay (from a body now remembered)
            outcomes.append((_outcome(fast.decode(_sealed(sender, payload, kid))),
                             _outcome(full.decode(_sealed(sender, payload, kid)))))
        mismatch = [(p.hex(), a, b) for p, (a, b) in zip(payloads, outcomes, strict=True)
                    if a != b]
        assert not mismatch, mismatch[:3]
        assert outcomes[0][0][0] == "ok" and outcomes[-1][0][1] == "replay"
        accepted = sum(fast_outcome[0] == "ok" for fast_outcome, _ in outcomes)
        assert accepted > 1  # some changed values are valid too, and compared whole
    assert fast.drops == full.drops and fast.unexpected == full.unexpected == 0
    assert read.bodies > 0  # the one pass did read some (else this compared nothing new)
