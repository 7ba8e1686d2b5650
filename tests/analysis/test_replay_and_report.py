"""A simulated match, recorded, cut at a random byte: it still replays and reports; the
analysis agrees with the simulator's own referee where it can; the replay's clock."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from foosball.analysis.match import analyse
from foosball.analysis.replay import Replay, ReplayClock
from foosball.recording.format import read_recording
from foosball.sim.match import Match
from foosball.sim.record import record_match


@pytest.fixture(scope="module")
def recorded() -> tuple[bytes, bytes, object]:
    """The match's file without its accounting (as before issue 29) and with it (as `sim
    match --record` writes it now), and the simulator's result."""
    stream = io.BytesIO()
    match = Match("improved", "club", seed=3, duration=12.0)
    recorder = record_match(match, stream, every=4)
    result = match.run()
    without = stream.getvalue()
    recorder.finish(result, round(match.world.time * 1e9))
    return without, stream.getvalue(), result


@pytest.fixture(scope="module")
def match_bytes(recorded: tuple[bytes, bytes, object]) -> tuple[bytes, object]:
    return recorded[1], recorded[2]


def test_the_reports_shots_and_saves_are_the_simulators_own(
        recorded: tuple[bytes, bytes, object]) -> None:
    """Issue 29: "robot 3 goals from 1 shot (0 on target)" against the simulator's count of
    the same match. With the simulator's accounting recorded, the report gives exactly it;
    without, the figures are labelled as estimates and say how they are made."""
    without, with_result, result = recorded
    simulator = result.summary()
    summary = analyse(read_recording("sim", with_result)).summary()
    for team in ("robot", "human"):
        assert summary["teams"][team]["shots"] == simulator["shots"][team]["shots"]
        assert summary["teams"][team]["on_target"] == simulator["shots"][team]["on_target"]
        assert summary["teams"][team]["saves"] == simulator["saves"][team]
    assert sum(simulator["shots"][t]["shots"] for t in ("robot", "human")) > 0
    assert summary["shots_from"].startswith("the simulator's own accounting")
    estimated = analyse(read_recording("sim", without)).summary()
    assert estimated["shots_from"].startswith("estimated from the tracked ball")


class Wall:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_analysis_finds_the_referees_goals(match_bytes: tuple[bytes, object]) -> None:
    data, result = match_bytes
    a = analyse(read_recording("sim", data))
    assert a.score == (result.goals_robot, result.goals_human)
    assert len(a.of("goal", "robot")) == result.goals_robot
    assert len(a.of("goal", "human")) == result.goals_human
    assert a.latency_ms.size > 0 and a.duration_s == pytest.approx(12.0, abs=0.05)
    assert a.of("shot")  # 12 s of improved against club: shots on both sides


def test_every_goal_is_classified_as_an_estimate(match_bytes: tuple[bytes, object]) -> None:
    data, _result = match_bytes
    a = analyse(read_recording("sim", data))
    for conceding, scorer in (("robot", "human"), ("human", "robot")):
        assert sum(a.goals_against_by_kind[conceding].values()) == len(a.of("goal", scorer))
    assert all("estimated" in g.text for g in a.of("goal"))
    assert a.summary()["goals_against_by_kind_estimate"] == a.goals_against_by_kind


@pytest.mark.parametrize("seed", range(4))
def test_a_match_cut_at_a_random_byte_still_replays_and_reports(
        match_bytes: tuple[bytes, object], tmp_path: Path, seed: int) -> None:
    pytest.importorskip("matplotlib")
    from foosball.analysis.report import PLOTS, write_report

    data, _ = match_bytes
    cut = random.Random(seed).randrange(len(data) // 10, len(data))
    path = tmp_path / "cut.cbors"
    path.write_bytes(data[:cut])
    recording = read_recording(path)
    assert recording.messages and recording.warnings  # kept what was whole, said so
    wall = Wall()
    replay = Replay(recording, speed=2.0, wall=wall)
    assert replay.topics()["replay"]["t_s"] == 0.0
    wall.now += 1.0
    later = replay.topics()
    assert later["replay"]["t_s"] == pytest.approx(2.0) and later["ball"] is not None
    assert replay.command({"command": "seek", "to": 1e9}) == ""
    last = replay.topics()
    assert last["replay"]["t_s"] == pytest.approx(replay.clock.duration_s, abs=0.01)
    output = tmp_path / "report.html"
    write_report(analyse(recording), recording.table, [str(path)], output, tmp_path / "plots")
    text = output.read_text()
    assert text.count("data:image/png;base64,") == len(PLOTS)
    assert "not a whole record" in text  # the cut, said in the report
    for name, _, _ in PLOTS:
        assert (tmp_path / "plots" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"


def test_the_replay_shows_the_recorded_score_at_the_time_sought(
        match_bytes: tuple[bytes, object]) -> None:
    data, result = match_bytes
    recording = read_recording("sim", data)
    replay = Replay(recording, wall=Wall())
    replay.command({"command": "seek", "to": replay.clock.duration_s})
    game = replay.topics()["game"]
    assert game["score"] == {"robot": result.goals_robot, "human": result.goals_human}
    assert not any(game["allowed"].values())  # nothing to start or stop in a replay
    assert "nothing is sent" in game["notice"]


def test_the_replay_refuses_what_it_does_not_know(match_bytes: tuple[bytes, object]) -> None:
    replay = Replay(read_recording("sim", match_bytes[0]), wall=Wall())
    assert replay.command({"command": "speed", "speed": 3.0}).startswith("speed one of")
    assert replay.command({"command": "seek", "to": "x"}).startswith("seek needs")
    assert replay.command({"command": "jump"}) == "no replay command 'jump'"


def test_the_clock_pauses_seeks_and_changes_speed() -> None:
    clock = ReplayClock(duration_s=10.0)
    clock.seek(0.0, 0.0)
    assert clock.position(2.0) == 2.0
    clock.set_speed(4.0, 2.0)
    assert clock.position(3.0) == 6.0
    clock.pause(3.0)
    assert clock.position(50.0) == 6.0
    clock.seek(1.0, 50.0)
    assert clock.position(60.0) == 1.0  # still paused
    clock.play(60.0)
    assert clock.position(61.0) == 5.0
    assert clock.position(100.0) == 10.0 and clock.finished(100.0)
    clock.play(100.0)  # at the end: again from the start
    assert clock.position(100.5) == 2.0


def test_the_motor_drivers_frame_to_setpoint_windows_are_taken_once_each() -> None:
    from foosball.recording.format import Recording
    from foosball.wire.catalogue import EtherCatStatus

    def status(p50_ms: float, p99_ms: float) -> EtherCatStatus:
        return EtherCatStatus(link_up=True, slaves=8, expected_slaves=8, al_state=8,
                              working_counter=24, expected_working_counter=24,
                              bad_working_counters=0, cycle_period_s=0.005,
                              wakeup_jitter_p99_s=0.0001,
                              capture_to_setpoint_p50_s=p50_ms * 1e-3,
                              capture_to_setpoint_p99_s=p99_ms * 1e-3)

    seconds = 1_000_000_000
    recording = Recording("mem", messages=[
        (0, status(0.0, 0.0)),  # none measured yet
        (seconds, status(12.0, 20.0)), (2 * seconds, status(12.0, 20.0)),  # one window
        (3 * seconds, status(14.0, 30.0))])
    a = analyse(recording)
    assert a.setpoint_ms.tolist() == [[1.0, 12.0, 20.0], [3.0, 14.0, 30.0]]
    assert a.summary()["setpoint_ms"] == {"windows": 2, "p50_median": 13.0,
                                          "p99_median": 25.0, "p99_worst": 30.0}
