"""Pole driver: metres <-> motor radians, travel limits, homing gate, bursts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foosball.agents.pole_driver import PoleDriverConfig, PoleDriverCore
from foosball.drivetrain import motor_to_translation, translation_to_motor
from foosball.geometry import default_table
from foosball.runtime import Inputs
from foosball.wire.catalogue import (
    AlarmCode,
    AxisStatus,
    DriveState,
    MotorCommand,
    MotorStatus,
    RodCommand,
    RodId,
    RodStatus,
    RodTarget,
    SafetyState,
    to_body,
)

TABLE = default_table()
RODS = TABLE.robot_rods


def motor_status(state: DriveState = DriveState.READY, position: float = 0.0) -> MotorStatus:
    return MotorStatus(axes=tuple(AxisStatus(axis=a, state=state, position=position,
                                             velocity=0.0, current=0.0, fault_code=0)
                                  for a in range(8)))


def homed_core(config: PoleDriverConfig | None = None) -> PoleDriverCore:
    core = PoleDriverCore(TABLE, config)
    core.step(Inputs(0.0, (motor_status(DriveState.HOMING),)))
    core.step(Inputs(0.0, (motor_status(DriveState.READY),)))
    return core


def target(rod: int, translation: float, rotation: float = 0.0, t_speed: float = 1.0,
           r_speed: float = 50.0) -> RodTarget:
    # built directly, not through the wire schema: the PDA must hold even if a peer's
    # validation were wrong
    return RodTarget(rod=RodId(rod), translation=translation, rotation=rotation,
                     translation_speed=t_speed, rotation_speed=r_speed)


def commands(out: tuple[object, ...]) -> list[MotorCommand]:
    return [m for m in out if isinstance(m, MotorCommand)]


@given(rod=st.sampled_from(RODS), metres=st.floats(-0.5, 0.5))
def test_translation_round_trip(rod, metres: float) -> None:  # type: ignore[no-untyped-def]
    assert motor_to_translation(rod, translation_to_motor(rod, metres)) == pytest.approx(
        metres, abs=1e-12)


def test_seed_drive_train_scale_and_zero() -> None:
    rod = RODS[0]
    # 5:1 gearbox, 2 cm pulley: five motor turns move the rod one pulley circumference
    five_turns = translation_to_motor(rod, rod.zero_offset + 2 * math.pi * 0.02)
    assert five_turns == pytest.approx(5 * 2 * math.pi)
    assert translation_to_motor(rod, rod.zero_offset) == 0.0  # zero is at the switch
    assert motor_to_translation(rod, translation_to_motor(rod, 0.0)) == pytest.approx(0.0)


def test_nothing_is_forwarded_until_the_axes_are_homed_again() -> None:
    core = PoleDriverCore(TABLE)
    command = RodCommand(ball_capture_time=1, rods=(target(0, 0.0),))
    assert not commands(core.step(Inputs(0.0, (command,))).messages)
    core.step(Inputs(0.0, (motor_status(DriveState.READY),)))
    assert commands(core.step(Inputs(0.0, (command,))).messages)
    assert core.zero_procedures == 4
    core.step(Inputs(0.0, (motor_status(DriveState.HOMING),)))  # a restart: re-zeroing
    assert not commands(core.step(Inputs(0.0, (command,))).messages)
    core.step(Inputs(0.0, (motor_status(DriveState.RUNNING),)))
    assert commands(core.step(Inputs(0.0, (command,))).messages)
    assert core.zero_procedures == 8


def test_centre_of_the_table_maps_to_the_middle_of_the_travel() -> None:
    core = homed_core()
    out = core.step(Inputs(0.0, (RodCommand(ball_capture_time=1,
                                               rods=tuple(target(i, 0.0, 0.3) for i in
                                                          range(4))),)))
    [command] = commands(out.messages)
    to_body(command)  # fits the wire schema
    assert command.ball_capture_time == 1  # the motor driver times frame -> setpoint by it
    for axis_target in command.axes:
        rod = RODS[axis_target.axis // 2]
        if axis_target.axis % 2 == 0:
            expected = (0.0 - rod.zero_offset) * rod.gear_ratio / rod.pulley_radius
            assert axis_target.position == pytest.approx(expected)
            assert axis_target.velocity == pytest.approx(1.0 / rod.metres_per_motor_radian())
        else:
            assert axis_target.position == 0.3


def test_rod_status_is_in_table_units() -> None:
    core = PoleDriverCore(TABLE)
    out = core.step(Inputs(0.0, (motor_status(DriveState.READY, position=10.0),)))
    [status] = [m for m in out.messages if isinstance(m, RodStatus)]
    to_body(status)
    rod = RODS[1]
    assert status.rods[1].translation == pytest.approx(rod.zero_offset + 10.0 * 0.02 / 5.0)


finite = st.floats(-1e6, 1e6, allow_nan=False)
anything = st.one_of(finite, st.just(math.nan), st.just(math.inf), st.just(-math.inf))
rod_targets = st.builds(target, rod=st.integers(0, 3), translation=anything, rotation=anything,
                        t_speed=anything, r_speed=anything)


@settings(max_examples=300, deadline=None)
@given(policy=st.sampled_from(["clamp", "reject"]),
       batch=st.lists(st.lists(rod_targets, min_size=1, max_size=4), min_size=1, max_size=6))
def test_no_target_outside_travel_ever_reaches_the_motor_driver(policy: str,
                                                               batch: list) -> None:
    core = homed_core(PoleDriverConfig(limit_policy=policy))
    for now, rods in enumerate(batch):
        out = core.step(Inputs(float(now), (RodCommand(ball_capture_time=1,
                                                          rods=tuple(rods)),)))
        for command in commands(out.messages):
            to_body(command)  # finite and within the wire ranges
            for t in command.axes:
                assert math.isfinite(t.position) and math.isfinite(t.velocity)
                assert t.velocity >= 0.0
                rod = RODS[t.axis // 2]
                if t.axis % 2 == 0:
                    metres = motor_to_translation(rod, t.position)
                    assert rod.travel_min - 1e-9 <= metres <= rod.travel_max + 1e-9
                    assert t.velocity <= 3.5 / rod.metres_per_motor_radian() + 1e-6
                else:
                    assert abs(t.position) <= 2 * math.pi


def test_clamp_counts_and_reject_drops() -> None:
    clamp = homed_core(PoleDriverConfig(limit_policy="clamp"))
    out = clamp.step(Inputs(0.0, (RodCommand(ball_capture_time=1,
                                                rods=(target(0, 0.5),)),)))
    [command] = commands(out.messages)
    assert motor_to_translation(RODS[0], command.axes[0].position) == pytest.approx(
        RODS[0].travel_max)
    assert clamp.clamped == 1
    reject = homed_core(PoleDriverConfig(limit_policy="reject"))
    out = reject.step(Inputs(0.0, (RodCommand(ball_capture_time=1,
                                                 rods=(target(0, 0.5), target(1, 0.0))),)))
    [command] = commands(out.messages)
    assert [t.axis for t in command.axes] == [2, 3]
    assert reject.rejected == 1


def test_a_burst_of_out_of_limit_targets_is_a_cause_while_the_window_holds_it() -> None:
    core = homed_core(PoleDriverConfig(burst_count=5, burst_window_s=1.0))
    present = []
    for n in range(12):
        out = core.step(Inputs(n * 0.05, (RodCommand(ball_capture_time=1,
                                                     rods=(target(2, 1.0),)),)))
        present.append(any(c.code == AlarmCode.LIMIT_BURST for c in out.causes))
    assert present == [False] * 4 + [True] * 8
    assert "out-of-limit targets within 1 s" in out.causes[0].text
    assert not core.step(Inputs(2.0)).causes, "the window passed: the cause is gone"
    spaced = homed_core(PoleDriverConfig(burst_count=5, burst_window_s=1.0))
    for n in range(12):  # the same number, spread out: no burst
        out = spaced.step(Inputs(n * 0.5, (RodCommand(ball_capture_time=1,
                                                      rods=(target(2, 1.0),)),)))
        assert not out.causes


def test_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="limit_policy"):
        PoleDriverConfig(limit_policy="ignore")


def test_the_state_says_homing_until_every_axis_is_homed() -> None:
    core = PoleDriverCore(TABLE)
    assert core.step(Inputs(0.0, (motor_status(DriveState.HOMING),))).state == \
        SafetyState.HOMING
    assert core.step(Inputs(0.1, (motor_status(DriveState.READY),))).state == SafetyState.READY
