#!/bin/bash
cd /work/wt-own
D=/work/own-runs/tune
run() { PYTHONPATH=$1 nice -n 19 /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $2 $3 --matches 40 --jobs 1 --seed 8900 --json --no-progress > $D/$4.json 2> $D/$4.err; }
run /work/base-own/python pro --randomise main-pro-rand
run /work/own-runs/tree-a/python pro --randomise a-pro-rand
run /work/base-own/python seed-rules --randomise main-sr-rand
run /work/own-runs/tree-a/python seed-rules --randomise a-sr-rand
echo done > $D/DONE
