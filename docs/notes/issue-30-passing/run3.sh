#!/bin/bash
# run3.sh QUEUE: variant a on seeds 10400-10499 (queue 1: seed-rules rand, pro rand; queue 2 after main's pro default: club, pro default)
Q=$1; P=/tmp/cmp/a/python; D=/tmp/cmp/out
run() { PYTHONPATH=$P /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $1 $2 --matches 100 --jobs 1 --seed 10400 --json --no-progress > $D/a-$3.json 2> $D/a-$3.err; }
if [ "$Q" = 1 ]; then run seed-rules --randomise seedrules-rand; run pro --randomise pro-rand;
else while [ ! -e $D/DONE2-main ]; do sleep 5; done; run club "" club-default; run pro "" pro-default; fi
echo done > $D/DONE3-$Q
