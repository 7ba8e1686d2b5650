#!/bin/sh
# play6's frozen code (b3) on held-out seeds 9500-9599, one at a time, nice 19
cd /tmp/p6/held
T="env PYTHONPATH=/tmp/p6/final/python nice -n 19 /work/main/.venv/bin/foosball"
$T sim tournament --robot improved --opponent pro --randomise --matches 100 --jobs 1 --seed 9500 --json --no-progress > b3-pro-rand.json.part && mv b3-pro-rand.json.part b3-pro-rand.json
$T sim tournament --robot improved --opponent seed-rules --randomise --matches 100 --jobs 1 --seed 9500 --json --no-progress > b3-sr-rand.json.part && mv b3-sr-rand.json.part b3-sr-rand.json
$T sim tournament --robot improved --opponent club --matches 100 --jobs 1 --seed 9500 --json --no-progress > b3-club.json.part && mv b3-club.json.part b3-club.json
echo done > DONE3
$T sim tournament --robot improved --opponent pro --matches 100 --jobs 1 --seed 9500 --json --no-progress > b3-pro.json.part && mv b3-pro.json.part b3-pro.json
echo done > DONE
