"""Tournaments: many simulated matches of a robot strategy against an opponent, in parallel.

`foosball sim tournament --robot STRATEGY --opponent LEVEL|STRATEGY --matches N --jobs J
--seed S [--duration D] [--randomise] [--ray-address ADDR] [--json]`. Match i runs with seed
S + i, so a tournament is reproducible whatever --jobs is and wherever it runs: with --jobs 1
in this process, with more on a local Ray of that many CPUs, with --ray-address on the user's
Ray cluster (`foosball.lab.engine`). Either side can be a strategy (the human side
is mirrored by the match runner) or a scripted level (rookie, club, pro), or a shot battery
``shooter:LOW-HIGH``: the pro level's hands and aim (gaps between our goalkeeper and defence,
bank shots) with every shot drawn between LOW and HIGH m/s and no passes.

Per match and in total: goals for and against, the goals against by kind (a clean shot, a
deflected shot, own play, untouched: `foosball.sim.match`), the save rate (saves / (saves +
goals against); a save is an on-target shot of the opponent that our men touched and that did
not end in a goal within 2 s),
shots and their speeds, the save rate by shot-speed band, serves and restarts (and of them
the dead balls served again or put at a goalkeeper).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from foosball.lab.engine import Engine, EngineError, run_jobs

T = TypeVar("T")

SPEED_BANDS = ((0.0, 5.0), (5.0, 10.0), (10.0, 15.0), (15.0, 99.0))


# a strategy's parameters changed from the shipped file: {section: {key: value}}
Overrides = dict[str, dict[str, Any]]


def make_side(name: str, table: Any, seed: int, overrides: Overrides | None = None) -> Any:
    """A controller by name: a strategy (with its shipped parameters, `overrides` changed),
    a simulator controller, or a shooter battery."""
    from foosball.sim.controllers import make_controller
    from foosball.strategy.registry import STRATEGIES

    if name in STRATEGIES:
        return STRATEGIES[name](table, seed, with_overrides(overrides))
    if overrides:
        raise ValueError(f"{name!r} is not a strategy: it takes no strategy parameters")
    if name.startswith("shooter:"):
        from foosball.sim.opponents import PRO, ScriptedOpponent

        low, _, high = name.split(":", 1)[1].partition("-")
        skill = replace(PRO, name=name, shot_speed=(float(low), float(high or low)),
                        pass_probability=0.0)
        return ScriptedOpponent(table, skill, seed)
    return make_controller(name, table, seed)


def with_overrides(overrides: Overrides | None) -> Any:
    """The shipped strategy parameters with `overrides` changed (None: as shipped)."""
    if not overrides:
        return None
    from foosball.strategy.params import load_params, parse_params

    shipped = load_params()
    data = {section: {f: getattr(getattr(shipped, section), f)
                      for f in getattr(shipped, section).__dataclass_fields__}
            for section in shipped.__dataclass_fields__}
    for section, values in overrides.items():
        if section not in data:
            raise ValueError(f"no parameter section {section!r}; known: {sorted(data)}")
        data[section].update(values)
    data = {section: {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
            for section, values in data.items()}
    return parse_params(data)


# (robot, opponent, seed, duration, randomise, the robot strategy's parameter overrides)
Job = tuple[str, str, int, float, bool, Overrides | None]


def play_one(job: Job) -> dict[str, Any]:
    """One match (a worker runs this); returns plain data."""
    from foosball.geometry import default_table
    from foosball.sim.match import Match

    robot, opponent, seed, duration, randomise, overrides = job
    table = default_table()
    match = Match(
        make_side(robot, table, seed, overrides),
        make_side(opponent, table, seed + 1),
        seed=seed,
        duration=duration,
        table=table,
        randomise=randomise,
    )
    result = match.run()
    return summarise(result, seed)


def summarise(result: Any, seed: int) -> dict[str, Any]:
    shots = {"robot": [], "human": []}
    for shot in result.shots:
        shots[shot.team].append(
            {"speed": round(shot.speed, 2), "on_target": shot.on_target, "outcome": shot.outcome}
        )
    against = [s for s in shots["human"] if s["on_target"] and s["outcome"] in ("saved", "goal")]
    # every goal conceded counts as a shot not saved, whether or not it was "on target" when
    # struck (deflections, rebounds)
    saved = sum(s["outcome"] == "saved" for s in against)
    bands = {}
    for low, high in SPEED_BANDS:
        in_band = [s for s in against if low <= s["speed"] < high]
        bands[f"{low:g}-{high:g}"] = [sum(s["outcome"] == "saved" for s in in_band), len(in_band)]
    from foosball.sim.match import goal_kinds

    return {
        "seed": seed,
        "goals_for": result.goals_robot,
        "goals_against": result.goals_human,
        "goals_against_by_kind": goal_kinds(result.goals, "robot"),
        "saves": saved,
        "on_target_against": len(against),
        "save_rate": _rate(saved, saved + result.goals_human),
        "save_bands": bands,
        "shots_for": shots["robot"],
        "shots_against": shots["human"],
        "serves": result.serves,
        "restarts": result.restarts,
        "dead_balls": dict(result.dead_balls),
        "fouls": result.fouls,
        "duration_s": result.duration,
        "wall_time": round(result.wall_time, 2),
    }


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def totals(matches: list[dict[str, Any]]) -> dict[str, Any]:
    gf = sum(m["goals_for"] for m in matches)
    ga = sum(m["goals_against"] for m in matches)
    saves = sum(m["saves"] for m in matches)
    faced = sum(m["on_target_against"] for m in matches)
    bands: dict[str, list[int]] = {}
    for m in matches:
        for band, (s, n) in m["save_bands"].items():
            acc = bands.setdefault(band, [0, 0])
            acc[0] += s
            acc[1] += n

    def speeds(key: str) -> dict[str, Any]:
        values = [s["speed"] for m in matches for s in m[key]]
        return {
            "count": len(values),
            "on_target": sum(s["on_target"] for m in matches for s in m[key]),
            "mean_speed": round(sum(values) / len(values), 3) if values else None,
            "max_speed": max(values) if values else None,
        }

    minutes = sum(m["duration_s"] for m in matches) / 60.0
    kinds: dict[str, int] = {}
    for m in matches:
        for kind, count in m["goals_against_by_kind"].items():
            kinds[kind] = kinds.get(kind, 0) + count
    return {
        "matches": len(matches),
        "goals_per_minute": {"for": round(gf / minutes, 3) if minutes else None,
                             "against": round(ga / minutes, 3) if minutes else None},
        "fouls": {team: _fouls(matches, team) for team in ("robot", "human")},
        "serves": sum(m["serves"] for m in matches),
        "restarts": sum(m["restarts"] for m in matches),
        "dead_balls": {where: sum(m["dead_balls"][where] for m in matches)
                       for where in ("served", "goalkeeper")},
        "wins": sum(m["goals_for"] > m["goals_against"] for m in matches),
        "draws": sum(m["goals_for"] == m["goals_against"] for m in matches),
        "losses": sum(m["goals_for"] < m["goals_against"] for m in matches),
        "win_rate": _rate(sum(m["goals_for"] > m["goals_against"] for m in matches), len(matches)),
        "goals_for": gf,
        "goals_against": ga,
        "goals_ratio": round(gf / ga, 3) if ga else None,
        "goals_against_by_kind": kinds,
        "own_play_share": _rate(kinds.get("own_play", 0), ga),
        "save_rate": _rate(saves, saves + ga),
        "saves": saves,
        "on_target_against": faced,
        "save_rate_by_speed": {b: {"saved": s, "faced": n, "rate": _rate(s, n)}
                               for b, (s, n) in bands.items()},
        "shots_for": speeds("shots_for"),
        "shots_against": speeds("shots_against"),
    }


def _fouls(matches: list[dict[str, Any]], team: str) -> dict[str, Any]:
    """One team's rule violations over the matches and its longest possession."""
    rows = [m["fouls"][team] for m in matches]
    longest = max(rows, key=lambda r: r["longest_possession_s"])
    return {
        "possession": sum(r["possession"] for r in rows),
        "spinning": sum(r["spinning"] for r in rows),
        "longest_possession_s": longest["longest_possession_s"],
        "longest_zone": longest["longest_zone"],
    }


