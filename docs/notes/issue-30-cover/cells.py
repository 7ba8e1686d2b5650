"""Battery json files side by side, cell by cell: goals against per episode (clean / deflected /
own play). python cells.py NAME=FILE [NAME=FILE ...]"""
import json
import sys
from collections import defaultdict

sides = [arg.split("=", 1) for arg in sys.argv[1:]]
tables = []
for name, path in sides:
    report = json.load(open(path))
    cells: dict[tuple[str, float], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for e in report["episodes"]:
        c = cells[(e["kind"], e["speed"])]
        c["episodes"] += 1
        c["goals"] += e["goals_against"]
        for kind, n in e["goals_against_by_kind"].items():
            c[kind] += n
    tables.append((name, cells))
keys = sorted(tables[0][1])
print("cell".ljust(12) + "".join(f"{name:>28}" for name, _ in tables))
total = {name: defaultdict(int) for name, _ in tables}
for key in keys:
    line = f"{key[0]:>7} {key[1]:>3g}"
    for name, cells in tables:
        c = cells[key]
        for k, v in c.items():
            total[name][k] += v
        line += (f"{c['goals'] / c['episodes']:>10.2f} ({c['clean']:>2}/{c['deflected']:>2}"
                 f"/{c['own_play']:>2}) n{c['episodes']}")
    print(line)
line = "    all    "
for name, _ in tables:
    c = total[name]
    line += (f"{c['goals'] / c['episodes']:>10.3f} ({c['clean']:>2}/{c['deflected']:>2}"
             f"/{c['own_play']:>2}) n{c['episodes']}")
print(line)
print("(goals per episode (clean / deflected / own play) and episodes)")
