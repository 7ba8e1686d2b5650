#!/bin/bash
# Held-out comparison (run from the worktree): main's and this branch's runs at seed 10000
# side by side, per opponent and pooled, bootstrap 95 % intervals (paired.py); the batteries
# cell by cell.
set -e
PY=/work/main/.venv/bin/python
N=docs/notes/issue-30-cover
H=/tmp/cover/held
rm -rf $H && mkdir -p $H
for r in pro-rand pro-default seedrules-rand club-default; do
  cp /work/runs/main-10000/$r.json $H/main-$r.json
  cp /work/runs/cover-10000/$r.json $H/cover-$r.json
done
$PY benchmarks/tournament_totals.py $H --second-half=-none --out $N/tournaments.json > $N/totals.txt
$PY - $N/tournaments.json <<'PYEOF'
import json, sys
p = sys.argv[1]
runs = json.load(open(p))
for side in ("main", "cover"):
    runs[f"{side}-all"] = {"opponent": "all four", "per_match": [
        m for r in ("pro-rand", "pro-default", "seedrules-rand", "club-default")
        for m in runs[f"{side}-{r}"]["per_match"]]}
json.dump(runs, open(p, "w"), indent=1)
PYEOF
for r in pro-rand pro-default seedrules-rand club-default all; do
  echo "== $r (main -> cover)"
  $PY docs/notes/issue-30-play2/paired.py main-$r cover-$r $N/tournaments.json
done > $N/paired.txt
$PY $N/cells.py main=/work/runs/main-10000/battery.json cover=/work/runs/cover-10000/battery.json > $N/battery-10000.txt
cat $N/totals.txt $N/paired.txt $N/battery-10000.txt
