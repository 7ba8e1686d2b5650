#!/bin/sh
# ablation after b3's held-out: b1 (650fdb6, the first change alone) on the same held-out seeds
cd /tmp/p6/held-b1
T="env PYTHONPATH=/tmp/p6/b1/python nice -n 19 /work/main/.venv/bin/foosball"
$T sim tournament --robot improved --opponent pro --randomise --matches 100 --jobs 1 --seed 9500 --json --no-progress > b1-pro-rand.json.part && mv b1-pro-rand.json.part b1-pro-rand.json
$T sim tournament --robot improved --opponent pro --matches 100 --jobs 1 --seed 9500 --json --no-progress > b1-pro.json.part && mv b1-pro.json.part b1-pro.json
$T sim tournament --robot improved --opponent seed-rules --randomise --matches 100 --jobs 1 --seed 9500 --json --no-progress > b1-sr-rand.json.part && mv b1-sr-rand.json.part b1-sr-rand.json
$T sim tournament --robot improved --opponent club --matches 100 --jobs 1 --seed 9500 --json --no-progress > b1-club.json.part && mv b1-club.json.part b1-club.json
echo done > DONE
