"""Per strategy step in [t0, t1]: camera seen or not, the strategy's ball and its last
detection, the true ball, and each rod's plan/translation/rotation (issue 30, play6).

    PYTHONPATH=python python docs/notes/issue-30-play6/lost_trace.py OPP SEED T0 T1 [--randomise] [--every N]
"""
from __future__ import annotations

import argparse

from foosball.sim.match import Match

parser = argparse.ArgumentParser()
parser.add_argument("opponent")
parser.add_argument("seed", type=int)
parser.add_argument("t0", type=float)
parser.add_argument("t1", type=float)
parser.add_argument("--randomise", action="store_true")
parser.add_argument("--every", type=int, default=1)
args = parser.parse_args()
m = Match("improved", args.opponent, seed=args.seed, duration=args.t1 + 0.05,
          randomise=args.randomise)
s = m.controllers["robot"]
decide = s.decide
count = 0


def traced(now, ball, here):
    global count
    out = decide(now, ball, here)
    if args.t0 <= now <= args.t1:
        count += 1
        if count % args.every == 0:
            w = m.world.state()
            b = s.last_ball
            est = f"({b.x:+.3f},{b.y:+.3f},{b.vx:+.2f},{b.vy:+.2f})" if b else "None"
            det = f"({s.detected[0]:+.3f},{s.detected[1]:+.3f})" if s.detected else "None"
            plans = s.plans_last
            rods = " ".join(
                f"{(plans[i].mode if plans else 'none')[:5]}:{here[i].translation:+.3f}/{here[i].rotation:+.2f}->{out[i].translation:+.3f}/{out[i].rotation:+.2f}"
                for i in range(len(here)))
            print(f"{now:.3f} {'S' if ball is not None else 'L'} true=({w.ball_x:+.3f},{w.ball_y:+.3f},{w.ball_vx:+.2f},{w.ball_vy:+.2f}) "
                  f"est={est} det={det} lost_at={s.lost_at} {rods}")
    return out


s.decide = traced
m.run() if hasattr(m, "run") else m.play()
