from __future__ import annotations

import math

import pytest

from foosball.strategy.kick import KickEngine, KickProfile, KickRequest, Phase
from foosball.strategy.params import KickEngineParams

PROFILE = KickProfile.from_params(
    KickEngineParams(windup_angle_deg=-60.0, strike_angle_deg=45.0, follow_through_time=0.03)
)


def test_phases_in_order_driven_by_the_measured_angle():
    engine = KickEngine(PROFILE)
    engine.start(0.0, KickRequest(power=100.0, direction=0.02), rotation=0.0)
    out = engine.step(0.0, 0.0)
    assert out.phase is Phase.WIND_UP and out.rotation == PROFILE.windup_angle
    assert out.translation_offset == 0.0
    out = engine.step(0.005, PROFILE.windup_angle)
    assert out.phase is Phase.STRIKE
    assert out.rotation_speed == 100.0 and out.translation_offset == 0.02
    out = engine.step(0.01, PROFILE.strike_angle)
    assert out.phase is Phase.FOLLOW_THROUGH
    out = engine.step(0.01 + PROFILE.follow_through_time * 0.5, PROFILE.strike_angle)
    assert out.phase is Phase.FOLLOW_THROUGH
    out = engine.step(0.01 + PROFILE.follow_through_time, PROFILE.strike_angle)
    assert out.phase is Phase.RETURN and out.rotation == 0.0
    assert engine.step(0.1, 0.0) is None
    assert not engine.active


def test_a_stuck_rod_times_out_of_each_phase():
    engine = KickEngine(PROFILE)
    engine.start(0.0, KickRequest(power=100.0), rotation=0.0)
    nominal = abs(PROFILE.windup_angle) / PROFILE.windup_speed
    limit = nominal * 3 + PROFILE.phase_timeout_margin
    assert engine.step(limit - 0.001, 0.0).phase is Phase.WIND_UP
    assert engine.step(limit + 0.001, 0.0).phase is Phase.STRIKE


def test_without_measurements_the_phases_are_purely_timed():
    engine = KickEngine(PROFILE)
    engine.start(0.0, KickRequest(power=100.0), rotation=0.0)
    windup = abs(PROFILE.windup_angle) / PROFILE.windup_speed
    assert engine.step(windup * 0.99, None).phase is Phase.WIND_UP
    assert engine.step(windup * 1.01, None).phase is Phase.STRIKE


def test_a_running_kick_is_not_restarted_and_abort_goes_to_return():
    engine = KickEngine(PROFILE)
    engine.start(0.0, KickRequest(power=100.0), rotation=0.0)
    engine.start(0.001, KickRequest(power=5.0), rotation=0.0)
    assert engine.kicks_started == 1
    engine.abort(0.002, -0.3)
    assert engine.step(0.002, -0.3).phase is Phase.RETURN


def test_seed_time_to_contact():
    profile = KickProfile(math.radians(-90), math.radians(50), None, 0.0, None, 0.1, 3.0, 0.0)
    assert profile.time_to_contact(power=math.pi) == pytest.approx(1.0)


def test_zero_power_is_refused():
    with pytest.raises(ValueError):
        KickEngine(PROFILE).start(0.0, KickRequest(power=0.0), rotation=0.0)


def test_a_request_can_end_the_strike_short_of_the_profile_for_the_no_spinning_rule():
    from foosball.strategy.kick import RULES_STRIKE_END, KickEngine, KickProfile, KickRequest
    from foosball.strategy.params import KickEngineParams

    profile = KickProfile.from_params(KickEngineParams())
    engine = KickEngine(profile)
    engine.start(0.0, KickRequest(power=120.0, strike_angle=RULES_STRIKE_END), 0.0)
    out = engine.step(0.5, profile.windup_angle)  # wound up: the strike begins
    assert out is not None and out.rotation == RULES_STRIKE_END
    assert profile.strike_angle > RULES_STRIKE_END
