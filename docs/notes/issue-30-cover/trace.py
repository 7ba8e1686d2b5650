"""What the strategy saw and asked of goalkeeper and defence in the last 0.3 s before a goal.

PYTHONPATH=python python docs/notes/issue-30-cover/trace.py KIND SPEED SEED
Per strategy step: the ball as the strategy took it (after latency compensation), the true
ball, the goalkeeper's and defence's plans (mode, y / translation) and where they are."""
import sys

from foosball.geometry import default_table
from foosball.lab.shots import battery_match
from foosball.lab.tournament import make_side

kind, speed, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
WINDOW = float(sys.argv[4]) if len(sys.argv) > 4 else 0.3
table = default_table()
robot = make_side("improved", table, seed)
match, ball_y = battery_match(robot, table, speed, seed, kind)
w = match.world
log = []
decide = robot.decide


def traced(now, ball, here):
    out = decide(now, ball, here)
    b = robot.last_ball
    plans = robot.plans_last
    wb = w.ball
    gpose = w.rod_pose(w.rod_index("robot_goalkeeper"))
    o = robot.threat_origin(b) if b is not None else (0.0, 0.0)
    log.append((w.time, b, o, (wb.x, wb.y, wb.vx, wb.vy), plans and plans[0], plans and plans[1],
                here[0].translation, here[1].translation, out[0].translation,
                out[1].translation, ball is None, gpose))
    return out


robot.decide = traced
seen = 0
for _ in range(round(3.0 / match.params.frame_period)):
    match.step_frame()
    for goal in match.result.goals[seen:]:
        seen += 1
        print(f"goal t={goal.time:.3f} {goal.scorer} {goal.kind}")
        for t, b, o, wb, p0, p1, h0, h1, o0, o1, lost, gp in log:
            if goal.time - t > WINDOW:
                continue
            bs = (f"x{b.x:+.3f} y{b.y:+.3f} v({b.vx:+5.2f},{b.vy:+5.2f})" if b else "none")
            pl = lambda p: f"{p.mode[:5]:5s} y{p.y:+.3f} t{p.translation if p.translation is not None else float('nan'):+.3f}" if p else "-"  # noqa: E731
            print(f"{t:6.3f} seen {bs}{' LOST' if lost else ''} o({o[0]:+.3f},{o[1]:+.3f}) | true x{wb[0]:+.3f} "
                  f"y{wb[1]:+.3f} v({wb[2]:+5.2f},{wb[3]:+5.2f}) | gk {pl(p0)} at{h0:+.3f} "
                  f"cmd{o0:+.3f} true{gp[0]:+.3f} v{gp[2]:+.2f} | de {pl(p1)} at{h1:+.3f} cmd{o1:+.3f}")
