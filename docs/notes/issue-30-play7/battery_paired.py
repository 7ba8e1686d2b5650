"""Two shot-battery outputs (`--json`, with their episodes) on the same seeds: the goals
against per cell and in all, and a bootstrap 95 % interval of the total difference (4,000
resamples of the episodes, seed 1), as paired.py does for tournaments.

    python docs/notes/issue-30-play7/battery_paired.py MAIN.json BRANCH.json
"""

from __future__ import annotations

import json
import random
import sys


def main(before_path: str, after_path: str) -> None:
    before, after = (json.load(open(p)) for p in (before_path, after_path))
    for a, b in zip(before["by_kind"], after["by_kind"], strict=True):
        print(f"{a['kind']:8s} {a['speed']:4.0f} m/s: goals per episode "
              f"{a['goals_per_episode']:.2f} -> {b['goals_per_episode']:.2f}")
    goals_a = {(e["kind"], e["speed"], e["seed"]): e["goals_against"] for e in before["episodes"]}
    goals_b = {(e["kind"], e["speed"], e["seed"]): e["goals_against"] for e in after["episodes"]}
    assert goals_a.keys() == goals_b.keys(), "not the same episodes"
    diffs = [goals_b[k] - goals_a[k] for k in sorted(goals_a)]
    rng = random.Random(1)
    n = len(diffs)
    totals = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) for _ in range(4000))
    print(f"goals against {sum(goals_a.values())} -> {sum(goals_b.values())} in {n} episodes "
          f"(difference 95 % {totals[100]:+d}..{totals[3899]:+d})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
