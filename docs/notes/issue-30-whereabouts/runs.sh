#!/bin/bash
# The tournaments of issue-30-whereabouts.md, in the order they were run (two at a time, one
# per core). Each side's tree is /tmp/cmp/SIDE/python: `git archive REV python` with the
# built extensions (_loops, _band) copied in. Sides: main = 86c962b; R = e8c66ba;
# R2 = its next commit; R3 and R4 = the commits of branch issue-whereabouts after it
# (R4 is that branch's code); L = branch issue-behind-late (change 2 alone, merged).
R=$(dirname "$0")/run-one.sh
for side in main R; do "$(dirname "$0")"/run.sh $side 10500; done  # R stopped after pro-rand
# R2: seed-rules and pro randomised (stopped there); R3 the same
# R4 and main on 10500 and 10600, each of the four tournaments:
for seed in 10500 10600; do for side in main R4; do
    $R $side $seed seed-rules seedrules-rand --randomise
    $R $side $seed pro pro-rand --randomise
    $R $side $seed club club-default ""
    $R $side $seed pro pro-default ""
done; done
# L on 10500 (main's from above)
$R L 10500 seed-rules seedrules-rand --randomise
$R L 10500 pro pro-rand --randomise
$R L 10500 club club-default ""
$R L 10500 pro pro-default ""
