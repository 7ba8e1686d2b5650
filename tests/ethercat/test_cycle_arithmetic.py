"""The motor driver's per-cycle arithmetic, written for speed (limits compared rather than
min()/max(), constants worked out once, states by identity), against the plain formulas it
replaced: the same floats bit for bit (-0.0 and NaN included) on arbitrary inputs."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from foosball.agents.motor_driver import (
    PHASE_STATE,
    AxisSetup,
    Latched,
    MotorDriverConfig,
    MotorDriverCore,
    Phase,
)
from foosball.agents.motor_driver.core import _bounded
from foosball.ethercat import layout as L
from foosball.wire.catalogue import AlarmCode, DriveState, SafetyState

anything = st.floats(allow_nan=True, allow_infinity=True)
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
near = st.one_of(finite, st.sampled_from([0.0, -0.0, 1e-7, -1e-7, 1e-12, 5e-7]), anything)


def same(a: float, b: float) -> bool:
    return repr(a) == repr(b)  # tells -0.0 from 0.0, NaN equals NaN


# --- the formulas as they were written before ----------------------------------------------
def plain_profile(setup: AxisSetup, phase: Phase, goal: float, setpoint: float, speed: float,
                  goal_speed: float, dt: float) -> tuple[float, float]:
    amax = setup.max_acceleration
    vmax = goal_speed if phase is Phase.RUNNING else 0.0
    error = goal - setpoint
    distance = abs(error)
    wanted = math.copysign(min(vmax, math.sqrt(2.0 * amax * distance)), error)
    largest_change = amax * dt
    new_speed = speed + max(-largest_change, min(largest_change, wanted - speed))
    step = new_speed * dt
    if distance <= abs(step) or (distance < 1e-6 and abs(new_speed) < largest_change):
        return goal, 0.0
    return setpoint + step, new_speed


def plain_goal(setup: AxisSetup, zero: float, position: float, speed: float
               ) -> tuple[float, float] | None:
    if not (math.isfinite(position) and math.isfinite(speed)):
        return None
    position = min(setup.soft_max, max(setup.soft_min, position))
    return zero + position, max(0.0, min(speed, setup.max_speed))


def plain_bounded(value: float, limit: float, low: float | None = None) -> float:
    if not math.isfinite(value):
        return 0.0
    return max(-limit if low is None else low, min(limit, value))


def plain_counts(value: float) -> int | type:
    try:
        return max(-(2**31), min(2**31 - 1, round(value * L.POSITION_COUNTS_PER_RAD)))
    except (ValueError, OverflowError) as exc:
        return type(exc)


def plain_safety_state(core: MotorDriverCore) -> SafetyState:
    if core.latched is not None:
        return SafetyState.FAULT
    states = {PHASE_STATE[phase] for phase in {a.phase for a in core.axes}}
    if states & {DriveState.OFF, DriveState.ALIGNING}:
        return SafetyState.ALIGNING
    if DriveState.HOMING in states:
        return SafetyState.HOMING
    if not core.accepting:
        return SafetyState.PAUSED
    return SafetyState.PLAYING if DriveState.RUNNING in states else SafetyState.READY


# --- the same results ---------------------------------------------------------------------------
@settings(max_examples=1000, deadline=None)
@given(goal=near, setpoint=near, speed=near, goal_speed=near,
       amax=st.one_of(st.floats(min_value=1.0, max_value=1e5), st.just(25_000.0)),
       dt=st.sampled_from([0.0005, 0.001, 0.005, 0.1]),
       phase=st.sampled_from([Phase.READY, Phase.RUNNING]))
def test_the_profile_gives_the_plain_formulas_floats(goal: float, setpoint: float,
                                                     speed: float, goal_speed: float,
                                                     amax: float, dt: float,
                                                     phase: Phase) -> None:
    setup = AxisSetup(0, homes=False, max_acceleration=amax)
    core = MotorDriverCore(MotorDriverConfig(axes=(setup,), cycle_s=dt))
    axis = core.axes[0]
    axis.phase, axis.goal, axis.setpoint, axis.speed = phase, goal, setpoint, speed
    axis.goal_speed = goal_speed
    core._profile(axis)
    want = plain_profile(setup, phase, goal, setpoint, speed, goal_speed, dt)
    assert same(axis.setpoint, want[0]) and same(axis.speed, want[1]), (axis, want)


@settings(max_examples=1000, deadline=None)
@given(position=near, speed=near, zero=finite,
       limits=st.one_of(st.just((-math.inf, math.inf)),
                        st.tuples(finite, finite).map(sorted).map(tuple)),
       max_speed=st.floats(min_value=0.0, max_value=5000.0),
       phase=st.sampled_from(list(Phase)))
def test_a_goal_is_clamped_as_the_plain_formulas_clamp_it(
        position: float, speed: float, zero: float, limits: tuple[float, float],
        max_speed: float, phase: Phase) -> None:
    setup = AxisSetup(0, homes=True, max_speed=max_speed, soft_min=limits[0],
                      soft_max=limits[1])
    core = MotorDriverCore(MotorDriverConfig(axes=(setup,)))
    axis = core.axes[0]
    axis.phase, axis.zero, axis.goal, axis.goal_speed = phase, zero, 1.5, 2.5
    core._set_goal(axis, position, speed)
    want = plain_goal(setup, zero, position, speed)
    if want is None or phase not in (Phase.READY, Phase.RUNNING):
        assert (axis.phase, axis.goal, axis.goal_speed) == (phase, 1.5, 2.5)
    else:
        assert axis.phase is Phase.RUNNING
        assert same(axis.goal, want[0]) and same(axis.goal_speed, want[1])


@settings(max_examples=800, deadline=None)
@given(value=near, limit=st.sampled_from([1.0, 10.0, 1e3, 1e4]),
       low=st.sampled_from([None, 0.0, -5.0]))
def test_bounded_and_counts_give_the_plain_formulas_results(value: float, limit: float,
                                                            low: float | None) -> None:
    assert same(_bounded(value, limit, low), plain_bounded(value, limit, low))
    try:
        counts: int | type = L.rad_to_counts(value)
    except (ValueError, OverflowError) as exc:
        counts = type(exc)
    assert counts == plain_counts(value)


@settings(max_examples=800, deadline=None)
@given(phases=st.lists(st.sampled_from(list(Phase)), min_size=1, max_size=8),
       accepting=st.booleans(), latched=st.booleans())
def test_the_safety_state_follows_the_drive_states_as_before(phases: list[Phase],
                                                             accepting: bool,
                                                             latched: bool) -> None:
    core = MotorDriverCore(MotorDriverConfig(axes=tuple(
        AxisSetup(n, homes=False) for n in range(len(phases)))))
    for axis, phase in zip(core.axes, phases, strict=True):
        axis.phase = phase
    core.accepting = accepting
    core.latched = Latched(AlarmCode.DRIVE_FAULT, "x", 0, 0.0) if latched else None
    assert core.safety_state() is plain_safety_state(core)


def test_the_state_table_decodes_every_statusword_as_the_coding_does() -> None:
    for statusword in range(1 << 16):
        assert L.STATE_OF_BITS[statusword & L.STATE_BITS] is L._decode_state(statusword)
