"""Where a forward strike first meets a still ball lying `d` behind the rod's axis, and which
way it pushes it, from the simulator's own model of a man's leg (`World.man_interval`).

    PYTHONPATH=python .venv/bin/python docs/notes/issue-30-still/strike_behind.py
"""

from __future__ import annotations

import math

from foosball.sim.match import Match

world = Match("improved", "club", seed=1, duration=1.0).world
man, radius = world.man, world.radius
dz = radius - man.height  # the ball's centre below the axis
for d in (0.030, 0.040, 0.045, 0.050, 0.053, 0.055, 0.056, 0.058, 0.060, 0.065):
    angle = -3.0  # wound up behind, swinging forward
    while angle < 0.5:
        interval = world.man_interval(angle)
        if interval and interval[0] < -d < interval[1]:
            break
        angle += 0.001
    else:
        print(f"{d * 1000:4.0f} mm behind: never met")
        continue
    # the leg's nearest point to the ball's centre, and the push from there
    ux, uz = math.sin(angle), -math.cos(angle)
    along = max(0.0, min(man.reach, -d * ux + dz * uz))
    nx, nz = -d - along * ux, dz - along * uz
    way = "forward" if nx > 0 else "BACK towards our goal"
    print(f"{d * 1000:4.0f} mm behind: first met at {angle:+.3f} rad, push "
          f"x {nx * 1000:+.1f} z {nz * 1000:+.1f} (mm, unnormalised): {way}")
