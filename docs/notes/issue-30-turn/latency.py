"""How late the ball estimate the strategy sees follows a struck ball, and how noisy it is on
a rolling one: synthetic balls through the simulator's tracker model (`TrackerModel`, what
every simulated match and the battery feed the strategy).

Run with the tree to measure on PYTHONPATH (main: the alpha-beta model; the branch: the ball
tracker's own code, `foosball.vision.track`):

    PYTHONPATH=python nice -n 19 python docs/notes/issue-30-turn/latency.py [--label NAME]
        [--filter KEY=VALUE ...]   # branch only: FilterConfig overrides (e.g. manoeuvre_frames=0)

Struck balls: a ball at rest or rolling, struck at a random moment inside a frame period
(200 fps, 0.7 mm noise per detection, every frame detected, fraction 1). Per trial: the
frames (and ms of capture time) from the strike to the first estimate whose velocity lies
within 30 degrees of the new velocity ("turn"), and to the first estimate from which the
velocity stays within 10 % + 0.1 m/s of the new one ("settled", over the next 60 ms).
The strategy gets each estimate exposure/2 + tracker latency (8.5 ms) after its capture
time: add that for "strike to strategy". Rolling balls: the velocity error on a steadily
rolling ball (drag 0.1/s and 0.05 m/s^2 rolling deceleration), frames 40.. of the roll.
"""

from __future__ import annotations

import argparse
import math
from types import SimpleNamespace

import numpy as np

from foosball.geometry import default_table
from foosball.sim import perception
from foosball.sim.params import SimParams

TABLE = default_table()
PERIOD = 0.005
PERIOD_NS = 5_000_000
TRIALS = 300


def model(params: SimParams, rng: np.random.Generator, overrides: dict[str, str]):
    if overrides:
        from dataclasses import fields, replace

        from foosball.vision.config import FilterConfig
        kinds = {f.name: f.type for f in fields(FilterConfig)}
        cast = {"float": float, "int": int, "bool": lambda v: v in ("1", "true", "True")}
        cfg = replace(FilterConfig(), **{k: cast[kinds[k]](v) for k, v in overrides.items()})
        return perception.TrackerModel(TABLE, params, rng, cfg)
    return perception.TrackerModel(TABLE, params, rng)


def world(t_ns: int, x: float, y: float) -> SimpleNamespace:
    return SimpleNamespace(time_ns=t_ns, ball_x=x, ball_y=y, ball_in_play=True)


def truth_at(t: float, start: tuple[float, float], v0: tuple[float, float], t_strike: float,
             v1: tuple[float, float]) -> tuple[float, float]:
    if t <= t_strike:
        return start[0] + v0[0] * t, start[1] + v0[1] * t
    sx, sy = start[0] + v0[0] * t_strike, start[1] + v0[1] * t_strike
    return sx + v1[0] * (t - t_strike), sy + v1[1] * (t - t_strike)


def struck(v0: tuple[float, float], v1: tuple[float, float], overrides: dict[str, str],
           seed: int) -> tuple[list[float], list[float], list[float]]:
    """Per trial: time from the strike to 'half', 'turn' and 'settled' (capture times)."""
    rng = np.random.default_rng(seed)
    params = SimParams()
    halves, turns, settles = [], [], []
    s1 = math.hypot(*v1)
    dvx, dvy = v1[0] - v0[0], v1[1] - v0[1]
    dv2 = dvx * dvx + dvy * dvy
    for _ in range(TRIALS):
        tracker = model(params, np.random.default_rng(rng.integers(1 << 30)), overrides)
        strike_frame = 40
        t_strike = (strike_frame + rng.uniform(0.0, 1.0)) * PERIOD
        # the strike at (0.3, 0): within the next 60 ms nothing reaches a side wall, nor an
        # end wall beside the goal mouth
        start = (0.3 - v0[0] * t_strike, 0.0 - v0[1] * t_strike)
        after = []
        for i in range(strike_frame + 13):
            t = i * PERIOD
            x, y = truth_at(t, start, v0, t_strike, v1)
            ball = tracker.observe(world(i * PERIOD_NS, x, y), 1.0)
            if t > t_strike:
                after.append((t - t_strike, ball.vx, ball.vy))
        half = turn = settle = math.nan
        for k, (dt, vx, vy) in enumerate(after):
            if math.isnan(half) and ((vx - v0[0]) * dvx + (vy - v0[1]) * dvy) / dv2 >= 0.5:
                half = dt
            speed = math.hypot(vx, vy)
            cos = (vx * v1[0] + vy * v1[1]) / (speed * s1) if speed > 0 else -1.0
            if math.isnan(turn) and cos > math.cos(math.radians(30)):
                turn = dt
            ok = [math.hypot(a[1] - v1[0], a[2] - v1[1]) < 0.1 * s1 + 0.1 for a in after[k:]]
            if math.isnan(settle) and all(ok):
                settle = dt
        halves.append(half)
        turns.append(turn)
        settles.append(settle)
    return halves, turns, settles


