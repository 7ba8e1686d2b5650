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

Why a frame is lost: every bad working counter in the window is logged with its time and
how long the master waited for it; a sampler process (ordinary priority) reads, every 5 ms,
the VM's steal time per CPU (/proc/stat: the time the hypervisor ran something else on
that vCPU) and, for the master's cycle thread and the emulator, the time each waited on a
run queue of this kernel and the CPU it ran on (/proc/<pid>/schedstat, stat); the emulator
logs its own stalls and slow answers. Each lost frame is then shown beside what the
machine was doing around it (`losses`).

    sudo .venv/bin/python benchmarks/ethercat_cycle.py --seconds 60 --cycle-ms 5 1 --json out.json
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import logging
import math
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from foosball.agents.motor_driver import (
    EtherCatHardware,
    MotorDriverConfig,
    MotorDriverCore,
    open_motor_driver,
)
from foosball.ethercat.bus import BusConfig, open_bus, receive_timeout_for
from foosball.realtime import CycleStats
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
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

    def __init__(self, runtime: AgentRuntime, cycle_cpu: int | None = None) -> None:
        self.runtime = runtime
        self.cycle_cpu = cycle_cpu  # pin the cycle thread here (its I/O thread stays free)
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
        if self.cycle_cpu is not None:
            os.sched_setaffinity(0, {self.cycle_cpu})  # this thread only
            self.cycle_cpu = None
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
        out["emulator_timing"] = emulator.command("timing")
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


# --- why frames are lost ------------------------------------------------------------------
SAMPLE_S = 0.005
AROUND_S = 0.012  # what happened this long either side of a lost frame counts for it


def sampler_main(out_path: str, *pids_and_parent: str) -> int:
    """The sampler process: see the module's doc. Writes JSON to `out_path` on SIGINT, or
    when its parent (the last argument) is gone."""
    *pids, parent = pids_and_parent
    tick_s = 1.0 / os.sysconf("SC_CLK_TCK")
    times: list[float] = []
    steal: list[list[float]] = []
    threads: dict[str, list[list[float]]] = {pid: [] for pid in pids}
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with open("/proc/stat") as stat_file:
        while not stop.is_set():
            stat_file.seek(0)
            lines = stat_file.read().splitlines()
            times.append(time.monotonic())
            # per CPU: the 8th value of its line, in USER_HZ ticks
            steal.append([int(line.split()[8]) * tick_s for line in lines
                          if line.startswith("cpu") and line[3].isdigit()])
            for pid in pids:
                try:
                    run_ns, wait_ns, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
                    cpu = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[36]
                    threads[pid].append([int(run_ns) * 1e-9, int(wait_ns) * 1e-9, int(cpu)])
                except (OSError, ValueError, IndexError):
                    threads[pid].append([math.nan, math.nan, -1])
            if not Path(f"/proc/{parent}").exists():
                break
            stop.wait(SAMPLE_S)
    Path(out_path).write_text(json.dumps({"t": times, "steal": steal, "threads": threads}))
    return 0


class Sampler:
    """The sampler in its own process, started before the cycle goes real-time (a fork
    from the real-time process later would pause the cycle)."""

    def __init__(self, threads: dict[str, int]) -> None:
        self.names = {str(pid): name for name, pid in threads.items()}
        fd, self.path = tempfile.mkstemp(prefix="ethercat-samples-", suffix=".json")
        os.close(fd)
        self.process = subprocess.Popen([sys.executable, __file__, "--sampler", self.path,
                                         *self.names, str(os.getpid())],
                                        start_new_session=True)
        self.data: dict[str, Any] | None = None

    def finish(self) -> dict[str, Any]:
        """Stop it and read its samples (once; later calls give the same)."""
        if self.data is not None:
            return self.data
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
            data = json.loads(Path(self.path).read_text() or "{}")
        except (subprocess.TimeoutExpired, json.JSONDecodeError):
            self.process.kill()
            self.process.wait()
            data = {}
        finally:
            Path(self.path).unlink(missing_ok=True)
        if data:
            data["threads"] = {self.names[pid]: v for pid, v in data["threads"].items()}
        self.data = data
        return data


