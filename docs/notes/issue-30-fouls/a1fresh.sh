#!/bin/sh
# ablation a1 (change 1 only: keep_off and the nudge, no run guard) on the fresh seeds
# 9700-9799 against pro, randomised and default; after abl.sh, one at a time, nice 19
cd /work/fouls-out/abl
while [ ! -f ABL_DONE ]; do sleep 5; done
T="env PYTHONPATH=/work/abl-a1/python nice -n 19 /work/main/.venv/bin/python -m foosball.cli"
$T sim tournament --robot improved --opponent pro --randomise --matches 100 --jobs 1 --seed 9700 --json --no-progress > a1-pro-rand.json.part && mv a1-pro-rand.json.part a1-pro-rand.json
$T sim tournament --robot improved --opponent pro --matches 100 --jobs 1 --seed 9700 --json --no-progress > a1-pro.json.part && mv a1-pro.json.part a1-pro.json
echo done > A1_DONE
