import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foosball.wire import catalogue
from foosball.wire.catalogue import (
    Agent,
    BallState,
    BallStatus,
    CalibrationStatus,
    MotorStatus,
    SchemaError,
    from_body,
    from_json,
    specs,
    to_body,
    to_json,
)


def value_strategy(spec: catalogue.Spec) -> st.SearchStrategy:
    finite = {"allow_nan": False, "allow_infinity": False}
    if spec.kind == "float":
        return st.floats(spec.low, spec.high, **finite)
    if spec.kind == "int":
        return st.integers(int(max(spec.low, -(2**63))), int(min(spec.high, 2**63 - 1)))
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind == "str":
        return st.text(max_size=min(spec.max_len, 40))
    if spec.kind == "bytes":
        return st.binary(max_size=min(spec.max_len, 64))
    if spec.kind == "enum":
        return st.sampled_from(list(spec.enum))
    if spec.kind == "floats":
        return st.tuples(*[st.floats(spec.low, spec.high, **finite)] * spec.max_len)
    if spec.kind == "records":
        return st.lists(message_strategy(spec.record), min_size=0 if spec.optional else 1,
                        max_size=spec.max_len).map(tuple)
    raise AssertionError(spec.kind)


def message_strategy(cls: type) -> st.SearchStrategy:
    return st.builds(cls, **{name: value_strategy(spec) for name, spec in specs(cls)})


any_message = st.sampled_from(catalogue.MESSAGE_TYPES).flatmap(message_strategy)


@settings(max_examples=300, deadline=None)
@given(any_message)
def test_every_valid_message_survives_body_and_json_round_trips(message):
    cls = type(message)
    assert from_body(cls, to_body(message)) == message
    assert from_json(cls, to_json(message)) == message


def test_catalogue_has_every_message_the_design_names():
    names = set(catalogue.BY_NAME)
    assert {
        "BallState", "RodCommand", "MotorCommand", "MotorStatus", "EtherCatStatus", "Heartbeat",
        "Alarm", "GameControl", "GameState", "VisionConfig", "VisionPreview", "OtaCommand",
        "OtaStatus", "CalibrationStatus",
    } <= names


CALIBRATION = CalibrationStatus(made_at=1_764_623_787_000_000_000, reprojection_rms_px=0.42,
                                reprojection_max_px=0.97, table_rms_m=0.0011, width=640,
                                height=480, markers=4)


def test_calibration_status_round_trips_and_only_the_ball_tracker_sends_it():
    assert from_body(CalibrationStatus, to_body(CALIBRATION)) == CALIBRATION
    assert from_json(CalibrationStatus, to_json(CALIBRATION)) == CALIBRATION
    assert catalogue.SENDERS[CalibrationStatus] == {Agent.BALL_TRACKER}
    assert catalogue.BY_TYPE_ID[CalibrationStatus.TYPE_ID] is CalibrationStatus


@pytest.mark.parametrize(("changes", "complaint"), [
    ({"made_at": -1}, "outside"),
    ({"reprojection_rms_px": math.inf}, "outside"),
    ({"markers": 51}, "outside"),  # DICT_4X4_50 has 50 markers
    ({"width": 0}, "outside"),
])
def test_calibration_status_out_of_range_is_refused(changes, complaint):
    with pytest.raises(SchemaError, match=complaint):
        to_body(dataclasses.replace(CALIBRATION, **changes))


def ball(**changes):
    fields = {"capture_time": 1, "frame": 0, "x": 0.0, "y": 0.0, "vx": 0.0, "vy": 0.0,
              "covariance": (0.0, 0.0, 0.0, 0.0), "status": BallStatus.DETECTED}
    fields.update(changes)
    return BallState(**fields)


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"x": 5.0}, "outside"),
        ({"vx": math.nan}, "outside"),
        ({"frame": -1}, "outside"),
        ({"frame": True}, "expected an integer"),
        ({"x": "0.1"}, "expected a number"),
        ({"status": 7}, "not a BallStatus"),
        ({"covariance": (0.0, 0.0)}, "expected 4 numbers"),
    ],
)
def test_out_of_range_or_mistyped_fields_are_refused_both_ways(changes, complaint):
    with pytest.raises(SchemaError, match=complaint):
        to_body(ball(**changes))
    body = to_body(ball())
    body.update({spec.key: changes[name] for name, spec in specs(BallState) if name in changes})
    with pytest.raises(SchemaError, match=complaint):
        from_body(BallState, body)


