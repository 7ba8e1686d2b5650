#!/bin/bash
P=/work/runs/oldrule-snap/python; D=/work/runs/oldrule-10300
# oldrule.sh a|b: main 52f3a47 (the goal-kind rule before issue-30-still) on the held-out seeds 10300-10399,
# two tournaments per half; the snapshot is `git archive 52f3a47 python` with the built extensions copied in
run() { PYTHONPATH=$P nice -n 19 /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $1 $2 --matches 100 --jobs 1 --seed 10300 --json --no-progress > $D/$3.json 2> $D/$3.err; }
if [ "$1" = a ]; then run pro --randomise pro-rand; run seed-rules --randomise seedrules-rand; else run pro "" pro-default; run club "" club-default; fi
echo done > $D/DONE-$1
