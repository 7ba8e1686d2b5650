"""Match loop speed: whole headless matches as a multiple of real time, robots side by side.

One process plays `--seconds` of each of `--robots` (default `hold` and `improved`) against
`--opponent` on the default table, `--repeat` rounds of them taking turns, and reports each
robot's simulated time over its CPU time (`time.process_time`: one core) and over its wall
time: the best round and the median.

Why rounds and the best: on the shared 2-core machine the CPU time of the same match moves
by 10-20 % from one run to the next with what the other processes do (they share the core's
caches and the hyperthread sibling, so our process gets less done per CPU second, and no
clock leaves that out). The best of a few rounds is the nearest to the code's own cost; the
median says what a loaded machine gives. Every round plays the same match (it is
deterministic from its seed): the goals must come out the same, and are checked.

    nice -n 19 .venv/bin/python benchmarks/match_speed.py [--seconds 600] [--repeat 3] [--json]

With `--baseline PATH` (the `python/` folder of another checkout, e.g. `git -C /work/main
archive main python | tar -x -C /tmp/speed-main`) every round plays each robot's match twice,
in a fresh process each: with the package at PATH, then with this tree's; the two take turns
so that both see the same machine. It reports both and the ratio of their best (and median)
CPU times, which is what carries over from a loaded machine to a quiet one, and checks that
both give the same goals.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from foosball.sim.match import Match


def compiled_loops() -> bool:
    """Whether the simulator's loops run in C (sim/_loops.c, built by ./tools/setup or
    `python setup.py build_ext --inplace` in python/): a tree without it plays the same
    matches with their Python twins, more slowly."""
    from foosball.sim import drives, physics

    return (getattr(drives, "_advance_c", None) is not None
            and getattr(physics, "_rod_hit_c", None) is not None)


def play(robot: str, opponent: str, seconds: float, seed: int
         ) -> tuple[float, float, str, bool]:
    """(CPU seconds, wall seconds, goals, compiled loops) of one match."""
    match = Match(robot, opponent, seed=seed, duration=seconds)
    cpu, wall = time.process_time(), time.perf_counter()
    result = match.run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, f"{result.goals_robot}:{result.goals_human}", compiled_loops()


HERE = Path(__file__).resolve()
TREE = HERE.parents[1] / "python"


def play_in(tree: Path, robot: str, opponent: str, seconds: float,
            seed: int) -> tuple[float, float, str, bool]:
    """`play` in a fresh process with the package at `tree`."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, str(HERE), "--play", robot, "--opponent", opponent,
                          "--seconds", str(seconds), "--seed", str(seed)],
                         env=env, check=True, capture_output=True, text=True).stdout
    cpu, wall, goals, *compiled = json.loads(out)  # a tree before sim/_loops.c says nothing
    return cpu, wall, goals, bool(compiled and compiled[0])


def load_average() -> str:
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "unknown"


def measure(robots: list[str], opponent: str, seconds: float, seed: int, repeat: int,
            baseline: Path | None = None) -> list[dict[str, object]]:
    trees = {"": None} if baseline is None else {"baseline": baseline, "this tree": TREE}
    runs: dict[tuple[str, str], list[tuple[float, float, str, bool]]] = {
        (robot, name): [] for robot in robots for name in trees}
    for _ in range(repeat):
        for robot in robots:  # taking turns: each robot sees the machine as the others do
            for name, tree in trees.items():
                runs[robot, name].append(
                    play(robot, opponent, seconds, seed) if tree is None
                    else play_in(tree, robot, opponent, seconds, seed))
    rows = []
    for (robot, name), done in runs.items():
        goals = {g for _, _, g, _ in done}
        if len(goals) != 1:
            raise RuntimeError(f"{robot}: the same match gave different results {goals}")
        cpu = [seconds / c for c, _, _, _ in done]
        wall = [seconds / w for _, w, _, _ in done]
        rows.append({
            "robot": robot,
            **({"tree": name, "path": str(trees[name])} if name else {}),
            "opponent": opponent,
            "seconds": seconds,
            "seed": seed,
            "rounds": repeat,
            "x_real_time_cpu_best": round(max(cpu), 1),
            "x_real_time_cpu_median": round(statistics.median(cpu), 1),
            "x_real_time_cpu_each": [round(x, 1) for x in cpu],
            "x_real_time_wall_best": round(max(wall), 1),
            "x_real_time_wall_median": round(statistics.median(wall), 1),
            "cpu_s_each": [round(c, 2) for c, _, _, _ in done],
            "goals": goals.pop(),
            "compiled_loops": all(c for _, _, _, c in done),
        })
    return rows


def ratios(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Per robot, this tree's speed over the baseline's (best and median CPU time)."""
    out = []
    for base in rows:
        if base.get("tree") != "baseline":
            continue
        ours = next(r for r in rows if r["robot"] == base["robot"] and r["tree"] == "this tree")
        cpu_base, cpu_ours = base["cpu_s_each"], ours["cpu_s_each"]
        assert isinstance(cpu_base, list) and isinstance(cpu_ours, list)
        out.append({
            "robot": base["robot"],
            "same_goals": base["goals"] == ours["goals"],
            "speed_up_best": round(min(cpu_base) / min(cpu_ours), 3),
            "speed_up_median": round(statistics.median(cpu_base) / statistics.median(cpu_ours),
                                     3),
        })
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--robots", default="hold,improved")
    parser.add_argument("--opponent", default="club")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--baseline", type=Path,
                        help="the python/ folder of another checkout to measure beside this one")
    parser.add_argument("--play", metavar="ROBOT", help=argparse.SUPPRESS)  # one match (--baseline)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.play:
        print(json.dumps(play(args.play, args.opponent, args.seconds, args.seed)))
        return
    if args.baseline is not None and not (args.baseline / "foosball" / "sim").is_dir():
        parser.error(f"{args.baseline}: no foosball package there")
    before = load_average()
    rows = measure([r for r in args.robots.split(",") if r], args.opponent, args.seconds,
                   args.seed, max(1, args.repeat), args.baseline)
    after = load_average()
    compared = ratios(rows) if args.baseline is not None else []
    if args.json:
        print(json.dumps({"load_average": [before, after], "matches": rows,
                          **({"speed_up": compared} if compared else {})}, indent=2))
        return
    for row in rows:
        tree = f" [{row['tree']}]" if "tree" in row else ""
        print(f"{row['robot']:>9} vs {row['opponent']}{tree}: {row['seconds']:g} s at "
              f"{row['x_real_time_cpu_best']}x real time (CPU, best of {row['rounds']}; median "
              f"{row['x_real_time_cpu_median']}x), wall {row['x_real_time_wall_best']}x / "
              f"{row['x_real_time_wall_median']}x; goals {row['goals']}; loops in "
              f"{'C' if row['compiled_loops'] else 'Python'}")
    for row in compared:
        print(f"{row['robot']:>9}: this tree {row['speed_up_best']}x the baseline's speed (best "
              f"CPU times; medians {row['speed_up_median']}x), same goals: {row['same_goals']}")
    print(f"load average {before} -> {after}")


if __name__ == "__main__":
    main()
