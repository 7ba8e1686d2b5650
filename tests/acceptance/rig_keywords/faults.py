"""The Agent runtime's fault matrix (foosball.rig.faults.matrix), case by case as steps:
inject, the game halts on every board, every axis stops, a restart is refused while the
cause is there, nothing resumes by itself once it is gone, a restart then recovers."""

from __future__ import annotations

import re
import threading
import time

from robot.api import logger
from robot.api.deco import keyword
from robot.libraries.BuiltIn import BuiltIn
from robot.running import TestSuiteBuilder

from foosball.rig.faults import ENABLED, Fault, matrix
from foosball.rig.rig import Rig
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    GameState,
    Heartbeat,
    MotorStatus,
    SafetyState,
)
from rig_keywords.context import SimulatedTable
from rig_keywords.game import HOMED, STOPPED
from rig_keywords.waiting import hold_for, seconds, wait_until

STALE_GRACE_S = 0.2


def first_logged(rig: Rig, agent: str, pattern: re.Pattern[str], since_s: float) -> float | None:
    """The monotonic time of the first line of `agent`'s log matching `pattern` (its group 1
    is the time the agent logged) at or after `since_s`."""
    for match in pattern.finditer(rig.log_text(agent)):
        if float(match.group(1)) >= since_s:
            return float(match.group(1))
    return None


def latched_in_logs(rig: Rig, since_s: float) -> dict[str, float]:
    """When each agent first latched FAULT at or after `since_s`, from its own log."""
    latched = {agent: first_logged(rig, agent, LATCHED, since_s) for agent in rig.options.agents}
    return {agent: at for agent, at in latched.items() if at is not None}


LATCHED = re.compile(r"FAULT latched: .*?\(mono=([\d.]+)")
ALL_STOPPED = re.compile(r"every drive out of operation enabled \(mono=([\d.]+)")


class StopWatch:
    """Polls the drive emulator from the injection on: when no drive is operation enabled."""

    def __init__(self, rig: Rig, limit_s: float = 10.0) -> None:
        self.rig = rig
        self.stopped_s: float | None = None
        self._deadline = time.monotonic() + limit_s
        threading.Thread(target=self._run, name="stop-watch", daemon=True).start()

    def _run(self) -> None:
        while time.monotonic() < self._deadline:
            try:
                slaves = self.rig.emulator("status")["slaves"]
            except (OSError, RuntimeError, ValueError):
                return
            if all(s.get("cia402_state") != ENABLED for s in slaves):
                self.stopped_s = time.monotonic()
                return
            time.sleep(0.005)


class FaultKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx
        self.fault: Fault | None = None
        self.injected_s = 0.0
        self.cleared = True
        self.notes: list[str] = []
        self._watch: StopWatch | None = None

    @property
    def cases(self) -> list[Fault]:
        return matrix(self.ctx.agents)

    @keyword("the suite has one test for each case of the fault matrix")
    def covers_matrix(self) -> None:
        source = BuiltIn().get_variable_value("${SUITE SOURCE}")
        suite = TestSuiteBuilder().build(source)
        tests = [t.name for t in suite.tests]
        names = [f.name for f in self.cases]
        missing = [n for n in names if n not in tests]
        if missing:
            raise AssertionError(f"fault matrix cases without a test in {source}: {missing}")

    @keyword("the fault ${name} is injected")
    def inject(self, name: str) -> None:
        fault = next((f for f in self.cases if f.name == name), None)
        if fault is None:
            raise ValueError(f"no fault {name!r} in the matrix: "
                             f"{', '.join(f.name for f in self.cases)}")
        self.fault, self.notes, self.cleared = fault, [], False
        self._watch = StopWatch(self.ctx.rig) if self.ctx.rig.namespaced else None
        self.injected_s = fault.start(self.ctx.rig)

    @keyword("the cause of the fault is removed")
    def clear(self) -> None:
        self._fault.clear(self.ctx.rig)
        self.cleared = True

    @keyword("Remove What The Test Injected")
    def teardown(self) -> None:
        """Teardown: a cause left by a test that failed half way is removed."""
        if self.fault is not None and not self.cleared:
            self.clear()
        if self.notes:
            logger.info(f"{self.fault.name if self.fault else ''}: {'; '.join(self.notes)}")

    # -- what must follow ----------------------------------------------------------------
    @keyword("the game halts on every board within ${limit} ms")
    def halts(self, limit: str) -> None:
        """Every agent still heard reports FAULT, and so does the game (unless the game panel
        is the one gone)."""
        within_s = seconds(limit) / 1e3
        observer, since = self.ctx.observer, self.injected_s

        def halted() -> bool:
            beats: dict[Agent, SafetyState] = {}
            for h in observer.since(since, Heartbeat):
                beats[h.sender] = h.message.state
            recent = {h.sender for h in observer.since(time.monotonic() - 0.1, Heartbeat)}
            live = {a: s for a, s in beats.items() if a in recent}
            games = observer.since(since, GameState)
            game_ok = (Agent.GAME_PANEL not in recent
                       or any(h.message.state == SafetyState.FAULT for h in games))
            return bool(live) and game_ok and all(s == SafetyState.FAULT for s in live.values())
        wait_until(halted, within_s + 2.0, lambda: f"the game did not halt: {self._states()}")
        took = time.monotonic() - since
        # Each board's own log says when it latched (one monotonic clock on this host): in a
        # flood this laptop's socket overflows and it hears the halt late, the boards do not.
        live = {h.sender.name.lower()
                for h in observer.since(time.monotonic() - 0.1, Heartbeat)}
        logged = latched_in_logs(self.ctx.rig, since)
        if live and live <= logged.keys():
            by_logs = max(logged[agent] for agent in live) - since
            if by_logs < took:
                self.notes.append(f"heard halted in {1e3 * took:.0f} ms, the boards' logs "
                                  f"latched within {1e3 * by_logs:.0f} ms")
                took = by_logs
        first = observer.first(since, lambda h: isinstance(h.message, Alarm)
                               and h.message.latched)
        if first is not None:
            self.notes.append(f"detected by {first.sender.name.lower()} in "
                              f"{1e3 * (first.at_s - since):.0f} ms: {first.message.text}")
        self.notes.append(f"halted in {1e3 * took:.0f} ms")
        if took > within_s:
            raise AssertionError(f"the game halted {1e3 * took:.0f} ms after the fault (limit "
                                 f"{limit} ms); {'; '.join(self.notes)}")

    @keyword("every axis is stopped within ${limit} ms of the alarm")
    def stopped(self, limit: str) -> None:
        """The drives themselves (the emulator) where there are any, else the MotorStatus;
        timed from the first latched alarm heard (the fault's detection is the game's halt
        above), or from the injection when none was heard."""
        within_s = seconds(limit) / 1e3
        stopped_s = wait_until(lambda: self._stopped_at(), 5.0,
                               lambda: f"axes still running 5 s after the fault: "
                                       f"{self._moving(0.0)}")
        alarm = self.ctx.observer.first(self.injected_s, lambda h: isinstance(
            h.message, Alarm) and h.message.latched)
        since, what = (alarm.at_s, "alarm") if alarm is not None else (self.injected_s,
                                                                       "injection")
        took = stopped_s - since
        self.notes.append(f"every axis stopped {1e3 * took:.0f} ms after the {what}")
        if took > within_s:
            raise AssertionError(f"every axis stopped {1e3 * took:.0f} ms after the {what} "
                                 f"(limit {limit} ms); {'; '.join(self.notes)}")

    @keyword("the restart is refused")
    def refused(self) -> None:
        """On the wire, or in a board's log where this laptop does not hear it; pressed
        again while nothing answers (`FaultMatrix.refusal`)."""
        faults = self.ctx.faults
        refusal = faults.refusal(self.ctx.restart_pressed_s, faults.log_marks())
        if refusal is None:
            raise AssertionError(f"a RESTART (pressed 4 times) was not refused while the "
                                 f"cause was there: {self._states()}")
        self.notes.append(f"restart refused by {refusal}")

    @keyword("the game stays halted for ${limit} s")
    def stays_halted(self, limit: str) -> None:
        """Nothing resumes by itself: every axis stays stopped and the game does not say
        PLAYING. A game panel resumed from SIGSTOP may send the GameState it made before it
        froze: one in the first 0.2 s is noted, not counted."""
        since = time.monotonic()

        def resumed() -> str:
            moving = self._moving(since - 0.2)
            playing = [h for h in self.ctx.observer.since(since, GameState)
                       if h.message.state == SafetyState.PLAYING]
            if moving:
                return f"an axis resumed without a restart: {moving}"
            late = [h for h in playing if h.at_s - since > STALE_GRACE_S]
            if late:
                return (f"the game said PLAYING {late[0].at_s - since:.2f} s after the cause "
                        f"was removed, without a restart")
            return ""
        hold_for(resumed, seconds(limit))
        early = [h for h in self.ctx.observer.since(since, GameState)
                 if h.message.state == SafetyState.PLAYING]
        if early:
            self.notes.append(f"{len(early)} GameState PLAYING within {STALE_GRACE_S} s of "
                              "the cause's removal (made before the freeze), then halted")

    @keyword("restart is pressed once the cause is gone")
    def restart_when_gone(self, within_s: float = 30.0) -> None:
        """As a person does: press restart again while it is refused (a cause may take a
        moment to go: a restarted agent booting, the bus back to OP)."""
        start = time.monotonic()
        took = self.ctx.faults.recover(within_s)
        if took is None:
            raise AssertionError(f"restart not accepted within {within_s} s of the cause "
                                 f"going: {self._states()}")
        self.notes.append(f"recovered {time.monotonic() - start:.1f} s after the cause went")

    @keyword("the game waits for a start with every axis homed")
    def waits_for_start(self, within_s: float = 10.0) -> None:
        observer = self.ctx.observer
        since = time.monotonic() - 0.2

        def waiting() -> bool:
            games = observer.since(since, GameState)
            motors = observer.since(since, MotorStatus)
            return (bool(games) and games[-1].message.state in (SafetyState.PAUSED,
                                                                 SafetyState.READY)
                    and bool(motors) and all(a.state in HOMED for a in motors[-1].message.axes))
        wait_until(waiting, within_s,
                   lambda: f"the game is not waiting for a start with every axis homed: "
                           f"{self._states()}")

    # -- helpers ---------------------------------------------------------------------------
    @property
    def _fault(self) -> Fault:
        if self.fault is None:
            raise AssertionError("no fault injected ('the fault NAME is injected' first)")
        return self.fault

    def _stopped_at(self) -> float | None:
        """When every axis was first seen stopped after the injection: by the drives (the
        emulator, polled) or by the motor driver's log, whichever says so first (in a flood
        this process is busy hearing the flood and polls late)."""
        if self._watch is not None:
            logged = first_logged(self.ctx.rig, "motor_driver", ALL_STOPPED, self.injected_s)
            seen = self._watch.stopped_s
            return min((t for t in (seen, logged) if t is not None), default=None)
        first = self.ctx.observer.first(self.injected_s, lambda h: isinstance(
            h.message, MotorStatus) and all(a.state in STOPPED for a in h.message.axes))
        return first.at_s if first is not None else None

    def _moving(self, since: float) -> str:
        """What is not stopped: drives enabled (emulator), else axes in the MotorStatus."""
        rig = self.ctx.rig
        if rig.namespaced:
            slaves = rig.emulator("status")["slaves"]
            enabled = [i for i, s in enumerate(slaves) if s.get("cia402_state") == ENABLED]
            return f"drives {enabled} operation enabled" if enabled else ""
        motors = self.ctx.observer.since(since, MotorStatus)
        if not motors:
            return "no MotorStatus heard"
        running = [a.axis for a in motors[-1].message.axes if a.state not in STOPPED]
        return f"axes {running} not stopped (MotorStatus)" if running else ""

    def _states(self) -> str:
        observer = self.ctx.observer
        beats: dict[str, str] = {}
        for h in observer.since(time.monotonic() - 0.5, Heartbeat):
            beats[h.sender.name.lower()] = h.message.state.name
        games = observer.since(time.monotonic() - 0.5, GameState)
        game = (f"{games[-1].message.state.name} {games[-1].message.alarm_text!r}"
                if games else "no GameState")
        return f"heartbeats {beats}; game {game}; {'; '.join(self.notes)}"
