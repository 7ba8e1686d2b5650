"""EtherCAT cycle figures: pysoem master (the MDA loop) against the 8-drive emulator.

Measures, per cycle period: wake-up lateness of the cyclic loop (p50 / p99 / max), bad
working counters, and the cycles from an injected drive fault to quick stop on all axes.
By default the agent LAN carries play traffic meanwhile (`WireTraffic`); --no-wire
measures the bare cycle.
Needs root (network namespace, SCHED_FIFO). Reports; never fails on timing.

    sudo .venv/bin/python benchmarks/ethercat_cycle.py --seconds 60 --cycle-ms 5 1 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from foosball.agents.motor_driver import (
    RELAY_PRIORITY,
    MotorDriverConfig,
    MotorDriverCore,
    MotorDriverRunner,
)
from foosball.ethercat.bus import BusConfig, open_bus, receive_timeout_for
from foosball.ethercat.realtime import prepare_realtime
from foosball.wire.catalogue import (
    Agent,
    AxisTarget,
    DriveState,
    GameCommand,
    GameControl,
    MotorCommand,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports import open_transport
from tests.ethercat.netns import EmulatorProcess, Namespace, inside

FAULTS = ("overcurrent", "motor_locked", "emergency_button")


class Inbox:
    """Stands in for the wire endpoint: messages put here reach the MDA next cycle."""

    def __init__(self) -> None:
        self.pending: list[object] = []

    def receive(self, timeout: float = 0.0) -> list[SimpleNamespace]:
        out = [SimpleNamespace(message=m, sender=Agent.GAME_PANEL) for m in self.pending]
        self.pending.clear()
        return out

    def send(self, message: object) -> None:
        pass


def run_until(runner: MotorDriverRunner, done, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    hit = False

    def check(r: MotorDriverRunner) -> None:
        nonlocal hit
        if done():
            hit = True
            r.stop()
        elif time.monotonic() > deadline:
            r.stop()

    runner.running = True
    runner.run(on_cycle=check)
    return hit


def operational(core: MotorDriverCore) -> bool:
    return all(s in (DriveState.READY, DriveState.RUNNING) for s in core.drive_states())


class WireTraffic:
    """The agent LAN as the MDA sees it in play: authenticated frames on the namespace's
    agent-LAN veth pair. Another process (as another board would) plays the pole driver,
    sending 8 axis targets every `period_s` (0: a flood) and reading everything; the
    MDA's relay thread decodes and encodes beside the cycle."""

    def __init__(self, ns: Namespace, period_s: float, seconds: float) -> None:
        key = secrets.token_bytes(32)
        with inside(ns):
            self.mda = Endpoint(open_transport("raw", iface="lan0"),
                                WireCodec(key, Agent.MOTOR_DRIVER))
            self.panel = Endpoint(open_transport("raw", iface="lan1"),
                                  WireCodec(key, Agent.GAME_PANEL))
        self.args = [*ns.exec_args(), sys.executable, __file__, "--peer", "lan1", key.hex(),
                     str(period_s), str(seconds)]
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True,
                                        start_new_session=True)

    def finish(self) -> dict[str, object]:
        assert self.process is not None
        # `ip netns exec` may sit between us and the peer: signal the whole group
        os.killpg(self.process.pid, signal.SIGINT)  # the peer reports its counts and stops
        try:
            out, _ = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
        return json.loads(out) if out.strip() else {}


def peer_main(iface: str, key_hex: str, period: str, seconds: str) -> int:
    """The pole driver stand-in, run in its own process by WireTraffic."""
    endpoint = Endpoint(open_transport("raw", iface=iface),
                        WireCodec(bytes.fromhex(key_hex), Agent.POLE_DRIVER))
    counts = [0, 0]
    with contextlib.suppress(KeyboardInterrupt):  # WireTraffic.finish() interrupts
        _peer_loop(endpoint, float(period), float(seconds), counts)
    print(json.dumps({"motor_commands_sent": counts[0], "messages_heard": counts[1]}))
    return 0


def _peer_loop(endpoint: Endpoint, period_s: float, seconds: float, counts: list[int]) -> None:
    start = next_send = time.monotonic()
    while time.monotonic() - start < seconds:
        now = time.monotonic()
        if now >= next_send:
            next_send += period_s
            phase = math.sin(2 * math.pi * 0.5 * (now - start))
            endpoint.send(MotorCommand(axes=tuple(
                AxisTarget(axis=a, position=(10.0 + 5.0 * phase) if a % 2 == 0 else phase,
                           velocity=200.0) for a in range(8))))
            counts[0] += 1
        wait = max(0.0, min(0.005, next_send - time.monotonic()))
        counts[1] += len(endpoint.receive(wait))


def back_to_running(runner: MotorDriverRunner, core: MotorDriverCore,
                    traffic: WireTraffic | None, inbox: Inbox) -> bool:
    """Clear any latched fault with RESTARTs from the panel (a flood may drop one)."""
    for _ in range(10):
        if core.latched is None and operational(core):
            return True
        if core.latched is not None:
            run_until(runner, lambda: core.latched is None or core.latched.cleared, 2.0)
            restart_from_panel(runner, traffic, inbox)
        run_until(runner, lambda: core.latched is None and operational(core), 5.0)
    return core.latched is None and operational(core)


