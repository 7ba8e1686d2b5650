"""The recording format, its reader and its writer (rotation, bounds, what a cut leaves)."""

from __future__ import annotations

import io
from pathlib import Path

import cbor2
import numpy as np

from foosball.geometry import default_table
from foosball.recording.format import (
    encode_header,
    encode_record,
    header,
    read_recording,
    read_recordings,
)
from foosball.recording.writer import RecordingWriter, file_name
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    BallState,
    BallStatus,
    GameState,
    SafetyState,
)

TABLE = default_table()


def ball(i: int) -> BallState:
    return BallState(capture_time=1_000_000 * i, frame=i, x=0.001 * i, y=-0.1, vx=1.0, vy=0.0,
                     covariance=(0.0, 0.0, 0.0, 0.0), status=BallStatus.DETECTED)


def recording_bytes(n: int) -> bytes:
    out = io.BytesIO()
    out.write(encode_header(header(TABLE, source="test", match="m", started_ns=0)))
    for i in range(n):
        out.write(encode_record(2_000_000 * i, ball(i)))
    out.write(encode_record(5, Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT,
                                     text="axis 3", latched=True, axis=3)))
    return out.getvalue()


def test_messages_come_back_as_they_were_recorded() -> None:
    recording = read_recording("mem", recording_bytes(20))
    assert recording.warnings == []
    assert recording.table == TABLE and recording.source == "test"
    assert [m for _, m in recording.messages][:20] == [ball(i) for i in range(20)]
    assert recording.messages[3][0] == 6_000_000
    assert recording.of_type(Alarm)[0][1].code == AlarmCode.OVERCURRENT


def test_a_cut_at_any_byte_keeps_every_whole_record_and_warns() -> None:
    data = recording_bytes(10)
    whole = read_recording("mem", data).messages
    head = len(encode_header(header(TABLE, source="test", match="m", started_ns=0)))
    for cut in range(len(data)):
        recording = read_recording("mem", data[:cut])  # never raises
        kept = recording.messages
        assert kept == whole[:len(kept)]  # a prefix, nothing altered
        if cut < head:
            assert kept == [] and recording.warnings
        elif cut < len(data):
            ends = [head + sum(len(encode_record(2_000_000 * k, ball(k))) for k in range(i))
                    for i in range(11)]
            expected = sum(1 for end in ends[1:] if end <= cut)
            assert len(kept) == expected
            assert bool(recording.warnings) == (cut not in ends)


def test_what_is_not_a_record_is_skipped_and_said() -> None:
    data = bytearray(recording_bytes(3))
    data += cbor2.dumps([1, 99, {}])  # an unknown message type
    data += cbor2.dumps({"not": "a record"})
    data += cbor2.dumps([1, BallState.TYPE_ID, {1: -5}])  # fails the catalogue's checks
    data += encode_record(9, ball(3))
    data += b"\x00" * 16  # what a power cut may leave: zeros
    recording = read_recording("mem", bytes(data))
    assert [m for _, m in recording.messages if isinstance(m, BallState)] == [
        ball(i) for i in range(4)]
    text = "\n".join(recording.warnings)
    assert "unknown message type 99" in text and "not a [time, type, body]" in text
    assert "BallState" in text and "records skipped in all" in text


def test_another_file_is_refused_with_a_warning() -> None:
    assert "not a foosball-recording" in read_recording("x", cbor2.dumps({"a": 1})).warnings[0]
    other = cbor2.dumps({"format": "foosball-recording", "version": 1})
    assert "version 1" in read_recording("x", other).warnings[0]


def writer(directory: Path, **kw: int) -> RecordingWriter:
    return RecordingWriter(directory, max_file_bytes=kw.get("file", 4096),
                           max_total_bytes=kw.get("total", 1 << 20), sync_period_s=1.0,
                           monotonic=lambda: 0.0, thread=False)


def test_a_match_longer_than_a_file_goes_on_in_the_next_part(tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.begin(header(TABLE, source="test", match="m1", started_ns=0))
    records = [encode_record(i, ball(i)) for i in range(200)]
    for r in records:
        w.append(r, 1)
    w.end()
    w.drain()
    parts = sorted(tmp_path.glob("match-m1-*.cbors"))
    assert len(parts) > 2 and parts[0].name == file_name("m1", 1)
    assert all(p.stat().st_size <= 4096 for p in parts)
    heads = [read_recording(p).header["part"] for p in parts]
    assert heads == list(range(1, len(parts) + 1))
    merged = read_recordings(parts)
    assert [m for _, m in merged.messages] == [ball(i) for i in range(200)]
    assert merged.warnings == [] and w.counters.records == 200


def test_the_oldest_recordings_go_first_to_stay_within_the_bound(tmp_path: Path) -> None:
    w = writer(tmp_path, file=4096, total=3 * 4096)
    for match in range(6):
        w.begin(header(TABLE, source="test", match=f"m{match}", started_ns=0))
        for i in range(40):
            w.append(encode_record(i, ball(i)), 1)
        w.end()
        w.drain()
        total = sum(p.stat().st_size for p in tmp_path.iterdir())
        assert total <= 3 * 4096
    names = {p.name.split("-")[1] for p in tmp_path.iterdir()}
    assert "m5" in names and "m0" not in names and w.counters.deleted > 0


def test_records_without_a_match_begun_are_not_written(tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.append(encode_record(1, ball(1)), 1)
    w.drain()
    assert list(tmp_path.iterdir()) == [] and w.counters.records == 0


def test_a_full_queue_drops_and_counts_instead_of_waiting(tmp_path: Path) -> None:
    from foosball.recording import writer as module

    w = writer(tmp_path)
    for _ in range(module.QUEUE_BATCHES + 10):
        w.append(b"", 0)
    assert w.counters.dropped_batches == 10


def test_the_writers_thread_writes_what_it_is_given(tmp_path: Path) -> None:
    w = RecordingWriter(tmp_path, max_file_bytes=1 << 20, max_total_bytes=1 << 22,
                        sync_period_s=0.01)
    w.begin(header(TABLE, source="test", match="t", started_ns=0))
    w.append(b"".join(encode_record(i, ball(i)) for i in range(50)), 50)
    w.append(encode_record(99, GameState(state=SafetyState.READY, score_robot=1,
                                         score_human=2, clock_s=3.0, alarm_text="")), 1)
    w.close()
    recording = read_recording(tmp_path / file_name("t", 1))
    assert len(recording.messages) == 51 and recording.warnings == []
    assert np.isclose(recording.of_type(GameState)[0][1].clock_s, 3.0)
