"""Pro seed 8422 (a tuning seed): the ball as the simulator has it against what the robot's
tracker reports, 18.10-18.30 s, before the goalkeeper strikes a ball lying on our goal line
into our goal. From the repository root:
    PYTHONPATH=python .venv/bin/python docs/notes/issue-30-turn/goal_line_8422.py
"""
from foosball.sim.match import Match
m = Match("improved", "pro", seed=8422, duration=60.0)
obs = m.tracker.observe
def rec(state, fraction):
    b = obs(state, fraction)
    t = state.time_ns * 1e-9
    if 18.10 < t < 18.30:
        print(f"{t:.3f} true ({state.ball_x:.3f},{state.ball_y:.3f}) frac {fraction:.2f} -> {b.status.name} ({b.x:.3f},{b.y:.3f}) flt x {m.tracker.track.filter.x.p:.3f}")
    return b
m.tracker.observe = rec
while m.world.time < 18.3:
    m.step_frame()
