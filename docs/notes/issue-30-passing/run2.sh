#!/bin/bash
# run2.sh SIDE: pro randomised and default, seeds 10400-10499, 100 matches each
S=$1; P=/tmp/cmp/$S/python; D=/tmp/cmp/out
while [ ! -e $D/DONE-$S ]; do sleep 5; done
run() { PYTHONPATH=$P /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $1 $2 --matches 100 --jobs 1 --seed 10400 --json --no-progress > $D/$S-$3.json 2> $D/$S-$3.err; }
run pro --randomise pro-rand
run pro "" pro-default
echo done > $D/DONE2-$S
