"""`foosball geometry check FILE`: validate a table geometry file and summarise it."""

from __future__ import annotations

import argparse
import json
import sys

from foosball.geometry import GeometryError, default_table_path, load_table


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("geometry", help="table geometry files")
    sub = parser.add_subparsers(dest="geometry_command", required=True)
    check = sub.add_parser("check", help="validate a geometry file and print its rods")
    check.add_argument("file", nargs="?", default=str(default_table_path()))
    check.add_argument("--json", action="store_true", help="print the rods as JSON")
    check.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    try:
        table = load_table(args.file)
    except GeometryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    rows = [
        {
            "name": rod.name,
            "x": rod.x,
            "men": rod.men,
            "travel": [rod.travel_min, rod.travel_max],
            "reach_y": [min(r[0] for r in rod.reachable_y()), max(r[1] for r in rod.reachable_y())],
            "m_per_motor_rad": rod.metres_per_motor_radian(),
        }
        for rod in table.rods
    ]
    if args.json:
        print(json.dumps({"field": [table.field.length, table.field.width], "rods": rows}))
    else:
        for row in rows:
            print(f"{row['name']:18} x={row['x']:+.3f} men={row['men']} travel={row['travel']}")
    return 0
