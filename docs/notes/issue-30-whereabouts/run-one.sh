#!/bin/bash
# run-one.sh SIDE SEED OPPONENT NAME [--randomise]: one 100-match tournament of SIDE's tree
# (/tmp/cmp/SIDE/python), into /tmp/cmp/out/SIDE-SEED-NAME.json
S=$1; SEED=$2; P=/tmp/cmp/$S/python; D=/tmp/cmp/out; mkdir -p $D
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
PYTHONPATH=$P "$REPO/.venv/bin/python" -m foosball.cli sim tournament --robot improved \
    --opponent $3 $5 --matches 100 --jobs 1 --seed $SEED --json --no-progress \
    > $D/$S-$SEED-$4.json 2> $D/$S-$SEED-$4.err
