"""What the agent runtime costs an agent for the LAN traffic of the whole rig.

    .venv/bin/python benchmarks/runtime_load.py [--seconds 3] [--runs 3] [--fps 100] [--profile]

Every agent hears every frame on the agent LAN: ten heartbeats at 100 Hz (the six agents',
the match recorder's and each board's update agent's), the ball tracker's BallState at the
camera rate, the strategy's RodCommand and the pole driver's MotorCommand per BallState, the
drives' status, the game state. This replays that mix into one agent's runtime (an
in-process transport and a clock passed in, so the figure is the runtime's own CPU: no
socket, no kernel, no core's step), with the [safety] section its board ships
(image-config/BOARD/board.toml: whom it watches), an I/O turn and a step turn when the real
loops would take one (see measure), and reports the CPU per second of traffic as a share of
one core, for each agent.
The in-process transport leaves out, on delivery, the frames the agent would set aside
unread (types it does not read, heartbeats of agents it does not watch), as the raw
transport's socket filter does in the kernel on a board (that check's Python is counted
here). The same traffic through a real socket, with its system calls and wake-ups:
benchmarks/lan_socket.py.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import json
import pstats
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from foosball.rig.rig import AGENT_BOARD
from foosball.runtime import IO_WAIT_S, AgentRuntime, Inputs, Outputs
from foosball.runtime.settings import SafetySettings
from foosball.wire.catalogue import (
    Agent,
    AxisStatus,
    AxisTarget,
    BallState,
    BallStatus,
    DriveState,
    EtherCatStatus,
    GameState,
    Heartbeat,
    MotorCommand,
    MotorStatus,
    RodCommand,
    RodId,
    RodPosition,
    RodStatus,
    RodTarget,
    SafetyState,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

REPO = Path(__file__).resolve().parents[1]
# The agents of the simulated rig (and of the three boards).
RIG = (Agent.MOTOR_DRIVER, Agent.POLE_DRIVER, Agent.SUPERVISORY_PANEL, Agent.BALL_TRACKER,
       Agent.STRATEGY, Agent.GAME_PANEL)
# Everyone who sends on the boards' LAN, by stream: the six, and the agents no one watches
# that heartbeat all the same (the strategy board's recorder, an update agent per board).
STREAMS = {**{a.name.lower(): a for a in RIG}, "match_recorder": Agent.MATCH_RECORDER,
           **{f"update_agent@{board}": Agent.OTA for board in ("pole", "vision", "strategy")}}

KEY = bytes(range(32))


def sender_codecs(clock: Callable[[], int] = time.time_ns) -> dict[str, WireCodec]:
    """A codec per stream (each update agent its own boot id, as on three boards)."""
    return {name: WireCodec(KEY, agent, clock=clock) for name, agent in STREAMS.items()}


def shipped_safety(agent: Agent) -> SafetySettings:
    """The [safety] section of the board file that the agent's board ships."""
    board = AGENT_BOARD[agent.name.lower()]
    text = (REPO / "image-config" / board / "board.toml").read_text()
    return SafetySettings.from_section(tomllib.loads(text)["safety"])


def core_reads(agent: Agent) -> tuple[type, ...] | None:
    """What the agent's real core reads (its class says so; no core is built)."""
    from foosball.agents import (
        ball_tracker,
        game_panel,
        motor_driver,
        pole_driver,
        strategy,
        supervisory_panel,
    )

    classes = {Agent.MOTOR_DRIVER: motor_driver.MotorDriverCore,
               Agent.POLE_DRIVER: pole_driver.PoleDriverCore,
               Agent.SUPERVISORY_PANEL: supervisory_panel.SupervisoryCore,
               Agent.BALL_TRACKER: ball_tracker.BallTrackerCore,
               Agent.STRATEGY: strategy.StrategyAgentCore,
               Agent.GAME_PANEL: game_panel.GamePanelCore}
    return classes[agent].reads


