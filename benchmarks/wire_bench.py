"""Wire protocol figures: codec cost per message, and one-way raw-Ethernet latency.

    .venv/bin/python benchmarks/wire_bench.py            # codec only
    .venv/bin/python benchmarks/wire_bench.py --latency  # + latency between two namespaces (root)

Codec: encode + MAC + decode per message, best of 5 runs, for the messages that travel at
the ball-state rate and the biggest ones. Also the bare HMAC-SHA256 and cbor2 round trip of
the same payload in the same run, so the figure reads as a ratio to the unavoidable work,
and the schema checks compiled per class against the general code, side by side.

Latency: a sender process in one network namespace sends BallState messages over veth at
1 kHz; a receiver in the other decodes them and records now - timestamp. Both namespaces
share this machine's clock, so no clock sync error enters the figure.
"""

from __future__ import annotations

import argparse
import hmac
import itertools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cbor2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foosball.wire import catalogue
from foosball.wire.catalogue import (
    Agent,
    AxisStatus,
    BallState,
    BallStatus,
    DriveState,
    MotorStatus,
    RodCommand,
    RodId,
    RodTarget,
)
from foosball.wire.codec import WireCodec

KEY = bytes(range(32))


def samples(step: int = 0) -> dict[str, object]:
    """One of each; `step` moves them a little (the codec remembers a body it has just
    accepted from a sender, so the same message over and over would not time decoding)."""
    d = step * 1e-3
    ball = BallState(capture_time=time.time_ns(), frame=1, x=0.1 + d, y=-0.2, vx=3.0, vy=1.0,
                     covariance=(1e-6, 1e-6, 1e-3, 1e-3), status=BallStatus.DETECTED)
    rods = RodCommand(ball_capture_time=1, rods=tuple(
        RodTarget(rod=r, translation=0.01 + d, rotation=0.2, translation_speed=3.0,
                  rotation_speed=100.0) for r in RodId))
    motors = MotorStatus(axes=tuple(
        AxisStatus(axis=i, state=DriveState.RUNNING, position=1.0 + d, velocity=2.0,
                   current=0.5, fault_code=0) for i in range(8)))
    return {"BallState": ball, "RodCommand": rods, "MotorStatus": motors}


def best_us(fn, n: int = 4000, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n * 1e6)
    return best


def codec_figures() -> dict[str, object]:
    out: dict[str, object] = {}
    for (name, message), moved in zip(samples().items(), samples(1).values(), strict=True):
        # each sample from an agent the sender table lets send it
        sender = WireCodec(KEY, min(catalogue.SENDERS[type(message)]))
        receiver = WireCodec(KEY, Agent.GAME_PANEL)
        frame = sender.encode(message)
        assert receiver.decode(frame).message == message
        # The message's own CBOR (the COSE_Mac0's payload), not the COSE shell around it:
        # decoding the shell alone leaves the payload a byte string and skips the real work.
        payload = cbor2.loads(frame[2:]).value[2]
        # The two in turn: each frame's body differs from the one before, as on the rig.
        turns = itertools.cycle((message, moved))
        total = best_us(lambda t=turns, s=sender, r=receiver: r.decode(s.encode(next(t))))
        floor = best_us(lambda p=payload: (cbor2.loads(cbor2.dumps(cbor2.loads(p))),
                                           hmac.digest(KEY, p, "sha256"),
                                           hmac.digest(KEY, p, "sha256")))
        # The schema checks both ways, compiled (what the codec runs) against the general
        # code they fall back to, side by side.
        cls, body = type(message), catalogue.to_body(message)
        compiled = best_us(lambda m=message, c=cls, b=body: (catalogue.to_body(m),
                                                             catalogue.from_body(c, b)))
        general = best_us(lambda m=message, c=cls, b=body: (catalogue._to_body_general(m),
                                                            catalogue._from_body_general(c, b)))
        out[name] = {"bytes": len(frame), "encode_mac_decode_us": round(total, 2),
                     "bare_cbor_and_hmac_us": round(floor, 2),
                     "ratio_to_bare": round(total / floor, 2),
                     "schema_checks_us": round(compiled, 2),
                     "schema_checks_general_us": round(general, 2),
                     "compiled_speedup": round(general / compiled, 2)}
    return out


def receive_role(iface: str, count: int) -> None:
    from foosball.wire.endpoint import Endpoint
    from foosball.wire.transports import open_transport

    endpoint = Endpoint(open_transport("raw", iface=iface), WireCodec(KEY, Agent.STRATEGY))
    print("ready", flush=True)
    latencies: list[int] = []
    deadline = time.monotonic() + 30
    while len(latencies) < count and time.monotonic() < deadline:
        for received in endpoint.receive(0.1):
            latencies.append(time.time_ns() - received.timestamp)
    print(json.dumps(latencies), flush=True)


def send_role(iface: str, count: int) -> None:
    from foosball.wire.endpoint import Endpoint
    from foosball.wire.transports import open_transport

    endpoint = Endpoint(open_transport("raw", iface=iface), WireCodec(KEY, Agent.BALL_TRACKER))
    ball = samples()["BallState"]
    for _ in range(count):
        endpoint.send(ball)
        time.sleep(0.001)


def latency_figures(count: int) -> dict[str, object]:
    from tests.netns import veth_link

    me = [sys.executable, __file__]
    with veth_link("bench", subnet="10.232.0") as link:
        receiver = subprocess.Popen(
            link.exec_in(link.ns_b, *me, "--role", "receive", "--iface", link.iface_b,
                         "--count", str(count)), stdout=subprocess.PIPE, text=True)
        assert receiver.stdout is not None
        assert receiver.stdout.readline().strip() == "ready"
        subprocess.run(link.exec_in(link.ns_a, *me, "--role", "send", "--iface", link.iface_a,
                                    "--count", str(count + 50)), check=True)
        latencies = json.loads(receiver.stdout.readline())
        receiver.wait()
    micro = sorted(v / 1000 for v in latencies)
    return {"messages": len(micro), "p50_us": round(statistics.median(micro), 1),
            "p99_us": round(micro[int(len(micro) * 0.99) - 1], 1), "max_us": round(micro[-1], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", action="store_true")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--role", choices=["send", "receive"])
    parser.add_argument("--iface")
    args = parser.parse_args()
    if args.role == "receive":
        receive_role(args.iface, args.count)
        return
    if args.role == "send":
        send_role(args.iface, args.count)
        return
    report: dict[str, object] = {"codec": codec_figures()}
    if args.latency:
        report["raw_ethernet_one_way"] = latency_figures(args.count)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
