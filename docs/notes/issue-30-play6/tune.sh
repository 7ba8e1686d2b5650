#!/bin/sh
# tuning tournaments, main (af19810, the lead's archived tree) vs branch (worktree), one at a time
cd /tmp/p6/tune
run() { # name tree opp seed extra
  env PYTHONPATH=$2 nice -n 19 /work/main/.venv/bin/foosball sim tournament --robot improved --opponent $3 $5 --matches 40 --jobs 1 --seed $4 --json --no-progress > $1.json.part && mv $1.json.part $1.json
}
M=/work/baseline-9500/tree/python
B=/tmp/p6/b1/python
run b1-pro-rand $B pro 8030 --randomise
run main-pro-rand $M pro 8030 --randomise
run b1-sr-rand $B seed-rules 8100 --randomise
run main-sr-rand $M seed-rules 8100 --randomise
run b1-club $B club 8100 ""
run main-club $M club 8100 ""
echo done > DONE
