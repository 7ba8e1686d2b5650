"""Fit the prediction's free-ball model (drag rate c, rolling deceleration a) to the
simulator's ball: roll the ball down the field with every rod's feet lifted, sample its
speed every 5 ms and regress the deceleration on the speed (ds/dt = -c s - a)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def roll_samples(speeds: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0),
                 dt: float = 0.005) -> list[tuple[np.ndarray, np.ndarray]]:
    """(time, speed) series of free rolls at several launch speeds (no contacts)."""
    from foosball.geometry import default_table
    from foosball.sim.physics import World

    table = default_table()
    series = []
    for v0 in speeds:
        world = World(table)
        for i in range(len(table.rods)):
            world.set_rod_pose(i, 0.0, -math.pi / 2)  # feet up: the ball rolls under
        world.place_ball(-0.5, 0.05, v0, 0.0)
        times, values = [], []
        for _ in range(2000):
            contacts = world.step(dt)
            state = world.state()
            if contacts or not state.ball_in_play:
                break
            speed = math.hypot(state.ball_vx, state.ball_vy)
            if speed <= 0:
                break
            times.append(world.time)
            values.append(speed)
        series.append((np.array(times), np.array(values)))
    return series


def fit_simulator_ball() -> dict[str, Any]:
    from foosball.strategy.prediction import SpeedModel

    rows, rhs = [], []
    series = roll_samples()
    for t, s in series:
        if len(s) < 3:
            continue
        accel = np.diff(s) / np.diff(t)
        mid = (s[1:] + s[:-1]) / 2
        rows += [[-m, -1.0] for m in mid]
        rhs += list(accel)
    (c, a), *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    c, a = max(0.0, float(c)), max(0.0, float(a))
    model = SpeedModel(c, a)
    errors = [
        model.speed(s[0], ti - t[0]) - si
        for t, s in series
        for ti, si in zip(t, s, strict=True)
    ]
    return {
        "drag_rate": c,
        "rolling_deceleration": a,
        "rms_error": float(np.sqrt(np.mean(np.square(errors)))),
        "samples": len(errors),
    }
