#!/bin/bash
# run_set.sh PYTHON_DIR OUT_DIR SEED: the four held-out tournaments and the battery, one core
P=$1; D=$2; S=$3
mkdir -p $D
run() { PYTHONPATH=$P nice -n 19 /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $1 $2 --matches 100 --jobs 1 --seed $S --json --no-progress > $D/$3.json 2> $D/$3.err; }
run pro --randomise pro-rand
run pro "" pro-default
run seed-rules --randomise seedrules-rand
run club "" club-default
PYTHONPATH=$P nice -n 19 /work/main/.venv/bin/python -m foosball.cli strategy shots --robot improved --kinds rest,rolling,pull,push,pin --speeds 5,10,15 --episodes 100 --seed $S --jobs 1 --json --no-progress > $D/battery.json 2> $D/battery.err
echo done > $D/DONE
