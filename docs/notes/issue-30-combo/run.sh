#!/bin/sh
# run.sh SIDE(main|combo) OPPONENT [--randomise]
side=$1; opp=$2; shift 2
if [ "$side" = main ]; then py=/work/base-combo/python; else py=/work/wt-combo/python; fi
tag=$opp$( [ "$1" = --randomise ] && echo -rand)
cd /tmp && PYTHONPATH=$py nice -n 19 /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent $opp "$@" --matches 100 --jobs 1 --seed 9900 --json --no-progress > /tmp/combo/$side-$tag.json 2>/tmp/combo/$side-$tag.err