class IdleCore:
    """A core that does nothing (but read what the real one reads): the figure is the
    runtime's alone."""

    def __init__(self, agent: Agent, reads: tuple[type, ...] | None) -> None:
        self.agent = agent
        if reads is not None:
            self.reads = reads

    def step(self, inputs: Inputs) -> Outputs:
        return Outputs(state=SafetyState.READY)


def traffic(fps: float, second: int = 0) -> list[tuple[float, str, Callable[[], Any]]]:
    """One second of the rig's messages: (when, stream, message factory), in time order.
    What changes from one message to the next on the rig changes here too (the codec takes a
    body it has seen before the short way): each command and status moves a little, and
    the heartbeats' board health changes once a second, as HeartbeatSchedule reads it."""
    now = time.time_ns
    moves = itertools.count()
    rods = tuple(RodTarget(rod=r, translation=0.01, rotation=0.2, translation_speed=3.0,
                           rotation_speed=100.0) for r in RodId)

    def axes() -> tuple[AxisTarget, ...]:
        step = next(moves) * 1e-4
        return tuple(AxisTarget(axis=i, position=0.5 + step, velocity=10.0) for i in range(8))

    def status() -> tuple[AxisStatus, ...]:
        step = next(moves) * 1e-4
        return tuple(AxisStatus(axis=i, state=DriveState.RUNNING, position=1.0 + step,
                                velocity=2.0, current=0.5, fault_code=0) for i in range(8))

    def positions() -> tuple[RodPosition, ...]:
        step = next(moves) * 1e-5
        return tuple(RodPosition(rod=r, translation=0.01 + step, rotation=0.2,
                                 translation_velocity=0.0, rotation_velocity=0.0)
                     for r in RodId)

    events: list[tuple[float, str, Callable[[], Any]]] = []

    def every(rate_hz: float, stream: str, make: Callable[[], Any], phase: float) -> None:
        count = int(rate_hz)
        events.extend(((i + phase) / rate_hz, stream, make) for i in range(count))

    load = 50.0 + second % 7
    for n, (stream, agent) in enumerate(STREAMS.items()):
        every(100, stream, lambda a=agent: Heartbeat(agent=a, state=SafetyState.READY,
                                                      period_s=0.01, cpu_load=load,
                                                      memory=5.0, temperature=-273.0),
              n / len(STREAMS))
    every(fps, "ball_tracker", lambda: BallState(
        capture_time=now(), frame=1, x=0.1, y=-0.2, vx=3.0, vy=1.0,
        covariance=(1e-6, 1e-6, 1e-3, 1e-3), status=BallStatus.DETECTED), 0.0)
    every(fps, "strategy", lambda: RodCommand(ball_capture_time=now(), rods=rods), 0.1)
    every(fps, "pole_driver", lambda: MotorCommand(axes=axes()), 0.2)
    every(20, "motor_driver", lambda: MotorStatus(axes=status()), 0.3)
    every(20, "motor_driver", lambda: EtherCatStatus(
        link_up=True, slaves=8, expected_slaves=8, al_state=8, working_counter=24,
        expected_working_counter=24, bad_working_counters=0, cycle_period_s=0.005,
        wakeup_jitter_p99_s=1e-4 + next(moves) * 1e-7), 0.4)
    every(20, "pole_driver", lambda: RodStatus(rods=positions()), 0.5)
    every(10, "game_panel", lambda: GameState(
        state=SafetyState.PLAYING, score_robot=0, score_human=0, clock_s=1.0 + next(moves),
        alarm_text=""), 0.6)
    return sorted(events, key=lambda e: e[0])


def frames(fps: float, senders: dict[str, WireCodec], clock: list[float], second: int
           ) -> Iterator[tuple[float, str, bytes]]:
    for at, sender, make in traffic(fps, second):
        clock[0] = second + at  # stamped when it is sent
        yield at, sender, senders[sender].encode(make())


