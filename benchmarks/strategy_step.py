"""Strategy step cost: recorded BallStates replayed through the strategy agent's core.

A simulated match (`--robot improved` against `--opponent`, fixed seed) is played once and
every (BallState, RodStatus, time) the robot's controller was handed is recorded. Then the
recording is replayed through `StrategyAgentCore.step` (the agent's pure core, as on the
strategy board) for each strategy, side by side: the strategies take turns sample by
sample, so a busy machine slows both alike. Each sample is one `core.step` (one BallState
in, one RodCommand out), timed as CPU time of the thread (`time.thread_time_ns`: the other
engineer's processes on this shared machine preempt us, which wall time would count) and as
wall time (`time.perf_counter_ns`) beside it.

The replay runs `--passes` times, each through fresh cores (a step's work is the same in
every pass). `first_pass` reports each step as timed once; `median_of_passes` each step's
median over the passes, which leaves out what a shared machine adds to single steps now and
then (preemption, other processes evicting our caches) without hiding a step that is
itself slow.

    nice -n 19 .venv/bin/python benchmarks/strategy_step.py [--seconds 60] [--passes 5] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

import numpy as np

from foosball.agents.strategy import StrategyAgentCore, make_core
from foosball.runtime import Inputs
from foosball.sim.match import Match
from foosball.wire.catalogue import BallState, GameState, RodCommand, RodStatus, SafetyState

STRATEGIES = ("improved", "seed-rules")


class _Recorder:
    """Wraps the robot's controller and keeps every input it is handed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.samples: list[tuple[BallState, RodStatus, int]] = []

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        self.samples.append((ball, rods, now_ns))
        return self.inner.step(ball, rods, now_ns)


def record(seconds: float, opponent: str, seed: int) -> list[tuple[BallState, RodStatus, int]]:
    match = Match("improved", opponent, seed=seed, duration=seconds)
    recorder = _Recorder(match.controllers["robot"])
    match.controllers["robot"] = recorder
    match.run()
    return recorder.samples


def playing(core: StrategyAgentCore) -> StrategyAgentCore:
    core.step(Inputs(now_s=0.0, messages=(GameState(SafetyState.PLAYING, 0, 0, 0.0, ""),)))
    return core


def replay(samples: list[tuple[BallState, RodStatus, int]]) -> dict[str, dict[str, list[int]]]:
    """Per strategy, the CPU and the wall time of every step, in ns (one pass)."""
    cores = {name: playing(make_core(name)) for name in STRATEGIES}
    costs: dict[str, dict[str, list[int]]] = {n: {"cpu": [], "wall": []} for n in STRATEGIES}
    cpu_clock, wall_clock = time.thread_time_ns, time.perf_counter_ns
    gc.disable()  # collections are the runtime's business (it freezes the heap at start)
    try:
        for ball, rods, now_ns in samples:
            inputs = Inputs(now_s=now_ns * 1e-9, messages=(rods, ball), wall_ns=now_ns)
            for name, core in cores.items():
                cpu, wall = cpu_clock(), wall_clock()
                core.step(inputs)
                costs[name]["wall"].append(wall_clock() - wall)
                costs[name]["cpu"].append(cpu_clock() - cpu)
    finally:
        gc.enable()
    return costs


def replay_passes(samples: list[tuple[BallState, RodStatus, int]],
                  passes: int) -> dict[str, dict[str, dict[str, float]]]:
    """Per strategy and clock: the figures of the first pass, and of each step's median over
    all the passes."""
    runs = [replay(samples) for _ in range(passes)]
    report: dict[str, dict[str, dict[str, float]]] = {}
    for name in STRATEGIES:
        for clock in ("cpu", "wall"):
            steps = np.array([run[name][clock] for run in runs])
            report.setdefault(name, {})[f"{clock}_first_pass"] = figures(steps[0])
            report[name][f"{clock}_median_of_passes"] = figures(np.median(steps, axis=0))
    return report


def figures(costs_ns: Any) -> dict[str, float]:
    us = np.asarray(costs_ns) / 1000.0
    return {
        "steps": len(us),
        "median_us": round(float(np.median(us)), 1),
        "p90_us": round(float(np.percentile(us, 90)), 1),
        "p99_us": round(float(np.percentile(us, 99)), 1),
        "max_us": round(float(us.max()), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="simulated match length")
    parser.add_argument("--opponent", default="club")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--passes", type=int, default=5, help="replays of the recording")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    samples = record(args.seconds, args.opponent, args.seed)
    report = replay_passes(samples, max(1, args.passes))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{len(samples)} recorded BallStates (improved vs {args.opponent}, seed {args.seed})")
    for name, by_clock in report.items():
        for clock, row in by_clock.items():
            print(f"{name:>11} {clock:>22}: median {row['median_us']} us, p90 {row['p90_us']} us,"
                  f" p99 {row['p99_us']} us, max {row['max_us']} us")


if __name__ == "__main__":
    main()
