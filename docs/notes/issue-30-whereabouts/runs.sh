#!/bin/bash
# The tournaments of issue-30-whereabouts.md, in the order they were run (two at a time, one
# per core). Each side's tree is /tmp/cmp/SIDE/python: `git archive REV python` with the
# built extensions (_loops, _band) copied in. Sides: main = 86c962b; R = e8c66ba;
# R2 = its next commit; R3 and R4 = the commits of branch issue-whereabouts after it
# (R4 is that branch's code); L = branch issue-behind-late (change 2 alone, merged, 6a1b1cb);
# M = main 6a1b1cb; G = branch issue-tolerance; G2 = branch issue-tolerance-back.
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
# G against M on 10800, G2 against M on 10900
for pair in "10800 M" "10800 G" "10900 M" "10900 G2"; do set -- $pair
    $R $2 $1 seed-rules seedrules-rand --randomise
    $R $2 $1 pro pro-rand --randomise
    $R $2 $1 club club-default ""
    $R $2 $1 pro pro-default ""
done
