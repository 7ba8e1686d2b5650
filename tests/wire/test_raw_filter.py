"""The raw transport's socket filter leaves out, in the kernel, exactly the frames the codec
would set aside unchecked (codec.SetAside.covers: by type, and heartbeats by sender), and
passes everything else, bad frames included, for the codec to check and count. Run here on
a small classic-BPF interpreter (no root needed); tests/wire/test_netns.py runs the real
socket."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foosball.wire import catalogue
from foosball.wire.codec import SetAside, WireCodec
from foosball.wire.transports import raw
from tests.wire.hostile import KEY, fixed_clock, sendable

ETHERTYPE = raw.ETHERTYPE_FOOSBALL
# A frame shorter than Ethernet's 60 bytes never comes off the wire (the NIC pads it); below
# that the filter may pass a frame the codec then sets aside itself.
ETH_MIN = 60
HEADER = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + ETHERTYPE.to_bytes(2, "big")


def run_bpf(program: list[tuple[int, int, int, int]], packet: bytes) -> int:
    """Linux's classic BPF semantics for the opcodes raw.frame_filter uses: a load past the
    packet's end ends the program with 0 (the frame left out)."""
    a = x = pc = 0
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        if code in (raw._LDH_ABS, raw._LD_ABS, raw._LDB_ABS, raw._LDB_IND):
            at = k + (x if code == raw._LDB_IND else 0)
            size = {raw._LDH_ABS: 2, raw._LD_ABS: 4}.get(code, 1)
            if at + size > len(packet):
                return 0
            a = int.from_bytes(packet[at : at + size], "big")
        elif code == raw._LD_LEN:
            a = len(packet)
        elif code in (raw._JEQ, raw._JGT, raw._JGE, raw._JGE_X):
            operand = x if code == raw._JGE_X else k
            taken = {raw._JEQ: a == operand, raw._JGT: a > operand}.get(code, a >= operand)
            pc += jt if taken else jf
        elif code == raw._JA:
            pc += k
        elif code == raw._ADD:
            a = (a + k) & 0xFFFFFFFF
        elif code == raw._SUB:
            a = (a - k) & 0xFFFFFFFF
        elif code == raw._TAX:
            x = a
        elif code == raw._TXA:
            a = x
        elif code == raw._RET:
            return k
        else:
            raise AssertionError(f"opcode {code:#x} not interpreted")


def _motor_driver_sets_aside(watches: tuple[catalogue.Agent, ...] | None = None) -> SetAside:
    codec = WireCodec(KEY, catalogue.Agent.MOTOR_DRIVER, clock=fixed_clock)
    codec.read_only([catalogue.Heartbeat, catalogue.Alarm, catalogue.GameControl,
                     catalogue.MotorCommand, catalogue.DriveControl])
    if watches is not None:
        codec.hear_heartbeats_only_from(watches)
    return codec.set_aside


MOTOR_DRIVER_SETS_ASIDE = _motor_driver_sets_aside()
# As the pole board ships it: the motor driver watches its two board mates only.
WATCHING_TWO = _motor_driver_sets_aside((catalogue.Agent.POLE_DRIVER,
                                         catalogue.Agent.SUPERVISORY_PANEL))
HEARTBEATS_ONLY = SetAside(heartbeat_senders=frozenset(int(a) for a in catalogue.Agent))


def frames(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        message, sender = sendable(rng)
        out.append(WireCodec(KEY, sender, clock=fixed_clock).encode(message))
    return out


@pytest.mark.parametrize("set_aside", [SetAside(), MOTOR_DRIVER_SETS_ASIDE, WATCHING_TWO,
                                       HEARTBEATS_ONLY,
                                       SetAside(frozenset(catalogue.BY_TYPE_ID))])
def test_the_filter_leaves_out_what_the_codec_would_set_aside_and_nothing_else(set_aside):
    program = raw.frame_filter(ETHERTYPE, set_aside)
    seen = set()
    for frame in frames(1, 400):
        # Whole, truncated at every length around the claim, and padded as Ethernet pads.
        for cut in (*range(0, 40), len(frame), len(frame) + 30):
            packet = (HEADER + frame + b"\0" * 30)[: len(HEADER) + cut]
            left_out = run_bpf(program, packet) == 0
            claimed_aside = set_aside.covers(packet[len(HEADER):])
            assert left_out == claimed_aside or (not left_out and len(packet) < ETH_MIN)
            seen.add(left_out)
    assert seen == ({False, True} if set_aside else {False})


def test_another_ethertype_is_left_out_as_before():
    packet = HEADER[:12] + b"\x08\x00" + frames(2, 1)[0]
    assert run_bpf(raw.frame_filter(ETHERTYPE), packet) == 0
    assert run_bpf(raw.frame_filter(ETHERTYPE, MOTOR_DRIVER_SETS_ASIDE), packet) == 0


def test_only_the_unwatched_senders_heartbeats_are_left_out():
    program = raw.frame_filter(ETHERTYPE, WATCHING_TWO)
    for sender in catalogue.Agent:
        beat = WireCodec(KEY, sender, clock=fixed_clock).encode(catalogue.Heartbeat(
            agent=sender, state=catalogue.SafetyState.READY, period_s=0.01, cpu_load=1.0,
            memory=1.0, temperature=40.0))
        watched = sender in (catalogue.Agent.POLE_DRIVER, catalogue.Agent.SUPERVISORY_PANEL)
        assert (run_bpf(program, HEADER + beat) != 0) == watched, sender


@settings(max_examples=400, deadline=None)
@given(st.binary(min_size=0, max_size=80), st.integers(0, 60), st.integers(0, 255),
       st.sampled_from([MOTOR_DRIVER_SETS_ASIDE, WATCHING_TWO, HEARTBEATS_ONLY]),
       st.integers(0, 2))
def test_forged_bytes_are_left_out_only_when_they_claim_what_is_set_aside(
        tail, at, value, set_aside, seed):
    frame = bytearray(frames(3 + seed, 1)[0] + tail)
    if at < len(frame):
        frame[at] = value
    packet = HEADER + bytes(frame)
    left_out = run_bpf(raw.frame_filter(ETHERTYPE, set_aside), packet) == 0
    claimed_aside = set_aside.covers(bytes(frame))
    assert left_out == claimed_aside or (not left_out and len(packet) < ETH_MIN)
