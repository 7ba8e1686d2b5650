"""Shot battery: the save rate of a robot strategy against scripted shots of set speeds.

Each episode is a short simulated match: the ball in front of the opponent's attack rod
(random y), and the opponent is the simulator's scripted pro (its hands, reaction time and
aim: the widest gap our goalkeeper and defence leave, bank shots off the side walls) with
every shot at exactly the battery's speed. Kinds of shot (`--kinds`):
- rest: the ball lies still and is shot from rest;
- rolling: the ball rolls along the rod at 0.3-0.55 m/s (either way) and is shot on the move;
- pull / push: the ball lies still; the pro carries it sideways (pull or push, at his carry
  speed) and shoots it rolling;
- pin: an angled shot after a pin: the ball lies still right at the foot of the man
  (`PIN_AHEAD`, where a front pin holds it) and is cut across to the far corner of the goal
  as steeply as the pro strikes (`Skill.angled`). The simulator has no pinning friction, so
  the pin itself (holding the ball while moving sideways) is not played: the cell measures
  the angled shot from the pin's position.
The episode ends after `EPISODE_S`, long enough for a shot struck in its first second to be
decided (a save is a shot that does not end in a goal within 2 s, `foosball.sim.match`). The
save rate counts every on-target shot of the opponent in the episodes (rebounds included) as
the match runner decides them: saved (a man of ours touched it, no goal within 2 s) or
scored; goals per episode (every goal against, however it came about, over the episodes)
beside it, and the first shot's outcome. Episode k of speed v uses seed S + k, whatever
--jobs is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from typing import Any

from foosball.lab.tournament import add_engine_arguments, progress, run_stoppable
from foosball.strategy.engine import run_jobs

EPISODE_S = 3.0
# m in front of the rod: the ball at the toe of the upright foot (half the foot's 8.4 mm
# thickness plus the ball's radius is 21.7 mm; nearer, it would start inside the foot)
PIN_AHEAD = 0.025


KINDS = ("rest", "rolling", "pull", "push", "pin")
ROLLING_SPEED = (0.3, 0.55)  # m/s along the rod


def battery_match(robot: Any, table: Any, speed: float, seed: int, kind: str, *,
                  randomise: bool = False) -> tuple[Any, float]:
    """One episode's match, the ball placed and nothing played yet, and the ball's y:
    `robot` (a controller) against the scripted pro shooting at `speed`. `randomise` draws
    the table's realism parameters (`sim.params.draw_params`) as a randomised match does."""
    from foosball.sim.match import Match
    from foosball.sim.opponents import PRO, ScriptedOpponent

    carry = {"pull": -1.0, "push": 1.0}.get(kind, 0.0)
    skill = replace(PRO, name=f"shots:{speed:g}", shot_speed=(speed, speed), pass_probability=0.0,
                    pull_probability=1.0 if carry else 0.0, carry_direction=carry,
                    angled=kind == "pin")
    match = Match(robot, ScriptedOpponent(table, skill, seed + 1), seed=seed,
                  duration=EPISODE_S, table=table, randomise=randomise)
    attack = table.rod("human_attack")
    ball_y = float(match.rng.uniform(-0.25, 0.25))
    rolling = 0.0
    if kind == "rolling":
        rolling = float(match.rng.uniform(*ROLLING_SPEED)) * (1.0 if ball_y < 0 else -1.0)
    ahead = PIN_AHEAD if kind == "pin" else 0.035
    match.world.place_ball(attack.x - ahead, ball_y, 0.0, rolling)  # in front of its feet
    match._serve_at = None  # no kick-off serve: the ball is placed
    return match, ball_y


def episode(job: tuple[str, float, int, str]) -> dict[str, Any]:
    from foosball.geometry import default_table
    from foosball.lab.tournament import make_side
    from foosball.sim.match import goal_kinds

    robot, speed, seed, kind = job
    table = default_table()
    match, ball_y = battery_match(make_side(robot, table, seed), table, speed, seed, kind)
    result = match.run()
    human = [s for s in result.shots if s.team == "human"]
    first = human[0] if human else None
    closed = [s for s in human if s.on_target and s.outcome in ("saved", "goal")]
    return {
        "seed": seed,
        "speed": speed,
        "kind": kind,
        "ball_y": round(ball_y, 3),
        "shot": first is not None,
        "on_target": bool(first is not None and first.on_target),
        "measured_speed": round(first.speed, 2) if first is not None else None,
        "first_outcome": first.outcome if first is not None else None,
        # every on-target shot of the episode (rebounds included), as the match counts them
        "shots_saved": sum(s.outcome == "saved" for s in closed),
        "shots_scored": sum(s.outcome == "goal" for s in closed),
        "goals_against": result.goals_human,
        "goals_against_by_kind": goal_kinds(result.goals, "robot"),
    }


