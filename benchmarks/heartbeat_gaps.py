"""Heartbeat gaps of every agent on the rig, as another board hears them, and the latched
alarms raised while no fault is injected (false alarms).

    python benchmarks/heartbeat_gaps.py --seconds 600 --play          # idle machine, a match
    python benchmarks/heartbeat_gaps.py --seconds 120 --load tournament  # both cores busy

`--load tournament` runs `foosball sim tournament --jobs 2` beside the rig for the whole
measurement, so both cores are busy with ordinary processes (the agents' I/O and step
threads run SCHED_FIFO, as on the boards). Needs root (the namespaced rig).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from foosball.rig.faults import FaultMatrix
from foosball.rig.observer import Observer
from foosball.rig.rig import AGENT_BOARD, CORE_AGENTS, Rig, RigOptions
from foosball.wire.catalogue import (
    Alarm,
    GameCommand,
    GameControl,
    GameState,
    Heartbeat,
    MotorStatus,
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--load", choices=["none", "tournament"], default="none")
    parser.add_argument("--deadline", type=float, default=0.025, help="peers' deadline (s)")
    parser.add_argument("--agents", choices=["core", "all"], default="all",
                        help="the four that drive the motors, or all six (with the panels)")
    parser.add_argument("--play", action="store_true",
                        help="start a match (the robot plays the scripted human) first")
    parser.add_argument("--fps", type=float, default=50.0, help="camera frames per second")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    agents = CORE_AGENTS if args.agents == "core" else tuple(AGENT_BOARD)
    if args.play and "game_panel" not in agents:
        parser.error("--play needs the game panel (--agents all): it owns the game")
    rig = Rig(RigOptions(run_dir=Path(tempfile.mkdtemp(prefix="fb-gaps-")), agents=agents,
                         deadline_s=args.deadline, fps=args.fps))
    load = None
    observer = None
    try:
        rig.up()
        observer = Observer(rig, realtime=True,
                            kinds=(Heartbeat, Alarm, GameState, MotorStatus))
        gc.freeze()  # this process's own collector must not stall the listening thread
        # A board that comes up late latches FAULT on its peers, as on the real table: one
        # RESTART (a person on the game panel) once everything is up.
        if FaultMatrix(rig, observer).recover(60.0) is None:
            print(f"the rig did not come up healthy; logs in {rig.logs}", file=sys.stderr)
            return 1
        if args.play:
            observer.send(GameControl(command=GameCommand.START))
        if args.load == "tournament":
            load = subprocess.Popen(
                [sys.executable, "-m", "foosball.cli", "sim", "tournament", "--robot",
                 "improved", "--opponent", "club", "--matches", "100000", "--duration", "30",
                 "--jobs", "2", "--seed", "1"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
        start = time.monotonic()
        time.sleep(args.seconds)
        end = time.monotonic()
        beats: dict[str, list[float]] = {}
        for heard in observer.since(start, Heartbeat):
            if heard.at_s <= end:
                beats.setdefault(heard.sender.name.lower(), []).append(heard.at_s)
        report = {"seconds": args.seconds, "load": args.load, "deadline_ms": args.deadline * 1e3,
                  "agents_run": list(agents), "playing": args.play, "fps": args.fps,
                  "false_alarms": [f"{h.sender.name.lower()}: {h.message.text}"
                                   for h in observer.alarms(start) if h.message.latched],
                  "agents": {}}
        for agent, times in sorted(beats.items()):
            gaps = [b - a for a, b in itertools.pairwise(times)]
            report["agents"][agent] = {
                "heartbeats": len(times), "gap_p50_ms": percentile(gaps, 0.5) * 1e3,
                "gap_p99_ms": percentile(gaps, 0.99) * 1e3, "gap_max_ms": max(gaps) * 1e3,
                "over_deadline": sum(g > args.deadline for g in gaps)}
    finally:
        if load is not None:
            load.terminate()
            load.wait()
        if observer is not None:
            observer.close()
        rig.down()
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"{args.seconds:g} s, load {args.load}, deadline {args.deadline * 1e3:g} ms")
        for agent, r in report["agents"].items():
            print(f"  {agent:14s} {r['heartbeats']:7d} beats  gap p50 {r['gap_p50_ms']:5.1f}  "
                  f"p99 {r['gap_p99_ms']:5.1f}  max {r['gap_max_ms']:6.1f} ms  "
                  f"over deadline {r['over_deadline']}")
        print(f"  latched alarms (false alarms): {len(report['false_alarms'])}")
        for text in report["false_alarms"][:10]:
            print(f"    {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
