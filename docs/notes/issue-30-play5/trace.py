"""Scratch: per strategy step, rod R's translation/plan/setpoint, the ball (true and strategy's)."""
import sys
from foosball.sim.match import Match
opp, seed, t0, t1, rod = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rand = len(sys.argv) > 6
m = Match("improved", opp, seed=seed, duration=t1 + 0.05, randomise=rand)
s = m.controllers["robot"]
decide = s.decide
def d(now, ball, here):
    out = decide(now, ball, here)
    if t0 <= now <= t1:
        st = m.world.state if hasattr(m.world, "state") else None
        b = s.last_ball
        p = s.plans_last[rod] if s.plans_last else None
        true = ""
        try:
            w = m.world.state()
            true = f"true=({w.ball_x:+.3f},{w.ball_y:+.3f})"
        except Exception:
            pass
        print(f"{now:.3f} {true} est=({b.x:+.3f},{b.y:+.3f},{b.vx:+.2f},{b.vy:+.2f}) tr={here[rod].translation:+.4f} rot={here[rod].rotation:+.2f} "
              f"plan={p.mode} y={p.y:+.3f} T={p.translation} sp={out[rod].translation:+.4f},{out[rod].rotation:+.2f}")
    return out
s.decide = d
m.run() if hasattr(m, "run") else m.play()
