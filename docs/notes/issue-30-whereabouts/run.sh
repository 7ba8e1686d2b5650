#!/bin/bash
# run.sh SIDE SEED: improved (SIDE's tree in /tmp/cmp/SIDE/python) against seed-rules
# (randomised), club, pro (randomised) and pro (default), 100 matches each from SEED;
# one tournament at a time (--jobs 1), so two sides run side by side on two cores.
S=$1; SEED=$2; P=/tmp/cmp/$S/python; D=/tmp/cmp/out; mkdir -p $D
run() { PYTHONPATH=$P /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $1 $2 --matches 100 --jobs 1 --seed $SEED --json --no-progress > $D/$S-$SEED-$3.json 2> $D/$S-$SEED-$3.err; }
run seed-rules --randomise seedrules-rand
run pro --randomise pro-rand
run club "" club-default
run pro "" pro-default
echo done > $D/DONE-$S-$SEED
