"""Sort the own-play goals of `benchmarks/own_play_audit.py` outputs by how the robot's last
touch came about: the rod, its turn (a standing man, a backward turn, a forward turn), where
the ball was (behind or in front of the axis), and whether the camera saw it.

    python3 docs/notes/issue-30-whereabouts/kinds.py AUDIT_OUTPUT...
"""

from __future__ import annotations

import re
import sys
from collections import Counter

TURNING = 4.0  # rad/s: a foot turning slower than this only nudges the ball (SWEEP_SLOW)
ROBOT = re.compile(r"t=(?P<t>[\d.]+) robot (?P<rod>\w+)\s+man\d ball=\S+ dx=(?P<dx>\S+) "
                   r"(?P<before>[\d.]+)->(?P<after>[\d.]+) vx=\S+ rot=(?P<rot>\S+) "
                   r"w=(?P<w>\S+) tr=\S+ plan=(?P<plan>\w+) kick=(?P<kick>\w*) "
                   r"seen=(?P<seen>\w+)")


def kind(line: str) -> tuple[str, ...] | None:
    m = ROBOT.search(line)
    if m is None:
        return None
    w, dx = float(m["w"]), float(m["dx"])
    turn = ("standing" if abs(w) < TURNING else "backward turn" if w < 0 else "forward turn")
    plan = m["plan"] + (f"/{m['kick']}" if m["kick"] else "")
    return (m["rod"], turn, "behind" if dx < 0 else "in front",
            "in view" if m["seen"] == "True" else "lost", plan)


def main(paths: list[str]) -> None:
    kinds: Counter[tuple[str, ...]] = Counter()
    by_turn: Counter[str] = Counter()
    for path in paths:
        last = None
        with open(path) as lines:
            text = lines.read().splitlines()
        for line in [*text, "goals against"]:
            if line.startswith("=== ") or line.startswith("goals against"):
                if last is not None:
                    kinds[last] += 1
                    by_turn[last[1]] += 1
                last = None
            else:
                found = kind(line)
                if found is not None:
                    last = found
    for k, n in kinds.most_common():
        print(n, " / ".join(k))
    print("by turn:", dict(by_turn))


if __name__ == "__main__":
    main(sys.argv[1:])
