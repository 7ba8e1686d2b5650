"""Battery episodes ending in a goal: the ball's path across our defence and goalkeeper lines,
and each rod's state then (translation, angle, feet down?, nearest man's distance in y)."""
import sys, math
from foosball.geometry import default_table
from foosball.lab.shots import battery_match
from foosball.lab.tournament import make_side

kind, speed, seed0, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
only = sys.argv[5] if len(sys.argv) > 5 else "clean"
table = default_table()
for seed in range(seed0, seed0 + n):
    match, ball_y = battery_match(make_side("improved", table, seed), table, speed, seed, kind)
    w = match.world
    gk, de = w.rod_index("robot_goalkeeper"), w.rod_index("robot_defence")
    rods = {"gk": (gk, table.rod("robot_goalkeeper")), "de": (de, table.rod("robot_defence"))}
    hist = []
    seen = 0
    for _ in range(round(3.0 / match.params.frame_period)):
        b = w.ball
        if b.in_play:
            poses = {k: w.rod_pose(i) for k, (i, _) in rods.items()}
            hist.append((w.time, b.x, b.y, b.vx, b.vy, poses))
        match.step_frame()
        for goal in match.result.goals[seen:]:
            seen += 1
            if goal.scorer != "human" or (only != "all" and goal.kind != only):
                continue
            print(f"seed {seed} y0 {ball_y:+.3f} goal t={goal.time:.3f} kind {goal.kind} last {goal.last_team}/{goal.last_rod}")
            # each frame within 0.25 s before the goal, at 10 ms spacing
            last = -1
            for t, x, y, vx, vy, poses in hist:
                if goal.time - t > 0.5 or t - last < 0.01:
                    continue
                last = t
                parts = []
                for k, (i, rod) in rods.items():
                    tr, rot, vt, vr = poses[k]
                    feet = w.man_interval(rot)
                    near = min(abs(y - my) for my in rod.men_y(tr))
                    parts.append(f"{k} y{tr:+.3f} a{math.degrees(rot):+6.0f} {'DOWN' if feet else 'up  '} dy{near*1000:4.0f} vt{vt:+.2f}")
                print(f"  {t:6.3f} ball x{x:+.3f} y{y:+.3f} v({vx:+5.2f},{vy:+5.2f}) | " + " | ".join(parts))
