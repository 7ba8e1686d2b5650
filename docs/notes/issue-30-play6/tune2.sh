#!/bin/sh
cd /tmp/p6/tune
while [ ! -f DONE ]; do sleep 10; done
run() {
  env PYTHONPATH=$2 nice -n 19 /work/main/.venv/bin/foosball sim tournament --robot improved --opponent $3 $5 --matches 40 --jobs 1 --seed $4 --json --no-progress > $1.json.part && mv $1.json.part $1.json
}
B=/tmp/p6/b2/python
run b2-pro-rand $B pro 8030 --randomise
run b2-sr-rand $B seed-rules 8100 --randomise
run b2-club $B club 8100 ""
echo done > DONE2
