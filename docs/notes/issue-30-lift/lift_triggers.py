"""How often the new test of _strikes_back decides (1 SWEEP_NOW, 2 SWEEP_ON_THE_WAY) in
pro randomised matches FIRST..LAST-1, per (rod x, answer, ball vx rounded): steps of 5 ms.

    PYTHONPATH=python python docs/notes/issue-30-lift/lift_triggers.py 8500 8503
"""
import sys
from collections import Counter

from foosball.sim.match import Match
from foosball.strategy import improved as imp

hits = Counter()
orig = imp.ImprovedStrategy._strikes_back
def wrapped(self, rod, setpoint, here):
    r = orig(self, rod, setpoint, here)
    b = self.last_ball
    if r and b is not None:
        ahead = b.x - rod.x
        soon = ahead + b.vx * imp.BACKSWING_LOOKAHEAD_S
        old = min(ahead, soon) < 0.0 and max(ahead, soon) > -self.reach_ahead
        if not old and ahead < 0 and b.vx > 0:
            hits[(round(rod.x, 3), r, round(b.vx, 0))] += 1
    return r
imp.ImprovedStrategy._strikes_back = wrapped
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    m = Match("improved", "pro", seed=seed, duration=60.0, randomise=True)
    m.run()
    print(seed, len(m.result.goals), dict(hits))
    hits.clear()
