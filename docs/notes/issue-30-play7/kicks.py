import sys
from foosball.geometry import default_table
from foosball.lab.shots import battery_match
from foosball.lab.tournament import make_side
kind, speed, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
table = default_table()
match, _ = battery_match(make_side("improved", table, seed), table, speed, seed, kind)
s = match.controllers["robot"]
s.log = []
frames = []
match.on_frame = lambda st: frames.append((st.time_ns * 1e-9, st.ball_x, st.ball_y))
contacts = []
step = match.world.step
def ws(dt):
    c = step(dt)
    contacts.extend(x for x in c if x.kind == "man" and x.rod == 1)
    return c
match.world.step = ws
r = match.run()
def at(t):
    return min(frames, key=lambda f: abs(f[0] - t))
for (t, i, b, mode) in s.log:
    if i != 1: continue
    hits = [round(c.time_ns * 1e-9, 3) for c in contacts if t <= c.time_ns * 1e-9 <= t + 0.45]
    f0, f1, f2 = at(t), at(t + 0.12), at(t + 0.25)
    print(f"{kind}{int(speed)}-{seed} defence kick {t:.3f} est=({b.x:+.3f},{b.y:+.3f} v{b.vx:+.2f},{b.vy:+.2f}) mode {mode} ball then {f0[1]:+.3f} +0.12s {f1[1]:+.3f} +0.25s {f2[1]:+.3f} contacts {hits}")
print([(round(g.time, 3), g.kind) for g in r.goals])
