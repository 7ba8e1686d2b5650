"""The fault matrix: each fault DESIGN.md names, injected into the running rig, timed from
injection to detection and to the quick stop of every axis, with the restart refused while
the cause is present and accepted once it is gone.

Times come from one clock: CLOCK_MONOTONIC is shared by every process on the host (network
namespaces do not change it). Detection is the first latched Alarm the observer hears;
the motor driver logs when it latched and when every drive left operation enabled
(`mono=` in its log); when the motor driver itself is the victim, the drives' own EtherCAT
watchdog stops them, read from the emulator.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from foosball.rig.observer import Observer
from foosball.rig.rig import UNWATCHED, Rig
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    Heartbeat,
    MotorStatus,
    SafetyState,
)

HOMED = ("READY", "RUNNING")
ENABLED = "operation enabled"  # the emulator reports CiA 402 states by name
REFUSED = re.compile(r"restart refused: (.*)")  # the runtime's log line
ANSWERED = re.compile(r"restart (?:refused|accepted)")  # its answer to each RESTART


@dataclass
class FaultResult:
    case: str
    detected_by: str = ""
    detection_ms: float | None = None  # injection -> first latched alarm heard
    since_last_heartbeat_ms: float | None = None  # agent loss: victim's last beat -> alarm
    mda_latched_ms: float | None = None  # injection -> the motor driver latched FAULT
    quick_stop_cycles: int | None = None  # MDA latch -> every drive out of operation
    quick_stop_ms: float | None = None  # injection -> every drive out of operation
    restart_refused: bool = False
    refusal: str = ""
    restart_accepted: bool = False
    recovered_s: float | None = None  # restart -> every axis homed and no agent in FAULT
    alarms: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Fault:
    name: str
    # May return when the fault took effect (monotonic), as the one that made it recorded it
    # (the emulator, the flood's process, the ioctl that pulled a cable)
    inject: Callable[[Rig], Any]
    clear: Callable[[Rig], None]
    victim: str | None = None  # an agent whose heartbeats stop
    # The master cannot reach the drives (it is gone, or the cable is): their own EtherCAT
    # watchdog must stop them, read from the emulator.
    drives_stop_themselves: bool = False
    flood: Flood | None = None  # the flood's own (how many frames it sent)

    def start(self, rig: Rig) -> float:
        """Inject the fault; returns when it took effect (monotonic)."""
        before = time.monotonic()
        took_effect = self.inject(rig)
        return took_effect if isinstance(took_effect, float) else before


def _drive(axis: int, kind: str) -> Fault:
    return Fault(f"drive {axis}: {kind.replace('_', ' ')}",
                 lambda rig: rig.emulator(f"fault {axis} {kind}")["at_s"],
                 lambda rig: rig.emulator(f"clear {axis} {kind}"))


def _restart_process(name: str) -> Callable[[Rig], None]:
    """The killed process back: started again by the rig, or on booted boards by the
    board's systemd (waited for)."""
    return lambda rig: rig.restart(name)


def _signal(name: str, signum: int) -> Callable[[Rig], float]:
    return lambda rig: rig.signal(name, signum)


