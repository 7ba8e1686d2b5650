#!/bin/sh
cd /tmp/p6/tune
while [ ! -f DONE2 ]; do sleep 10; done
run() {
  env PYTHONPATH=$2 nice -n 19 /work/main/.venv/bin/foosball sim tournament --robot improved --opponent $3 $5 --matches 40 --jobs 1 --seed $4 --json --no-progress > $1.json.part && mv $1.json.part $1.json
}
B=/tmp/p6/b3/python
run b3-club $B club 8100 ""
run b3-pro-rand $B pro 8030 --randomise
run b3-sr-rand $B seed-rules 8100 --randomise
echo done > DONE3
