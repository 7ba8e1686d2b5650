"""`foosball strategy ...`: the strategy's tools.

- `params [FILE]`: check a strategy parameter file and print it;
- `fit-ball`: fit the ball prediction's friction model to the simulator's ball;
- `kick-eval`: measure the kick engine in the simulator (power, angle error, success rate);
- `tournament`: the same as `foosball sim tournament` (kept here so it runs from this group too);
- `shots`: the save rate against a battery of scripted shots at set speeds.

A command module beside the packages, not inside strategy/: all but `params` run the
simulator (foosball.sim), which imports the strategy.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("strategy", help="strategy tools: parameters, ball fit, kicks")
    sub = parser.add_subparsers(dest="strategy_command", required=True)
    params = sub.add_parser("params", help="check a strategy parameter file and print it")
    params.add_argument("file", nargs="?", default=None)
    params.set_defaults(func=_params)

    fit = sub.add_parser("fit-ball", help="fit drag and rolling deceleration to the simulator")
    fit.add_argument("--json", action="store_true")
    fit.set_defaults(func=_fit)

    kick = sub.add_parser("kick-eval", help="measure the kick engine in the simulator")
    kick.add_argument("--trials", type=int, default=20, help="kicks per setting")
    kick.add_argument("--seed", type=int, default=0)
    kick.add_argument("--json", action="store_true")
    kick.set_defaults(func=_kick_eval)

    from foosball.lab import shots, tournament

    tournament.add_arguments(sub.add_parser("tournament", help="= foosball sim tournament"))
    shots.add_arguments(sub.add_parser("shots", help="save rate against scripted shots"))


def _params(args: argparse.Namespace) -> int:
    from foosball.strategy.params import ParameterError, load_params

    try:
        params = load_params(args.file)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(asdict(params), indent=2))
    return 0


def _fit(args: argparse.Namespace) -> int:
    from foosball.lab.fit import fit_simulator_ball

    fit = fit_simulator_ball()
    if args.json:
        print(json.dumps(fit))
    else:
        print(f"drag_rate = {fit['drag_rate']:.4f} 1/s, rolling_deceleration = "
              f"{fit['rolling_deceleration']:.4f} m/s^2 (rms speed error {fit['rms_error']:.2e} "
              f"m/s over {fit['samples']} samples)")
    return 0


def _kick_eval(args: argparse.Namespace) -> int:
    from foosball.lab.kick_eval import evaluate, print_table

    report = evaluate(trials=args.trials, seed=args.seed)
    if args.json:
        print(json.dumps(report))
    else:
        print_table(report)
    return 0
