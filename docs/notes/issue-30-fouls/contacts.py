"""contacts.py SEED OPPONENT [default] [FROM TO]: every contact of the ball in FROM..TO s of
the match (default 4.3-20), with the rod's rotation over that physics step and the ball's
position before and after, then the fouls. Run with PYTHONPATH=<tree>/python."""
import sys

from foosball.sim.match import Match

seed, opp = int(sys.argv[1]), sys.argv[2]
randomise = not (len(sys.argv) > 3 and sys.argv[3] == "default")
lo, hi = (float(sys.argv[4]), float(sys.argv[5])) if len(sys.argv) > 5 else (4.3, 20.0)
m = Match("improved", opp, seed=seed, duration=60.0, randomise=randomise)
w = m.world
orig = w.step


def step(dt):
    r0, t0 = w.axes.position[1], w.axes.position[0]  # the goalkeeper's rotation, translation
    bx, by = w.ball.x, w.ball.y
    contacts = orig(dt)
    if lo < w.time < hi:
        for c in contacts:
            print(f"{w.time:.4f} {c.kind} rod={c.rod} speed {c.speed_before:.3f}->{c.speed_after:.3f}"
                  f" v=({c.vx_after:+.3f},{c.vy_after:+.3f}) gk rot {r0:+.3f}->{w.axes.position[1]:+.3f}"
                  f" tr {t0:+.4f} ball ({bx:+.4f},{by:+.4f})->({w.ball.x:+.4f},{w.ball.y:+.4f})")
    return contacts


w.step = step
r = m.run()
print(r.fouls, "dead balls", r.dead_balls)
