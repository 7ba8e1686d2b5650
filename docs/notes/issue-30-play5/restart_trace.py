import sys
sys.path.insert(0, "tests/strategy")
from test_ball_at_rest import _match
m, touches = _match("club", 0)
s = m.controllers["robot"]
decide = s.decide
log = []
def d(now, ball, here):
    out = decide(now, ball, here)
    b = s.last_ball
    p = s.plans_last
    log.append((now, b, here[1].translation, here[1].translation_velocity, p[1].mode if p else None, out[1].translation))
    return out
s.decide = d
r = m.referee.dead_ball(-0.5); m._restart(r)
start, before = m.world.time, m.world.score.human
while m.world.time < start + 1.5 and m.world.score.human == before:
    m.step_frame()
print("scored", m.world.score.human > before, m.world.time - start)
for c in touches:
    if c.time_ns * 1e-9 >= start:
        st = m.table.rods[c.rod]
        print(f"{c.time_ns*1e-9 - start:.3f} {c.team} {st.role} man{c.man} {c.speed_before:.2f}->{c.speed_after:.2f} vx={c.vx_after:+.2f}")
for now, b, tr, v, mode, sp in log:
    if b is not None and now - start > 0.42 and now - start < 0.6:
        print(f"{now-start:.3f} est=({b.x:+.3f},{b.y:+.3f},{b.vx:+.2f},{b.vy:+.2f}) def tr={tr:+.4f} v={v:+.2f} {mode} sp={sp:+.4f}")
