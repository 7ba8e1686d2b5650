#!/bin/bash
# run.sh SIDE: seed-rules (randomised) and club, seeds 10400-10499, 100 matches each
S=$1; P=/tmp/cmp/$S/python; D=/tmp/cmp/out; mkdir -p $D
run() { PYTHONPATH=$P /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $1 $2 --matches 100 --jobs 1 --seed 10400 --json --no-progress > $D/$S-$3.json 2> $D/$S-$3.err; }
run seed-rules --randomise seedrules-rand
run club "" club-default
echo done > $D/DONE-$S
