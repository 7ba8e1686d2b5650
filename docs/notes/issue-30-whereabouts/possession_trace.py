"""One match of `improved`, every 0.25 s: the strategy's ball (x, y, vx), its plan per rod,
and the robot's possession fouls so far. How R3's foul on pro seed 10597 (randomised) was
read: the ball 61 mm behind our defence for 7.5 s, then behind our goalkeeper for 7 s.

    PYTHONPATH=<tree>/python .venv/bin/python \\
        docs/notes/issue-30-whereabouts/possession_trace.py pro 10597 --randomise
"""

from __future__ import annotations

import argparse

from foosball.sim.match import Match

EVERY = 50  # frames (0.25 s at 200 fps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("opponent")
    parser.add_argument("seed", type=int)
    parser.add_argument("--randomise", action="store_true")
    args = parser.parse_args()
    match = Match("improved", args.opponent, seed=args.seed, duration=60.0,
                  randomise=args.randomise)
    strategy = match.controllers["robot"]
    for k in range(round(60.0 / match.params.frame_period)):
        match.step_frame()
        if k % EVERY:
            continue
        b = strategy.last_ball
        ball = "-" if b is None else f"({b.x:+.3f}, {b.y:+.3f}, {b.vx:+.2f})"
        plans = " ".join(p.mode for p in strategy.plans_last) if strategy.plans_last else "-"
        fouls = match.referee.fouls["robot"].possession
        print(f"{(k + 1) * match.params.frame_period:6.2f} s  {ball:26s} {plans:30s} fouls {fouls}")


if __name__ == "__main__":
    main()
