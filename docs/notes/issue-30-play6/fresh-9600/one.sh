#!/bin/sh
# one.sh TREE OPP: 100 matches on fresh seeds 9600-9699 (OPP: pro-rand, pro, sr-rand, club)
cd /work/fresh-9600
case $2 in
  pro-rand) args="--opponent pro --randomise";; pro) args="--opponent pro";;
  sr-rand) args="--opponent seed-rules --randomise";; club) args="--opponent club";;
esac
PYTHONPATH=/work/fresh-9600/$1/python nice -n 19 /work/main/.venv/bin/foosball sim tournament --robot improved $args --matches 100 --jobs 1 --seed 9600 --json --no-progress > $1-$2.json.part && mv $1-$2.json.part $1-$2.json
