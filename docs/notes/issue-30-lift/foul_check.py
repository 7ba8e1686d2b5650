"""Pro default 10055 on the frozen branch: does the new test of _strikes_back decide anything
while the ball lies behind our goalkeeper (43.8-58.8 s, the possession foul)?"""
from foosball.sim.match import Match
from foosball.strategy import improved as imp

log = []
orig = imp.ImprovedStrategy._strikes_back
def wrapped(self, rod, setpoint, here):
    r = orig(self, rod, setpoint, here)
    b = self.last_ball
    if r and b is not None:
        ahead = b.x - rod.x
        soon = ahead + b.vx * imp.BACKSWING_LOOKAHEAD_S
        old = min(ahead, soon) < 0.0 and max(ahead, soon) > -self.reach_ahead
        log.append((m.world.time, round(rod.x, 3), r, "new" if not old else "old"))
    return r
imp.ImprovedStrategy._strikes_back = wrapped
m = Match("improved", "pro", seed=10055, duration=60.0, randomise=False)
r = m.run()
print(r.fouls["robot"])
late = [e for e in log if e[0] > 43.5]
print("after 43.5 s:", late)
print("holds after 43.5 s:", len(late), "by the new test:", sum(e[3] == "new" for e in late))
print("by the new test, whole match:", [e for e in log if e[3] == "new"][:40])
