"""The rig's LAN traffic through a real raw socket into one agent's runtime, in real time.

    sudo .venv/bin/python benchmarks/lan_socket.py [--agent motor_driver] [--seconds 3]
        [--runs 3] [--fps 200]

runtime_load.py replays the traffic through the in-process transport, one I/O turn per frame
called by hand: the runtime's Python, but no socket, no system call, no thread woken. This
sends the same frames (runtime_load.frames, stamped when sent) at their times from another
process over a veth pair, in a network namespace of its own (`unshare --net`: nothing of the
machine's network is touched; needs root), to an agent's runtime running as on the board:
the raw transport (its socket filter included), the I/O thread woken by the socket, the step
loop woken by the messages for its core (the motor driver's and the tracker's by their own
cycle instead, as their hardware paces them). The figure is that process's CPU (user +
system, every thread) per second of traffic, as a share of one core; best of `--runs`.
`--idle`: the same run without traffic (the runtime's own turns and heartbeats alone). The
kernel's work delivering a frame is the sending process's here (veth), as it is the NIC
interrupt's on a board: not in the figure.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

import runtime_load  # noqa: E402

from foosball.runtime import AgentRuntime  # noqa: E402
from foosball.wire.catalogue import Agent  # noqa: E402
from foosball.wire.codec import WireCodec  # noqa: E402
from foosball.wire.endpoint import Endpoint  # noqa: E402
from foosball.wire.transports.raw import RawEthernetTransport  # noqa: E402

SENDER_IFACE, AGENT_IFACE = "lan-peers", "lan-agent"


def send_traffic(agent: Agent, fps: float, seconds: float, start: float) -> None:
    """The other agents' frames at their times from `start` (time.monotonic), each encoded
    and stamped just before it is sent."""
    transport = RawEthernetTransport(SENDER_IFACE)
    senders = runtime_load.sender_codecs()
    for second in range(int(seconds)):
        for at, sender, make in runtime_load.traffic(fps, second):
            if sender == agent.name.lower():
                continue
            frame = senders[sender].encode(make())
            delay = start + second + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            transport.send(frame)
    transport.close()


class Cycle:
    """A hardware agent's sample every `period_s` (the motor driver's EtherCAT cycle, the
    tracker's camera frame): its step loop turns at that rate, not at its messages."""

    def __init__(self, period_s: float) -> None:
        self.period_s = period_s
        self._next_s = time.monotonic()

    def sense(self, timeout_s: float) -> None:
        self._next_s += self.period_s
        delay = self._next_s - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def act(self, actuation: object) -> None:
        pass

    def close(self) -> None:
        pass


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(agent: Agent, fps: float, seconds: float, idle: bool = False) -> dict:
    """`idle`: no traffic at all (the agent's own heartbeats and turns alone)."""
    reads = runtime_load.core_reads(agent)
    endpoint = Endpoint(RawEthernetTransport(AGENT_IFACE), WireCodec(runtime_load.KEY, agent))
    cycle_s = {Agent.MOTOR_DRIVER: 0.005, Agent.BALL_TRACKER: 1 / fps}.get(agent)
    runtime = AgentRuntime(runtime_load.IdleCore(agent, reads), endpoint,
                           runtime_load.shipped_safety(agent),
                           hardware=Cycle(cycle_s) if cycle_s else None, health=None)
    start = time.monotonic() + 0.5  # the sender's first frame; the runtime is up by then
    sender = multiprocessing.get_context("fork").Process(
        target=send_traffic, args=(agent, 0.0 if idle else fps, 0 if idle else seconds, start))
    sender.start()
    runtime.start_io()
    while time.monotonic() < start:
        runtime.work_turn(0.05)
    used = cpu_s()
    while time.monotonic() < start + seconds:
        runtime.work_turn()
    used = cpu_s() - used
    runtime.stop()
    if runtime._io_thread is not None:
        runtime._io_thread.join(1.0)
    sender.join()
    endpoint.close()
    codec = endpoint.codec
    return {"core_share_pct": round(used / seconds * 100, 2),
            "accepted_per_s": round(codec.accepted / seconds),
            "not_read_per_s": round(codec.not_read / seconds),
            "drops": dict(runtime.counters.drops), "faulted": runtime.latch.faulted}


def in_own_namespace() -> None:
    """Re-run this script in a network namespace of its own with a veth pair in it."""
    if os.environ.get("LAN_SOCKET_NETNS") == "1":
        for command in (["ip", "link", "add", SENDER_IFACE, "type", "veth", "peer", "name",
                         AGENT_IFACE],
                        ["ip", "link", "set", SENDER_IFACE, "up"],
                        ["ip", "link", "set", AGENT_IFACE, "up"]):
            subprocess.run(command, check=True)
        return
    if os.geteuid() != 0:
        sys.exit("lan_socket.py needs root (a network namespace and a raw socket)")
    environment = {**os.environ, "LAN_SOCKET_NETNS": "1"}
    sys.exit(subprocess.run(["unshare", "--net", sys.executable, *sys.argv],
                            env=environment).returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="append",
                        choices=[a.name.lower() for a in runtime_load.RIG])
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fps", type=float, default=200.0)
    parser.add_argument("--idle", action="store_true",
                        help="no traffic: what the runtime costs on its own")
    args = parser.parse_args()
    in_own_namespace()
    results = {}
    for name in args.agent or ["motor_driver", "pole_driver"]:
        agent = Agent[name.upper()]
        runs = [measure(agent, args.fps, args.seconds, args.idle)
                for _ in range(args.runs)]
        best = min(runs, key=lambda r: r["core_share_pct"])
        best["runs_pct"] = [r["core_share_pct"] for r in runs]
        results[name] = best
    print(json.dumps({"fps": args.fps, "seconds": args.seconds, "agents": results}, indent=2))


if __name__ == "__main__":
    main()
