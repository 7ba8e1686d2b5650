"""lost_probe.py: pro seed 9660 on a randomised table, 27.3-28.7 s, every frame: the ball
(true position and velocity), its visible fraction (detected from 0.5), what the strategy
holds (estimate, last detection, lost/gone times), our rods' rotations and plans."""
import math
from foosball.sim.match import Match
from foosball.sim.perception import visible_fraction
m = Match("improved", "pro", seed=9660, duration=29.0, randomise=True)
s = m.controllers["robot"]
decide = s.decide
def d(now, ball, here):
    out = decide(now, ball, here)
    if 27.3 <= now <= 28.7:
        w = m.world.state()
        b = s.last_ball
        vis = visible_fraction(m.table, w, m.world.man.reach, m.params.camera_height)
        print(f"{now:7.3f} true=({w.ball_x:+.3f},{w.ball_y:+.3f},{w.ball_vx:+.2f},{w.ball_vy:+.2f}) vis={vis:.2f} seen={ball is not None}"
              f" est={'none' if b is None else f'({b.x:+.3f},{b.y:+.3f},{b.vx:+.2f},{b.vy:+.2f})'} det={s.detected and tuple(round(v,3) for v in s.detected)}"
              f" lost_at={s.lost_at} gone_at={s.gone_at} rot=" + " ".join(f"{h.rotation:+.2f}" for h in here)
              + " plans=" + (",".join(p.mode for p in s.plans_last) if s.plans_last else "-"))
    return out
s.decide = d
m.run()
