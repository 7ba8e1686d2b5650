"""Two strategies' tournaments on the same seeds, side by side (issue 30's held-out figures):
per opponent the totals the issue counts, and pooled over the opponents both sides ran the
bootstrap 95 % intervals of SIDE's difference (4,000 resamples of the matches within each
opponent, seed 1; the matches are paired by seed).

Files are `foosball sim tournament --json` outputs named PREFIX-RUN.json in FOLDER, RUN one
of `RUNS`; a file missing or still empty on either side leaves its opponent out.

    python3 benchmarks/paired_tournaments.py FOLDER BASE_PREFIX SIDE_PREFIX
    python3 benchmarks/paired_tournaments.py docs/notes/issue-30-whereabouts/out main-10600 R4-10600
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

RUNS = ("seedrules-rand", "club-default", "pro-rand", "pro-default")
Match = tuple[int, int, int, int]  # seed, goals for, goals against, own-play goals
STATS: dict[str, Callable[[Match], int]] = {
    "wins": lambda m: int(m[1] > m[2]),
    "goals for": lambda m: m[1],
    "goals against": lambda m: m[2],
    "own-play goals": lambda m: m[3],
}


def load(path: Path) -> tuple[dict, list[Match]]:
    """The tournament's totals, and each match's (seed, for, against, own play)."""
    data = json.loads(path.read_text())
    return data["total"], [(m["seed"], m["goals_for"], m["goals_against"],
                            m["goals_against_by_kind"]["own_play"]) for m in data["per_match"]]


def row(name: str, total: dict) -> str:
    kinds = total["goals_against_by_kind"]
    fouls = total["fouls"]["robot"]
    return (f"| {name} | {total['wins']} | {total['goals_for']} | {total['goals_against']} | "
            f"{kinds['clean']} | {kinds['deflected']} | {kinds['own_play']} | "
            f"{100 * kinds['own_play'] / max(total['goals_against'], 1):.1f} % | "
            f"{fouls['possession'] + fouls['spinning']} |")


def main(folder: str, base: str, side: str) -> None:
    print("| tournament | wins | for | against | clean | deflected | own play | own share "
          "| fouls |")
    print("|---|---|---|---|---|---|---|---|---|")
    pairs = []
    for run in RUNS:
        a, b = Path(folder, f"{base}-{run}.json"), Path(folder, f"{side}-{run}.json")
        if a.exists() and b.exists() and a.stat().st_size and b.stat().st_size:
            (total_a, before), (total_b, after) = load(a), load(b)
            assert [m[0] for m in before] == [m[0] for m in after], "not the same seeds"
            print(row(f"{run} {base}", total_a))
            print(row(f"{run} {side}", total_b))
            pairs.append((run, before, after))
    print(f"\npooled over {[run for run, _, _ in pairs]}:")
    rng = random.Random(1)
    samples = [[[rng.randrange(len(before)) for _ in before] for _, before, _ in pairs]
               for _ in range(4000)]
    for name, stat in STATS.items():
        total_before = sum(stat(m) for _, before, _ in pairs for m in before)
        total_after = sum(stat(m) for _, _, after in pairs for m in after)
        diffs = sorted(sum(stat(after[i]) - stat(before[i])
                           for (_, before, after), picks in zip(pairs, sample, strict=True)
                           for i in picks) for sample in samples)
        print(f"- {name}: {base} {total_before} -> {side} {total_after} "
              f"(difference 95 % {diffs[100]:+d}..{diffs[3899]:+d})")


if __name__ == "__main__":
    main(*sys.argv[1:4])
