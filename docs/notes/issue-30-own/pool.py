"""Pooled runs from a tournaments file (`benchmarks/tournament_totals.py --out`), written to
another file (so issue-30-play4/pooled.py, which pools every `main-*` run of a file, does
not count them twice): for each prefix given, `PREFIX-pooled` is the per-match rows of every
`PREFIX-*` run in name order, so docs/notes/issue-30-play2/paired.py gives pooled intervals
for goals against, own play, goals for and wins (pooled.py gives own play only).

    python docs/notes/issue-30-own/pool.py docs/notes/issue-30-own/tournaments.json \
        docs/notes/issue-30-own/pooled.json main own
    python docs/notes/issue-30-play2/paired.py main-pooled own-pooled \
        docs/notes/issue-30-own/pooled.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str, out: str, *prefixes: str) -> None:
    runs = json.loads(Path(path).read_text())
    pooled = {}
    for prefix in prefixes:
        names = sorted(n for n in runs if n.startswith(prefix + "-") and "per_match" in runs[n])
        pooled[prefix + "-pooled"] = {
            "per_match": [m for n in names for m in runs[n]["per_match"]]}
        print(f"{prefix}-pooled: {', '.join(names)}")
    Path(out).write_text(json.dumps(pooled))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *sys.argv[3:])