def test_missing_and_extra_keys_are_refused():
    body = to_body(ball())
    with pytest.raises(SchemaError):
        from_body(BallState, {k: v for k, v in body.items() if k != 3})
    with pytest.raises(SchemaError):
        from_body(BallState, {**body, 99: 1})


def test_nested_records_are_validated():
    with pytest.raises(SchemaError, match=r"expected 1\.\.8 entries"):
        from_body(MotorStatus, {1: []})
    with pytest.raises(SchemaError):
        from_body(MotorStatus, {1: [{1: 9, 2: 0, 3: 0.0, 4: 0.0, 5: 0.0, 6: 0}]})


RECORD_TYPES = tuple({spec.record for cls in catalogue.MESSAGE_TYPES
                      for _, spec in specs(cls) if spec.record is not None})


def test_the_compiled_checks_accept_and_refuse_exactly_what_the_general_ones_do():
    """to_body and from_body run each class's compiled checks first and fall back to the
    general code (which words the complaint): the two must agree on every value."""
    import random

    from tests.wire.hostile import invalid_body, valid_message

    rng = random.Random(5)
    for cls in (*catalogue.MESSAGE_TYPES, *RECORD_TYPES):
        compiled_in = catalogue._compiled(cls, False)
        compiled_out = catalogue._compiled(cls, True)
        for _ in range(200):
            message = valid_message(rng, cls)
            body = catalogue._to_body_general(message)
            assert compiled_out(message) == body
            assert compiled_in(body) == catalogue._from_body_general(cls, body) == message
            broken = invalid_body(rng, cls)
            with pytest.raises(SchemaError):
                catalogue._from_body_general(cls, broken)
            assert compiled_in(broken) is None, (cls.__name__, broken)
            bad = _with_a_bad_field(rng, message)
            with pytest.raises(SchemaError):
                catalogue._to_body_general(bad)
            assert compiled_out(bad) is None, (cls.__name__, bad)


def _with_a_bad_field(rng, message):
    """The message with one field set (past the frozen dataclass) to a value it refuses."""
    from tests.wire.hostile import invalid_values

    name, spec = rng.choice(specs(type(message)))
    bad = dataclasses.replace(message)
    object.__setattr__(bad, name, rng.choice(invalid_values(rng, spec)))
    return bad


LOSS = catalogue.EtherCatStatus(
    link_up=True, slaves=8, expected_slaves=8, al_state=0x14, working_counter=21,
    expected_working_counter=24, bad_working_counters=9, cycle_period_s=0.005,
    wakeup_jitter_p99_s=1e-4, slaves_not_op=(
        catalogue.SlaveState(6, 0x14, 0x001B, "Sync manager watchdog", 0, 0),
        catalogue.SlaveState(7, 0, 0, "No error", -1, -1)))


def test_the_slaves_out_of_op_round_trip_and_stay_out_of_the_body_when_none():
    body = to_body(LOSS)
    assert body[12] == [{1: 6, 2: 0x14, 3: 0x1B, 4: "Sync manager watchdog", 5: 0, 6: 0},
                        {1: 7, 2: 0, 3: 0, 4: "No error", 5: -1, 6: -1}]
    assert from_body(catalogue.EtherCatStatus, body) == LOSS
    assert from_json(catalogue.EtherCatStatus, to_json(LOSS)) == LOSS
    healthy = dataclasses.replace(LOSS, slaves_not_op=())
    # none: the body an EtherCatStatus had before field 12 (an older decoder takes it), and
    # such a body (a recording, a board not yet updated) reads as none
    assert sorted(to_body(healthy)) == list(range(1, 12))
    assert from_body(catalogue.EtherCatStatus, to_body(healthy)) == healthy
    assert catalogue._from_body_general(catalogue.EtherCatStatus, to_body(healthy)) == healthy
    with pytest.raises(SchemaError, match=r"slaves_not_op: expected 1\.\.8 entries"):
        from_body(catalogue.EtherCatStatus, {**to_body(healthy), 12: []})  # one encoding
    with pytest.raises(SchemaError):
        to_body(dataclasses.replace(LOSS, slaves_not_op=LOSS.slaves_not_op * 5))  # 10 > 8
    with pytest.raises(SchemaError):
        from_body(catalogue.EtherCatStatus, {k: v for k, v in body.items() if k != 11})


