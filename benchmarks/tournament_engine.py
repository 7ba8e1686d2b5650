"""A tournament on Ray beside the same tournament on the process pool it replaced.

Runs `foosball sim tournament --json` twice, one after the other, with the same seeds and
workers: first with the package at `--baseline` (a checkout's `python/` folder from before
issue 30, whose --jobs ran a multiprocessing pool; e.g. `git archive <commit> python | tar
-x -C /tmp/old`), then with this tree (Ray). Reports each one's wall time (start of the
command to its end: Ray's start-up included) with the load average beside it, and whether
the matches came out the same: per match the score, the shots (speed, on target), serves,
restarts, dead balls and fouls (the figures both versions compute alike; issue 30 changed
how saves are decided and added goal kinds, so those are left out of the comparison).

    flock /tmp/foosball-measure.lock nice -n 19 .venv/bin/python \\
        benchmarks/tournament_engine.py --baseline /tmp/old/python [--matches 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1] / "python"
COMPARED = ("seed", "goals_for", "goals_against", "serves", "restarts", "dead_balls", "fouls")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def tournament(tree: Path, args: argparse.Namespace) -> tuple[dict[str, Any], float, str]:
    """(report, wall seconds, load average at the end) of one tournament run with `tree`."""
    command = [sys.executable, "-m", "foosball.cli", "sim", "tournament", "--robot", args.robot,
               "--opponent", args.opponent, "--matches", str(args.matches), "--jobs",
               str(args.jobs), "--seed", str(args.seed), "--duration", str(args.duration),
               "--json", "--no-progress"]
    env = dict(os.environ, PYTHONPATH=str(tree))
    started = time.perf_counter()
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.perf_counter() - started, load_average()


def played(report: dict[str, Any]) -> list[dict[str, Any]]:
    """What both versions compute alike, per match."""
    return [{**{k: m[k] for k in COMPARED},
             "shots": [(s["speed"], s["on_target"]) for key in ("shots_for", "shots_against")
                       for s in m[key]]}
            for m in report["per_match"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True,
                        help="the python/ folder of a checkout with the process pool")
    parser.add_argument("--robot", default="improved")
    parser.add_argument("--opponent", default="club")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=3000)
    parser.add_argument("--duration", type=float, default=15.0, help="s per match")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (args.baseline / "foosball" / "strategy" / "tournament.py").exists():
        parser.error(f"{args.baseline}: no foosball package there")
    pool, pool_s, pool_load = tournament(args.baseline, args)
    print(f"process pool: {pool_s:.1f} s (load {pool_load})", file=sys.stderr, flush=True)
    ray, ray_s, ray_load = tournament(HERE, args)
    print(f"Ray: {ray_s:.1f} s (load {ray_load})", file=sys.stderr, flush=True)
    same = played(pool) == played(ray)
    result = {
        "matches": args.matches, "duration_s": args.duration, "jobs": args.jobs,
        "seeds": [args.seed, args.seed + args.matches - 1],
        "robot": args.robot, "opponent": args.opponent,
        "pool": {"wall_s": round(pool_s, 1), "load_average": pool_load},
        "ray": {"wall_s": round(ray_s, 1), "load_average": ray_load},
        "same_matches": same,
        "goals": [ray["total"]["goals_for"], ray["total"]["goals_against"]],
        "wins_draws_losses": [ray["total"][k] for k in ("wins", "draws", "losses")],
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.matches} matches of {args.duration:g} s, {args.robot} vs {args.opponent}, "
              f"seeds {args.seed}..{args.seed + args.matches - 1}, {args.jobs} workers")
        print(f"  process pool: {pool_s:.1f} s wall (load average after: {pool_load})")
        print(f"  Ray (local):  {ray_s:.1f} s wall (load average after: {ray_load})")
        print(f"  same matches: {same}; goals {result['goals'][0]}:{result['goals'][1]}, "
              f"won/drawn/lost {result['wins_draws_losses']}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