def restart_from_panel(runner: MotorDriverRunner, traffic: WireTraffic | None,
                       inbox: Inbox) -> None:
    restart = GameControl(command=GameCommand.RESTART)
    if traffic is not None:
        traffic.panel.send(restart)
    else:
        inbox.pending.append(restart)


def measure(cycle_ms: float, seconds: float, fifo: bool, wire: bool,
            flood: bool = False) -> dict[str, object]:
    ns = Namespace()
    emulator = EmulatorProcess(ns, 8, rt_priority=80 if fifo else 0)
    traffic = None
    try:
        # The peer process starts first: forking later would pause the cycle past the
        # drives' watchdog.
        traffic = WireTraffic(ns, 0.0 if flood else 0.01, seconds + 60) if wire else None
        if traffic is not None:
            traffic.start()
        realtime = prepare_realtime() if fifo else {"sched_fifo": False}
        with inside(ns):
            bus = open_bus(BusConfig(backend="pysoem", iface="ecat0", drives=8,
                                     receive_timeout_us=receive_timeout_for(cycle_ms / 1e3)))
            bus.start()
        core = MotorDriverCore(MotorDriverConfig(cycle_s=cycle_ms / 1000.0))
        core.expected_wkc = bus.expected_working_counter
        inbox = Inbox()
        runner = MotorDriverRunner(bus, core, traffic.mda if traffic else inbox,
                                   stats_capacity=int(seconds * 1000 / cycle_ms) + 10)
        if traffic is not None:
            runner.start_wire_thread(RELAY_PRIORITY if fifo else None)
        run_until(runner, lambda: operational(core) or core.latched is not None, 15.0)
        startup_fault = None if core.latched is None else core.latched.text
        assert back_to_running(runner, core, traffic, inbox), core.drive_states()
        # the timing window: only steady cycling, after start-up
        runner.stats.count = 0
        bad_before = core.bad_working_counters
        started = time.monotonic()
        runner.running = True
        runner.run(cycles=int(seconds * 1000 / cycle_ms))
        elapsed = time.monotonic() - started
        peer_over_budget = runner.relay.over_budget if runner.relay is not None else 0
        lateness = runner.stats.percentiles()
        figures: dict[str, object] = {
            "cycle_ms": cycle_ms, "seconds": round(elapsed, 1), "cycles": runner.stats.count,
            "sched_fifo": realtime.get("sched_fifo"), "mlockall": realtime.get("mlockall"),
            "wakeup_lateness_us": {k: round(v * 1e6, 1) for k, v in lateness.items()},
            "bad_working_counters": core.bad_working_counters - bad_before,
            "wire_traffic": None if traffic is None else {
                "refused": runner.refused_messages, "over_decoding_budget": peer_over_budget},
        }
        figures["latched_in_window"] = None if core.latched is None else core.latched.text
        figures["fault_during_startup"] = startup_fault  # then restarted before the window
        figures["emulator_longest_stall_ms"] = round(
            float(emulator.command("status")["longest_stall_s"]) * 1e3, 2)  # type: ignore[arg-type]
        quick_stop: dict[str, object] = {}
        for kind in FAULTS:
            if not back_to_running(runner, core, traffic, inbox):
                quick_stop[kind] = "not measured: the system did not come back to running"
                continue
            injected = core.cycles
            emulator.command(f"fault 3 {kind}")
            run_until(runner, lambda: core.quick_stop_done_cycle is not None, 2.0)
            fault_seen, done = core.fault_cycle, core.quick_stop_done_cycle
            quick_stop[kind] = {
                "cycles_to_fault_latched": None if fault_seen is None else fault_seen - injected,
                "cycles_to_quick_stop_all_axes": None if done is None else done - injected,
            }
            emulator.command("clear 3")
        figures["fault_to_quick_stop"] = quick_stop
        bus.close()
        if traffic is not None:
            runner.relay.stop()  # type: ignore[union-attr]
            figures["wire_traffic"].update(traffic.finish())  # type: ignore[union-attr]
        return figures
    finally:
        if traffic is not None and traffic.process is not None and \
                traffic.process.poll() is None:
            traffic.process.kill()
        emulator.stop()
        ns.delete()


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "--peer":
        return peer_main(*sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cycle-ms", type=float, nargs="+", default=[5.0, 1.0])
    parser.add_argument("--no-fifo", action="store_true", help="measure without SCHED_FIFO")
    parser.add_argument("--no-wire", action="store_true",
                        help="measure the bare cycle, without agent-LAN traffic")
    parser.add_argument("--flood", action="store_true",
                        help="the pole driver sends as fast as it can instead of at 100 Hz")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    results = [measure(ms, args.seconds, not args.no_fifo, not args.no_wire, args.flood)
               for ms in args.cycle_ms]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
