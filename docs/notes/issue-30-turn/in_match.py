"""The ball estimate the strategy gets in simulated matches against the physics' truth.

    PYTHONPATH=python nice -n 19 python docs/notes/issue-30-turn/in_match.py LABEL SEED...
        [--filter KEY=VALUE ...]   # branch only: FilterConfig overrides for TrackerModel

Plays `improved` against `pro` (120 s per seed, default table) with the tree on PYTHONPATH
and records, per camera frame, the truth (WorldState) and the tracker model's BallState.
Reports, over DETECTED frames:
- "steady": velocity error (median, p90, p99, share above 0.3 m/s) where the true velocity changed less than 0.05 m/s
  over the last 50 ms and the estimate is 50 ms into its track (the noise on a rolling ball);
- "all": velocity error (median, p90) over every DETECTED frame;
- kicks: frames where the true velocity jumped by more than 1 m/s within one frame period
  (a man's strike, a post, a wall) and then held for 30 ms; per kick the frames until the
  reported velocity covers half the change and until it is within 10 % + 0.1 m/s of the
  new velocity (median / p90; 'never' within 30 ms counts 6).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from foosball.sim import perception
from foosball.sim.match import Match


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("seeds", type=int, nargs="+")
    parser.add_argument("--filter", action="append", default=[])
    parser.add_argument("--duration", type=float, default=120.0)
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.filter)
    if overrides:
        from dataclasses import fields, replace

        from foosball.vision.config import FilterConfig
        kinds = {f.name: f.type for f in fields(FilterConfig)}
        cast = {"float": float, "int": int, "bool": lambda v: v in ("1", "true", "True")}
        cfg = replace(FilterConfig(), **{k: cast[kinds[k]](v) for k, v in overrides.items()})
        original = perception.TrackerModel

        def patched(table, params, rng):  # type: ignore[no-untyped-def]
            return original(table, params, rng, cfg)

        import foosball.sim.match as match_module
        match_module.TrackerModel = patched  # type: ignore[assignment,misc]
    steady, every, halves, settles = [], [], [], []
    for seed in args.seeds:
        match = Match("improved", "pro", seed=seed, duration=args.duration)
        rows: list[tuple[float, ...]] = []
        observe = match.tracker.observe

        def recording(state, fraction, observe=observe, rows=rows):  # type: ignore[no-untyped-def]
            ball = observe(state, fraction)
            rows.append((state.time_ns * 1e-9, state.ball_vx, state.ball_vy,
                         float(state.ball_in_play), int(ball.status), ball.vx, ball.vy))
            return ball

        match.tracker.observe = recording  # type: ignore[method-assign]
        match.run()
        a = np.array(rows)
        tvx, tvy, play, status, vx, vy = a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5], a[:, 6]
        err = np.hypot(vx - tvx, vy - tvy)
        detected = (status == 0) & (play > 0)
        run = np.zeros(len(a), dtype=int)  # frames since the track was last not DETECTED
        for i in range(1, len(a)):
            run[i] = run[i - 1] + 1 if detected[i] else 0
        change = np.zeros(len(a))
        change[10:] = np.hypot(tvx[10:] - tvx[:-10], tvy[10:] - tvy[:-10])
        ok = detected & (run >= 10) & (change < 0.05)
        steady += err[ok].tolist()
        every += err[detected].tolist()
        jump = np.zeros(len(a))
        jump[1:] = np.hypot(tvx[1:] - tvx[:-1], tvy[1:] - tvy[:-1])
        for i in np.nonzero(jump > 1.0)[0]:
            if i + 7 >= len(a) or not detected[i - 3:i + 7].all():
                continue
            after_v = np.hypot(tvx[i + 1:i + 7] - tvx[i], tvy[i + 1:i + 7] - tvy[i])
            if after_v.max() > 0.3 or jump[i + 1:i + 7].max() > 0.3:
                continue  # not one clean kick
            d = np.array([tvx[i] - tvx[i - 1], tvy[i] - tvy[i - 1]])
            d2 = float(d @ d)
            half = settle = 6
            for k in range(0, 6):
                j = i + k
                got = ((vx[j] - tvx[i - 1]) * d[0] + (vy[j] - tvy[i - 1]) * d[1]) / d2
                if half == 6 and got >= 0.5:
                    half = k
                new = math.hypot(tvx[i], tvy[i])
                if settle == 6 and all(err[i + m] < 0.1 * new + 0.1 for m in range(k, 6)):
                    settle = k
            halves.append(half)
            settles.append(settle)
    s, e = np.array(steady), np.array(every)
    h, t = np.array(halves), np.array(settles)
    print(f"{args.label:34s} steady median {np.median(s):.3f} p90 {np.percentile(s, 90):.3f} "
          f"p99 {np.percentile(s, 99):.3f} >0.3 m/s {np.mean(s > 0.3):.4f} (n {len(s)}) | "
          f"all: median {np.median(e):.3f} p90 {np.percentile(e, 90):.3f} | "
          f"kicks {len(h)}: half {np.median(h):.0f}/{np.percentile(h, 90):.0f} frames, "
          f"settled {np.median(t):.0f}/{np.percentile(t, 90):.0f} (mean {t.mean():.2f})")


if __name__ == "__main__":
    main()
