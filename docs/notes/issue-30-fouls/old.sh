#!/bin/sh
# the frozen branch on the seed ranges where main fouled before (not fresh): pro randomised
# 9600-9699 (main: 9660) and pro default 9500-9599 (main: 9577); one at a time, nice 19
cd /work/fouls-out/old
T="env PYTHONPATH=/work/branch-fouls/python nice -n 19 /work/main/.venv/bin/python -m foosball.cli"
$T sim tournament --robot improved --opponent pro --randomise --matches 100 --jobs 1 --seed 9600 --json --no-progress > fouls-pro-rand-9600.json.part && mv fouls-pro-rand-9600.json.part fouls-pro-rand-9600.json
$T sim tournament --robot improved --opponent pro --matches 100 --jobs 1 --seed 9500 --json --no-progress > fouls-pro-9500.json.part && mv fouls-pro-9500.json.part fouls-pro-9500.json
echo done > OLD_DONE
