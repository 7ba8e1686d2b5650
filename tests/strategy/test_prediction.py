from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foosball.geometry import default_table
from foosball.strategy.params import PredictionParams
from foosball.strategy.prediction import BallPredictor, SpeedModel

TABLE = default_table()
WALL = TABLE.field.half_width - TABLE.ball.radius


def test_pure_drag_matches_fc_portugal_closed_form():
    model = SpeedModel(drag_rate=0.5, rolling_deceleration=0.0)
    v0, t = 3.0, 0.7
    assert model.speed(v0, t) == pytest.approx(v0 * math.exp(-0.5 * t))
    assert model.distance(v0, t) == pytest.approx(v0 / 0.5 * (1 - math.exp(-0.5 * t)))


def test_pure_rolling_stops_at_v_over_a():
    model = SpeedModel(drag_rate=0.0, rolling_deceleration=0.1)
    assert model.stop_time(1.0) == pytest.approx(10.0)
    assert model.distance(1.0, 100.0) == pytest.approx(5.0)
    assert model.time_to_distance(1.0, 6.0) is None


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.0, 1.0), st.floats(0.0, 0.5), st.floats(0.05, 15.0), st.floats(0.001, 0.999)
)
def test_time_to_distance_inverts_distance(c, a, s0, fraction):
    model = SpeedModel(c, a)
    t_end = min(model.stop_time(s0), 5.0)
    d = model.distance(s0, t_end) * fraction
    t = model.time_to_distance(s0, d)
    assert t is not None
    assert model.distance(s0, t) == pytest.approx(d, rel=1e-6, abs=1e-6)  # a micrometre


def test_numerical_integration_agrees_with_the_closed_form():
    c, a, v, dt = 0.1, 0.05, 4.0, 1e-5
    model = SpeedModel(c, a)
    x = 0.0
    for _ in range(int(0.5 / dt)):
        v = max(0.0, v - (c * v + a) * dt)
        x += v * dt
    assert model.distance(4.0, 0.5) == pytest.approx(x, rel=1e-3)


def predictor(**kw):
    return BallPredictor(TABLE, PredictionParams(**kw))


def test_crossing_a_rod_line_straight():
    p = predictor(drag_rate=0.0, rolling_deceleration=0.0)
    hit = p.crossing(0.3, 0.0, -2.0, 0.4, -0.1)
    assert hit is not None
    assert hit.t == pytest.approx(0.2)
    assert hit.y == pytest.approx(0.08)


def test_side_wall_bounce_reflects_with_restitution():
    p = predictor(drag_rate=0.0, rolling_deceleration=0.0, wall_restitution=0.5,
                  wall_friction=0.0)
    # from y = WALL - 0.1 going up at 45 deg, x decreasing: hits the wall after 0.1 in x
    hit = p.crossing(0.3, WALL - 0.1, -1.0, 1.0, 0.0)
    assert hit is not None
    # after the bounce vy = -0.5: 0.2 m more in x takes 0.2 s and drops 0.1 m
    assert hit.t == pytest.approx(0.3)
    assert hit.y == pytest.approx(WALL - 0.1)
    assert hit.vy == pytest.approx(-0.5)


def test_ball_that_stops_short_never_crosses():
    p = predictor(drag_rate=0.0, rolling_deceleration=1.0)
    assert p.crossing(0.3, 0.0, -0.5, 0.0, 0.0) is None  # stops after 0.125 m


def test_ball_into_the_goal_ends_the_prediction():
    p = predictor(drag_rate=0.0, rolling_deceleration=0.0)
    segments = p.segments(0.0, 0.0, -5.0, 0.0)
    assert len(segments) == 1
    assert p.crossing(0.0, 0.0, -5.0, 0.0, 0.3) is None  # never comes back


def test_end_wall_beside_the_goal_bounces():
    p = predictor(drag_rate=0.0, rolling_deceleration=0.0, wall_restitution=0.5)
    hit = p.crossing(-0.4, 0.25, -2.0, 0.0, -0.3)
    assert hit is not None and hit.vx > 0


def test_compensation_advances_by_age_plus_latency():
    p = predictor(drag_rate=0.0, rolling_deceleration=0.0, actuation_latency=0.01)
    now = p.compensate(0.0, 0.0, 1.0, 0.0, age=0.02)
    assert now.x == pytest.approx(0.03)


def test_wall_friction_slows_the_tangential_speed():
    p = predictor(drag_rate=0.0, rolling_deceleration=0.0, wall_restitution=0.5,
                  wall_friction=0.1)
    after = p.state_at(0.3, WALL - 0.01, -2.0, 1.0, 0.05)
    assert after.vy == pytest.approx(-0.5)
    assert after.vx == pytest.approx(-2.0 + 0.1 * 1.5 * 1.0)


def test_fitted_model_predicts_the_simulated_ball():
    """The prediction with the default (fitted) parameters against the simulator's ball."""
    import math as m

    from foosball.sim.physics import World

    world = World(TABLE)
    for i in range(len(TABLE.rods)):
        world.set_rod_pose(i, 0.0, -m.pi / 2)
    world.place_ball(-0.3, 0.0, 2.0, 1.5)
    for _ in range(60):  # 0.3 s, one side-wall bounce
        world.step(0.005)
    state = world.state()
    expected = BallPredictor(TABLE, PredictionParams()).state_at(-0.3, 0.0, 2.0, 1.5, 0.3)
    assert expected.x == pytest.approx(state.ball_x, abs=0.002)
    assert expected.y == pytest.approx(state.ball_y, abs=0.002)
    assert expected.vx == pytest.approx(state.ball_vx, abs=0.01)
    assert expected.vy == pytest.approx(state.ball_vy, abs=0.01)
