"""Strategy step cost: recorded BallStates replayed through the strategy agent's core.

A simulated match (`--robot improved` against `--opponent`, fixed seed) is played once and
every (BallState, RodStatus, time) the robot's controller was handed is recorded. Then the
recording is replayed through `StrategyAgentCore.step` (the agent's pure core, as on the
strategy board) for each strategy, side by side: the strategies take turns sample by
sample, so a busy machine slows both alike. Each sample is one `core.step` (one BallState
in, one RodCommand out), timed as CPU time of the thread (`time.thread_time_ns`: the other
engineer's processes on this shared machine preempt us, which wall time would count) and as
wall time (`time.perf_counter_ns`) beside it.

    nice -n 19 .venv/bin/python benchmarks/strategy_step.py [--seconds 60] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

import numpy as np

from foosball.agents.runtime import Inputs
from foosball.agents.strategy import StrategyAgentCore, make_core
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
    """Per strategy, the CPU and the wall time of every step, in ns."""
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


def figures(costs_ns: list[int]) -> dict[str, float]:
    us = np.array(costs_ns) / 1000.0
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
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    samples = record(args.seconds, args.opponent, args.seed)
    report = {
        name: {clock: figures(c) for clock, c in by_clock.items()}
        for name, by_clock in replay(samples).items()
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{len(samples)} recorded BallStates (improved vs {args.opponent}, seed {args.seed})")
    for name, by_clock in report.items():
        for clock, row in by_clock.items():
            print(f"{name:>11} {clock:>4}: median {row['median_us']} us, p90 {row['p90_us']} us,"
                  f" p99 {row['p99_us']} us, max {row['max_us']} us")


if __name__ == "__main__":
    main()
