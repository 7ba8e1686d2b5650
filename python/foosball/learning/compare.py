"""`foosball learn compare`: two shot batteries (`foosball strategy shots --json`) and
optionally two tournaments (`foosball strategy tournament --json`) side by side, as the
markdown tables of the issue note: goals per episode in every cell, and the matches."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def battery_table(a: dict[str, Any], b: dict[str, Any]) -> str:
    speeds = sorted({row["speed"] for row in a["by_kind"]})
    kinds = list(dict.fromkeys(row["kind"] for row in a["by_kind"]))
    cell = {(r["kind"], r["speed"], which): r for which, report in (("a", a), ("b", b))
            for r in report["by_kind"]}
    head = "| cell | " + " | ".join(f"{v:g} m/s" for v in speeds) + " |"
    lines = [f"goals per episode, {a['robot']} / {b['robot']} (save rate in brackets)", "",
             head, "|---" * (len(speeds) + 1) + "|"]
    for kind in kinds:
        values = []
        for v in speeds:
            ra, rb = cell[(kind, v, "a")], cell[(kind, v, "b")]
            values.append(f"{ra['goals_per_episode']:.2f} ({ra['save_rate']}) / "
                          f"{rb['goals_per_episode']:.2f} ({rb['save_rate']})")
        lines.append(f"| {kind} | " + " | ".join(values) + " |")
    ta, tb = a["total"], b["total"]
    lines += ["", f"all {ta['episodes']} episodes: {a['robot']} {ta['goals_against']} goals "
              f"({ta['goals_per_episode']} per episode, save rate {ta['save_rate']}, "
              f"{ta['goals_against_by_kind']}); {b['robot']} {tb['goals_against']} goals "
              f"({tb['goals_per_episode']} per episode, save rate {tb['save_rate']}, "
              f"{tb['goals_against_by_kind']})"]
    return "\n".join(lines)


def matches_line(report: dict[str, Any]) -> str:
    t = report["total"]
    return (f"{report['robot']} v {report['opponent']}, {t['matches']} matches of "
            f"{report['duration_s']:g} s (seeds from {report['seed']}"
            f"{', randomised tables' if report.get('randomise') else ''}): won {t['wins']}, "
            f"drawn {t['draws']}, lost {t['losses']}; goals {t['goals_for']}:"
            f"{t['goals_against']} ({t['goals_per_minute']}/min), save rate {t['save_rate']}, "
            f"goals against by kind {t['goals_against_by_kind']}, our fouls "
            f"{t['fouls']['robot']['possession']} possession, "
            f"{t['fouls']['robot']['spinning']} spinning")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("battery_a", type=Path)
    parser.add_argument("battery_b", type=Path)
    parser.add_argument("--matches", nargs=2, type=Path, metavar=("A", "B"))

    def run(args: argparse.Namespace) -> int:
        a, b = (json.loads(p.read_text()) for p in (args.battery_a, args.battery_b))
        print(battery_table(a, b))
        for path in args.matches or ():
            print(matches_line(json.loads(path.read_text())))
        return 0

    parser.set_defaults(func=run)
