#!/bin/bash
# The tournaments of issue-30-whereabouts.md, in the order they were run (two at a time, one
# per core). Each side's tree is /tmp/cmp/SIDE/python: `git archive REV python` with the
# built extensions (_loops, _band) copied in. Sides: main = 86c962b; R = e8c66ba;
# R2 = a166dbc; R3 = 7047b47; R4 = aad8f7a (branch issue-whereabouts, whose last commit
# 78d1061 changes comments only); L = 6a1b1cb (branch issue-behind-late, merged);
# M = main 6a1b1cb; G = 3fca697 (branch issue-tolerance); G2 = 182e76a
# (issue-tolerance-back). Outputs: /tmp/cmp/out; docs/notes/issue-30-whereabouts/slim.py
# copies them into out/.
HERE=$(dirname "$0")
for side in main R; do "$HERE"/run.sh $side 10500; done  # R stopped after pro-rand
# R2: seed-rules and pro randomised (stopped there); R3 the same
"$HERE"/run-one.sh R2 10500 seed-rules seedrules-rand --randomise
"$HERE"/run-one.sh R2 10500 pro pro-rand --randomise
"$HERE"/run-one.sh R3 10500 seed-rules seedrules-rand --randomise
"$HERE"/run-one.sh R3 10500 pro pro-rand --randomise
# R4 on 10500, main and R4 on 10600, L on 10500 (main's from above), G against M (main
# 6a1b1cb) on 10800, G2 against M on 10900
for pair in "R4 10500" "main 10600" "R4 10600" "L 10500" "M 10800" "G 10800" "M 10900" \
        "G2 10900"; do
    "$HERE"/run.sh $pair
done
