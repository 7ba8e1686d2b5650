#!/bin/bash
# compare.sh: main (/work/runs/turnmain-10100) against the branch (/work/runs/turn-10100) on
# the held-out seeds 10100-10199: totals, paired and pooled intervals, fouls, the battery.
# Run from the worktree's root; writes into docs/notes/issue-30-turn/ (N=... elsewhere; the
# second session: M=/work/runs/main-10200 B=/work/runs/turnbs-10200 SEED=10200
# N=docs/notes/issue-30-turn/10200; issue-30-still.md: L=still names the branch's files).
set -e
PY=/work/main/.venv/bin/python
N=${N:-docs/notes/issue-30-turn}
SEED=${SEED:-10100}
L=${L:-turn}  # the branch's label in the tables
mkdir -p $N
M=${M:-/work/runs/turnmain-10100}
B=${B:-/work/runs/turn-10100}
D=/tmp/turn-compare
rm -rf $D && mkdir -p $D
for o in pro-rand pro-default seedrules-rand club-default; do
  cp $M/$o.json $D/main-$o.json
  cp $B/$o.json $D/$L-$o.json
done
$PY benchmarks/tournament_totals.py $D --second-half=-none --out $N/tournaments.json > $N/totals.txt
$PY docs/notes/issue-30-own/pool.py $N/tournaments.json $N/pooled.json main $L > /dev/null
{
  for o in pro-rand pro-default seedrules-rand club-default; do
    echo "== main-$o -> $L-$o"
    $PY docs/notes/issue-30-play2/paired.py main-$o $L-$o $N/tournaments.json
  done
  echo "== pooled (400 matches a side)"
  $PY docs/notes/issue-30-play2/paired.py main-pooled $L-pooled $N/pooled.json
  echo "== robot fouls (possession/spinning, longest possession)"
  for f in $D/*.json; do
    $PY -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['total']['fouls']['robot']; print(sys.argv[1].split('/')[-1], r['possession'], r['spinning'], r['longest_possession_s'], r['longest_zone'])" $f
  done
  echo "== battery, seed $SEED (goals against per cell; total with a 95 % interval)"
  $PY docs/notes/issue-30-play7/battery_paired.py $M/battery.json $B/battery.json
} > $N/paired.txt
$PY docs/notes/issue-30-cover/cells.py main=$M/battery.json $L=$B/battery.json > $N/battery-$SEED.txt
cat $N/totals.txt $N/paired.txt $N/battery-$SEED.txt
