"""hold_trace.py SEED OPPONENT [default]: every 0.25 s while the robot has held the ball
more than 5 s (the referee's count): the ball (true, seen, the strategy's estimate) and per
rod translation/rotation, plan and kick phase; then the fouls. Randomised table unless
`default`. Run with PYTHONPATH=<tree>/python."""
import sys
from foosball.sim.match import Match
seed, opp = int(sys.argv[1]), sys.argv[2]
rand = not (len(sys.argv) > 3 and sys.argv[3] == "default")
m = Match("improved", opp, seed=seed, duration=60.0, randomise=rand)
s = m.controllers["robot"]
decide = s.decide
nxt = [0.0]
def d(now, ball, here):
    out = decide(now, ball, here)
    h = m.referee._holding
    if h is not None and h.team == "robot" and now - h.since > 5.0 and now >= nxt[0]:
        nxt[0] = now + 0.25
        w = m.world.state(); b = s.last_ball; p = s.plans_last
        print(f"{now:7.2f} held={now-h.since:5.2f} {h.zone} true=({w.ball_x:+.3f},{w.ball_y:+.3f},{w.ball_vx:+.2f},{w.ball_vy:+.2f}) seen={ball is not None} "
              f"est={'none' if b is None else f'({b.x:+.3f},{b.y:+.3f},{b.vx:+.2f},{b.vy:+.2f})'} "
              + " | ".join(f"{here[i].translation:+.3f}/{here[i].rotation:+.2f} {p[i].mode if p else '-'} {s.kicks[i].phase.value}" for i in range(4)))
    return out
s.decide = d
r = m.run()
print(r.fouls)
