#!/bin/bash
# The runs of issue-30-tolerance2.md, in the order they were run (two at a time, one per
# core). Each side's tree is /tmp/cmp/SIDE/python: `git archive REV python` with the built
# extensions (_loops, _band) copied in. Sides: M = main 8718a98 (python as 6a1b1cb);
# A = M with `aim_through_gaps = true` in python/foosball/data/strategy.toml;
# G2 = 182e76a (branch issue-tolerance-back, since merged as c9df094); S3 below.
# Outputs: /tmp/cmp/out; ../issue-30-whereabouts/slim.py copies them into out/.
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../.."  # the repository: .venv and benchmarks/
RUN=$HERE/../issue-30-whereabouts/run.sh
ONE=$HERE/../issue-30-whereabouts/run-one.sh
"$RUN" M 11000 &
# A stopped after its first two tournaments (worse on both: section 1)
"$ONE" A 11000 seed-rules seedrules-rand --randomise
"$ONE" A 11000 pro pro-rand --randomise
wait
"$RUN" G2 11000 &
# backward touches on tuning seeds (the pro runs after them were stopped for the third range)
for side in M G2; do
    PYTHONPATH=/tmp/cmp/$side/python .venv/bin/python benchmarks/backward_touches.py \
        seed-rules 8860 100 --randomise > "$HERE/touches/$side-sr-8860.jsonl"
done
wait
"$RUN" M 11100 &
"$RUN" G2 11100
wait
# the battery, one side after the other on a local Ray with two workers
for side in M G2; do
    PYTHONPATH=/tmp/cmp/$side/python .venv/bin/python -m foosball.cli strategy shots \
        --robot improved --kinds rest,rolling,pull,push,pin --episodes 100 --seed 11000 \
        --jobs 2 --json --no-progress > /tmp/cmp/battery-$side-11000.json
done
# The audit that found S3's mechanism (main c9df094, tuning seeds), one per core
PYTHONPATH=python .venv/bin/python benchmarks/own_play_audit.py pro 8960 100 --randomise \
    > "$HERE/audit-main-pro-rand-8960.txt" &
PYTHONPATH=python .venv/bin/python benchmarks/own_play_audit.py seed-rules 8960 100 \
    --randomise > "$HERE/audit-main-sr-rand-8960.txt"
wait
# S3 = 55591c3 (branch issue-slow-sweep; 13b24db after it changes comments only) against
# M = main c9df094 (the M tree rebuilt from it). 11200: M whole, S3 in two halves (its
# first version's runs, stopped, are not kept); 11300 the same, in halves on both sides.
"$RUN" M 11200 &
("$ONE" S3 11200 seed-rules seedrules-rand --randomise; "$ONE" S3 11200 club club-default "") &
wait
("$ONE" S3 11200 pro pro-rand --randomise; "$ONE" S3 11200 pro pro-default "")
for side in M S3; do
    ("$ONE" $side 11300 seed-rules seedrules-rand --randomise
     "$ONE" $side 11300 pro pro-rand --randomise) &
done
wait
for side in M S3; do
    ("$ONE" $side 11300 club club-default ""; "$ONE" $side 11300 pro pro-default "") &
done
wait
# S3's battery, after CI's run 37
PYTHONPATH=/tmp/cmp/S3/python .venv/bin/python -m foosball.cli strategy shots --robot improved \
    --kinds rest,rolling,pull,push,pin --episodes 100 --seed 11000 --jobs 2 --json \
    --no-progress > /tmp/cmp/battery-S3-11000.json
