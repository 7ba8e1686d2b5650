"""Every goal against in battery episodes, and for each clean goal which cover failure it is.

Run from the worktree: PYTHONPATH=python python docs/notes/issue-30-cover/classify.py SEED [EPISODES]
[KINDS] [SPEEDS]. Plays the battery's episodes (the same matches as `strategy shots`, episode k
of each cell seed S + k) and prints goals per cell by kind, then for each clean goal:

- the shot: the ball's last turn towards our goal (vx below -1 m/s for the rest of the run),
  where it started, its speed, and the time it had to our goalkeeper's line;
- at the start of the shot and where the ball crossed each line: the nearest man's distance
  from the ball's line (dy; a man within 28.6 mm = half a foot and a ball radius, stops it);
- a label:
  keeper_limit: the ball crossed the keeper's line beyond the man's reach at the end of travel;
  keeper_away: the keeper covered the ball's line at the shot's start, and left it;
  keeper_late: not covering at the start; the move needed (dy - 28.6 mm) was within what the
    drive covers in the time the ball took (4 m/s after 25 ms of latency and acceleration);
  keeper_too_far: not covering at the start, and the move too long for the time: the cover
    before the shot left the gap.
  And beside it whether the defence covered the ball's line at the start (de_cov) and
  whether the keeper and defence's nearest man stood on the same side of the ball's line.
"""
import json
import math
import sys

from foosball.geometry import default_table
from foosball.lab.shots import battery_match
from foosball.lab.tournament import make_side

seed0 = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
kinds = sys.argv[3].split(",") if len(sys.argv) > 3 else ["rest", "rolling", "pull", "push", "pin"]
speeds = [float(v) for v in sys.argv[4].split(",")] if len(sys.argv) > 4 else [5.0, 10.0, 15.0]
BLOCK = 0.0113 + 0.0173
table = default_table()
GK, DE = table.rod("robot_goalkeeper"), table.rod("robot_defence")


WALL = table.field.width / 2 - table.ball.radius


def fold(y):
    """y folded at the side walls (a bank shot's line)."""
    period = 4 * WALL
    y = (y + WALL) % period
    return (y if y <= 2 * WALL else period - y) - WALL


def nearest(rod, tr, y):
    return min(rod.men_y(tr), key=lambda m: abs(m - y))


rows = []
for kind in kinds:
    for speed in speeds:
        tally = {"clean": 0, "deflected": 0, "own_play": 0, "untouched": 0}
        for seed in range(seed0, seed0 + n):
            match, ball_y = battery_match(make_side("improved", table, seed), table, speed, seed,
                                          kind)
            w = match.world
            gi, di = w.rod_index("robot_goalkeeper"), w.rod_index("robot_defence")
            hist = []
            seen = 0
            for _ in range(round(3.0 / match.params.frame_period)):
                b = w.ball
                if b.in_play:
                    hist.append((w.time, b.x, b.y, b.vx, b.vy, w.rod_pose(gi), w.rod_pose(di)))
                match.step_frame()
                for goal in match.result.goals[seen:]:
                    seen += 1
                    if goal.scorer != "human":
                        continue
                    tally[goal.kind] = tally.get(goal.kind, 0) + 1
                    if goal.kind != "clean":
                        continue
                    past = [h for h in hist if h[0] <= goal.time]
                    k = len(past) - 1
                    while k > 0 and past[k - 1][3] < -1.0:
                        k -= 1
                    t0, x0, y0, vx0, vy0, gk0, de0 = past[k]

                    def at_line(x_line):
                        for h in past[k:]:
                            if h[1] <= x_line:
                                return h
                        return past[-1]

                    hg, hd = at_line(GK.x), at_line(DE.x)
                    slope = vy0 / vx0
                    yg_line = fold(y0 + slope * (GK.x - x0))
                    yd_line = fold(y0 + slope * (DE.x - x0))
                    gk_start = abs(nearest(GK, gk0[0], yg_line) - yg_line)
                    de_man = nearest(DE, de0[0], yd_line)
                    de_start = abs(de_man - yd_line)
                    gk_cross = abs(nearest(GK, hg[5][0], hg[2]) - hg[2])
                    de_cross = abs(nearest(DE, hd[6][0], hd[2]) - hd[2])
                    t_avail = hg[0] - t0
                    need = gk_start - BLOCK
                    can = max(0.0, t_avail - 0.025) * 4.0
                    at_limit = abs(hg[5][0]) > GK.travel_max - 0.002 and gk_cross > BLOCK
                    if at_limit and abs(hg[2]) > GK.travel_max + BLOCK - 0.002:
                        label = "keeper_limit"
                    elif gk_start <= BLOCK:
                        label = "keeper_away"
                    elif need <= can:
                        label = "keeper_late"
                    else:
                        label = "keeper_too_far"
                    gk_side = math.copysign(1, gk0[0] - yg_line)
                    de_side = math.copysign(1, de_man - yd_line)
                    row = {
                        "kind": kind, "speed": speed, "seed": seed, "t_goal": round(goal.time, 3),
                        "label": label, "x0": round(x0, 3), "y0": round(y0, 3),
                        "v": round(math.hypot(vx0, vy0), 2), "t_avail": round(t_avail, 3),
                        "yg_line": round(yg_line, 3), "gk0": round(gk0[0], 3),
                        "gk_start_dy": round(gk_start, 3), "gk_cross_dy": round(gk_cross, 3),
                        "gk_cross_t": round(hg[5][0], 3),
                        "de_start_dy": round(de_start, 3), "de_cross_dy": round(de_cross, 3),
                        "de_cov": de_start <= BLOCK, "same_side": gk_side == de_side,
                        "de_feet": round(math.degrees(hd[6][1])),
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
        print(f"CELL {kind} {speed:g}: {json.dumps(tally)} total {sum(tally.values())}",
              flush=True)
