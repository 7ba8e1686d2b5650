"""Two strategies' tournaments on the same seeds, side by side (issue 30's held-out figures):
per opponent the totals the issue counts, and pooled over the opponents both sides ran the
bootstrap 95 % intervals of SIDE's difference (4,000 resamples of the matches within each
opponent, seed 1; the matches are paired by seed).

Files are `foosball sim tournament --json` outputs named PREFIX-RUN.json in FOLDER, RUN one
of `RUNS`; a file missing or still empty on either side leaves its opponent out. Several
seed ranges pool when each side names one prefix per range, comma-separated, in the same
order (a prefix may start with a folder below FOLDER).

    python3 benchmarks/paired_tournaments.py FOLDER BASE_PREFIX SIDE_PREFIX
    python3 benchmarks/paired_tournaments.py docs/notes/issue-30-whereabouts/out main-10600 R4-10600
    python3 benchmarks/paired_tournaments.py docs/notes/issue-30-whereabouts/out \
        main-10500,main-10600 R4-10500,R4-10600
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

RUNS = ("seedrules-rand", "club-default", "pro-rand", "pro-default")
RESAMPLES = 4000
MatchGoals = tuple[int, int, int, int]  # seed, goals for, goals against, own-play goals
STATS: dict[str, Callable[[MatchGoals], int]] = {
    "wins": lambda m: int(m[1] > m[2]),
    "goals for": lambda m: m[1],
    "goals against": lambda m: m[2],
    "own-play goals": lambda m: m[3],
}


Row = TypeVar("Row")


def resamples(sizes: Sequence[int]) -> list[list[list[int]]]:
    """`RESAMPLES` bootstrap draws (seed 1): per draw, per group of `sizes`, as many indices
    into the group as it has matches, drawn with replacement. One set serves every
    statistic, so their intervals come from the same draws."""
    rng = random.Random(1)
    return [[[rng.randrange(n) for _ in range(n)] for n in sizes] for _ in range(RESAMPLES)]


def paired_difference(groups: Sequence[tuple[Sequence[Row], Sequence[Row]]],
                      draws: list[list[list[int]]],
                      stat: Callable[[Row], int]) -> tuple[int, int, int, int]:
    """`stat` summed over the groups' matches before and after, and the 95 % interval of
    the difference over `draws` (the groups' matches paired by index)."""
    before = sum(stat(m) for first, _ in groups for m in first)
    after = sum(stat(m) for _, second in groups for m in second)
    diffs = sorted(sum(stat(second[i]) - stat(first[i])
                       for (first, second), picks in zip(groups, draw, strict=True)
                       for i in picks) for draw in draws)
    return before, after, diffs[RESAMPLES // 40], diffs[RESAMPLES - 1 - RESAMPLES // 40]


def load(path: Path) -> tuple[dict, list[MatchGoals]]:
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


def main(folder: str, bases: str, sides: str) -> None:
    ranges = list(zip(bases.split(","), sides.split(","), strict=True))
    print("| tournament | wins | for | against | clean | deflected | own play | own share "
          "| fouls |")
    print("|---|---|---|---|---|---|---|---|---|")
    pairs = []
    for base, side in ranges:
        for run in RUNS:
            a, b = Path(folder, f"{base}-{run}.json"), Path(folder, f"{side}-{run}.json")
            if a.exists() and b.exists() and a.stat().st_size and b.stat().st_size:
                (total_a, before), (total_b, after) = load(a), load(b)
                assert [m[0] for m in before] == [m[0] for m in after], "not the same seeds"
                print(row(f"{run} {base}", total_a))
                print(row(f"{run} {side}", total_b))
                pairs.append((f"{run} {base}", before, after))
    print(f"\npooled over {[run for run, _, _ in pairs]}:")
    groups = [(before, after) for _, before, after in pairs]
    draws = resamples([len(before) for before, _ in groups])
    for name, stat in STATS.items():
        total_before, total_after, low, high = paired_difference(groups, draws, stat)
        print(f"- {name}: {bases} {total_before} -> {sides} {total_after} "
              f"(difference 95 % {low:+d}..{high:+d})")


if __name__ == "__main__":
    main(*sys.argv[1:4])
