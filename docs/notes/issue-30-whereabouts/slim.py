"""Copy tournament outputs keeping what paired.py reads: the totals, and per match its seed,
goals, goals against by kind and the robot's fouls (the shots lists are most of a file's
size).

    python3 docs/notes/issue-30-whereabouts/slim.py /tmp/cmp/out docs/notes/issue-30-whereabouts/out
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KEPT = ("seed", "goals_for", "goals_against", "goals_against_by_kind")


def main(source: str, target: str) -> None:
    Path(target).mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(source).glob("*.json")):
        if not path.stat().st_size:
            continue  # still running
        data = json.loads(path.read_text())
        data["per_match"] = [{**{key: m[key] for key in KEPT},
                              "robot_fouls": m["fouls"]["robot"]} for m in data["per_match"]]
        Path(target, path.name).write_text(json.dumps(data, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
