"""Match loop speed: whole headless matches as a multiple of real time, robots side by side.

One process plays `--seconds` of `--robot` (each of them, default `hold` and `improved`)
against `--opponent` on the default table, one after the other, and reports each match's
simulated time over its CPU time (`time.process_time`: one core; the other engineers'
processes on this shared machine slow the wall clock, not this) and over its wall time.

    nice -n 19 .venv/bin/python benchmarks/match_speed.py [--seconds 600] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from foosball.sim.match import Match


def play(robot: str, opponent: str, seconds: float, seed: int) -> dict[str, float | str | int]:
    match = Match(robot, opponent, seed=seed, duration=seconds)
    cpu, wall = time.process_time(), time.perf_counter()
    result = match.run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "robot": robot,
        "opponent": opponent,
        "seconds": seconds,
        "seed": seed,
        "x_real_time_cpu": round(seconds / cpu, 1),
        "x_real_time_wall": round(seconds / wall, 1),
        "goals": f"{result.goals_robot}:{result.goals_human}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--robots", default="hold,improved")
    parser.add_argument("--opponent", default="club")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [play(robot, args.opponent, args.seconds, args.seed)
            for robot in args.robots.split(",") if robot]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(f"{row['robot']:>9} vs {row['opponent']}: {row['seconds']:g} s at "
              f"{row['x_real_time_cpu']}x real time (CPU), {row['x_real_time_wall']}x (wall); "
              f"goals {row['goals']}")


if __name__ == "__main__":
    main()
