"""Where the goalkeeper's backstop acts in the 30 seeded restarts of
tests/strategy/test_ball_at_rest.py (seed-rules, club, pro x seeds 0-9): per restart, a goal
against or not, how many steps the backstop planned, the first two and the last (ball x, y, vx,
vy, (man y, rotation)). From the repository root:
    PYTHONPATH=python .venv/bin/python docs/notes/issue-30-turn/backstop_trace.py
"""
import sys
sys.path.insert(0, "tests/strategy")
import foosball.strategy.improved as imp
from test_ball_at_rest import _match
calls = []
orig = imp.backstop
def wrapped(*a, **k):
    r = orig(*a, **k)
    if r is not None: calls.append((round(a[1],3), round(a[2],3), round(a[3],2), round(a[4],2), tuple(round(v,3) for v in r)))
    return r
imp.backstop = wrapped
for opp, seed in [(o, s) for o in ("seed-rules","club","pro") for s in range(10)]:
    calls.clear()
    match, touches = _match(opp, seed)
    r = match.referee.dead_ball(-0.5); match._restart(r)
    start, before = match.world.time, match.world.score.human
    while match.world.time < start + 1.5 and match.world.score.human == before:
        match.step_frame()
    print(opp, seed, "goal" if match.world.score.human > before else "-", len(calls), calls[:2], calls[-1:] )
