"""A search over the strategy's parameters: `foosball sim tune`.

Optuna (https://optuna.org) proposes parameter sets for the improved strategy (`SPACE`: a
section of strategy.toml each); each is scored by a tournament on the tuning seeds (the
same matches for every trial): the goal difference per minute of play. The first trial is
the shipped file as it is, so the search starts from it and every trial is measured against
it on the same matches. The trials run one after the other (each tournament on the workers,
`foosball.strategy.engine`), with Optuna's TPE sampler seeded by --seed: the same seed gives
the same trials, parameters and scores.

At the end the best trial and the shipped parameters play a held-out tournament (seeds the
search never saw, --held-out-seed). With --write FILE the best parameters are written to
FILE (the shipped strategy.toml with the searched keys changed, its comments kept) and the
evidence beside it (FILE with .report.json: every trial, the held-out figures), and only if
the best beat the shipped parameters on the held-out seeds by more than --min-gain; else
only the report is written, saying so. The shipped file is never the default target.

    foosball sim tune --opponent pro --trials 30 --matches 16 --duration 60 --jobs 2 \\
        --seed 1 --held-out-matches 40 --write /tmp/strategy.toml
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from foosball.lab.tournament import (
    Overrides,
    add_engine_arguments,
    run_stoppable,
    run_tournament,
)
from foosball.strategy.engine import Engine

# (section, key) -> (low, high): the improved strategy's own knobs
SPACE: dict[tuple[str, str], tuple[float, float]] = {
    ("improved", "control_speed"): (0.3, 1.2),
    ("improved", "shoot_speed"): (0.05, 0.4),
    ("improved", "strike_power"): (80.0, 200.0),
    ("improved", "clear_power"): (40.0, 160.0),
    ("improved", "block_margin"): (0.0, 0.012),
    ("improved", "translation_speed"): (2.0, 6.0),
}


def score(total: dict[str, Any], minutes: float) -> float:
    """The objective: goals for minus against per minute of play."""
    return (total["goals_for"] - total["goals_against"]) / minutes


def shipped_values() -> Overrides:
    from foosball.strategy.params import load_params

    shipped = load_params()
    out: Overrides = {}
    for section, key in SPACE:
        out.setdefault(section, {})[key] = float(getattr(getattr(shipped, section), key))
    return out


def _figures(report: dict[str, Any]) -> dict[str, Any]:
    t = report["total"]
    minutes = t["matches"] * report["duration_s"] / 60.0
    return {"score": round(score(t, minutes), 4), "goals": [t["goals_for"], t["goals_against"]],
            "wins_draws_losses": [t["wins"], t["draws"], t["losses"]],
            "goals_against_by_kind": t["goals_against_by_kind"],
            "fouls_robot": t["fouls"]["robot"]}


def search(args: argparse.Namespace, engine: Engine, log: Any = sys.stderr) -> dict[str, Any]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=args.seed))
    shipped = shipped_values()
    study.enqueue_trial({f"{s}.{k}": v for s, values in shipped.items()
                         for k, v in values.items()})

    def tournament(overrides: Overrides, seed: int, matches: int) -> dict[str, Any]:
        return run_tournament(args.robot, args.opponent, matches, args.jobs, seed,
                              args.duration, args.randomise, show_progress=False,
                              overrides=overrides, engine=engine)

    trials = []
    started = time.monotonic()
    for number in range(args.trials):
        trial = study.ask()
        overrides: Overrides = {}
        for (section, key), (low, high) in SPACE.items():
            overrides.setdefault(section, {})[key] = trial.suggest_float(f"{section}.{key}",
                                                                         low, high)
        figures = _figures(tournament(overrides, args.tune_seed, args.matches))
        study.tell(trial, figures["score"])
        trials.append({"number": number, "params": overrides, **figures})
        print(f"trial {number}: score {figures['score']:+.3f} goals/min "
              f"({figures['goals'][0]}:{figures['goals'][1]}) "
              f"{time.monotonic() - started:.0f} s", file=log, flush=True)
    best = max(trials, key=lambda t: t["score"])
    held_out = {"seeds": [args.held_out_seed, args.held_out_seed + args.held_out_matches - 1],
                "matches": args.held_out_matches,
                "shipped": _figures(tournament(shipped, args.held_out_seed,
                                               args.held_out_matches)),
                "best": _figures(tournament(best["params"], args.held_out_seed,
                                            args.held_out_matches))}
    gain = held_out["best"]["score"] - held_out["shipped"]["score"]
    return {
        "robot": args.robot, "opponent": args.opponent, "duration_s": args.duration,
        "randomise": args.randomise, "sampler": f"optuna TPESampler(seed={args.seed})",
        "optuna": optuna.__version__,
        "objective": "goals for minus goals against per minute of play",
        "tuning_seeds": [args.tune_seed, args.tune_seed + args.matches - 1],
        "space": {f"{s}.{k}": list(bounds) for (s, k), bounds in SPACE.items()},
        "trials": trials, "best_trial": best["number"], "best_params": best["params"],
        "held_out": held_out, "held_out_gain": round(gain, 4), "min_gain": args.min_gain,
        "better_on_held_out": gain > args.min_gain,
    }


def write_params(text: str, overrides: Overrides) -> str:
    """strategy.toml's text with the keys in `overrides` set (comments and layout kept)."""
    section = ""
    missing = {(s, k) for s, values in overrides.items() for k in values}
    lines = []
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[([A-Za-z_]+)\]", line)
        if header:
            section = header.group(1)
        match = re.match(r"(\s*)([A-Za-z_]+)(\s*=\s*)([^#\n]*?)(\s*(#.*)?\n?)$", line)
        if match and section in overrides and match.group(2) in overrides[section]:
            key = match.group(2)
            value = overrides[section][key]
            new = f"{value:.6g}" if isinstance(value, float) else json.dumps(value)
            if "." not in new and "e" not in new and isinstance(value, float):
                new += ".0"
            line = f"{match.group(1)}{key}{match.group(3)}{new}{match.group(5)}"
            missing.discard((section, key))
        lines.append(line)
    if missing:
        raise ValueError(f"keys not in the parameter file: {sorted(missing)}")
    return "".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="improved", help="the strategy whose parameters")
    parser.add_argument("--opponent", default="pro", help="rookie | club | pro | a strategy")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--matches", type=int, default=10, help="per trial")
    parser.add_argument("--duration", type=float, default=60.0, help="s per match")
    parser.add_argument("--randomise", action="store_true",
                        help="draw the table's realism parameters per match")
    parser.add_argument("--seed", type=int, default=0, help="the sampler's seed")
    parser.add_argument("--tune-seed", type=int, default=50_000,
                        help="first match seed of the tuning tournaments")
    parser.add_argument("--held-out-seed", type=int, default=90_000,
                        help="first match seed of the held-out tournament")
    parser.add_argument("--held-out-matches", type=int, default=20)
    parser.add_argument("--min-gain", type=float, default=0.0,
                        help="goals/min the best must beat the shipped parameters by, held out")
    parser.add_argument("--write", metavar="FILE", type=Path,
                        help="write the best parameters here (with FILE.report.json) if "
                             "they are better on the held-out seeds")
    parser.add_argument("--report", metavar="FILE", type=Path,
                        help="write the search's report here (default: beside --write)")
    add_engine_arguments(parser)
    parser.set_defaults(func=_main)


