"""fouls.py DIR: every match with a robot foul in the tournaments' --json outputs in DIR
(the totals in tournaments.json keep no fouls per match)."""
import json
import sys
from pathlib import Path

for path in sorted(Path(sys.argv[1]).glob("*.json")):
    matches = json.loads(path.read_text())["per_match"]
    fouled = [(m["seed"], m["fouls"]["robot"]) for m in matches
              if m["fouls"]["robot"]["possession"] or m["fouls"]["robot"]["spinning"]]
    print(f"{path.stem}: {len(matches)} matches, robot fouls in {len(fouled)}", *fouled)
