import sys
from collections import deque
from foosball.sim import rules
from foosball.sim.match import Match
seed = int(sys.argv[1]); opp = sys.argv[2]; rand = len(sys.argv) > 3
m = Match("improved", opp, seed=seed, duration=60.0, randomise=rand)
s = m.controllers["robot"]
hist = deque(maxlen=200)
decide = s.decide
def d(now, ball, here):
    out = decide(now, ball, here)
    p = s.plans_last
    hist.append((now, [(p[i].mode if p else 'none') for i in range(4)], [round(h.rotation, 2) for h in here], [round(o.rotation, 2) for o in out], [k.phase.name for k in s.kicks], s.last_ball and (round(s.last_ball.x,3), round(s.last_ball.y,3), round(s.last_ball.vx,2), round(s.last_ball.vy,2)), ball is not None))
    return out
s.decide = d
orig = rules.Referee._spun
def spun(self, i):
    run = self._runs[i]
    print("SPUN rod", self.table.rods[i].name, self.table.rods[i].team, run, "t~", hist[-1][0] if hist else None)
    for h in list(hist)[-120::4]:
        print(" ", h)
    return orig(self, i)
rules.Referee._spun = spun
m.run()
