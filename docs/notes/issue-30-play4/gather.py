"""Issue 30 (play4): the tournament and battery outputs of ../issue-30-play4.md in one
file, in the form ../issue-30-play2/paired.py reads (per match: [seed, goals for, goals
against, clean, deflected, own play, untouched]), and a table of their totals.

A run played in two halves (`NAME.json` from seed 9300, `NAME-9350.json` from 9350) is
one run of both halves' matches here; its totals are summed from the matches.

    python docs/notes/issue-30-play4/gather.py /tmp/play4-out/held    # writes tournaments.json
    python docs/notes/issue-30-play2/paired.py main-pro-rand b2-pro-rand \
        docs/notes/issue-30-play4/tournaments.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KINDS = ("clean", "deflected", "own_play", "untouched")
SECOND_HALF = "-9350"


def battery(name: str, data: dict) -> None:
    print(f"{name}: {data['total']}")
    for cell in data["by_kind"]:
        kinds = cell["goals_against_by_kind"]
        print(f"  {cell['kind']:7s} {cell['speed']:4.0f} m/s: {cell['episodes']} episodes, "
              f"save rate {cell['save_rate']}, goals per episode "
              f"{cell['goals_per_episode']:.3f} (clean/deflected/own "
              f"{kinds['clean']}/{kinds['deflected']}/{kinds['own_play']})")


def table(name: str, matches: list[dict]) -> None:
    """The totals of `matches` (the tournament's per-match entries)."""
    def total(key: str) -> int:
        return sum(m[key] for m in matches)

    goals_for, against = total("goals_for"), total("goals_against")
    kinds = {k: sum(m["goals_against_by_kind"][k] for m in matches) for k in KINDS}
    fouls = [sum(m["fouls"]["robot"][f] for m in matches) for f in ("possession", "spinning")]
    saves = total("saves")
    print(f"{name}: {len(matches)} matches (seeds {matches[0]['seed']}-{matches[-1]['seed']}), "
          f"W/D/L {sum(m['goals_for'] > m['goals_against'] for m in matches)}/"
          f"{sum(m['goals_for'] == m['goals_against'] for m in matches)}/"
          f"{sum(m['goals_for'] < m['goals_against'] for m in matches)}, goals "
          f"{goals_for}:{against} (ratio {goals_for / max(against, 1):.2f}), against "
          f"clean/deflected/own {kinds['clean']}/{kinds['deflected']}/{kinds['own_play']}, "
          f"own share {kinds['own_play'] / max(against, 1):.3f}, robot fouls possession/"
          f"spinning {fouls[0]}/{fouls[1]}, save rate {saves / max(saves + against, 1):.3f}")


def main(folder: str) -> None:
    runs: dict[str, dict] = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.stem.endswith(SECOND_HALF):
            continue
        data = json.loads(path.read_text())
        if "per_match" not in data:  # the shot battery: kept whole
            runs[path.stem] = {k: v for k, v in data.items() if k != "episodes"}  # cells, totals
            battery(path.stem, data)
            continue
        matches = data["per_match"]
        second = path.with_name(path.stem + SECOND_HALF + ".json")
        if second.exists():
            matches = matches + json.loads(second.read_text())["per_match"]
        runs[path.stem] = {
            key: data[key] for key in ("opponent", "seed", "duration_s", "randomise")
        } | {"per_match": [
            [m["seed"], m["goals_for"], m["goals_against"],
             *(m["goals_against_by_kind"][k] for k in KINDS)] for m in matches]}
        table(path.stem, matches)
    out = Path(__file__).with_name("tournaments.json")
    out.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
