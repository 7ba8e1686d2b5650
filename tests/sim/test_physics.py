"""Table physics: contacts, tunnelling, friction, men angles, goals, drives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foosball.geometry import default_table
from foosball.sim.drives import AxisBank
from foosball.sim.params import ROBOT_ROTATION, ROBOT_TRANSLATION, AxisLimits, SimParams
from foosball.sim.physics import World

TABLE = default_table()
R = TABLE.ball.radius
DT = 0.005


def world(**params: float) -> World:
    return World(TABLE, SimParams(**params))


def lift_all(w: World) -> None:
    """Every man's feet up (horizontal): only what a test puts down is in the ball's way."""
    for i in range(len(w.rods)):
        w.set_rod_pose(i, 0.0, math.pi / 2)


def run(w: World, seconds: float, dt: float = DT) -> list:
    contacts = []
    for _ in range(round(seconds / dt)):
        contacts += w.step(dt)
    return contacts


# --- no tunnelling ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_no_tunnelling_through_a_man_at_22_m_s(seed: int) -> None:
    rng = np.random.default_rng(seed)
    w = world()
    lift_all(w)
    keeper = w.rod_index("human_goalkeeper")  # one man at y = translation, x = +0.522
    rod = w.rods[keeper]
    w.set_rod_pose(keeper, float(rng.uniform(-0.1, 0.1)), 0.0)
    y_man = w.rod_pose(keeper)[0]
    half = TABLE.man.foot_width / 2 + R
    # aim at the man's foot (within its width), from 0.3 m in front, at 22 m/s
    y0 = y_man + float(rng.uniform(-0.8, 0.8)) * half
    w.place_ball(rod.x - 0.3, y0, 22.0, float(rng.uniform(-0.3, 0.3)))
    for _ in range(40):
        contacts = w.step(DT)
        assert w.ball.x < rod.x, "the ball went through the man"
        if any(c.kind == "man" for c in contacts):
            break
    else:
        pytest.fail("the ball never touched the man")
    assert w.ball.vx < 0  # bounced back


def test_no_tunnelling_through_a_thin_foot_swinging_at_full_speed() -> None:
    # a robot rod spinning at its maximum speed while a fast ball crosses its line:
    # whatever happens, the ball centre never ends inside a man's grown box
    w = world()
    lift_all(w)
    i = w.rod_index("robot_attack")
    rod = w.rods[i]
    for k in range(20):
        w.set_rod_pose(i, 0.0, -math.pi / 2)
        w.command_rod(i, rotation=-math.pi / 2 + 2 * math.pi)
        w.place_ball(rod.x + 0.15, 0.003 * k - 0.03, -22.0, 0.0)
        for _ in range(20):
            w.step(DT)
            lo_hi = w.man_interval(w.rod_pose(i)[1])
            if lo_hi is not None and w.ball.in_play:
                lo, hi = lo_hi
                inside_x = rod.x + lo + 1e-6 < w.ball.x < rod.x + hi - 1e-6
                inside_y = any(
                    abs(w.ball.y - y) < TABLE.man.foot_width / 2
                    for y in rod.men_y(w.rod_pose(i)[0])
                )
                assert not (inside_x and inside_y)


@pytest.mark.parametrize("angle", [0.2, 0.7, 1.2])
def test_no_tunnelling_through_walls_at_22_m_s(angle: float) -> None:
    w = world()
    lift_all(w)  # only walls in the way
    w.place_ball(0.0, 0.1, 22.0 * math.cos(angle), 22.0 * math.sin(angle))
    limit_y = TABLE.field.half_width - R + 1e-9
    limit_x = TABLE.field.half_length - R + 1e-9
    for _ in range(200):
        w.step(DT)
        if not w.ball.in_play:
            break
        assert abs(w.ball.y) <= limit_y
        if abs(w.ball.y) > TABLE.field.goal_width / 2:
            assert abs(w.ball.x) <= limit_x


# --- contacts obey the laws ----------------------------------------------------------------


def test_mirror_law_bounce_off_a_side_wall_without_friction() -> None:
    w = world(wall_restitution=0.7, wall_friction=0.0, rolling_decel=0.0, drag=0.0)
    lift_all(w)
    w.place_ball(0.0, 0.0, 2.0, 3.0)
    contacts = run(w, 0.2)
    walls = [c for c in contacts if c.kind == "wall"]
    assert walls, "no wall contact"
    c = walls[0]
    assert c.vx_after == pytest.approx(2.0, abs=1e-9)  # tangential kept
    assert c.vy_after == pytest.approx(-0.7 * 3.0, abs=1e-9)  # normal reversed, scaled by e


def test_wall_friction_takes_tangential_speed_within_the_coulomb_limit() -> None:
    e, mu = 0.5, 0.1
    w = world(wall_restitution=e, wall_friction=mu, rolling_decel=0.0, drag=0.0)
    lift_all(w)
    w.place_ball(0.0, 0.0, 2.0, 3.0)
    c = next(c for c in run(w, 0.2) if c.kind == "wall")
    assert c.vy_after == pytest.approx(-e * 3.0, abs=1e-9)
    assert c.vx_after == pytest.approx(2.0 - mu * (1 + e) * 3.0, abs=1e-9)
    outgoing = math.atan2(abs(c.vy_after), c.vx_after)
    incoming = math.atan2(3.0, 2.0)
    assert outgoing < incoming  # restitution flattens the bounce


def test_rolling_speed_follows_the_free_ball_model() -> None:
    a, k, v0 = 0.05, 0.1, 1.5
    w = world(rolling_decel=a, drag=k)
    lift_all(w)
    w.place_ball(-0.4, 0.0, v0, 0.0)
    for t in (0.1, 0.3, 0.5):
        run(w, t - w.time)
        expected = (v0 + a / k) * math.exp(-k * t) - a / k
        assert w.ball.vx == pytest.approx(expected, rel=1e-6)
        distance = (v0 + a / k) * (1 - math.exp(-k * t)) / k - a * t / k
        assert w.ball.x == pytest.approx(-0.4 + distance, abs=1e-9)


def test_a_slow_ball_stops_where_the_model_says() -> None:
    a, k, v0 = 0.08, 0.1, 0.2
    w = world(rolling_decel=a, drag=k)
    w.place_ball(-0.1, 0.2, v0, 0.0)
    lift_all(w)
    run(w, 5.0)
    t_stop = math.log((v0 + a / k) / (a / k)) / k
    stop = (v0 + a / k) * (1 - math.exp(-k * t_stop)) / k - a * t_stop / k
    assert w.ball.vx == 0.0
    assert w.ball.x == pytest.approx(-0.1 + stop, abs=1e-9)


def test_man_bounce_has_the_man_restitution() -> None:
    w = world(man_restitution=0.45, rolling_decel=0.0, drag=0.0)
    lift_all(w)
    keeper = w.rod_index("human_goalkeeper")
    w.set_rod_pose(keeper, 0.0, 0.0)
    w.place_ball(0.3, 0.0, 5.0, 0.0)
    c = next(c for c in run(w, 0.2) if c.kind == "man")
    assert c.vx_after == pytest.approx(-0.45 * 5.0, abs=1e-9)


# --- men angles ----------------------------------------------------------------------------


def test_a_lifted_rod_lets_the_ball_pass_and_a_vertical_one_stops_it() -> None:
    for rotation, passes in ((-math.pi / 2, True), (math.pi / 2, True), (0.0, False)):
        w = world()
        lift_all(w)
        keeper = w.rod_index("human_goalkeeper")
        w.set_rod_pose(keeper, 0.0, rotation)
        w.place_ball(0.3, 0.0, 3.0, 0.0)
        contacts = run(w, 0.3)
        man_contacts = [c for c in contacts if c.kind == "man"]
        if passes:
            assert not man_contacts
            assert w.score.robot == 1  # straight into the human's goal
        else:
            assert man_contacts and w.ball.vx < 0 and w.score.robot == 0


def test_the_feet_reach_the_ball_only_at_angles_where_they_would() -> None:
    w = world()
    lifted = math.acos(
        (TABLE.man.rod_height - 2 * R - TABLE.man.foot_thickness / 2) / TABLE.man.foot_reach
    )
    assert w.man_interval(0.0) is not None
    assert w.man_interval(lifted + 0.02) is None  # the tip clears the top of the ball
    assert w.man_interval(-lifted - 0.02) is None
    assert w.man_interval(lifted - 0.1) is not None


def test_a_kick_hands_the_ball_the_foot_speed_with_restitution() -> None:
    e = 0.5
    w = world(man_restitution=e)
    lift_all(w)
    i = w.rod_index("robot_attack")
    rod = w.rods[i]
    w.set_rod_limits(i, AxisLimits(3.0, 60.0, 2e4), AxisLimits(100.0, 60000.0, 3e6))
    w.set_rod_pose(i, 0.0, -1.3)
    w.place_ball(rod.x + 0.03, 0.0, 0.0, 0.0)
    w.command_rod(i, rotation=2.6, rotation_speed=100.0)
    c = next(c for c in run(w, 0.1) if c.kind == "man")
    lever = TABLE.man.rod_height - R
    foot = 100.0 * lever  # the rod reaches its speed cap before the ball
    assert c.vx_after == pytest.approx((1 + e) * foot, rel=0.03)
    assert abs(c.vy_after) < 1e-9


# --- goals -------------------------------------------------------------------------------


def test_a_goal_is_counted_exactly_once() -> None:
    w = world()
    lift_all(w)
    w.place_ball(0.3, 0.01, 4.0, 0.0)
    contacts = run(w, 1.0)
    goals = [c for c in contacts if c.kind == "goal"]
    assert len(goals) == 1 and goals[0].team == "robot"
    assert (w.score.robot, w.score.human) == (1, 0)
    assert not w.ball.in_play
    run(w, 1.0)
    assert (w.score.robot, w.score.human) == (1, 0)


def test_a_ball_on_the_post_is_no_goal_and_a_ball_wide_of_it_hits_the_wall() -> None:
    half_goal = TABLE.field.goal_width / 2
    for y, scored in (
        (half_goal - R - 0.002, 1),
        (half_goal, 0),
        (half_goal + R + 0.01, 0),
    ):
        w = world()
        lift_all(w)
        w.place_ball(-0.3, y, -3.0, 0.0)
        contacts = run(w, 0.3)
        assert w.score.human == scored, y
        if not scored:
            assert any(c.kind in ("post", "wall") for c in contacts)
            assert w.ball.x > -TABLE.field.half_length


# --- drives --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limits", "distance"),
    [
        (ROBOT_TRANSLATION, 0.2),
        (ROBOT_TRANSLATION, 0.004),
        (ROBOT_ROTATION, 2.4),
        (AxisLimits(2.5, 40.0, 5000.0), 0.3),
    ],
)
def test_drives_respect_their_limits_and_do_not_overshoot(
    limits: AxisLimits, distance: float
) -> None:
    bank = AxisBank([limits])
    bank.command(0, distance)
    positions, velocities, accels = [0.0], [0.0], [0.0]
    for _ in range(400):
        bank.step(DT)
        positions.append(bank.position[0])
        velocities.append(bank.velocity[0])
        accels.append(bank.accel[0])
    assert positions[-1] == distance and velocities[-1] == 0.0
    assert max(positions) <= distance + 1e-9
    assert max(abs(v) for v in velocities) <= limits.max_speed + 1e-9
    assert max(abs(a) for a in accels) <= limits.max_accel + 1e-9
    jerks = np.abs(np.diff(accels)) / DT
    assert jerks.max() <= limits.max_jerk * 1.0001
    # motion is physical: position changes match the reported speeds
    steps = np.diff(positions)
    assert np.all(np.abs(steps) <= limits.max_speed * DT + 1e-9)


def test_a_commanded_speed_caps_the_move() -> None:
    bank = AxisBank([ROBOT_TRANSLATION])
    bank.command(0, 0.3, speed=0.5)
    peak = 0.0
    for _ in range(400):
        bank.step(DT)
        peak = max(peak, abs(bank.velocity[0]))
    assert 0.95 * 0.5 <= peak <= 0.5 + 1e-9
    assert bank.position[0] == 0.3


def test_a_rod_can_be_driven_by_external_positions() -> None:
    w = world()
    i = w.rod_index("robot_goalkeeper")
    for k in range(1, 11):
        w.drive_rod_externally(i, 0.01 * k, 0.05 * k, 2.0, 10.0)
        w.step(DT)
        assert w.rod_pose(i) == pytest.approx((0.01 * k, 0.05 * k, 2.0, 10.0))
    w.command_rod(i, translation=0.0, rotation=0.0)  # back to setpoints
    run(w, 1.0)
    assert w.rod_pose(i)[:2] == (0.0, 0.0)


def ball_inside_a_man(w: World) -> bool:
    for i, rod in enumerate(w.rods):
        translation, rotation, _, _ = w.rod_pose(i)
        interval = w.man_interval(rotation)
        if interval is None:
            continue
        lo, hi = interval
        if rod.x + lo + 1e-4 < w.ball.x < rod.x + hi - 1e-4:
            for y in rod.men_y(translation):
                if abs(w.ball.y - y) < TABLE.man.foot_width / 2 - 1e-4:
                    return True
    return False


@pytest.mark.parametrize("seed", range(4))
def test_random_play_never_puts_the_ball_through_men_or_walls(seed: int) -> None:
    rng = np.random.default_rng(seed)
    w = world()
    limit_y = TABLE.field.half_width - R + 1e-9
    for k in range(2000):
        if k % 10 == 0:  # every rod gets a new target, some of them kicks
            for i, rod in enumerate(w.rods):
                w.command_rod(
                    i,
                    float(rng.uniform(rod.travel_min, rod.travel_max)),
                    float(rng.uniform(-2.5, 2.5)),
                )
        if not w.ball.in_play or math.hypot(w.ball.vx, w.ball.vy) < 0.5:
            speed, angle = float(rng.uniform(5, 22)), float(rng.uniform(0, 2 * math.pi))
            w.place_ball(
                0.0, float(rng.uniform(-0.3, 0.3)), speed * math.cos(angle), speed * math.sin(angle)
            )
        w.step(DT)
        if w.ball.in_play:
            assert abs(w.ball.y) <= limit_y
            assert math.isfinite(w.ball.x) and math.isfinite(w.ball.vx)
            assert not ball_inside_a_man(w)


@pytest.mark.parametrize("phase", [0.0, 0.3, 0.6, 0.9])
def test_a_foot_sweeping_through_the_ball_within_one_step_still_strikes_it(phase: float) -> None:
    # 600 rad/s (beyond any drive) turns the rod 3 rad per 5 ms step: the feet can pass the
    # whole ball-height band (about +-0.9 rad) between two steps; the sliced ray casts must
    # still see the contact
    w = world()
    lift_all(w)
    i = w.rod_index("robot_attack")
    rod = w.rods[i]
    w.set_rod_limits(i, ROBOT_TRANSLATION, AxisLimits(600.0, 1e7, 1e12))
    w.set_rod_pose(i, 0.0, -2.0 - phase)
    w.place_ball(rod.x + 0.025, 0.0, 0.0, 0.0)
    w.command_rod(i, rotation=12.0)
    contacts = run(w, 0.05)
    kicks = [c for c in contacts if c.kind == "man"]
    assert kicks, "the foot went through the ball"
    assert kicks[0].vx_after > 15.0


def test_robot_translation_limits_come_through_the_rods_gearbox() -> None:
    from dataclasses import replace

    slow = replace(TABLE, rods=tuple(replace(r, gear_ratio=10.0) for r in TABLE.rods))
    for table, expected in ((TABLE, 3.48), (slow, 1.74)):
        w = World(table, SimParams())
        i = w.rod_index("robot_defence")
        w.set_rod_pose(i, -0.17, 0.0)
        w.command_rod(i, translation=0.17)
        peak = 0.0
        for _ in range(200):
            w.step(DT)
            peak = max(peak, abs(w.rod_pose(i)[2]))
        assert peak <= expected + 1e-9
        assert peak > 0.5 * expected
