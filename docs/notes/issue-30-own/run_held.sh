#!/bin/bash
cd /work/wt-own
P=/work/own-runs/final/python
D=/work/own-runs/held
run() { PYTHONPATH=$P nice -n 19 /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $1 $2 --matches 100 --jobs 1 --seed 9800 --json --no-progress > $D/$3.json 2> $D/$3.err; }
run pro --randomise pro-rand
run pro "" pro-default
run seed-rules --randomise seedrules-rand
run club "" club-default
echo done > $D/DONE
