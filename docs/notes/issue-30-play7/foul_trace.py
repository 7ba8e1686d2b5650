import sys
from foosball.sim.match import Match
# foul_trace.py SEED [OPPONENT [default]]: seed-rules on a randomised table unless told
seed = int(sys.argv[1])
opponent = sys.argv[2] if len(sys.argv) > 2 else "seed-rules"
randomise = not (len(sys.argv) > 3 and sys.argv[3] == "default")
m = Match("improved", opponent, seed=seed, duration=60.0, randomise=randomise)
s = m.controllers["robot"]
decide = s.decide
state = {"next": 0.0}
def d(now, ball, here):
    out = decide(now, ball, here)
    w = m.world.state()
    if now >= state["next"] and w.ball_x < -0.3:
        state["next"] = now + 0.25
        p = s.plans_last
        b = s.last_ball
        print(f"{now:7.2f} true=({w.ball_x:+.3f},{w.ball_y:+.3f}) est={'none' if b is None else f'({b.x:+.3f},{b.y:+.3f},{b.vx:+.2f})'} seen={ball is not None} "
              f"gk {here[0].translation:+.3f}/{here[0].rotation:+.2f} {p[0].mode if p else '-'} {s.kicks[0].phase.value} | "
              f"def {here[1].translation:+.3f}/{here[1].rotation:+.2f} {p[1].mode if p else '-'} {s.kicks[1].phase.value} -> {out[1].translation:+.3f}/{out[1].rotation:+.2f}")
    return out
s.decide = d
r = m.run()
print(r.fouls)
