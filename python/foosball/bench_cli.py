"""`foosball bench budget [ARGS]`: the performance budget (benchmarks/budget.py) from the
command line. The benchmarks live in the source tree, not in the package: this works from a
checkout (or an editable install), and says so anywhere else."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

BUDGET_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "budget.py"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="benchmarks of the source tree")
    sub = parser.add_subparsers(dest="bench_command", required=True)
    # Every argument, options included, goes to the script: this parser has no options of
    # its own (prefix "+", which no argument of the script starts with).
    budget = sub.add_parser("budget", add_help=False, prefix_chars="+",
                            help="each agent's CPU share of its period on its board")
    budget.add_argument("args", nargs=argparse.REMAINDER,
                        help="benchmarks/budget.py's own arguments (--help for them)")
    budget.set_defaults(func=_budget)


def _budget(args: argparse.Namespace) -> int:
    if not BUDGET_SCRIPT.is_file():
        print(f"foosball bench budget: {BUDGET_SCRIPT} not found (run it from a checkout)",
              file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("budget", BUDGET_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["budget"] = module
    spec.loader.exec_module(module)
    return int(module.main(args.args))
