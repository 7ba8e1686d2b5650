#!/bin/sh
# main (baseline) on fresh held-out seeds 9700-9799, one at a time, nice 19
cd /work/fouls-out
T="env PYTHONPATH=/work/base-fouls/python nice -n 19 /work/main/.venv/bin/python -m foosball.cli"
run() { name=$1; shift; $T sim tournament --robot improved "$@" --matches 100 --jobs 1 --seed 9700 --json --no-progress > $name.json.part && mv $name.json.part $name.json; }
run main-pro-rand --opponent pro --randomise
run main-pro --opponent pro
run main-sr-rand --opponent seed-rules --randomise
run main-club --opponent club
echo done > BASE_DONE
