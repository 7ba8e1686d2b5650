"""Main's strategy on the held-out seeds under the old and the new goal-kind rule: the same
matches (scores checked equal), the goals against by kind.

    python3 docs/notes/issue-30-still/oldrule_kinds.py /work/runs/oldrule-10300 /work/runs/base-10300
"""

import json
import sys

old_dir, new_dir = sys.argv[1:3]
for name in ("pro-rand", "pro-default", "seedrules-rand", "club-default"):
    old = json.load(open(f"{old_dir}/{name}.json"))["per_match"]
    new = json.load(open(f"{new_dir}/{name}.json"))["per_match"]
    same = all((a["seed"], a["goals_for"], a["goals_against"])
               == (b["seed"], b["goals_for"], b["goals_against"]) for a, b in zip(old, new))
    against = sum(m["goals_against"] for m in old)
    kinds = [{k: sum(m["goals_against_by_kind"][k] for m in runs)
              for k in ("clean", "deflected", "own_play")} for runs in (old, new)]
    print(f"{name}: same scores {same}, goals against {against}; old rule {kinds[0]}; "
          f"new rule {kinds[1]}")
