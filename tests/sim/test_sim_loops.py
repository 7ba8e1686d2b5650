"""The drive law in C (foosball.sim._loops.c) gives what the Python law (drives.AxisBank
._advance) gives, to the last bit: on random states of every kind of axis the world has and
on every axis state of a match. Skips where the extension is not built (the Python law then
runs alone)."""

from __future__ import annotations

import math
import random

import pytest

from foosball.geometry import default_table
from foosball.sim import drives, physics
from foosball.sim.drives import AxisBank
from foosball.sim.params import AxisLimits, SimParams
from foosball.sim.physics import World, human_rod_limits

loops = pytest.importorskip("foosball.sim._loops")
advance_c = loops.advance

# a robot rod's translation and rotation, a strong human's hands, and slow ones
LIMITS = [
    *SimParams().robot_limits(0.01),
    *human_rod_limits(),
    AxisLimits(max_speed=1.0, max_accel=10.0, max_jerk=500.0),
    AxisLimits(max_speed=40.0, max_accel=2000.0, max_jerk=1e5),
]
DTS = (0.005, 0.005 - 1e-12, 0.0025, 0.001, 0.0049, 3.3e-4, 0.02)


def _bits(values: list[float]) -> list[str]:
    return [float(v).hex() for v in values]


def _both(bank: AxisBank, i: int, dt: float) -> None:
    """Advance axis i by one step both ways from the same state: the same state after."""
    tick = bank._tick(i, dt)
    before = (bank.position[i], bank.velocity[i], bank.accel[i])
    done_py = bank._advance(i, tick)
    after_py = [bank.position[i], bank.velocity[i], bank.accel[i]]
    bank.position[i], bank.velocity[i], bank.accel[i] = before
    done_c = advance_c(bank.position, bank.velocity, bank.accel, i, bank.target[i],
                       bank.speed_cap[i], tick)
    after_c = [bank.position[i], bank.velocity[i], bank.accel[i]]
    assert (done_c, _bits(after_c)) == (done_py, _bits(after_py)), (i, dt, before)


def test_the_same_on_random_states() -> None:
    rng = random.Random(30)
    bank = AxisBank(LIMITS)
    for i, limits in enumerate(LIMITS):
        bank.set_travel(i, -0.2 * limits.max_speed, 0.2 * limits.max_speed)
    for _ in range(20000):
        i = rng.randrange(len(LIMITS))
        lim = LIMITS[i]
        span = 0.25 * lim.max_speed
        bank.position[i] = rng.uniform(-span, span)
        kind = rng.random()
        if kind < 0.2:  # at rest
            bank.velocity[i] = bank.accel[i] = 0.0
        else:
            bank.velocity[i] = rng.uniform(-1.2, 1.2) * lim.max_speed
            bank.accel[i] = 0.0 if kind < 0.3 else rng.uniform(-1.0, 1.0) * lim.max_accel
        near = rng.random() < 0.3  # close to the target: the landing and snapping rules
        offset = rng.uniform(-1e-4, 1e-4) * span if near else rng.uniform(-span, span)
        bank.target[i] = bank.position[i] + offset
        bank.speed_cap[i] = lim.max_speed * (1.0 if rng.random() < 0.5 else rng.random())
        _both(bank, i, rng.choice(DTS))


def test_the_same_along_moves() -> None:
    """Whole moves, step after step, from rest to rest (each step checked both ways)."""
    rng = random.Random(31)
    bank = AxisBank(LIMITS)
    for _ in range(200):
        i = rng.randrange(len(LIMITS))
        lim = LIMITS[i]
        bank.hold(i, 0.0)
        bank.command(i, rng.uniform(-0.3, 0.3) * lim.max_speed,
                     rng.choice((0.0, 0.5 * lim.max_speed)))
        for _ in range(400):
            _both(bank, i, 0.005)
            tick = bank._tick(i, 0.005)
            if advance_c(bank.position, bank.velocity, bank.accel, i, bank.target[i],
                         bank.speed_cap[i], tick):
                break


