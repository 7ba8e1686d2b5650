"""Scratch trace of one shot-battery episode: per frame the true ball, our goalkeeper's and
defence's translation and rotation, their plans, the strategy's ball; every man contact and
goal; the human's kicks (angle, target on our goal line, our men at the kick's start).

    PYTHONPATH=python python docs/notes/issue-30-play7/trace_episode.py KIND SPEED SEED [T0 T1]
"""
from __future__ import annotations

import math
import sys

from foosball.geometry import default_table
from foosball.lab.shots import battery_match
from foosball.lab.tournament import make_side

kind, speed, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
t0 = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
t1 = float(sys.argv[5]) if len(sys.argv) > 5 else 3.0
table = default_table()
robot = make_side("improved", table, seed)
match, ball_y = battery_match(robot, table, speed, seed, kind)
strategy = match.controllers["robot"]
human = match.controllers["human"]
print(f"episode {kind} {speed} seed {seed}: ball y {ball_y:+.3f}")
decide = strategy.decide
rows: list[str] = []
last_kick: list[object] = [None]


def traced(now, ball, here):
    out = decide(now, ball, here)
    if t0 <= now <= t1:
        w = match.world.state()
        b = strategy.last_ball
        plans = strategy.plans_last
        p0 = f"{plans[0].mode[:5]}" if plans else "-"
        p1 = f"{plans[1].mode[:5]}" if plans else "-"
        est = f"({b.x:+.3f},{b.y:+.3f} v{b.vx:+.2f},{b.vy:+.2f})" if b else "(none)"
        hp = match.world.rod_pose(match.world.rod_index("human_attack"))
        print(f"{now:.3f} ball=({w.ball_x:+.3f},{w.ball_y:+.3f}) est={est} "
              f"gk={here[0].translation:+.4f}/{here[0].rotation:+.2f} {p0}->{out[0].translation:+.4f} "
              f"def={here[1].translation:+.4f}/{here[1].rotation:+.2f} {p1}->{out[1].translation:+.4f} "
              f"hatk={hp[0]:+.4f}/{hp[1]:+.2f}")
    kick = human._kicks[match.world.rod_index("human_attack") - 0] if False else None
    return out


strategy.decide = traced
start_kick = human._start_kick


def kick_traced(i, rod, x, y, now, *args, **kw):
    k = start_kick(i, rod, x, y, now, *args, **kw)
    half_l = table.field.half_length
    target = y + math.tan(k.angle) * (half_l - x)  # human frame: his x towards our goal
    print(f"   KICK {now:.3f} rod {rod.name} ball(human frame)=({x:+.3f},{y:+.3f}) angle {k.angle:+.3f} "
          f"speed {k.speed:.1f} -> our goal y (robot frame) {-target:+.3f} (unfolded)")
    return k


human._start_kick = kick_traced
step = match.world.step


def world_step(dt):
    contacts = step(dt)
    for c in contacts:
        if c.kind in ("man", "goal", "post"):
            print(f"   CONTACT {c.time_ns*1e-9:.4f} {c.kind} rod {c.rod} man {c.man} {c.team} "
                  f"{c.speed_before:.2f}->{c.speed_after:.2f} v=({c.vx_after:+.2f},{c.vy_after:+.2f})")
    return contacts


match.world.step = world_step
result = match.run()
print("goals", [(round(g.time, 3), g.scorer, g.kind, g.rod_role if hasattr(g, "rod_role") else "") for g in result.goals])
print("shots", [(round(s.time, 3), s.team, s.rod, round(s.speed, 1), s.on_target, s.outcome) for s in result.shots])