def register_tune(sim_subparsers: argparse._SubParsersAction) -> None:
    add_arguments(sim_subparsers.add_parser("tune", help="search the strategy's parameters"))


def _main(args: argparse.Namespace) -> int:
    from foosball.strategy.registry import STRATEGIES

    if args.robot not in STRATEGIES:
        print(f"error: --robot must be a strategy: {sorted(STRATEGIES)}", file=sys.stderr)
        return 2
    if min(args.trials, args.matches, args.held_out_matches, args.jobs) < 1:
        print("error: --trials, --matches, --held-out-matches and --jobs must be >= 1",
              file=sys.stderr)
        return 2
    if abs(args.held_out_seed - args.tune_seed) < max(args.matches, args.held_out_matches):
        print("error: the held-out seeds overlap the tuning seeds", file=sys.stderr)
        return 2
    for path in (args.write, args.report):
        if path is not None and not path.parent.is_dir():
            print(f"error: {path}: no folder {path.parent}", file=sys.stderr)
            return 2
    def searched() -> dict[str, Any]:
        with Engine(args.jobs, args.ray_address) as engine:
            return search(args, engine)
    report, status = run_stoppable("search", searched)
    if report is None:
        return status
    report_path = args.report
    if args.write is not None:
        report_path = report_path or args.write.with_suffix(".report.json")
        if report["better_on_held_out"]:
            from foosball.strategy.params import default_params_path, load_params

            text = write_params(default_params_path().read_text(), report["best_params"])
            args.write.write_text(text)
            load_params(args.write)  # what was written must load
            report["written"] = str(args.write)
        else:
            report["written"] = None
    if report_path is not None:
        report_path.write_text(json.dumps(report, indent=1) + "\n")
    held = report["held_out"]
    print(f"best trial {report['best_trial']} of {args.trials}: "
          f"{json.dumps(report['best_params'])}")
    print(f"held out ({held['matches']} matches, seeds {held['seeds'][0]}..{held['seeds'][1]}): "
          f"best {held['best']['score']:+.3f} goals/min {held['best']['goals']}, shipped "
          f"{held['shipped']['score']:+.3f} {held['shipped']['goals']}")
    if args.write is not None:
        print(f"{args.write}: " + ("written" if report["written"] else
                                   "not written: not better than the shipped parameters on "
                                   "the held-out seeds") + f"; evidence in {report_path}")
    elif report_path is not None:
        print(f"report: {report_path}")
    return 0
