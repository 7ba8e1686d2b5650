"""Issue 30 (play4): main against b2 over every held-out tournament both ran (the same
seeds each side), pooled: the matches of all opponents in one list, resampled 4,000 times
(seed 1) as ../issue-30-play2/paired.py does for one run.

    python docs/notes/issue-30-play4/pooled.py [b2] [RUNS.json]

(RUNS.json: another round's tournaments, e.g. docs/notes/issue-30-play6/tournaments.json
with b3; by default this round's.)
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

RUNS = json.loads(Path(sys.argv[2] if len(sys.argv) > 2 else
                      Path(__file__).with_name("tournaments.json")).read_text())
FOR, AGAINST, OWN = 1, 2, 5


def main(branch: str = "b2") -> None:
    a: list[list[int]] = []
    b: list[list[int]] = []
    names = []
    for name in sorted(RUNS):
        if not name.startswith("main-") or "per_match" not in RUNS[name]:
            continue
        other = branch + name[len("main"):]
        if other in RUNS:
            left, right = RUNS[name]["per_match"], RUNS[other]["per_match"]
            assert [m[0] for m in left] == [m[0] for m in right], name
            a += left
            b += right
            names.append(name[len("main-"):])
    n = len(a)
    rng = random.Random(1)
    samples = [[rng.randrange(n) for _ in range(n)] for _ in range(4000)]

    def share(run: list[list[int]], s) -> float:
        against = sum(run[i][AGAINST] for i in s)
        return sum(run[i][OWN] for i in s) / against if against else 0.0

    diffs = sorted(share(b, s) - share(a, s) for s in samples)
    owns = sorted(sum(b[i][OWN] - a[i][OWN] for i in s) for s in samples)
    lo, hi = int(0.025 * len(diffs)), int(0.975 * len(diffs))
    print(f"runs: {', '.join(names)} ({n} matches each side)")
    print(f"own play: {sum(m[OWN] for m in a)} of {sum(m[AGAINST] for m in a)} -> "
          f"{sum(m[OWN] for m in b)} of {sum(m[AGAINST] for m in b)} "
          f"(own goals difference 95 % {owns[lo]:+d}..{owns[hi]:+d})")
    print(f"own-play share: {share(a, range(n)):.3f} -> {share(b, range(n)):.3f} "
          f"(difference 95 % {diffs[lo]:+.3f}..{diffs[hi]:+.3f})")


if __name__ == "__main__":
    main(*sys.argv[1:2])
