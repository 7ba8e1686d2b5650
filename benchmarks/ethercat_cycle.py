"""EtherCAT cycle figures: pysoem master (the MDA in the agent runtime) against the 8-drive
emulator.

Measures, per cycle period: wake-up lateness of the cyclic loop (p50 / p99 / max), bad
working counters, and the cycles from an injected drive fault to quick stop on all axes.
The MDA runs as on the board: `open_motor_driver(...)` and the runtime's `run()`, its work
half cycling the bus on this (SCHED_FIFO) thread, its I/O half on its own; a conductor
thread injects faults and restarts meanwhile, as the emulator's operator and the game panel
would. By default the agent LAN carries play traffic (`WireTraffic`); --no-wire measures the
bare cycle.
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
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from foosball.agents.motor_driver import (
    EtherCatHardware,
    MotorDriverConfig,
    MotorDriverCore,
    open_motor_driver,
)
from foosball.agents.runtime import AgentRuntime
from foosball.ethercat.bus import BusConfig, open_bus, receive_timeout_for
from foosball.ethercat.realtime import CycleStats
from foosball.safety.settings import SafetySettings
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
from foosball.wire.transports.memory import MemoryHub, MemoryTransport
from tests.ethercat.netns import EmulatorProcess, Namespace, inside

FAULTS = ("overcurrent", "motor_locked", "emergency_button")


def operational(core: MotorDriverCore) -> bool:
    return all(s in (DriveState.READY, DriveState.RUNNING) for s in core.drive_states())


def wait_until(done: Callable[[], bool], timeout_s: float) -> bool:
    """The conductor's wait; the cycle runs on meanwhile."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


class Window:
    """The timing window, opened and closed on the cycle thread itself (it is the runtime's
    `should_stop`, asked between work turns), so it holds exactly `cycles` whole cycles of
    steady running and nothing of start-up or of the fault tests."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self.hardware: EtherCatHardware = runtime.hardware  # type: ignore[assignment]
        self.core: MotorDriverCore = runtime.core  # type: ignore[assignment]
        self.wanted = 0
        self.start_cycle: int | None = None
        self.opened = threading.Event()
        self.closed = threading.Event()
        self.finished = threading.Event()
        self.figures: dict[str, Any] = {}

    def open(self, cycles: int) -> None:
        self.wanted = cycles
        self.opened.set()

    def __call__(self) -> bool:  # on the cycle thread, between work turns
        if self.opened.is_set() and self.start_cycle is None:
            self.hardware.stats.count = 0
            self.start_cycle = self.core.cycles
            self.figures = {"bad_before": self.core.bad_working_counters,
                            "started": time.monotonic()}
        elif self.start_cycle is not None and not self.closed.is_set() and \
                self.core.cycles - self.start_cycle >= self.wanted:
            self.figures.update(
                elapsed=time.monotonic() - self.figures["started"],
                cycles=self.hardware.stats.count,
                lateness=self.hardware.stats.window().copy(),  # the percentiles off the cycle
                bad=self.core.bad_working_counters - self.figures["bad_before"],
                latched=None if self.core.latched is None else self.core.latched.text)
            self.closed.set()
        return self.finished.is_set()


class WireTraffic:
    """The agent LAN as the MDA sees it in play: authenticated frames on the namespace's
    agent-LAN veth pair. Another process (as another board would) plays the pole driver,
    sending 8 axis targets every `period_s` (0: a flood) and reading everything; the
    runtime's I/O thread decodes and encodes beside the cycle."""

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


def back_to_running(core: MotorDriverCore, restart: Callable[[], None]) -> bool:
    """Clear any latched fault with RESTARTs from the panel (a flood may drop one, and the
    runtime refuses one while a cause is present)."""
    for _ in range(10):
        if core.latched is None and operational(core):
            return True
        if core.latched is not None:
            wait_until(lambda: core.latched is None or core.latched.cleared, 2.0)
            restart()
        wait_until(lambda: core.latched is None and operational(core), 5.0)
    return core.latched is None and operational(core)


