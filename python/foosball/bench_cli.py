"""`foosball bench [ARGS]`: every benchmark in one run, the machine described and the README's
figures table (benchmarks/run_all.py); `foosball bench budget [ARGS]`: the performance
budget alone (benchmarks/budget.py). The benchmarks live in the source tree, not in the
package: this works from a checkout (or an editable install), and says so anywhere else."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# the first argument that names a script of its own, and that script
SCRIPTS = {"budget": "budget.py"}
RUN_ALL = "run_all.py"


def register(subparsers: argparse._SubParsersAction) -> None:
    # Every argument, options included, goes to the script: this parser has no options of
    # its own (prefix "+", which no argument of the scripts starts with).
    parser = subparsers.add_parser(
        "bench", add_help=False, prefix_chars="+",
        help="every benchmark in one run (--help: its options); `bench budget`: the budget")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="run_all.py's arguments, or `budget` and budget.py's")
    parser.set_defaults(func=_bench)


def _bench(args: argparse.Namespace) -> int:
    argv = list(args.args)
    script = RUN_ALL
    if argv and argv[0] in SCRIPTS:
        script = SCRIPTS[argv.pop(0)]
    path = BENCHMARKS / script
    if not path.is_file():
        print(f"foosball bench: {path} not found (run it from a checkout)", file=sys.stderr)
        return 2
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return int(module.main(argv))
