#!/bin/bash
# usage: loopdir.sh DIR TAG N LOAD TESTS...
dir=$1; tag=$2; n=$3; load=$4; shift 4
cd $dir
pids=()
for i in $(seq 1 $load); do python3 -c "while True: pass" & pids+=($!); done
for i in $(seq 1 $n); do
  PYTHONPATH=$dir/python /work/main/.venv/bin/python -m pytest -q -p no:cacheprovider "$@" > /tmp/stress/$tag-out-$i.txt 2>&1
  echo "run $i: $(tail -1 /tmp/stress/$tag-out-$i.txt)" >> /tmp/stress/$tag-summary.txt
done
kill ${pids[@]}
