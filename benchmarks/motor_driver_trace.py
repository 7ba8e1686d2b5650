"""Fingerprints of the motor driver's behaviour, to show that speed work changed nothing.

    .venv/bin/python benchmarks/motor_driver_trace.py [--tree /work/main] [--log DIR]

Runs the MDA as the board runs it on the fake bus, with a clock passed in (the tests' Rig:
FakeBus -> EtherCatHardware -> MotorDriverCore in an AgentRuntime, peers on an in-process
LAN), through scripted scenarios: the budget's pattern (a MotorCommand for all eight axes
every cycle, 4,000 cycles), commands beyond the limits, pause and start, a person's halt
and release, drive faults of each kind with refused and accepted restarts, working-counter
errors, link loss and recovery, lost frames, another agent's alarm, a silent peer, a lost
process-data watchdog, plain CiA 402 drives with each alignment option, an alignment that
never ends; at 5 ms and at 1 ms with the table's soft travel. Every cycle it records every
drive's outputs (each RxPdo sent), the step's inputs and outputs (messages, causes, state,
actuation), the core's state (every axis's phase, setpoint, speed, goal, last inputs...,
the latch, the counters) and the hardware's (timing, outputs), and what the LAN heard;
it prints one sha256 per scenario. `--tree` runs another checkout's `python/` (for
example main's) under this checkout's scenarios: equal hashes, the same behaviour.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
AXIS_FIELDS = ("phase", "since_s", "zero", "setpoint", "speed", "goal", "goal_speed",
               "reset_toggle", "last", "following")
CORE_FIELDS = ("accepting", "started", "consecutive_bad_wkc", "consecutive_no_frame",
               "bad_working_counters", "last_wkc", "expected_wkc", "restarts_refused",
               "restarts", "cycles", "fault_cycle", "quick_stop_done_cycle", "_last_status_s",
               "_answering")
HW_FIELDS = ("_timing", "capture_to_setpoint", "al_state", "alignment_objects",
             "_alignment_read", "outputs", "_answering", "_deadline")


class Trace:
    """A running sha256 of records (the repr of each part: floats exactly)."""

    def __init__(self, name: str, log: TextIO | None) -> None:
        self.name, self.log = name, log
        self.hash = hashlib.sha256()
        self.records = 0

    def __call__(self, *parts: Any) -> None:
        line = " | ".join(repr(p) for p in parts)
        self.hash.update(line.encode() + b"\n")
        self.records += 1
        if self.log is not None:
            self.log.write(line + "\n")


def instrument(trace: Trace, rig: Any) -> None:
    core, hardware, bus = rig.core, rig.hardware, rig.bus
    exchange, step = bus.exchange, core.step

    def traced_exchange(outputs: Any) -> Any:
        trace("rx", tuple(tuple(int(v) for v in o) for o in outputs))
        return exchange(outputs)

    def traced_step(inputs: Any) -> Any:
        out = step(inputs)
        trace("step", inputs.now_s, inputs.messages, inputs.safety, out.messages, out.causes,
              out.state, out.actuation)
        trace("core", tuple(tuple(getattr(a, f) for f in AXIS_FIELDS) for a in core.axes),
              core.latched, sorted((c.name, a) for c, a in core.alarmed), sorted(core.halted),
              tuple(getattr(core, f) for f in CORE_FIELDS), core.drive_states(),
              core.safety_state(), core.causes())
        trace("hw", tuple(getattr(hardware, f) for f in HW_FIELDS), hardware.stats.count)
        return out

    bus.exchange = traced_exchange
    core.step = traced_step


# --- the scenarios ----------------------------------------------------------------------------
def scenarios() -> Iterator[tuple[str, Callable[[Any], Any], Callable[[Any, Trace], None]]]:
    from foosball.agents.motor_driver import MotorDriverConfig, axes_from_table
    from foosball.ethercat import layout as L
    from foosball.ethercat.bus import BusConfig, Exchange
    from foosball.ethercat.drive import FaultKind
    from foosball.ethercat.emulator import EmulatorConfig
    from foosball.ethercat.fake import FakeBus
    from foosball.geometry import default_table
    from foosball.runtime.settings import SafetySettings
    from foosball.wire.catalogue import (
        Agent,
        Alarm,
        AlarmCode,
        AxisTarget,
        DriveCommand,
        DriveControl,
        GameCommand,
        GameControl,
        MotorCommand,
    )

    def command(rig: Any, n: int, capture: int = 0) -> None:
        """All eight axes, some beyond the travel and the speed limits."""
        rig.pole.send(MotorCommand(axes=tuple(
            AxisTarget(axis=a, position=(-1) ** a * (0.3 + 0.37 * ((n * 7 + a) % 23)),
                       velocity=(5.0, 100.0, 400.0, 900.0, 4000.0)[(n + a) % 5])
            for a in range(8)), ball_capture_time=capture))

    def budget_pattern(rig: Any, trace: Trace) -> None:
        trace("operational", rig.run_until(rig.operational, 30.0))
        for n in range(4000):  # as benchmarks/budget.py's MotorDriverWork
            rig.pole.send(MotorCommand(axes=tuple(
                AxisTarget(axis=a, position=0.5 + 0.001 * (n % 100), velocity=100.0)
                for a in range(8))))
            rig.cycle()

    def restart_until_operational(rig: Any, trace: Trace, what: str) -> None:
        rig.restart()
        trace(what, rig.run_until(rig.operational, 6.0))

    def faults(rig: Any, trace: Trace) -> None:
        trace("operational", rig.run_until(rig.operational, 5.0))
        for n in range(300):
            command(rig, n, capture=1_700_000_000 * 10**9 + n * 5_000_000 if n % 3 else 0)
            rig.cycle()
        rig.move(0, 1e4)
        rig.move(1, -300.0, 5000.0)
        rig.run_for(0.3)
        rig.panel.send(GameControl(command=GameCommand.PAUSE))
        rig.move(1, 4.0)
        rig.run_for(0.2)
        rig.panel.send(GameControl(command=GameCommand.START))
        rig.move(1, 4.0)
        rig.run_for(0.3)
        panel = rig.endpoint(Agent.SUPERVISORY_PANEL)
        panel.send(DriveControl(axis=2, command=DriveCommand.HALT))
        rig.move(2, 10.0)
        rig.run_for(0.3)
        panel.send(DriveControl(axis=2, command=DriveCommand.RELEASE))
        trace("released 2", rig.run_until(rig.operational, 5.0))
        panel.send(DriveControl(axis=5, command=DriveCommand.HALT))
        rig.run_for(0.05)
        rig.restart()  # nothing latched: changes nothing
        rig.run_for(0.2)
        panel.send(DriveControl(axis=5, command=DriveCommand.RELEASE))
        trace("released 5", rig.run_until(rig.operational, 6.0))
        for kind, drive in ((FaultKind.OVERCURRENT, 5), (FaultKind.EMERGENCY_BUTTON, 3),
                            (FaultKind.MOTOR_LOCKED, 6)):
            rig.move(2, 2.0)
            rig.run_for(0.05)
            rig.bus.drives[drive].inject(kind)
            rig.run_for(0.3)
            rig.move(0, 9.0)
            rig.restart()  # refused: the cause is present
            rig.run_for(0.2)
            rig.bus.drives[drive].clear()
            rig.run_until(lambda: rig.core.latched.cleared, 1.0)
            rig.run_for(0.1)
            restart_until_operational(rig, trace, kind.value)
            rig.run_for(0.1)
        panel.send(DriveControl(axis=4, command=DriveCommand.HALT))  # a halted drive faults
        rig.run_for(0.05)
        rig.bus.drives[4].inject(FaultKind.OVERCURRENT)
        rig.run_for(0.1)
        rig.bus.drives[4].clear()
        rig.run_for(0.2)
        rig.restart()
        rig.run_for(0.5)
        panel.send(DriveControl(axis=4, command=DriveCommand.RELEASE))
        trace("released 4", rig.run_until(rig.operational, 6.0))
        rig.run_for(0.3)
        restart_until_operational(rig, trace, "after 4")
        for missing, seconds in ((2, 0.01), (0, 0.05), (2, 0.05)):  # tolerated, then not
            rig.bus.missing_working_counter = missing
            rig.run_for(seconds)
        rig.bus.missing_working_counter = 0
        rig.run_until(lambda: rig.core.latched.cleared, 1.0)
        restart_until_operational(rig, trace, "working counter")
        rig.bus.link_up = False
        rig.run_for(0.05)
        rig.bus.link_up = True
        rig.bus.missing_working_counter = 16  # back, the drives out of OP
        rig.run_for(0.02)
        rig.bus.missing_working_counter = 0
        rig.run_until(lambda: rig.core.latched.cleared, 1.0)
        restart_until_operational(rig, trace, "link")
        exchange, cycles = rig.bus.exchange, iter(range(10**9))

        def lossy(outputs: Any) -> Any:  # every 7th frame lost
            return Exchange(-1, ()) if next(cycles) % 7 == 0 else exchange(outputs)

        rig.bus.exchange = lossy
        for n in range(400):
            command(rig, n)
            rig.cycle()
        rig.bus.exchange = exchange
        burst = Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.LIMIT_BURST, text="burst",
                      latched=True, axis=-1)
        for _ in range(3):
            rig.pole.send(burst)
            rig.run_for(0.1)
        rig.restart()  # refused: the peer's alarm is recent
        rig.run_for(0.45)
        restart_until_operational(rig, trace, "peer alarm")
        rig.bus.drives[1].lose_process_data()
        rig.run_for(0.3)
        rig.restart()
        rig.run_for(3.0)
        for n in range(200):
            command(rig, n)
            rig.cycle()
        rig.run_for(0.5)

    def silent_peer(rig: Any, trace: Trace) -> None:
        rig.beating[Agent.POLE_DRIVER] = rig.pole
        trace("operational", rig.run_until(rig.operational, 5.0))
        for n in range(100):
            command(rig, n)
            rig.cycle()
        del rig.beating[Agent.POLE_DRIVER]
        rig.run_for(0.05)
        rig.restart()
        rig.run_for(0.05)
        rig.beating[Agent.POLE_DRIVER] = rig.pole
        rig.run_for(0.05)
        restart_until_operational(rig, trace, "peer back")
        for n in range(100):
            command(rig, n)
            rig.cycle()

    def plain(alignment: Any) -> Callable[[Any], Any]:
        def make(rig_class: Any) -> Any:
            rig = rig_class(MotorDriverConfig(alignment=alignment, alignment_timeout_s=1.0))
            rig.bus = FakeBus(BusConfig(backend="fake"), clock=rig.monotonic,
                              emulator=EmulatorConfig(plain_cia402=True))
            rig.bus.start()
            rig.hardware.bus = rig.bus
            return rig
        return make

    def commands_after_start(rig: Any, trace: Trace) -> None:
        rig.run_until(lambda: rig.operational() or rig.core.latched is not None, 5.0)
        for n in range(200):
            command(rig, n)
            rig.cycle()

    def stuck_alignment(rig_class: Any) -> Any:
        rig = rig_class(MotorDriverConfig(alignment_timeout_s=0.5))
        for drive in rig.bus.drives:
            drive.params = type(drive.params)(**{**drive.params.__dict__,
                                                 "alignment_time_s": 10.0})
        return rig

    yield "budget pattern, 4000 cycles", lambda rig_class: rig_class(), budget_pattern
    yield "faults, 5 ms", lambda rig_class: rig_class(), faults
    yield "faults, 1 ms, table travel", lambda rig_class: rig_class(
        MotorDriverConfig(axes=axes_from_table(default_table()), cycle_s=0.001)), faults
    yield "silent peer", lambda rig_class: rig_class(settings=SafetySettings(
        deadlines={Agent.POLE_DRIVER: 0.03})), silent_peer
    for alignment in L.Alignment:
        yield f"plain drives, {alignment.value}", plain(alignment), commands_after_start
    yield "alignment never ends", stuck_alignment, commands_after_start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=HERE.parent,
                        help="the checkout whose python/ runs (default: this one)")
    parser.add_argument("--log", type=Path, help="also write every record here, per scenario")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))  # this checkout's tests: the Rig
    sys.path.insert(0, str(args.tree.resolve() / "python"))
    logging.disable(logging.CRITICAL)
    import foosball.agents.motor_driver as mda
    from tests.ethercat.test_motor_driver_core import Rig

    print(f"motor driver: {mda.__file__}")
    for name, make, script in scenarios():
        log = None
        if args.log is not None:
            args.log.mkdir(parents=True, exist_ok=True)
            log = (args.log / (name.replace(" ", "_").replace(",", "") + ".log")).open("w")
        trace = Trace(name, log)
        rig = make(Rig)
        instrument(trace, rig)
        script(rig, trace)
        trace("heard", rig.heard)
        if log is not None:
            log.close()
        print(f"{name:<34} {trace.records:>7} records  sha256 {trace.hash.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
