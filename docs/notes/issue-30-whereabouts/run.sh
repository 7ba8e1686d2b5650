#!/bin/bash
# run.sh SIDE SEED: improved (SIDE's tree in /tmp/cmp/SIDE/python) against seed-rules
# (randomised), pro (randomised), club and pro (default), 100 matches each from SEED; one
# tournament at a time (--jobs 1), so two sides run side by side on two cores.
R=$(dirname "$0")/run-one.sh
"$R" "$1" "$2" seed-rules seedrules-rand --randomise
"$R" "$1" "$2" pro pro-rand --randomise
"$R" "$1" "$2" club club-default ""
"$R" "$1" "$2" pro pro-default ""
