"""What recording a match costs the strategy board, and that it never holds up a step.

    .venv/bin/python benchmarks/recorder_cost.py [--seconds 5] [--runs 3] [--fps 200] [--json]

The rig's LAN traffic at `--fps` (runtime_load.traffic: every message of every agent, as the
rig's wire dump counts them) is replayed into two runtimes side by side, second by second:

- `recorder`: the match_recorder agent as on the board: its real core (every BallState,
  RodCommand, RodStatus, MotorStatus, GameState, Alarm encoded as a record) and its real
  writer, whose own thread appends to a file in a temporary directory on this disk;
- `listener`: a core that reads the same messages and does nothing: the runtime's share.

Each figure is the process's CPU (time.process_time: the writer's thread included) per
second of traffic, as a share of one core, best of `--runs`; x the strategy board's CPU
factor (board_cpu.json) it is the share on the board. Also: the bytes recorded per second
(and so per 5-minute match), and the wall time of the recorder's act() (handing a step's
records to the writer's queue): what a step waits for the file, p50 / p99 / max.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

import runtime_load  # noqa: E402  (the rig's traffic: reused, not copied)

from foosball.agents.match_recorder import (  # noqa: E402
    RECORDED,
    MatchRecorderCore,
    RecordingHardware,
)
from foosball.geometry import default_table  # noqa: E402
from foosball.recording.writer import RecordingWriter  # noqa: E402
from foosball.runtime import AgentRuntime, Inputs, Outputs  # noqa: E402
from foosball.wire.catalogue import Agent, GameState, SafetyState  # noqa: E402
from foosball.wire.codec import WireCodec  # noqa: E402
from foosball.wire.endpoint import Endpoint  # noqa: E402
from foosball.wire.transports.memory import MemoryHub, MemoryTransport  # noqa: E402

BOARD_CPU = HERE / "board_cpu.json"


class Listener:
    agent = Agent.MATCH_RECORDER
    reads = RECORDED

    def step(self, inputs: Inputs) -> Outputs:
        return Outputs(state=SafetyState.READY)


class TimedHardware(RecordingHardware):
    """The recorder's hardware, its act() timed (wall clock: what a step waits)."""

    def __init__(self, writer: RecordingWriter) -> None:
        super().__init__(writer)
        self.act_s: list[float] = []

    def sense(self, timeout_s: float) -> None:
        return None  # the replay steps once per frame; nothing to wait for

    def act(self, actuation: object) -> None:
        start = time.perf_counter()
        super().act(actuation)
        self.act_s.append(time.perf_counter() - start)


def measure(recording: bool, fps: float, seconds: int, directory: Path) -> dict[str, float]:
    hub = MemoryHub(queue_limit=100_000)
    injector, receiver = MemoryTransport(hub), MemoryTransport(hub)
    clock = [0.0]
    wall = time.time_ns()

    def wall_ns() -> int:
        return wall + round(clock[0] * 1e9)

    writer = hardware = None
    if recording:
        writer = RecordingWriter(directory, max_file_bytes=1 << 30, max_total_bytes=1 << 31,
                                 sync_period_s=1.0)
        hardware = TimedHardware(writer)
        core: object = MatchRecorderCore(default_table())
    else:
        core = Listener()
    runtime = AgentRuntime(core, Endpoint(receiver, WireCodec(runtime_load.KEY,
                                                              Agent.MATCH_RECORDER,
                                                              clock=wall_ns)),
                           runtime_load.shipped_safety(Agent.MATCH_RECORDER),
                           hardware=hardware, monotonic=lambda: clock[0], wall_ns=wall_ns,
                           health=None)
    senders = runtime_load.sender_codecs(wall_ns)
    injector.send(senders["game_panel"].encode(GameState(
        state=SafetyState.PLAYING, score_robot=0, score_human=0, clock_s=0.0, alarm_text="")))
    runtime.io_turn(0.0)
    runtime.work_turn(0.0)  # the match begins
    cpu = 0.0
    count = 0
    for second in range(seconds):
        batch = [frame for frame in runtime_load.frames(fps, senders, clock, second)
                 if frame[1] != "match_recorder"]  # what it sends itself it does not hear
        start = time.process_time()
        for at, _, frame in batch:
            clock[0] = second + at
            injector.send(frame)
            runtime.io_turn(0.0)
            runtime.work_turn(0.0)
        cpu += time.process_time() - start
        count += len(batch)
    out = {"frames_per_s": round(count / seconds), "us_per_frame": cpu / count * 1e6,
           "core_share_pct": cpu / seconds * 100}
    if writer is not None and hardware is not None:
        start = time.process_time()
        writer.close()  # what is still queued is written: its CPU counts too
        cpu += time.process_time() - start
        out["core_share_pct"] = cpu / seconds * 100
        out["bytes_per_s"] = writer.counters.bytes / seconds
        out["records_per_s"] = writer.counters.records / seconds
        acts = sorted(hardware.act_s)
        out["act_us"] = {"p50": acts[len(acts) // 2] * 1e6,
                         "p99": acts[int(len(acts) * 0.99)] * 1e6, "max": acts[-1] * 1e6}
        out["dropped_batches"] = writer.counters.dropped_batches
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fps", type=float, default=200.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    factor = json.loads(BOARD_CPU.read_text())["boards"]["strategy"]["factor"]
    runs = []
    with tempfile.TemporaryDirectory(prefix="recorder-cost-") as tmp:
        for n in range(args.runs):  # alternated: a busy machine slows both alike
            runs.append((measure(True, args.fps, args.seconds, Path(tmp) / str(n)),
                         measure(False, args.fps, args.seconds, Path(tmp))))
    rec = min((r[0] for r in runs), key=lambda r: r["core_share_pct"])
    idle = min((r[1] for r in runs), key=lambda r: r["core_share_pct"])
    report = {
        "fps": args.fps, "seconds": args.seconds, "runs": args.runs,
        "frames_per_s": rec["frames_per_s"],
        "recorder_share_pct": round(rec["core_share_pct"], 2),
        "listener_share_pct": round(idle["core_share_pct"], 2),
        "recording_own_share_pct": round(rec["core_share_pct"] - idle["core_share_pct"], 2),
        "ratio_to_listening": round(rec["core_share_pct"] / idle["core_share_pct"], 2),
        "board_factor": factor,
        "board_share_pct": round(rec["core_share_pct"] * factor, 1),
        "recorder_share_median_pct": round(statistics.median(
            r[0]["core_share_pct"] for r in runs), 2),
        "bytes_per_s": round(rec["bytes_per_s"]),
        "mib_per_5_min": round(rec["bytes_per_s"] * 300 / 2**20, 1),
        "records_per_s": round(rec["records_per_s"]),
        "act_us": {k: round(v, 1) for k, v in rec["act_us"].items()},
        "dropped_batches": rec["dropped_batches"],
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"recorder {report['recorder_share_pct']} % of a core here (listening alone "
              f"{report['listener_share_pct']} %, x{report['ratio_to_listening']}); on the "
              f"strategy board x{factor}: {report['board_share_pct']} %; "
              f"{report['mib_per_5_min']} MiB per 5 minutes; act() p99 "
              f"{report['act_us']['p99']} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
