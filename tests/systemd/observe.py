"""Another board on the LAN: every Heartbeat it hears, with its sender's per-boot id.

    python -m tests.systemd.observe --transport raw --iface veth-a --key-file wire.key

prints one JSON object a line: receive time (CLOCK_MONOTONIC, the host's and the test's
clock), sender and boot id (which `foosball wire dump --json` does not show).
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from foosball.wire.catalogue import Agent, Heartbeat
from foosball.wire.codec import Drop, WireCodec, load_key
from foosball.wire.settings import WireSettings
from foosball.wire.transports import open_transport
from tests.busy import busiest_processes

REPO = Path(__file__).resolve().parents[2]
READY = "listening"


@dataclass(frozen=True)
class Beat:
    t: float
    sender: str
    boot: int


class Heartbeats:
    """What the observer process has heard so far, filled by a reader thread."""

    def __init__(self) -> None:
        self.beats: list[Beat] = []
        self.ready = threading.Event()

    def read(self, lines: Iterator[str]) -> None:
        for line in lines:
            if line.strip() == READY:
                self.ready.set()
            else:
                self.beats.append(Beat(**json.loads(line)))

    def of(self, sender: str, since: float = 0.0) -> list[Beat]:
        return [b for b in list(self.beats) if b.sender == sender and b.t >= since]

    def latest(self, sender: str) -> Beat | None:
        beats = self.of(sender)
        return beats[-1] if beats else None

    def longest_gap(self, sender: str, start: float, end: float) -> float:
        times = [start, *(b.t for b in self.of(sender, start) if b.t <= end), end]
        return max(b - a for a, b in itertools.pairwise(times))


@contextmanager
def observing(in_netns: list[str], transport: str, iface: str,
              key_file: Path) -> Iterator[Heartbeats]:
    """Run the observer (prefixed by `in_netns`, e.g. `ip netns exec NS`) while in the block."""
    command = [*in_netns, sys.executable, "-m", "tests.systemd.observe", "--transport",
               transport, "--iface", iface, "--key-file", str(key_file)]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    heartbeats = Heartbeats()
    assert process.stdout is not None
    reader = threading.Thread(target=heartbeats.read, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        if not heartbeats.ready.wait(30):
            raise RuntimeError(f"observer did not start: {' '.join(command)}")
        yield heartbeats
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            busy = busiest_processes()
            process.kill()
            process.wait()
            raise RuntimeError(f"the observer did not stop on SIGTERM within 10 s; busiest "
                               f"processes then:\n{busy}") from None
        reader.join(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["raw", "udp"], required=True)
    parser.add_argument("--iface", required=True)
    parser.add_argument("--key-file", required=True)
    args = parser.parse_args(argv)
    settings = WireSettings(transport=args.transport, iface=args.iface, key_file=args.key_file)
    codec = WireCodec(load_key(settings.key_file), Agent.TOOL, max_age_s=settings.max_age_s)
    with open_transport(settings.transport, **settings.transport_options()) as transport:
        print(READY, flush=True)
        while True:
            frame = transport.recv(0.2)
            if frame is None:
                continue
            received = codec.decode(frame)
            if isinstance(received, Drop) or not isinstance(received.message, Heartbeat):
                continue
            print(json.dumps({"t": time.monotonic(), "sender": received.sender.name,
                              "boot": received.boot_id}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
