"""pooled_all.py [RUNS.json]: main against the branch (`fouls-`) over all four held-out
tournaments pooled (400 matches a side, the same seeds), as ../issue-30-play4/pooled.py
does for own play, for wins, goals for and goals against: paired per-match differences,
4,000 bootstrap resamples of the matches (seed 1), 95 % intervals."""
import json
import random
import sys
from pathlib import Path

runs = json.loads(Path(sys.argv[1] if len(sys.argv) > 1 else
                       Path(__file__).with_name("tournaments.json")).read_text())
a, b = [], []
for name in sorted(runs):
    if name.startswith("main-"):
        a += runs[name]["per_match"]
        b += runs["fouls" + name[len("main"):]]["per_match"]
assert [m[0] for m in a] == [m[0] for m in b]
rng = random.Random(1)
n = len(a)
samples = [[rng.randrange(n) for _ in range(n)] for _ in range(4000)]
for label, f in (("wins", lambda m: int(m[1] > m[2])), ("goals for", lambda m: m[1]),
                 ("goals against", lambda m: m[2])):
    d = [f(y) - f(x) for x, y in zip(a, b, strict=True)]
    sums = sorted(sum(d[k] for k in s) for s in samples)
    print(f"{label}: {sum(f(x) for x in a)} -> {sum(f(y) for y in b)} "
          f"(difference 95 % {sums[100]:+d}..{sums[3899]:+d})")
