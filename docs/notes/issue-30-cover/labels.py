"""Labels for classify.py's clean goals with the drive's real reach: the translation drive is
jerk-limited (406 m/s^3 at the rod), so from rest it covers 406 t^3 / 6 in t (8 mm in 50 ms,
68 mm in 100 ms); the strategy sees a shot about 30 ms after it is struck (exposure, tracker
latency and its filter's lag, command latency).

python labels.py FILE  (classify.py's output)"""
import json
import sys
from collections import Counter

BLOCK = 0.0286  # m: half a foot plus a ball radius
JERK = 406.0  # m/s^3
SEEN_AFTER = 0.03  # s

rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
counts: Counter[str] = Counter()
by_cell: dict[str, Counter[str]] = {}
for r in rows:
    need = r["gk_start_dy"] - BLOCK
    t = max(0.0, r["t_avail"] - SEEN_AFTER)
    can = JERK * t ** 3 / 6
    near = r["x0"] < -0.15  # struck by his attack rod (or a rebound near our defence)
    if r["x0"] < -0.55:
        label = "last turn at our goal line (off a post or in the goal's mouth): not a shot"
    elif r["label"] == "keeper_limit":
        label = "keeper at his travel's end"
    elif r["gk_start_dy"] <= BLOCK:
        label = "keeper covered the line at the shot, moved off it"
    elif need <= can:
        label = "open at the shot, in reach from rest in the time: late or wrong-way reaction"
    else:
        label = ("open at the shot, out of reach: cover left it open, shot from "
                 + ("his attack rod" if near else "further up"))
    if r["de_cov"]:
        label += " [defence covered the line too]"
    counts[label] += 1
    by_cell.setdefault(f"{r['kind']} {r['speed']:g}", Counter())[label] += 1
    print(f"{r['kind']:>7} {r['speed']:>3g} {r['seed']} x0 {r['x0']:+.3f} v {r['v']:5.2f} "
          f"t {r['t_avail']:.3f} keeper off {r['gk_start_dy'] * 1000:4.0f} mm -> "
          f"{r['gk_cross_dy'] * 1000:4.0f} mm, can {can * 1000:4.0f} mm | {label}")
print()
for label, n in counts.most_common():
    print(f"{n:3d}  {label}")
print(f"{sum(counts.values()):3d}  clean goals")
