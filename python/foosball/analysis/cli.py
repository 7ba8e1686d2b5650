"""`foosball report FILE... -o report.html [--plots-dir DIR] [--json]`: a self-contained
HTML report of recorded matches (the board's or the simulator's), every plot also a PNG."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("report", help="an HTML report with plots of recorded "
                                                  "matches (needs the `report` extra)")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="recordings (.cbors): the parts of a match, or several matches")
    parser.add_argument("-o", "--output", default="report.html", type=Path)
    parser.add_argument("--plots-dir", type=Path, metavar="DIR",
                        help="where each plot goes as a PNG (default: <output>-plots/)")
    parser.add_argument("--json", action="store_true", help="also print the summary as JSON")
    parser.set_defaults(func=_report)


def _report(args: argparse.Namespace) -> int:
    from foosball.analysis.match import analyse
    from foosball.analysis.replay_cli import read_or_say

    try:
        import matplotlib  # noqa: F401  (said here, before any work, when it is missing)

        from foosball.analysis.report import write_report
    except ModuleNotFoundError as exc:
        print(f"foosball report: needs {exc.name!r}: pip install 'foosball[report]'",
              file=sys.stderr)
        return 2
    recording = read_or_say("report", [str(f) for f in args.files])
    if recording is None:
        return 1
    analysis = analyse(recording)
    plots_dir = args.plots_dir or args.output.with_name(args.output.stem + "-plots")
    write_report(analysis, recording.table, [str(f) for f in args.files], args.output,
                 plots_dir)
    if args.json:
        print(json.dumps(analysis.summary(), indent=2))
    else:
        s = analysis.summary()
        print(f"{args.output}: {s['duration_s']} s, robot {s['score']['robot']} : "
              f"{s['score']['human']} human; plots in {plots_dir}/")
    return 0