def rolling(speed: float, overrides: dict[str, str],
            seed: int) -> tuple[float, float, float, float]:
    """(rms, p99, max) of the velocity error magnitude on a steadily rolling ball, and the
    velocity restarts (manoeuvres) per second of it (branch only; nan on main)."""
    rng = np.random.default_rng(seed)
    params = SimParams()
    errors = []
    manoeuvres, seconds = 0, 0.0
    for _ in range(40):
        tracker = model(params, np.random.default_rng(rng.integers(1 << 30)), overrides)
        # along the table (within 15 degrees), at frame 40 near our end, in the goal mouth's
        # band before that (the filter turns no ball back that comes out of a goal mouth)
        heading = rng.uniform(-0.26, 0.26) + (math.pi if rng.uniform() < 0.5 else 0.0)
        back = -0.45 - speed * 0.2
        x, y = back * math.cos(heading), back * math.sin(heading)
        v = speed
        for i in range(160):
            ball = tracker.observe(world(i * PERIOD_NS, x, y), 1.0)
            vx, vy = v * math.cos(heading), v * math.sin(heading)
            if i >= 40 and abs(x) < 0.5 and abs(y) < 0.25:
                errors.append(math.hypot(ball.vx - vx, ball.vy - vy))
            x += vx * PERIOD
            y += vy * PERIOD
            v = max(0.0, v - (0.1 * v + (0.05 if v > 0 else 0.0)) * PERIOD)
        track = getattr(tracker, "track", None)
        manoeuvres += track.manoeuvres if track is not None else 0
        seconds += 160 * PERIOD
    e = np.array(errors)
    rate = manoeuvres / seconds if hasattr(tracker, "track") else math.nan
    return float(np.sqrt(np.mean(e * e))), float(np.percentile(e, 99)), float(e.max()), rate


CASES = [
    ("rest -> 5 m/s", (0.0, 0.0), (-5.0, 0.0)),
    ("rest -> 10 m/s", (0.0, 0.0), (-10.0, 0.0)),
    ("rest -> 15 m/s", (0.0, 0.0), (-15.0, 0.0)),
    ("+1 m/s -> -4.2 m/s (8642)", (1.0, 0.2), (-4.2, 0.5)),
    ("+2 m/s -> -2 m/s", (2.0, 0.0), (-2.0, 0.0)),
    ("+3 m/s, side kick 1 m/s", (3.0, 0.0), (3.0, 1.0)),
    ("0.5 m/s -> -1 m/s", (0.5, 0.0), (-1.0, 0.0)),
    ("+2 m/s -> +3 m/s (push)", (2.0, 0.0), (3.0, 0.0)),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="")
    parser.add_argument("--filter", action="append", default=[])
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.filter)
    print(f"# {args.label} {overrides or ''}".rstrip())
    print("frames from the strike (capture time; x 5 ms), median / p90 over "
          f"{TRIALS} strikes; (n never): not within 60 ms")
    print(f"{'struck ball':28s} {'half the change':>22s} {'within 30 deg':>22s} "
          f"{'settled':>22s}")
    for i, (name, v0, v1) in enumerate(CASES):
        columns = []
        for times in struck(v0, v1, overrides, seed=1000 + i):
            f = np.array(times) / PERIOD
            never = int(np.isnan(f).sum())
            f = np.nan_to_num(f, nan=13.0)
            note = f" ({never} never)" if never else ""
            columns.append(f"{np.median(f):5.2f} / {np.percentile(f, 90):5.2f}{note:>10s}")
        print(f"{name:28s} " + " ".join(f"{c:>22s}" for c in columns))
    print()
    print(f"{'rolling ball':28s} {'velocity error rms':>19s} {'p99':>8s} {'max':>8s}  (m/s)"
          "   manoeuvres/s")
    for j, speed in enumerate((0.0, 0.3, 1.0, 3.0, 6.0)):
        rms, p99, top, rate = rolling(speed, overrides, seed=2000 + j)
        print(f"{f'{speed} m/s':28s} {rms:19.3f} {p99:8.3f} {top:8.3f} {rate:14.2f}")


if __name__ == "__main__":
    main()