LATE_LOG_S = 0.001


class ExchangeLog:
    """Wraps the bus's exchange (on the cycle thread): each bad working counter with its
    time, how long the master waited for the frame and how late the cycle woke; and each
    cycle that woke more than LATE_LOG_S late."""

    def __init__(self, hardware: EtherCatHardware) -> None:
        self.hardware = hardware
        self.bus = hardware.bus
        self._exchange = hardware.bus.exchange
        self.bad: list[tuple[float, float, int, float]] = []
        self.late: list[tuple[float, float]] = []
        hardware.bus.exchange = self  # type: ignore[method-assign]

    def __call__(self, outputs: Any) -> Any:
        start = time.monotonic()
        stats = self.hardware.stats
        late = float(stats.lateness[(stats.count - 1) % len(stats.lateness)])
        if late > LATE_LOG_S:
            self.late.append((start, late))
        result = self._exchange(outputs)
        if result.working_counter != self.bus.expected_working_counter:
            self.bad.append((start, time.monotonic() - start, result.working_counter, late))
        return result


def _delta(times: list[float], series: list[Any], start: float, end: float,
           column: int | None = None) -> float:
    """How much a cumulative series grew between the samples around [start, end]."""
    first = max(0, bisect.bisect_right(times, start) - 1)
    last = min(len(times) - 1, bisect.bisect_left(times, end))
    if last <= first:
        return 0.0
    a, b = series[first], series[last]
    if column is None:
        return float(sum(b) - sum(a))
    return float(b[column] - a[column])


def explain_losses(bad: list[tuple[float, float, int, float]], samples: dict[str, Any],
                   emulator: dict[str, Any], start: float, end: float,
                   late: Sequence[tuple[float, float]] = ()) -> dict[str, Any]:
    """Each lost frame (and each cycle that woke over 1 ms late) in [start, end] beside the
    steal time, the threads' run-queue waits and the emulator's stalls and slow answers
    around it; and the window's totals."""
    times = samples.get("t", [])
    steal = samples.get("steal", [])
    threads = samples.get("threads", {})
    stalls = [tuple(x) for x in emulator.get("stalls", [])]
    slow = [tuple(x) for x in emulator.get("answers", {}).get("slow", [])]

    def around(at: float) -> dict[str, Any]:
        lo, hi = at - AROUND_S, at + AROUND_S
        row: dict[str, Any] = {
            "at_s": round(at - start, 3),
            "steal_ms": round(_delta(times, steal, lo, hi) * 1e3, 1) if times else None,
            # a stall is logged when it ends: [t - s, t] overlapping [lo, hi]
            "emulator_stall_ms": round(max((s for t, s, *_ in stalls if t - s <= hi and t >= lo),
                                           default=0.0) * 1e3, 2),
            "emulator_slowest_answer_us": round(max((s for t, s in slow if lo <= t <= hi),
                                                    default=0.0) * 1e6)}
        for name, series in threads.items():
            row[f"{name}_runqueue_wait_ms"] = round(_delta(times, series, lo, hi, 1) * 1e3, 2)
            near = [cpu for t, (_, _, cpu) in zip(times, series, strict=False) if lo <= t <= hi]
            row[f"{name}_cpus"] = sorted(set(near))
        return row

    losses = [{**around(at), "wkc": wkc, "waited_us": round(waited * 1e6),
               "cycle_woke_late_us": round(woke * 1e6)}
              for at, waited, wkc, woke in bad if start <= at <= end]
    late_wakeups = [{**around(at), "woke_late_us": round(woke * 1e6)}
                    for at, woke in late if start <= at <= end]
    seconds = max(1e-9, end - start)
    totals: dict[str, Any] = {}
    if times:
        per_cpu = [round((b - a) / seconds * 100, 2) for a, b in
                   zip(steal[max(0, bisect.bisect_right(times, start) - 1)],
                       steal[min(len(times) - 1, bisect.bisect_left(times, end))], strict=True)]
        totals["steal_pct_per_cpu"] = per_cpu
        # samples in which the hypervisor took a CPU away (the counter moves in 10 ms ticks)
        totals["samples_with_steal"] = sum(
            1 for i in range(1, len(times))
            if start <= times[i] <= end and sum(steal[i]) > sum(steal[i - 1]))
        for name, series in threads.items():
            totals[f"{name}_runqueue_wait_ms"] = round(
                _delta(times, series, start, end, 1) * 1e3, 1)
        if {"master", "emulator"} <= threads.keys():  # on one CPU at the same sample
            inside = [i for i, t in enumerate(times) if start <= t <= end]
            same = sum(1 for i in inside
                       if threads["master"][i][2] == threads["emulator"][i][2] >= 0)
            totals["same_cpu_samples_pct"] = round(100 * same / max(1, len(inside)), 1)
    return {"lost_frames": losses, "late_wakeups_over_1ms": late_wakeups, "window": totals,
            "emulator_answer": {k: v for k, v in emulator.get("answers", {}).items()
                                if k != "slow"},
            "emulator_stalls_over_1ms": sum(1 for t, *_ in stalls if start <= t <= end)}


