#!/bin/sh
# the branch (issue-fouls dddffd8, frozen in /work/branch-fouls) on fresh held-out seeds
# 9700-9799, one at a time after main's (base.sh), nice 19
cd /work/fouls-out
while [ ! -f BASE_DONE ]; do sleep 10; done
T="env PYTHONPATH=/work/branch-fouls/python nice -n 19 /work/main/.venv/bin/python -m foosball.cli"
run() { name=$1; shift; $T sim tournament --robot improved "$@" --matches 100 --jobs 1 --seed 9700 --json --no-progress > $name.json.part && mv $name.json.part $name.json; }
run fouls-pro-rand --opponent pro --randomise
run fouls-pro --opponent pro
run fouls-sr-rand --opponent seed-rules --randomise
run fouls-club --opponent club
echo done > BRANCH_DONE
