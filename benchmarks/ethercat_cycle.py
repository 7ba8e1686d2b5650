"""EtherCAT cycle figures: pysoem master (the MDA loop) against the 8-drive emulator.

Measures, per cycle period: wake-up lateness of the cyclic loop (p50 / p99 / max), bad
working counters, and the cycles from an injected drive fault to quick stop on all axes.
Needs root (network namespace, SCHED_FIFO). Reports; never fails on timing.

    sudo .venv/bin/python benchmarks/ethercat_cycle.py --seconds 60 --cycle-ms 5 1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from foosball.agents.motor_driver import (
    MotorDriverConfig,
    MotorDriverCore,
    MotorDriverRunner,
)
from foosball.ethercat.bus import BusConfig, open_bus
from foosball.ethercat.realtime import prepare_realtime
from foosball.wire.catalogue import Agent, DriveState, GameCommand, GameControl
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


def measure(cycle_ms: float, seconds: float, fifo: bool) -> dict[str, object]:
    ns = Namespace()
    emulator = EmulatorProcess(ns, 8, rt_priority=80 if fifo else 0)
    try:
        realtime = prepare_realtime() if fifo else {"sched_fifo": False}
        with inside(ns):
            bus = open_bus(BusConfig(backend="pysoem", iface="ecat0", drives=8))
            bus.start()
        core = MotorDriverCore(MotorDriverConfig(cycle_s=cycle_ms / 1000.0))
        core.expected_wkc = bus.expected_working_counter
        inbox = Inbox()
        runner = MotorDriverRunner(bus, core, inbox, stats_capacity=int(seconds * 1000 / cycle_ms)
                                   + 10)
        assert run_until(runner, lambda: operational(core), 15.0), core.drive_states()
        # the timing window: only steady cycling, after start-up
        runner.stats.count = 0
        bad_before = core.bad_working_counters
        started = time.monotonic()
        runner.running = True
        runner.run(cycles=int(seconds * 1000 / cycle_ms))
        elapsed = time.monotonic() - started
        lateness = runner.stats.percentiles()
        figures: dict[str, object] = {
            "cycle_ms": cycle_ms, "seconds": round(elapsed, 1), "cycles": runner.stats.count,
            "sched_fifo": realtime.get("sched_fifo"), "mlockall": realtime.get("mlockall"),
            "wakeup_lateness_us": {k: round(v * 1e6, 1) for k, v in lateness.items()},
            "bad_working_counters": core.bad_working_counters - bad_before,
        }
        quick_stop = {}
        for kind in FAULTS:
            injected = core.cycles
            emulator.command(f"fault 3 {kind}")
            run_until(runner, lambda: core.quick_stop_done_cycle is not None, 2.0)
            fault_seen = core.fault_cycle
            done = core.quick_stop_done_cycle
            quick_stop[kind] = {
                "cycles_to_fault_latched": None if fault_seen is None else fault_seen - injected,
                "cycles_to_quick_stop_all_axes": None if done is None else done - injected,
            }
            emulator.command("clear 3")
            run_until(runner, lambda: core.latched is not None and core.latched.cleared, 2.0)
            inbox.pending.append(GameControl(command=GameCommand.RESTART))  # the game panel
            run_until(runner, lambda: operational(core), 15.0)
        figures["fault_to_quick_stop"] = quick_stop
        bus.close()
        return figures
    finally:
        emulator.stop()
        ns.delete()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cycle-ms", type=float, nargs="+", default=[5.0, 1.0])
    parser.add_argument("--no-fifo", action="store_true", help="measure without SCHED_FIFO")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    results = [measure(ms, args.seconds, not args.no_fifo) for ms in args.cycle_ms]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
