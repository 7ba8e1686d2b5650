"""Issue 30 (play2): before/after on the same held-out seeds from `tournaments.json` (the
totals and per-match results of the runs in ../issue-30-play2.md): per-match differences
with bootstrap 95 % intervals (4,000 resamples of the matches, seed 1).

    python docs/notes/issue-30-play2/paired.py before-pro v4-pro [RUNS.json]

(RUNS.json: another file of the same form, e.g. docs/notes/issue-30-play3/tournaments.json.)
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

RUNS = Path(__file__).with_name("tournaments.json")
# per match: [seed, goals for, goals against, clean, deflected, own play, untouched]
FOR, AGAINST, OWN = 1, 2, 5


def main(before: str, after: str, path: str | None = None) -> None:
    runs = json.loads((Path(path) if path else RUNS).read_text())
    a, b = runs[before]["per_match"], runs[after]["per_match"]
    assert [m[0] for m in a] == [m[0] for m in b], "not the same seeds"
    rng = random.Random(1)
    n = len(a)
    samples = [[rng.randrange(n) for _ in range(n)] for _ in range(4000)]

    def interval(stat: Callable[[Sequence[int]], float]) -> tuple[float, float]:
        values = sorted(stat(s) for s in samples)
        return values[int(0.025 * len(values))], values[int(0.975 * len(values))]

    def wins(run: list[list[int]], i: int) -> int:
        return int(run[i][FOR] > run[i][AGAINST])

    counts = {"own play goals": lambda r, i: r[i][OWN], "goals against": lambda r, i: r[i][AGAINST],
              "goals for": lambda r, i: r[i][FOR], "wins": wins}
    for name, count in counts.items():
        total_a = sum(count(a, i) for i in range(n))
        total_b = sum(count(b, i) for i in range(n))
        low, high = interval(lambda s, c=count: sum(c(b, i) - c(a, i) for i in s))
        print(f"{name}: {total_a} -> {total_b} (difference 95 % {low:+.0f}..{high:+.0f})")

    def share(run: list[list[int]], s: Sequence[int]) -> float:
        against = sum(run[i][AGAINST] for i in s)
        return sum(run[i][OWN] for i in s) / against if against else 0.0

    low, high = interval(lambda s: share(b, s) - share(a, s))
    print(f"own-play share: {share(a, range(n)):.3f} -> {share(b, range(n)):.3f} "
          f"(difference 95 % {low:+.3f}..{high:+.3f})")


if __name__ == "__main__":
    main(*sys.argv[1:4])
