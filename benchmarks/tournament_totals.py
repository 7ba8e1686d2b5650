"""Tournament and shot-battery outputs (`--json` files in one folder) as one file of per-match
rows, in the form docs/notes/issue-30-play2/paired.py reads (per match: [seed, goals for,
goals against, clean, deflected, own play, untouched]), and a table of their totals. Used
by issue 30's strategy notes (play3, play4) for their held-out figures.

A run played in two halves (`NAME.json` and `NAME<SUFFIX>.json`, e.g. `NAME-9350.json`
from seed 9350) is one run of both halves' matches here; its totals are summed from the
matches. A battery's output is kept without its episodes (its cells and totals).

    python benchmarks/tournament_totals.py /tmp/play4-out/held --second-half -9350 \
        --out docs/notes/issue-30-play4/tournaments.json
    python docs/notes/issue-30-play2/paired.py main-pro-rand b2-pro-rand \
        docs/notes/issue-30-play4/tournaments.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

KINDS = ("clean", "deflected", "own_play", "untouched")


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


def main(folder: str, second_half: str, out: Path) -> None:
    runs: dict[str, dict] = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.stem.endswith(second_half):
            continue
        data = json.loads(path.read_text())
        if "per_match" not in data:  # the shot battery: kept whole
            runs[path.stem] = {k: v for k, v in data.items() if k != "episodes"}  # cells, totals
            battery(path.stem, data)
            continue
        matches = data["per_match"]
        second = path.with_name(path.stem + second_half + ".json")
        if second.exists():
            matches = matches + json.loads(second.read_text())["per_match"]
        runs[path.stem] = {
            key: data[key] for key in ("opponent", "seed", "duration_s", "randomise")
        } | {"per_match": [
            [m["seed"], m["goals_for"], m["goals_against"],
             *(m["goals_against_by_kind"][k] for k in KINDS)] for m in matches]}
        table(path.stem, matches)
    out.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder of the runs' --json outputs")
    parser.add_argument("--second-half", required=True,
                        help="the suffix of a run's second half, e.g. -9350")
    parser.add_argument("--out", type=Path, required=True, help="the per-match file to write")
    args = parser.parse_args()
    main(args.folder, args.second_half, args.out)
