"""Issue 30 (passing): main against variant a (and A+B where it ran) on seeds 10400-10499,
pooled over the opponents both ran: totals and bootstrap 95 % intervals of the difference
(4,000 resamples of the matches within each opponent, seed 1).

    python3 docs/notes/issue-30-passing/paired.py docs/notes/issue-30-passing/out a   (or branch)
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

RUNS = ("seedrules-rand", "club-default", "pro-rand", "pro-default")


def per_match(path: Path) -> list[tuple[int, int, int, int]]:
    """(seed, goals for, goals against, own-play goals) of each match."""
    data = json.loads(path.read_text())
    return [(m["seed"], m["goals_for"], m["goals_against"],
             m["goals_against_by_kind"]["own_play"]) for m in data["per_match"]]


def main(folder: str, side: str) -> None:
    pairs = []
    for run in RUNS:
        a, b = Path(folder, f"main-{run}.json"), Path(folder, f"{side}-{run}.json")
        if a.exists() and b.exists() and b.stat().st_size:
            before, after = per_match(a), per_match(b)
            assert [m[0] for m in before] == [m[0] for m in after]
            pairs.append((run, before, after))
    print("opponents:", [run for run, _, _ in pairs])
    rng = random.Random(1)
    samples = [[[rng.randrange(len(before)) for _ in before] for _, before, _ in pairs]
               for _ in range(4000)]
    stats = {"wins": lambda m: int(m[1] > m[2]), "goals for": lambda m: m[1],
             "goals against": lambda m: m[2], "own-play goals": lambda m: m[3]}
    for name, stat in stats.items():
        total_before = sum(stat(m) for _, before, _ in pairs for m in before)
        total_after = sum(stat(m) for _, _, after in pairs for m in after)
        diffs = sorted(sum(stat(after[i]) - stat(before[i])
                           for (_, before, after), picks in zip(pairs, sample, strict=True)
                           for i in picks) for sample in samples)
        print(f"{name}: main {total_before} -> {side} {total_after} "
              f"(difference 95 % {diffs[100]:+d}..{diffs[3899]:+d})")


if __name__ == "__main__":
    main(*sys.argv[1:3])
