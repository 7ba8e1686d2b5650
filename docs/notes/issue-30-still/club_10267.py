"""Held-out club seed 10267 (default table), the one robot possession foul of the last
held-out run: the ball still against our end wall beside the mouth, 61 mm behind the
goalkeeper's axis. Prints the ball, the goalkeeper's plan and angle every 0.5 s from 22 s,
and the referee's fouls and dead balls at the end. Run it with main's tree before this
round and with this one on PYTHONPATH to see both.

    PYTHONPATH=python .venv/bin/python docs/notes/issue-30-still/club_10267.py
"""

from __future__ import annotations

from foosball.sim.match import Match

match = Match("improved", "club", seed=10267, duration=60.0)
strategy = match.controllers["robot"]
keeper = match.team_rods["robot"][0]
for frame in range(round(60.0 / match.params.frame_period)):
    match.step_frame()
    state = match.world.state()
    t = state.time_ns * 1e-9
    if 22.0 <= t <= 37.0 and frame % 100 == 0:
        plan = strategy.plans_last[0].mode if strategy.plans_last else "-"
        _, rotation, _, _ = match.world.rod_pose(keeper)
        print(f"{t:5.1f} s ball ({state.ball_x:+.3f}, {state.ball_y:+.3f}) "
              f"goalkeeper {plan:7s} {rotation:+.1f} rad")
print("fouls:", match.referee.summary()["robot"])
print("dead balls:", match.result.dead_balls)
