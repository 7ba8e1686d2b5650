"""Our men's touches that drive the ball back towards our own goal, per match (issue 30).

An own-play goal is rare: 4-10 in 100 matches against seed-rules, and 100 matches of the
same strategy on two seed ranges differ by a factor of two. The touch that makes one is
not rare. This counts, from the physics' own contacts, every touch by a robot man that
leaves the ball moving towards our goal faster than `BACKWARD_SPEED` and faster than it
came (the man drove it: a shot that a man slows is a block, not counted). A run of such
contacts on one rod, each within `SAME_STRIKE_S` of the last (a man pushing the ball along
frame by frame), counts once. Rods are counted separately:
goalkeeper and defence are the ones in front of our goal.

Plays the matches as `foosball sim tournament` does (the same `Match`, seeds
SEED..SEED+N-1), with the package on PYTHONPATH, and writes per match the counts by rod
as JSON lines. `--compare A B` pairs two such files by seed: the totals and a bootstrap
95 % interval of B's difference (`paired_tournaments.py`'s, over the matches).

    PYTHONPATH=python .venv/bin/python benchmarks/backward_touches.py seed-rules 8760 50 \\
        --randomise > /tmp/main.jsonl
    python3 benchmarks/backward_touches.py --compare /tmp/main.jsonl /tmp/variant.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from paired_tournaments import paired_difference, resamples  # a sibling benchmark

BACKWARD_SPEED = 0.5  # m/s towards our goal after the touch
DRIVEN_BY = 0.2  # m/s: the touch added at least this much speed
SAME_STRIKE_S = 0.05  # s: contacts of one rod this close together are one touch
ROLES = ("goalkeeper", "defence", "midfield", "attack")


def count(opponent: str, seed: int, duration: float, randomise: bool) -> dict[str, Any]:
    """One match's backward touches by the robot's rods, and its own-play goals."""
    from foosball.sim.match import Match

    match = Match("improved", opponent, seed=seed, duration=duration, randomise=randomise)
    table, account = match.table, match._account
    touches = dict.fromkeys(ROLES, 0)
    last_counted: dict[int, float] = {}  # per rod, its last backward contact

    def recording(contacts: list[Any], state: Any) -> None:
        for c in contacts:
            # (the robot's goal is at negative x: towards it is vx < 0)
            if (c.kind != "man" or c.team != "robot" or c.vx_after > -BACKWARD_SPEED
                    or c.speed_after < c.speed_before + DRIVEN_BY):
                continue
            t = c.time_ns * 1e-9
            if t - last_counted.get(c.rod, -1.0) >= SAME_STRIKE_S:
                touches[table.rods[c.rod].role] += 1
            last_counted[c.rod] = t
        account(contacts, state)

    match._account = recording  # type: ignore[method-assign]
    result = match.run()
    own = sum(1 for g in result.goals if g.scorer == "human" and g.kind == "own_play")
    return {"seed": seed, "touches": touches, "own_play": own,
            "against": sum(1 for g in result.goals if g.scorer == "human")}


def compare(first: str, second: str) -> None:
    rows = [[json.loads(line) for line in Path(p).read_text().splitlines()]
            for p in (first, second)]
    a, b = ({r["seed"]: r for r in side} for side in rows)
    seeds = sorted(set(a) & set(b))
    stats = {
        "backward touches, all rods": lambda r: sum(r["touches"].values()),
        "backward touches, goalkeeper and defence":
            lambda r: r["touches"]["goalkeeper"] + r["touches"]["defence"],
        "own-play goals": lambda r: r["own_play"],
        "goals against": lambda r: r["against"],
    }
    groups = [([a[s] for s in seeds], [b[s] for s in seeds])]
    draws = resamples([len(seeds)])
    print(f"{len(seeds)} matches paired by seed")
    for name, stat in stats.items():
        before, after, low, high = paired_difference(groups, draws, stat)
        print(f"- {name}: {before} -> {after} (difference 95 % {low:+d}..{high:+d})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("opponent", nargs="?")
    parser.add_argument("seed", type=int, nargs="?")
    parser.add_argument("matches", type=int, nargs="?")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--randomise", action="store_true")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    if args.opponent is None or args.seed is None or args.matches is None:
        parser.error("OPPONENT SEED MATCHES, or --compare A B")
    for seed in range(args.seed, args.seed + args.matches):
        print(json.dumps(count(args.opponent, seed, args.duration, args.randomise)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