def measure(agent: Agent, fps: float, seconds: int, profile: cProfile.Profile | None,
            read_all: bool = False) -> dict:
    hub = MemoryHub(queue_limit=100_000)
    injector = MemoryTransport(hub)
    receiver = MemoryTransport(hub)
    clock = [0.0]
    wall = time.time_ns()

    def wall_ns() -> int:  # every clock of the replay moves with its seconds
        return wall + round(clock[0] * 1e9)

    runtime = AgentRuntime(IdleCore(agent, None if read_all else core_reads(agent)),
                           Endpoint(receiver, WireCodec(KEY, agent, clock=wall_ns)),
                           shipped_safety(agent), monotonic=lambda: clock[0],
                           wall_ns=wall_ns, health=None)
    senders = sender_codecs(wall_ns)
    # The step loop turns as the real one does: a hardware agent once per sample (the motor
    # driver's cycle, the tracker's camera frame), any other when a message for its core
    # came or its wait (a heartbeat period) ran out. (Its turns' own work is the budget's
    # work column; here is the runtime's wrapper around them.)
    cycle_s = {Agent.MOTOR_DRIVER: 0.005, Agent.BALL_TRACKER: 1 / fps}.get(agent)
    next_step_s = next_io_s = 0.0
    cpu = 0.0
    count = 0
    for second in range(seconds):
        # What the agent itself sends it does not hear.
        clock[0] = second
        batch = [(at, frame) for at, sender, frame in frames(fps, senders, clock, second)
                 if sender != agent.name.lower()]
        if profile is not None:
            profile.enable()
        start = time.process_time()
        for at, frame in batch:
            clock[0] = second + at
            injector.send(frame)
            # The I/O thread wakes for a frame that reached its socket or when its wait runs
            # out (IO_WAIT_S, or sooner for its own heartbeat); a frame the socket's filter
            # left out wakes nothing.
            if receiver.waiting() or clock[0] >= next_io_s:
                runtime.io_turn(0.0)
                next_io_s = clock[0] + min(IO_WAIT_S, runtime.next_heartbeat_in(clock[0]))
            if clock[0] >= next_step_s or (cycle_s is None and runtime.inbox):
                runtime.work_turn(0.0)
                next_step_s = clock[0] + (cycle_s or runtime.settings.heartbeat_period_s)
        cpu += time.process_time() - start
        if profile is not None:
            profile.disable()
        count += len(batch)
    received = runtime.counters.received
    return {"frames_per_s": round(count / seconds), "accepted": received,
            "not_read": runtime.endpoint.codec.not_read,
            "drops": dict(runtime.counters.drops), "us_per_frame": round(cpu / count * 1e6, 1),
            "core_share_pct": round(cpu / seconds * 100, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fps", type=float, default=100.0)
    parser.add_argument("--agent", choices=[a.name.lower() for a in RIG])
    parser.add_argument("--profile", action="store_true", help="cProfile, top 25 by own time")
    args = parser.parse_args()
    agents = [Agent[args.agent.upper()]] if args.agent else list(RIG)
    profile = cProfile.Profile() if args.profile else None
    results = {}
    for agent in agents:
        # Side by side in one run: decoding everything (as before `reads`) and what it reads.
        # Alternated, best of --runs each: a busy machine slows a run, never speeds one up.
        runs = [(measure(agent, args.fps, args.seconds, None, read_all=True),
                 measure(agent, args.fps, args.seconds, profile)) for _ in range(args.runs)]
        everything = min((r[0] for r in runs), key=lambda r: r["core_share_pct"])
        own = min((r[1] for r in runs), key=lambda r: r["core_share_pct"])
        own["core_share_pct_reading_everything"] = everything["core_share_pct"]
        own["ratio"] = round(everything["core_share_pct"] / own["core_share_pct"], 2)
        results[agent.name.lower()] = own
    print(json.dumps({"fps": args.fps, "seconds": args.seconds, "agents": results}, indent=2))
    if profile is not None:
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