def run_battery(robot: str, speeds: list[float], episodes: int, jobs: int, seed: int,
                show_progress: bool = True, kinds: tuple[str, ...] = ("rest",),
                ray_address: str | None = None) -> dict[str, Any]:
    work = [(robot, v, seed + k, kind) for kind in kinds for v in speeds
            for k in range(episodes)]
    started = time.monotonic()
    rows = run_jobs(episode, work, jobs, ray_address,
                    (lambda done: progress(done, len(work), started)) if show_progress
                    else None)

    def tally(mine: list[dict[str, Any]]) -> dict[str, Any]:
        saved = sum(r["shots_saved"] for r in mine)
        scored = sum(r["shots_scored"] for r in mine)
        first = [r for r in mine if r["on_target"]]
        first_saved = sum(r["first_outcome"] == "saved" for r in first)
        return {
            "episodes": len(mine),
            "shots_saved": saved,
            "shots_scored": scored,
            "save_rate": round(saved / (saved + scored), 4) if saved + scored else None,
            "first_on_target": len(first),
            "first_saved": first_saved,
            "goals_against": sum(r["goals_against"] for r in mine),
            "goals_per_episode": round(sum(r["goals_against"] for r in mine) / len(mine), 4)
            if mine else None,
            "goals_against_by_kind": {
                kind: sum(r["goals_against_by_kind"][kind] for r in mine)
                for kind in (mine[0]["goals_against_by_kind"] if mine else {})},
        }

    summary = [{"speed": v, **tally([r for r in rows if r["speed"] == v])} for v in speeds]
    by_kind = [{"kind": kind, "speed": v,
                **tally([r for r in rows if r["speed"] == v and r["kind"] == kind])}
               for kind in kinds for v in speeds]
    return {
        "by_kind": by_kind,
        "robot": robot,
        "seed": seed,
        "episode_s": EPISODE_S,
        "by_speed": summary,
        "total": tally(rows),
        "episodes": sorted(rows, key=lambda r: (r["kind"], r["speed"], r["seed"])),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True)
    parser.add_argument("--speeds", default="5,10,15", help="m/s, comma-separated")
    parser.add_argument("--episodes", type=int, default=100, help="per speed and kind")
    parser.add_argument("--kinds", default="rest", help=f"comma-separated of {', '.join(KINDS)}")
    add_engine_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-progress", action="store_true")
    parser.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    speeds = [float(v) for v in args.speeds.split(",") if v]
    kinds = tuple(k for k in args.kinds.split(",") if k)
    if not kinds or any(k not in KINDS for k in kinds):
        print(f"error: --kinds takes {', '.join(KINDS)}", file=sys.stderr)
        return 2
    report, status = run_stoppable("shot battery", lambda: run_battery(
        args.robot, speeds, args.episodes, args.jobs, args.seed, not args.no_progress, kinds,
        args.ray_address))
    if report is None:
        return status
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['robot']} against scripted shots ({args.episodes} episodes per speed, "
          f"seeds {args.seed}..{args.seed + args.episodes - 1})")
    rows = [*report["by_kind"], *report["by_speed"], {"speed": "all", **report["total"]}]
    for row in rows:
        print(f"  {row.get('kind', 'all'):>7} {row['speed']!s:>5} m/s: on-target shots saved "
              f"{row['shots_saved']}, scored "
              f"{row['shots_scored']} (save rate {row['save_rate']}); first shot saved "
              f"{row['first_saved']}/{row['first_on_target']}; goals against "
              f"{row['goals_against']} in {row['episodes']} episodes "
              f"({row['goals_per_episode']} per episode; {row['goals_against_by_kind']})")
    return 0
