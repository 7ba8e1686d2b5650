"""For each goal episode of a battery json: at each goal against, the defence's kick phase and
rotation, the goalkeeper's translation vs the ball's y at the goal line, time since the first
human shot, the last human rod."""
import json, sys
from foosball.geometry import default_table
from foosball.lab.shots import battery_match
from foosball.lab.tournament import make_side
rep = json.load(open(sys.argv[1]))
eps = [e for e in rep['episodes'] if e['goals_against']]
table = default_table()
counts = {}
for e in eps:
    match, _ = battery_match(make_side("improved", table, e['seed']), table, e['speed'], e['seed'], e['kind'])
    s = match.controllers["robot"]
    state = {"human": None, "first": None}
    step = match.world.step
    def ws(dt, step=step, match=match, s=s, state=state, e=e):
        cs = step(dt)
        for c in cs:
            if c.kind == "man" and c.team == "human":
                state["human"] = (c.time_ns * 1e-9, c.rod, c.speed_after)
                if state["first"] is None and c.speed_after > 2: state["first"] = c.time_ns * 1e-9
            if c.kind == "goal" and c.team == "human":
                t = c.time_ns * 1e-9
                d = match.world.rod_pose(1)
                g = match.world.rod_pose(0)
                phase = s.kicks[1].phase.value
                hr = state["human"]
                defk = abs(d[1]) > 1.0
                key = ("def-feet-up" if defk else "def-down")
                counts[key] = counts.get(key, 0) + 1
                print(f"{e['kind']}{int(e['speed'])}-{e['seed']} goal {t:.3f} first-shot {state['first']} def rot {d[1]:+.2f} kick {phase} gk {g[0]:+.3f} ball y {match.world.state().ball_y:+.3f} last human {hr[1] if hr else None} {hr[2] if hr else 0:.1f} m/s at {hr[0] if hr else 0:.3f}")
        return cs
    match.world.step = ws
    match.run()
print(counts)