def _conduct(runtime: AgentRuntime, window: Window, emulator: EmulatorProcess,
             restart: Callable[[], None], cycles: int, out: dict[str, Any]) -> None:
    """The conductor thread: start-up, the window, then each fault and its quick stop."""
    with contextlib.suppress(OSError):  # created by a SCHED_FIFO thread: back to normal
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    core = window.core
    try:
        wait_until(lambda: operational(core) or core.latched is not None, 15.0)
        out["fault_during_startup"] = None if core.latched is None else core.latched.text
        out["back_to_running"] = back_to_running(core, restart)
        if not out["back_to_running"]:
            out["states"] = [s.name for s in core.drive_states()]
            return
        window.open(cycles)
        window.closed.wait()
        out["emulator_longest_stall_ms"] = round(
            float(emulator.command("status")["longest_stall_s"]) * 1e3, 2)
        quick_stop: dict[str, object] = {}
        for kind in FAULTS:
            if not back_to_running(core, restart):
                quick_stop[kind] = "not measured: the system did not come back to running"
                continue
            injected = core.cycles
            emulator.command(f"fault 3 {kind}")
            wait_until(lambda: core.quick_stop_done_cycle is not None, 2.0)
            fault_seen, done = core.fault_cycle, core.quick_stop_done_cycle
            quick_stop[kind] = {
                "cycles_to_fault_latched": None if fault_seen is None else fault_seen - injected,
                "cycles_to_quick_stop_all_axes": None if done is None else done - injected,
            }
            emulator.command("clear 3")
        out["fault_to_quick_stop"] = quick_stop
    finally:
        window.finished.set()


def _realtime_in_effect() -> dict[str, bool]:
    locked = 0
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmLck:"):
                locked = int(line.split()[1])
    return {"sched_fifo": os.sched_getscheduler(0) == os.SCHED_FIFO, "mlockall": locked > 0}


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
            endpoint, panel = traffic.mda, traffic.panel
        else:  # nobody on the agent LAN but the panel's RESTARTs
            key = secrets.token_bytes(32)
            hub = MemoryHub()
            endpoint = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.MOTOR_DRIVER))
            panel = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.GAME_PANEL))
        config = MotorDriverConfig(cycle_s=cycle_ms / 1000.0)
        cycles = int(seconds * 1000 / cycle_ms)
        with inside(ns):
            bus = open_bus(BusConfig(backend="pysoem", iface="ecat0", drives=8,
                                     receive_timeout_us=receive_timeout_for(config.cycle_s)))
            # mlockall, SCHED_FIFO for this thread, no GC pauses; then the bus to OP
            runtime = open_motor_driver(bus, endpoint, config, SafetySettings(deadlines={}),
                                        realtime=fifo)
        hardware: EtherCatHardware = runtime.hardware  # type: ignore[assignment]
        hardware.stats = type(hardware.stats)(cycles + 10)
        realtime = _realtime_in_effect()
        window = Window(runtime)
        conducted: dict[str, Any] = {}
        conductor = threading.Thread(
            target=_conduct, name="conductor", daemon=True,
            args=(runtime, window, emulator,
                  lambda: panel.send(GameControl(command=GameCommand.RESTART)), cycles,
                  conducted))
        conductor.start()
        runtime.run(should_stop=window, realtime=fifo)  # closes the bus when it returns
        conductor.join(timeout=10)
        counters = runtime.counters
        w = window.figures
        if "lateness" in w:
            stats = CycleStats(max(1, len(w["lateness"])))
            stats.lateness[:len(w["lateness"])] = w["lateness"]
            stats.count = len(w["lateness"])
            w["lateness"] = stats.percentiles()
        figures: dict[str, object] = {
            "cycle_ms": cycle_ms, "seconds": round(w.get("elapsed", 0.0), 1),
            "cycles": w.get("cycles", 0),
            "sched_fifo": realtime["sched_fifo"], "mlockall": realtime["mlockall"],
            "wakeup_lateness_us": {k: round(v * 1e6, 1)
                                   for k, v in w.get("lateness", {}).items()},
            "bad_working_counters": w.get("bad"),
            "wire_traffic": None if traffic is None else {
                "refused": counters.drops.get("sender", 0),
                "over_decoding_budget": counters.over_budget,
                "received": counters.received, "drops": dict(counters.drops)},
            "latched_in_window": w.get("latched"),
            **conducted,
        }
        if traffic is not None:
            figures["wire_traffic"].update(traffic.finish())  # type: ignore[union-attr]
        return figures
    finally:
        if traffic is not None:
            if traffic.process is not None and traffic.process.poll() is None:
                traffic.process.kill()
            traffic.mda.close()
            traffic.panel.close()
        emulator.stop()
        ns.delete()
        # open_motor_driver made this thread SCHED_FIFO 99: the next run's emulator and
        # peer processes must not inherit that from the fork
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


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
