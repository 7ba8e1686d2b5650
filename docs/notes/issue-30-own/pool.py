"""Adds pooled runs to a tournaments file (`benchmarks/tournament_totals.py --out`): for each
prefix given, `PREFIX-pooled` is the per-match rows of every `PREFIX-*` run in name order,
so docs/notes/issue-30-play2/paired.py gives pooled intervals for goals against, own play,
goals for and wins (pooled.py gives own play only).

    python docs/notes/issue-30-own/pool.py docs/notes/issue-30-own/tournaments.json main own
    python docs/notes/issue-30-play2/paired.py main-pooled own-pooled \
        docs/notes/issue-30-own/tournaments.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str, *prefixes: str) -> None:
    runs = json.loads(Path(path).read_text())
    for prefix in prefixes:
        names = sorted(n for n in runs if n.startswith(prefix + "-") and "per_match" in runs[n]
                       and not n.endswith("-pooled"))
        runs[prefix + "-pooled"] = {"per_match": [m for n in names for m in runs[n]["per_match"]]}
        print(f"{prefix}-pooled: {', '.join(names)}")
    Path(path).write_text(json.dumps(runs))


if __name__ == "__main__":
    main(sys.argv[1], *sys.argv[2:])
