#!/bin/sh
# ablations of the frozen branch on pro default 9500-9599 (where its goals against rose):
# a1 = no run guard (keep_off and the nudge only), a2 = no keep_off (the run guard only)
cd /work/fouls-out/abl
for t in a1 a2; do
  env PYTHONPATH=/work/abl-$t/python nice -n 19 /work/main/.venv/bin/python -m foosball.cli sim tournament --robot improved --opponent pro --matches 100 --jobs 1 --seed 9500 --json --no-progress > $t-pro-9500.json.part && mv $t-pro-9500.json.part $t-pro-9500.json
done
echo done > ABL_DONE