def _realtime_in_effect() -> dict[str, bool]:
    locked = 0
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmLck:"):
                locked = int(line.split()[1])
    return {"sched_fifo": os.sched_getscheduler(0) == os.SCHED_FIFO, "mlockall": locked > 0}


def measure(cycle_ms: float, seconds: float, fifo: bool, wire: bool,
            flood: bool = False, pin: bool = False) -> dict[str, object]:
    """`pin`: the master's cycle thread on CPU 0, the emulator on CPU 1 (each a core of its
    own: the master busy-polls for its frame, an emulator on its core could not answer)."""
    ns = Namespace()
    emulator = EmulatorProcess(ns, 8, rt_priority=80 if fifo else 0,
                               extra=("--cpu", "1") if pin else ())
    traffic = None
    sampler = Sampler({"master": os.getpid(), "emulator": emulator.pid})
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
        exchanges = ExchangeLog(hardware)
        realtime = _realtime_in_effect()
        window = Window(runtime, cycle_cpu=0 if pin else None)
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
            "pinned": pin,
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
        if "started" in w:
            figures["losses"] = explain_losses(
                exchanges.bad, sampler.finish(), conducted.get("emulator_timing", {}),
                w["started"], w["started"] + w.get("elapsed", 0.0), exchanges.late)
        return figures
    finally:
        if traffic is not None:
            if traffic.process is not None and traffic.process.poll() is None:
                traffic.process.kill()
            traffic.mda.close()
            traffic.panel.close()
        emulator.stop()
        ns.delete()
        sampler.finish()  # last: nothing of the run is left behind if it fails
        # open_motor_driver made this thread SCHED_FIFO 99: the next run's emulator and
        # peer processes must not inherit that from the fork
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def main() -> int:
    if len(sys.argv) == 6 and sys.argv[1] == "--peer":
        return peer_main(*sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "--sampler":
        return sampler_main(*sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cycle-ms", type=float, nargs="+", default=[5.0, 1.0])
    parser.add_argument("--no-fifo", action="store_true", help="measure without SCHED_FIFO")
    parser.add_argument("--no-wire", action="store_true",
                        help="measure the bare cycle, without agent-LAN traffic")
    parser.add_argument("--flood", action="store_true",
                        help="the pole driver sends as fast as it can instead of at 100 Hz")
    parser.add_argument("--pin", action="store_true",
                        help="the master's cycle thread on CPU 0, the emulator on CPU 1")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    results = [measure(ms, args.seconds, not args.no_fifo, not args.no_wire, args.flood,
                       args.pin)
               for ms in args.cycle_ms]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