EMERGENCY = catalogue.DriveEmergency(4, 0x9000, 0x01, 0x0000_0100)


def test_emergencies_are_a_second_optional_field_either_may_be_left_out():
    """Field 13 came after field 12: a body may leave out either, both or neither, and a
    body with only the older fields (a board not yet updated) still reads."""
    healthy = dataclasses.replace(LOSS, slaves_not_op=())
    for message in (dataclasses.replace(healthy, emergencies=(EMERGENCY,)),
                    dataclasses.replace(LOSS, emergencies=(EMERGENCY,)), LOSS, healthy):
        body = to_body(message)
        expected = [*range(1, 12), *([12] if message.slaves_not_op else []),
                    *([13] if message.emergencies else [])]
        assert list(body) == expected
        assert from_body(catalogue.EtherCatStatus, body) == message
        assert catalogue._from_body_general(catalogue.EtherCatStatus, body) == message
        assert from_json(catalogue.EtherCatStatus, to_json(message)) == message
    only_13 = to_body(dataclasses.replace(healthy, emergencies=(EMERGENCY,)))
    assert only_13[13] == [{1: 4, 2: 0x9000, 3: 0x01, 4: 0x100}]
    # one encoding: keys in order, integers, and no required field left out
    with pytest.raises(SchemaError):
        from_body(catalogue.EtherCatStatus, {13: only_13[13], **{k: only_13[k]
                                                                for k in range(1, 12)}})
    with pytest.raises(SchemaError, match="missing"):
        from_body(catalogue.EtherCatStatus, {k: v for k, v in only_13.items() if k != 5})
    with pytest.raises(SchemaError):
        from_body(catalogue.EtherCatStatus, {**{float(k) if k == 1 else k: v
                                                 for k, v in only_13.items()}})


def test_camera_calibration_and_its_snapshot_fit_one_frame_at_their_limits():
    """The guided calibration's reply with every field at its widest (the most markers,
    the longest ASCII text the tracker sends: it clips its text to the limit in bytes) and
    a full snapshot part, signed, fit one Ethernet frame."""
    from foosball.wire.catalogue import (
        CAMERA_CALIBRATION_MARKERS,
        CAMERA_CALIBRATION_TEXT,
        SNAPSHOT_CHUNK,
        CalibrationMarker,
        CalibrationStage,
        CameraCalibration,
        CameraSnapshot,
        MarkerSeen,
    )
    from foosball.wire.codec import MAX_FRAME, WireCodec

    codec = WireCodec(bytes(32), Agent.BALL_TRACKER)
    marker = CalibrationMarker(marker=49, seen=MarkerSeen.STRAY, u=-100_000, v=-100_000,
                               x_mm=-5000, y_mm=-5000, checked=True, dx_mm=-999.123456789,
                               dy_mm=-999.987654321, blamed=True, without_blamed=True)
    reply = CameraCalibration(request=2**31 - 1, stage=CalibrationStage.REFUSED, width=65535,
                              height=65535, reprojection_rms_px=1234.56789,
                              reprojection_limit_px=1234.5678, table_rms_m=1.2345678,
                              focal_px=12345.6789, limit_mm=999.123, snapshot_parts=256,
                              text="x" * CAMERA_CALIBRATION_TEXT,
                              markers=(marker,) * CAMERA_CALIBRATION_MARKERS)
    part = CameraSnapshot(request=2**31 - 1, part=255, parts=256, width=4096, height=4096,
                          jpeg=b"\xff" * SNAPSHOT_CHUNK)
    for message in (reply, part):
        assert len(codec.encode(message)) <= MAX_FRAME
        assert from_body(type(message), to_body(message)) == message
    assert catalogue.SENDERS[CameraSnapshot] == {Agent.BALL_TRACKER}
