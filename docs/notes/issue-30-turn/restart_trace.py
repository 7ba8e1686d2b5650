"""Trace of the robot tracker after the goalkeeper restart of tests/strategy/test_ball_at_rest.py
(club, seed 3), the one test that fails on the branch: truth, visible fraction, BallState.
    PYTHONPATH=python python docs/notes/issue-30-turn/restart_trace.py
"""
import sys

sys.path.insert(0, "tests/strategy")
from test_ball_at_rest import _match

match, touches = _match("club", 3)
restart = match.referee.dead_ball(-0.5)
match._restart(restart)
start = match.world.time
obs = match.tracker.observe
def rec(state, fraction):
    b = obs(state, fraction)
    t = state.time_ns*1e-9 - start
    if t > 0.45:
        print(f"{t:.3f} true ({state.ball_x:.3f},{state.ball_y:.3f}) v ({state.ball_vx:.2f},{state.ball_vy:.2f}) frac {fraction:.2f} -> {b.status.name} ({b.x:.3f},{b.y:.3f}) v ({b.vx:.2f},{b.vy:.2f})")
    return b
match.tracker.observe = rec
while match.world.time < start + 1.25:
    match.step_frame()
