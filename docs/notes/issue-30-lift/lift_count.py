"""Count the own goals in `own_cause.py` outputs whose robot touches include a lift back into
a ball from behind: a robot rod's touch with the ball behind its axis (dx < 0) moving
towards it (vx > 0 before) while the rod turned its feet back (w < -SWEEP_SLOW, 4 rad/s).

    python docs/notes/issue-30-lift/lift_count.py FILE...
"""

from __future__ import annotations

import re
import sys

TOUCH = re.compile(r"ROBOT (\w+)\s+before dx ([+-][\d.]+) ([\d.]+) \(([+-][\d.]+),\s*([+-][\d.]+)\)"
                   r".*-> ([\d.]+) vx\s+([+-][\d.]+) \| rot ([+-][\d.]+) w\s+([+-][\d.]+)")
SWEEP_SLOW = 4.0


def main() -> None:
    for path in sys.argv[1:]:
        goals, lifts = 0, []
        current = None
        with open(path) as f:
            lines = f.readlines()
        for line in lines:
            if re.match(r"^\d+ t=", line):
                goals += 1
                current = line.split()[0] + " " + line.split()[1]
                continue
            m = TOUCH.search(line)
            if m is None:
                continue
            rod, dx, vx, rot, w = m[1], float(m[2]), float(m[4]), float(m[8]), float(m[9])
            first = not lifts or lifts[-1][0] != current
            if dx < 0 and vx > 0 and w < -SWEEP_SLOW and first:
                lifts.append((current, rod, dx, vx, rot, w))
        print(f"{path}: {goals} own goals, {len(lifts)} with a lift back into a ball from behind")
        for current, rod, dx, vx, rot, w in lifts:
            print(f"    {current} {rod} dx {dx:+.3f} vx {vx:+.2f} rot {rot:+.2f} w {w:+.1f}")


if __name__ == "__main__":
    main()
