"""Own goals against the improved strategy, one line each: what the robot's last touch did.

For every own-play goal of matches SEED..SEED+N-1 (the same `Match` as the tournament), the
robot's last man contact before it: the TRUE ball just before the touch (the physics state
of the frame before; x from the rod's axis, speed, vx, vy, and where a ball going towards
our goal would cross our goal line, walls folded: "in" if inside the mouth), the touch
(speed after, vx after, the rod's angle and angular speed) and the rod's plans over the
0.3 s before it. `before` says whether the ball was already on its way into our goal
(towards it, on target, faster than 1 m/s) before our man touched it.

    PYTHONPATH=python python docs/notes/issue-30-own/own_cause.py pro 8900 50 --randomise
"""

from __future__ import annotations

import argparse
import sys
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from own_play_audit import Audit

FAST = 1.0  # m/s: a ball on target faster than this is a goal unless stopped
WINDOW_S = 1.0  # s before the goal: the contacts shown


def crossing(table, x: float, y: float, vx: float, vy: float) -> tuple[float, bool]:
    """The y where a ball from (x, y) at (vx, vy) crosses our goal line, walls folded, and
    whether that is inside the mouth (vx < 0 only)."""
    f, r = table.field, table.ball.radius
    goal_x = -f.half_length
    yy = y + vy * (goal_x - x) / vx
    wall = f.half_width - r
    period = 4 * wall
    folded = (yy + wall) % period
    folded = (folded if folded <= 2 * wall else period - folded) - wall
    return folded, abs(folded) < f.goal_width / 2 - r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("opponent")
    parser.add_argument("seed", type=int)
    parser.add_argument("matches", type=int)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--randomise", action="store_true")
    args = parser.parse_args()
    for seed in range(args.seed, args.seed + args.matches):
        audit = Audit(args.opponent, seed, args.duration, args.randomise)
        match, seen = audit.match, 0
        table = match.table
        frames: deque[tuple[float, float, float, float, float]] = deque(maxlen=600)
        for _ in range(round(args.duration / match.params.frame_period)):
            w = match.world
            b = w.ball
            if b.in_play:
                frames.append((w.time, b.x, b.y, b.vx, b.vy))
            match.step_frame()
            for goal in match.result.goals[seen:]:
                if goal.scorer != "human" or goal.kind != "own_play":
                    continue
                print(f"{seed} t={goal.time:.2f} last {goal.last_rod}")
                for c, _bx, _by, (_tr, rot, _vt, vr) in audit.contacts:
                    t = c.time_ns * 1e-9
                    if goal.time - t > WINDOW_S:
                        continue
                    rod = table.rods[c.rod]
                    if c.team != "robot":
                        print(f"    {t:6.3f} human {rod.role:10s} {c.speed_before:4.2f}->"
                              f"{c.speed_after:4.2f} vx {c.vx_after:+5.2f}")
                        continue
                    prior = [f for f in frames if f[0] <= t]
                    _, x, y, vx, vy = prior[-1] if prior else frames[0]
                    speed = (vx * vx + vy * vy) ** 0.5
                    cross, on_way = "-", False
                    if vx < -1e-6:
                        yy, inside = crossing(table, x, y, vx, vy)
                        cross = f"{yy:+.3f}{'in' if inside else 'out'}"
                        on_way = inside and speed > FAST
                    i = match.team_rods["robot"].index(c.rod)
                    modes: list[str] = []
                    for s in audit.steps:
                        if t - 0.3 <= s.time <= t and (not modes or modes[-1] != s.modes[i]):
                            modes.append(s.modes[i])
                    print(f"    {t:6.3f} ROBOT {rod.role:10s} before dx {x - rod.x:+.3f} "
                          f"{speed:4.2f} ({vx:+5.2f},{vy:+5.2f}) {cross:9s} "
                          f"{'ON-WAY' if on_way else 'not-in'} -> {c.speed_after:4.2f} "
                          f"vx {c.vx_after:+5.2f} | rot {rot:+.2f} w {vr:+5.1f} | "
                          f"{'>'.join(modes)}", flush=True)
            seen = len(match.result.goals)


if __name__ == "__main__":
    main()