def _hit(hit: physics._Hit | None) -> tuple[object, ...] | None:
    if hit is None:
        return None
    return (hit.kind, hit.rod, hit.man, *_bits([hit.time, hit.normal_x, hit.normal_y,
                                                hit.surface_vx, hit.surface_vy,
                                                hit.face_speed, hit.depth]))


def test_the_rod_ray_cast_is_the_same_on_random_balls_and_rod_motions() -> None:
    rng = random.Random(32)
    world = World(default_table())
    hits = 0
    for trial in range(6000):
        i = rng.randrange(len(world.rods))
        n = 2 * len(world.rods)
        world._before_p = [rng.uniform(-0.1, 0.1) for _ in range(n)]
        world._before_v = [rng.uniform(-2, 2) for _ in range(n)]
        world.axes.position = [rng.uniform(-0.1, 0.1) for _ in range(n)]
        world.axes.velocity = [rng.uniform(-2, 2) for _ in range(n)]
        for k in (2 * i + 1,):  # rotations: at rest, swinging, spinning, feet up or down
            kind = rng.random()
            if kind < 0.3:
                world._before_p[k] = world.axes.position[k] = rng.uniform(-0.5, 0.5)
                world._before_v[k] = world.axes.velocity[k] = 0.0
            else:
                world._before_p[k] = rng.uniform(-3.0, 3.0)
                world.axes.position[k] = world._before_p[k] + rng.uniform(-1.5, 1.5)
                world._before_v[k] = rng.uniform(-200, 200)
                world.axes.velocity[k] = rng.uniform(-200, 200)
        world._posed = 0
        if trial % 7 == 0:
            world._intervals.clear()
        rod_x = world.rods[i].x
        world.ball.x = rod_x + rng.uniform(-0.06, 0.06)
        world.ball.y = rng.uniform(-0.3, 0.3)
        vx, vy = rng.uniform(-8, 8), rng.uniform(-4, 4)
        dt = rng.choice((0.005, 0.0025, 0.001))
        t_start = rng.uniform(0.0, 0.8) * dt
        horizon = rng.uniform(1e-9, 1.0) * (dt - t_start)
        python = world._rod_hit(i, t_start, horizon, dt, vx, vy)
        compiled = world._rod_hit_compiled(i, t_start, horizon, dt, vx, vy)
        assert _hit(compiled) == _hit(python), (trial, i)
        hits += python is not None
    assert hits > 300  # the cases that matter were met (433 of these 6000)


def test_the_python_twins_play_the_same_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """A short match's ball and rods move the same with the C loops and without."""
    from foosball.sim.match import Match

    assert physics._rod_hit_c is loops.rod_hit

    def rods(law: object) -> list[str]:
        monkeypatch.setattr(drives, "_advance_c", law)
        monkeypatch.setattr(physics, "_rod_hit_c", loops.rod_hit if law else None)
        seen: list[str] = []
        match = Match("club", "pro", seed=3, duration=1.0,
                      on_frame=lambda s: seen.extend(_bits([*s.translations, *s.rotations,
                                                            s.ball_x, s.ball_y])))
        match.run()
        return seen

    assert drives._advance_c is advance_c
    with_c = rods(advance_c)
    assert with_c == rods(None)
    assert not all(v == with_c[0] for v in with_c)  # something moved
    assert math.isfinite(float.fromhex(with_c[-1]))


def test_a_step_of_no_length_raises_as_the_python_law_does() -> None:
    bank = AxisBank(LIMITS)
    bank.command(0, 0.05)
    tick = bank._tick(0, 0.0)
    with pytest.raises(ZeroDivisionError):
        bank._advance(0, tick)
    with pytest.raises(ZeroDivisionError):
        advance_c(bank.position, bank.velocity, bank.accel, 0, bank.target[0],
                  bank.speed_cap[0], tick)
    assert bank.position[0] == 0.0  # neither moved the axis
