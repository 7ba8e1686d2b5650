"""The match recorder's core (pure) and its file, through the shared runtime's Inputs."""

from __future__ import annotations

from pathlib import Path

from foosball.agents.match_recorder import (
    FileOp,
    MatchRecorderCore,
    RecordingHardware,
    match_id,
)
from foosball.geometry import default_table
from foosball.recording.format import read_recording
from foosball.recording.writer import RecordingWriter
from foosball.runtime import Inputs
from foosball.wire.catalogue import (
    BallState,
    BallStatus,
    GameState,
    Heartbeat,
    RodCommand,
    RodId,
    RodTarget,
    SafetyState,
    VisionConfig,
)

TABLE = default_table()
WALL = 1_796_000_000_000_000_000  # 2026-11-30


COMMAND = RodCommand(ball_capture_time=1, rods=(RodTarget(rod=RodId.ATTACK, translation=0.0,
                                                      rotation=0.5, translation_speed=0.0,
                                                      rotation_speed=0.0),))


def game(state: SafetyState, robot: int = 0) -> GameState:
    return GameState(state=state, score_robot=robot, score_human=0, clock_s=1.0, alarm_text="")


def ball(i: int) -> BallState:
    return BallState(capture_time=WALL + i, frame=i, x=0.0, y=0.0, vx=0.0, vy=0.0,
                     covariance=(0.0,) * 4, status=BallStatus.DETECTED)


def step(core: MatchRecorderCore, *messages: object, at: int = 0) -> tuple[FileOp, ...]:
    return core.step(Inputs(now_s=at, messages=messages, wall_ns=WALL + at)).actuation


def test_matches_a_millisecond_apart_have_names_of_their_own() -> None:
    assert match_id(WALL + 1_000_000) == "20261130T005320.001Z" != match_id(WALL)


def test_nothing_is_recorded_outside_a_match() -> None:
    core = MatchRecorderCore(TABLE)
    assert step(core, ball(1), game(SafetyState.READY)) == ()
    assert step(core, game(SafetyState.PAUSED)) == ()  # paused, but no match began here


def test_a_match_is_begun_by_playing_and_ended_by_ready() -> None:
    core = MatchRecorderCore(TABLE)
    ops = step(core, ball(1), game(SafetyState.PLAYING), ball(2))
    assert [op.kind for op in ops] == ["begin", "append"]
    assert ops[0].header["match"] == match_id(WALL) == "20261130T005320.000Z"
    # the GameState and ball 2 (ball 1 came before the match)
    assert ops[0].header["source"] == "strategy board" and ops[1].count == 2
    ops = step(core, game(SafetyState.FAULT), COMMAND,
               game(SafetyState.PAUSED))
    assert [op.kind for op in ops] == ["append"] and ops[0].count == 3
    ops = step(core, game(SafetyState.READY, robot=3), ball(3))
    assert [op.kind for op in ops] == ["append", "end"] and ops[0].count == 1
    assert step(core, ball(4)) == ()


def test_a_message_that_will_not_encode_is_counted_not_raised() -> None:
    core = MatchRecorderCore(TABLE)
    step(core, game(SafetyState.PLAYING))
    broken = RodCommand(ball_capture_time=1, rods=())  # the catalogue wants 1..4 rods
    ops = step(core, broken, ball(1))
    assert ops[0].count == 1 and core.unrecordable == 1


def test_what_a_match_does_not_need_is_not_recorded() -> None:
    core = MatchRecorderCore(TABLE)
    step(core, game(SafetyState.PLAYING))
    ops = step(core, Heartbeat(agent=1, state=SafetyState.READY, period_s=0.01, cpu_load=0.0,
                               memory=0.0, temperature=20.0),
               VisionConfig(hue_low=0, hue_high=1, sat_low=0, sat_high=1, val_low=0,
                            val_high=1, min_area=1.0, max_area=2.0, min_density=0.1,
                            max_eccentricity=0.5, preview=False))
    assert ops == ()


def test_the_file_holds_the_match_as_the_core_saw_it(tmp_path: Path) -> None:
    core = MatchRecorderCore(TABLE)
    writer = RecordingWriter(tmp_path, max_file_bytes=1 << 20, max_total_bytes=1 << 22,
                             sync_period_s=1.0, thread=False)
    hardware = RecordingHardware(writer)
    hardware.act(step(core, game(SafetyState.PLAYING), at=1))
    for i in range(10):
        hardware.act(step(core, ball(i), at=2 + i))
    hardware.act(None)  # a failed step writes nothing
    hardware.act(step(core, game(SafetyState.READY, robot=1), at=20))
    writer.drain()
    [path] = tmp_path.iterdir()
    recording = read_recording(path)
    assert recording.warnings == [] and recording.table == TABLE
    assert [m for _, m in recording.messages] == (
        [game(SafetyState.PLAYING)] + [ball(i) for i in range(10)]
        + [game(SafetyState.READY, robot=1)])
    assert recording.messages[1][0] == WALL + 2


def test_the_agent_records_what_the_lan_carries(tmp_path: Path) -> None:
    """The core in the shared runtime, frames from peers' codecs on an in-process LAN."""
    from foosball.runtime import AgentRuntime
    from foosball.runtime.settings import SafetySettings
    from foosball.wire.catalogue import Agent
    from foosball.wire.codec import WireCodec
    from foosball.wire.endpoint import Endpoint
    from foosball.wire.transports.memory import MemoryHub, MemoryTransport

    key = bytes(range(32))
    clock = [0.0]

    def wall_ns() -> int:
        return WALL + round(clock[0] * 1e9)

    hub = MemoryHub()
    lan, own = MemoryTransport(hub), MemoryTransport(hub)
    writer = RecordingWriter(tmp_path, max_file_bytes=1 << 20, max_total_bytes=1 << 22,
                             sync_period_s=1.0, thread=False)
    runtime = AgentRuntime(MatchRecorderCore(TABLE),
                           Endpoint(own, WireCodec(key, Agent.MATCH_RECORDER, clock=wall_ns)),
                           SafetySettings(), hardware=RecordingHardware(writer),
                           monotonic=lambda: clock[0], wall_ns=wall_ns, health=None)
    panel = WireCodec(key, Agent.GAME_PANEL, clock=wall_ns)
    tracker = WireCodec(key, Agent.BALL_TRACKER, clock=wall_ns)
    sent = [(panel, game(SafetyState.PLAYING))] + [(tracker, ball(i)) for i in range(5)] + [
        (panel, game(SafetyState.READY, robot=2))]
    for n, (codec, message) in enumerate(sent):
        clock[0] = 0.01 * n
        lan.send(codec.encode(message))
        runtime.io_turn(0.0)
        runtime.work_turn(0.0)
    writer.drain()
    [path] = tmp_path.iterdir()
    recording = read_recording(path)
    assert [m for _, m in recording.messages] == [m for _, m in sent]
    assert [t for t, _ in recording.messages] == [WALL + round(0.01e9 * n) for n in range(7)]