def progress(done: int, total: int, started: float, width: int = 30) -> None:
    filled = width * done // max(total, 1)
    elapsed = time.monotonic() - started
    eta = elapsed / done * (total - done) if done else 0.0
    sys.stderr.write(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
        f"{elapsed:5.0f} s elapsed, ~{eta:4.0f} s left"
    )
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _interrupted(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def run_stoppable(what: str, job: Callable[[], T]) -> tuple[T | None, int]:
    """A command's run on the engine: (its result, 0), or (None, the exit status) with why
    on stderr. SIGTERM and SIGHUP (a closed terminal) stop it as Ctrl-C does: by default
    they would end this process alone and leave its workers playing."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupted)
    try:
        return job(), 0
    except KeyboardInterrupt:
        print(f"\n{what} stopped; its workers with it", file=sys.stderr)
        return None, 130
    except EngineError as exc:  # Ray missing, a cluster not answering
        print(f"error: {exc}", file=sys.stderr)
        return None, 2


def run_tournament(robot: str, opponent: str, matches: int, jobs: int, seed: int,
                   duration: float, randomise: bool, show_progress: bool = True,
                   ray_address: str | None = None, overrides: Overrides | None = None,
                   engine: Engine | None = None) -> dict[str, Any]:
    """Matches seed .. seed + matches - 1; on `engine` if given (it is already running),
    else on `jobs` workers started for this tournament."""
    work: list[Job] = [(robot, opponent, seed + i, duration, randomise, overrides)
                       for i in range(matches)]
    started = time.monotonic()
    if show_progress:
        progress(0, matches, started)
    shown = (lambda done: progress(done, matches, started)) if show_progress else None
    if engine is not None:
        results = engine.map(play_one, work, shown)
    else:
        results = run_jobs(play_one, work, jobs, ray_address, shown)
    return {
        "robot": robot,
        "opponent": opponent,
        "seed": seed,
        "duration_s": duration,
        "randomise": randomise,
        "total": totals(results),
        "per_match": results,
    }


def rules_lines(record: dict[str, Any]) -> list[str]:
    """Each team's fouls, then the serves, restarts and dead balls, of a match result or a
    tournament total (the same keys), as `foosball sim match` and `sim tournament` print
    them."""
    lines = [f"  {team}: {f['possession']} possession-limit violations, {f['spinning']} "
             f"spinning fouls, longest possession {f['longest_possession_s']} s "
             f"({f['longest_zone']})" for team, f in record["fouls"].items()]
    dead = record["dead_balls"]
    lines.append(f"  serves {record['serves']}, restarts {record['restarts']}; dead balls: "
                 f"{dead['served']} served again, {dead['goalkeeper']} put at a goalkeeper")
    return lines


def _print_text(report: dict[str, Any]) -> None:
    t = report["total"]
    last = report["seed"] + t["matches"] - 1
    print(f"{report['robot']} vs {report['opponent']}: {t['matches']} matches of "
          f"{report['duration_s']:g} s, seeds {report['seed']}..{last}")
    print(f"  won {t['wins']} drawn {t['draws']} lost {t['losses']} (win rate {t['win_rate']})")
    print(f"  goals {t['goals_for']}:{t['goals_against']} (ratio {t['goals_ratio']}), "
          f"per minute {t['goals_per_minute']['for']}:{t['goals_per_minute']['against']}")
    kinds = ", ".join(f"{n} {kind.replace('_', ' ')}"
                      for kind, n in t["goals_against_by_kind"].items())
    print(f"  goals against: {kinds} (own play {t['own_play_share']} of them)")
    print("\n".join(rules_lines(t)))
    print(f"  save rate {t['save_rate']} ({t['saves']} saves, {t['goals_against']} conceded; "
          f"{t['on_target_against']} on-target shots closed)")
    for band, row in t["save_rate_by_speed"].items():
        print(f"    {band:>7} m/s: {row['saved']}/{row['faced']} saved ({row['rate']})")
    for key in ("shots_for", "shots_against"):
        s = t[key]
        print(f"  {key}: {s['count']} ({s['on_target']} on target), "
              f"mean {s['mean_speed']} m/s, max {s['max_speed']} m/s")
    for m in report["per_match"]:
        print(f"  seed {m['seed']}: {m['goals_for']}:{m['goals_against']}, "
              f"saves {m['saves']}/{m['on_target_against']}, shots {len(m['shots_for'])}:"
              f"{len(m['shots_against'])}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, help="strategy on the robot side")
    parser.add_argument("--opponent", required=True,
                        help="rookie | club | pro | shooter:LOW-HIGH | a strategy name")
    parser.add_argument("--matches", type=int, default=10)
    add_engine_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=float, default=60.0, help="s per match")
    parser.add_argument("--randomise", action="store_true",
                        help="draw the table's realism parameters per match")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--no-progress", action="store_true")
    parser.set_defaults(func=_main)


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", type=int, default=1,
                        help="workers: 1 in this process, more on a local Ray with that many "
                             "CPUs, or with --ray-address that many jobs at once on the cluster")
    parser.add_argument("--ray-address", metavar="ADDR",
                        help="run on this Ray cluster (e.g. 10.0.0.5:6379, or 'auto' for the "
                             "one started on this machine with `ray start --head`)")


def register_tournament(sim_subparsers: argparse._SubParsersAction) -> None:
    """Add `tournament` to the `foosball sim` group (called from foosball/sim_cli.py)."""
    add_arguments(sim_subparsers.add_parser("tournament", help="many matches, in parallel"))


def _main(args: argparse.Namespace) -> int:
    if args.matches < 1 or args.jobs < 1:
        print("error: --matches and --jobs must be >= 1", file=sys.stderr)
        return 2
    try:
        from foosball.geometry import default_table

        make_side(args.robot, default_table(), 0)
        make_side(args.opponent, default_table(), 0)
    except (KeyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report, status = run_stoppable("tournament", lambda: run_tournament(
        args.robot, args.opponent, args.matches, args.jobs, args.seed, args.duration,
        args.randomise, not args.no_progress, args.ray_address))
    if report is None:
        return status
    if args.json:
        print(json.dumps(report))
    else:
        _print_text(report)
    return 0
