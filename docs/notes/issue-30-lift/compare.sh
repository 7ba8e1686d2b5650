#!/bin/bash
# compare.sh: main (/work/runs/main-10000) against the branch (/work/runs/lift-10000) on the
# held-out seeds 10000-10099: totals, paired and pooled intervals, fouls, the battery.
# Run from the worktree's root; writes into docs/notes/issue-30-lift/.
set -e
PY=/work/main/.venv/bin/python
N=docs/notes/issue-30-lift
D=/tmp/lift-compare
rm -rf $D && mkdir -p $D
for o in pro-rand pro-default seedrules-rand club-default; do
  cp /work/runs/main-10000/$o.json $D/main-$o.json
  cp /work/runs/lift-10000/$o.json $D/lift-$o.json
done
$PY benchmarks/tournament_totals.py $D --second-half=-none --out $N/tournaments.json > $N/totals.txt
$PY docs/notes/issue-30-own/pool.py $N/tournaments.json $N/pooled.json main lift > /dev/null
{
  for o in pro-rand pro-default seedrules-rand club-default; do
    echo "== main-$o -> lift-$o"
    $PY docs/notes/issue-30-play2/paired.py main-$o lift-$o $N/tournaments.json
  done
  echo "== pooled (400 matches a side)"
  $PY docs/notes/issue-30-play2/paired.py main-pooled lift-pooled $N/pooled.json
  echo "== robot fouls (possession/spinning, longest possession)"
  for f in $D/*.json; do
    $PY -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['total']['fouls']['robot']; print(sys.argv[1].split('/')[-1], r['possession'], r['spinning'], r['longest_possession_s'], r['longest_zone'])" $f
  done
  echo "== battery, seed 10000 (goals against per cell; total with a 95 % interval)"
  $PY docs/notes/issue-30-play7/battery_paired.py /work/runs/main-10000/battery.json /work/runs/lift-10000/battery.json
} > $N/paired.txt
# (the batteries stay in the run folders; battery-10000.txt summarises both per cell)
cat $N/paired.txt
