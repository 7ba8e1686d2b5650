#!/bin/bash
# The runs of issue-30-tolerance2.md, in the order they were run (two at a time, one per
# core). Each side's tree is /tmp/cmp/SIDE/python: `git archive REV python` with the built
# extensions (_loops, _band) copied in. Sides: M = main 8718a98 (python as 6a1b1cb);
# A = M with `aim_through_gaps = true` in python/foosball/data/strategy.toml;
# G2 = 182e76a (branch issue-tolerance-back, since merged as c9df094).
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