class Flood:
    """The matrix's flood: unsigned frames from the tool board (`foosball.rig.flood`, a
    process of its own) from inject until clear."""

    def __init__(self, rate_hz: float) -> None:
        self.rate_hz = rate_hz
        self.sent = 0  # over every injection
        self._process: subprocess.Popen[str] | None = None

    def inject(self, rig: Rig) -> float:
        """Starts the flood; returns when its first frame went out (monotonic)."""
        iface = ["--iface", "lan0"] if rig.namespaced else []
        self._process = process = subprocess.Popen(
            [*rig.lan.prefix_command("tool"), sys.executable, "-m", "foosball.rig.flood",
             "--rate", str(self.rate_hz), *iface], stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        started = re.match(r"flooding since ([\d.]+)", process.stdout.readline())
        if started is None:
            process.kill()
            raise RuntimeError("the flood did not start")
        return float(started.group(1))

    def clear(self, rig: Rig) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            output, _ = self._process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()  # never leave a flood running
            self._process.communicate()
            raise
        finally:
            self._process = None
        counted = re.search(r"sent (\d+)", output)
        if counted is None:
            raise RuntimeError(f"the flood did not say what it sent: {output!r}")
        self.sent += int(counted.group(1))


def matrix(agents: tuple[str, ...]) -> list[Fault]:
    faults = [
        _drive(3, "emergency_button"),
        _drive(5, "overcurrent"),
        _drive(0, "motor_locked"),
        Fault("EtherCAT link down", lambda rig: rig.lan.ethercat_link(False),
              lambda rig: rig.lan.ethercat_link(True), drives_stop_themselves=True),
        # The deaf drive takes no quick stop (it hears nothing): its watchdog stops it.
        Fault("working counter: one slave deaf", lambda rig: rig.emulator("deaf 6 on")["at_s"],
              lambda rig: rig.emulator("deaf 6 off"), drives_stop_themselves=True),
    ]
    for agent in (a for a in agents if a not in UNWATCHED):  # whose loss halts the game
        master = agent == "motor_driver"
        faults.append(Fault(f"SIGKILL {agent}", _signal(agent, signal.SIGKILL),
                            _restart_process(agent), victim=agent,
                            drives_stop_themselves=master))
        faults.append(Fault(f"SIGSTOP {agent}", _signal(agent, signal.SIGSTOP),
                            _signal(agent, signal.SIGCONT), victim=agent,
                            drives_stop_themselves=master))
    # Far above the runtime's flood limit (200/s): a LAN_FLOOD cause in every agent.
    flood = Flood(10_000.0)
    faults.append(Fault("flood of 10,000 unsigned frames/s", flood.inject, flood.clear,
                        flood=flood))
    # A board's clock step is not in the process matrix: libfaketime, which steps one board's
    # clock, breaks CPython's timed lock waits (threads spin on the interpreter lock); the
    # runtime's detection is covered by tests/agents/test_runtime.py.
    if "ball_tracker" in agents:
        faults += [
            Fault("LAN partition: vision board unplugged", lambda rig: rig.lan.cut("vision"),
                  lambda rig: rig.lan.mend("vision")),
            Fault("camera lost", _signal("camera", signal.SIGSTOP),
                  _signal("camera", signal.SIGCONT)),
        ]
    return faults


class FaultMatrix:
    def __init__(self, rig: Rig, observer: Observer) -> None:
        self.rig = rig
        self.observer = observer

    # -- the system's state, as the observer hears it ------------------------------------
    def healthy(self, since: float) -> bool:
        """Every agent heard in the last 0.3 s, none in FAULT, every axis homed."""
        return self.unhealthy(since) is None

    def unhealthy(self, since: float) -> str | None:
        """What keeps the system from `healthy` now (None: nothing)."""
        recent = self.observer.since(max(since, time.monotonic() - 0.3))
        states: dict[Agent, SafetyState] = {}
        motors = None
        for heard in recent:
            if isinstance(heard.message, Heartbeat):
                states[heard.sender] = heard.message.state
            elif isinstance(heard.message, MotorStatus):
                motors = heard.message
        names = {Agent[a.upper()] for a in self.rig.options.agents}
        if set(states) != names:
            return "not heard: " + ", ".join(sorted(a.name.lower() for a in names - set(states)))
        faulted = sorted(a.name.lower() for a, s in states.items() if s is SafetyState.FAULT)
        if faulted:
            return "in FAULT: " + ", ".join(faulted)
        if motors is None:
            return "no MotorStatus heard"
        unhomed = [f"{i}: {a.state.name}" for i, a in enumerate(motors.axes)
                   if a.state.name not in HOMED]
        return "axes not homed: " + ", ".join(unhomed) if unhomed else None

    def wait_healthy(self, timeout_s: float) -> float | None:
        start = time.monotonic()
        while time.monotonic() - start < timeout_s:
            if self.healthy(start):
                return time.monotonic() - start
            time.sleep(0.05)
        return None

    def recover(self, timeout_s: float = 30.0, notes: list[str] | None = None) -> float | None:
        """RESTART until everything is healthy again (a cause may take a moment to clear).
        `notes`: on failure, why (what stayed unhealthy, the last refusal heard)."""
        start = time.monotonic()
        while time.monotonic() - start < timeout_s:
            pressed = time.monotonic()
            self.observer.restart()
            if self.wait_healthy(3.0) is not None:
                return time.monotonic() - start
        if notes is not None:
            notes.append(f"not recovered in {timeout_s:.0f} s: "
                         f"{self.unhealthy(time.monotonic() - 0.3)}")
            refused = self.observer.first(pressed, lambda h: isinstance(h.message, Alarm)
                                          and h.message.code == AlarmCode.RESTART_REFUSED)
            if refused is not None:
                notes.append(f"last RESTART refused by {refused.sender.name.lower()}: "
                             f"{refused.message.text}")
            latched = [h for h in self.observer.alarms(start) if h.message.latched]
            if latched:
                notes.append(f"{len(latched)} latched alarms while recovering, the last: "
                             f"{latched[-1].sender.name.lower()}: {latched[-1].message.text}")
        return None

    def log_marks(self) -> dict[str, int]:
        """Where each agent's log ends now (for `refusal`)."""
        return {agent: len(self.rig.log_text(agent)) for agent in self.rig.options.agents}

    def refusal(self, asked_s: float, logs_at: dict[str, int], tries: int = 4) -> str | None:
        """The refusal of the RESTART pressed at `asked_s` ("who: why"), on the wire or, where
        this laptop does not hear it, in a board's log since `logs_at`; pressed again while
        nothing answers, as a person would (in a flood the agents' sockets overflow and a
        RESTART may be lost with the flood's frames, and this laptop's socket too)."""
        for pressed in range(1, tries + 1):
            heard = self.observer.wait_for(lambda: self.observer.first(
                asked_s, lambda h: isinstance(h.message, Alarm)
                and h.message.code == AlarmCode.RESTART_REFUSED), 0.5)
            refusal = f"{heard.sender.name.lower()}: {heard.message.text}" if heard else None
            for agent, at in logs_at.items():
                logged = REFUSED.search(self.rig.log_text(agent)[at:])
                if refusal is None and logged is not None:
                    refusal = f"{agent} (its log): {logged.group(1)}"
            if refusal is not None:
                self._answered(pressed, logs_at)
                return refusal
            self.observer.restart()
        return None

    def _answered(self, pressed: int, logs_at: dict[str, int], within_s: float = 2.0) -> None:
        """Wait until the motor driver has answered every RESTART pressed (refused or
        accepted), so that none still on its way is taken after the cause is removed: the
        test would then see the axes resume on a press of its own."""
        at = logs_at.get("motor_driver")
        if at is None:
            return
        deadline = time.monotonic() + within_s
        while (len(ANSWERED.findall(self.rig.log_text("motor_driver")[at:])) < pressed
               and time.monotonic() < deadline):
            time.sleep(0.05)

    # -- one case ------------------------------------------------------------------------
    def run(self, fault: Fault, refuse_after_s: float = 0.5) -> FaultResult:
        result = FaultResult(fault.name)
        mda_log_at = len(self.rig.log_text("motor_driver"))
        victim = Agent[fault.victim.upper()] if fault.victim else None
        last_beat = None
        t0 = fault.start(self.rig)
        try:
            first = self.observer.wait_for(
                lambda: self.observer.first(t0, lambda h: isinstance(h.message, Alarm)
                                            and h.message.latched), 5.0)
            if first is not None:
                result.detected_by = f"{first.sender.name.lower()}: {first.message.text}"
                result.detection_ms = (first.at_s - t0) * 1e3
                if victim is not None:
                    beats = [h for h in self.observer.heartbeats(victim, t0 - 1.0)
                             if h.at_s <= first.at_s]
                    if beats:
                        last_beat = beats[-1].at_s
                        result.since_last_heartbeat_ms = (first.at_s - last_beat) * 1e3
            self._quick_stop(result, t0, mda_log_at, fault)
            time.sleep(refuse_after_s)
            asked, logs_at = time.monotonic(), self.log_marks()
            self.observer.restart()
            refusal = self.refusal(asked, logs_at)
            result.restart_refused = refusal is not None
            result.refusal = refusal or ""
        finally:
            fault.clear(self.rig)
        cleared = time.monotonic()
        result.recovered_s = self.recover(notes=result.notes)
        result.restart_accepted = result.recovered_s is not None
        if result.restart_accepted:
            result.recovered_s = time.monotonic() - cleared
        result.alarms = sum(1 for h in self.observer.alarms(t0) if h.message.latched)
        return result

    def _quick_stop(self, result: FaultResult, t0: float, log_at: int, fault: Fault) -> None:
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            text = self.rig.log_text("motor_driver")[log_at:]
            latched = re.search(r"FAULT latched: .*?\(mono=([\d.]+) cycle=(\d+)\)", text)
            if latched and result.mda_latched_ms is None:
                result.mda_latched_ms = (float(latched.group(1)) - t0) * 1e3
                if result.detection_ms is None or result.mda_latched_ms < result.detection_ms:
                    # The motor driver latched before the observer heard an alarm (a
                    # flood fills the observer's socket too): its log times the detection.
                    result.detection_ms = result.mda_latched_ms
                    result.detected_by = f"motor_driver (its log): {latched.group(0)[:120]}"
            if fault.drives_stop_themselves:
                # The master cannot reach (all of) them: their own watchdog stops them,
                # read from the emulator.
                slaves = self.rig.emulator("status")["slaves"]
                if all(s.get("cia402_state") != ENABLED for s in slaves):
                    result.quick_stop_ms = (time.monotonic() - t0) * 1e3
                    result.notes.append("stopped by the drives' own EtherCAT watchdog")
                    return
                time.sleep(0.005)
                continue
            done = re.search(r"every drive out of operation enabled \(mono=([\d.]+) "
                             r"cycle=(\d+), (\d+) cycles", text)
            if latched and done:
                result.quick_stop_ms = (float(done.group(1)) - t0) * 1e3
                result.quick_stop_cycles = int(done.group(3))
                return
            time.sleep(0.02)
