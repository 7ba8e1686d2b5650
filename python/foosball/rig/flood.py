"""A flood of frames that no key signed, as a stranger on the agent LAN sends them: random
bodies behind our length prefix, on our EtherType (raw) or to our multicast group (UDP).

    python -m foosball.rig.flood --rate 10000 --iface lan0     # until SIGTERM or --seconds

A process of its own (in the tool board's namespace on the rig), like a laptop on the LAN:
in the observer's process its sends would wait for the interpreter lock and never keep the
rate. Prints how many frames it sent when it stops.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import time

from foosball.realtime import set_fifo
from foosball.safety.stop import StopRequest
from foosball.wire.transports.raw import ETHERTYPE_FOOSBALL
from foosball.wire.transports.udp import DEFAULT_GROUP, DEFAULT_PORT


def flood(iface: str | None, rate_hz: float, seconds: float, stop: StopRequest) -> int:
    """Raw frames on `iface` (None: UDP to the agents' group) for `seconds` or until `stop`;
    returns how many were sent."""
    if iface is not None:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        sock.bind((iface, 0))
        header = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + ETHERTYPE_FOOSBALL.to_bytes(2, "big")
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        header = b""
    # Made up front: the loop only sends, in bursts of a millisecond's worth, so that it
    # keeps the rate on a busy machine.
    frames = [header + (64).to_bytes(2, "big") + os.urandom(64) for _ in range(256)]
    burst = max(1, round(rate_hz / 1000))
    sent = 0
    start = time.monotonic()
    # CLOCK_MONOTONIC is the host's: the fault matrix times detection from this line.
    print(f"flooding since {start:.6f}", flush=True)
    try:
        while time.monotonic() - start < seconds and not stop.is_set():
            for _ in range(burst):
                frame = frames[sent % len(frames)]
                if iface is not None:
                    sock.send(frame)
                else:
                    sock.sendto(frame, (DEFAULT_GROUP, DEFAULT_PORT))
                sent += 1
            behind = start + sent / rate_hz - time.monotonic()
            if behind > 0:
                stop.wait(behind)
    finally:
        sock.close()
    return sent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=10_000.0, help="frames per second")
    parser.add_argument("--iface", help="raw Ethernet interface (default: UDP on loopback)")
    parser.add_argument("--seconds", type=float, default=float("inf"))
    parser.add_argument("--rt-priority", type=int, default=30,
                        help="SCHED_FIFO where allowed: above ordinary processes, below the "
                             "agents' I/O threads (which must win), so it keeps its rate")
    args = parser.parse_args(argv)
    stop = StopRequest()  # a flag and a wake-up fd: an Event's set() in a handler can hang
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})  # see cli.py
    stop.install((signal.SIGTERM, signal.SIGINT))
    set_fifo(args.rt_priority)
    sent = flood(args.iface, args.rate, args.seconds, stop)
    print(f"sent {sent}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
