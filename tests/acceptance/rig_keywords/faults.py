"""The Agent runtime's fault matrix (foosball.rig.faults.matrix), case by case as steps:
inject, the game halts on every board, every axis stops, a restart is refused while the
cause is there, nothing resumes by itself once it is gone, a restart then recovers."""

from __future__ import annotations

import re
import time
import tomllib

from robot.api import logger
from robot.api.deco import keyword
from robot.libraries.BuiltIn import BuiltIn
from robot.running import TestSuiteBuilder

from foosball.rig.faults import ENABLED, Fault, matrix
from foosball.rig.rig import Rig
from foosball.wire.catalogue import (
    Alarm,
    GameState,
    Heartbeat,
    MotorStatus,
    SafetyState,
)
from rig_keywords.context import SimulatedTable, emulator_stalls
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
QUICK_STOP = re.compile(r"quick stop on every axis \(mono=([\d.]+) cycle=")  # its cycle's
ALL_STOPPED = re.compile(r"every drive out of operation enabled \(mono=([\d.]+) "
                         r"cycle=\d+, (\d+) cycles")


class FaultKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx
        self.fault: Fault | None = None
        self.injected_s = 0.0
        self.cleared = True
        self.notes: list[str] = []

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
    @keyword("a board latches the fault within ${limit} ms of the injection")
    def detected(self, limit: str) -> None:
        """The first FAULT latched in any board's own log (one monotonic clock on this host),
        timed from the injection as the one that made it recorded it (the emulator, the
        flood's process, the ioctl that pulled the cable, the signal sent)."""
        first = min(self._latches().values())
        took = first - self.injected_s
        self.notes.append(f"first latched {1e3 * took:.1f} ms after the injection")
        self._within("the first board latched", took, seconds(limit) / 1e3)
        heard = self.ctx.observer.first(self.injected_s, lambda h: isinstance(
            h.message, Alarm) and h.message.latched)
        if heard is not None:
            self.notes.append(f"first alarm heard here from {heard.sender.name.lower()}: "
                              f"{heard.message.text}")

    @keyword("the game halts on every board within ${limit} ms of the first")
    def halts(self, limit: str) -> None:
        """Every agent but the fault's victim latched FAULT (its own log), each within `limit`
        of the first (the alarm's hop). The game panel's latch is the game's FAULT (its
        GameState says FAULT while its latch is set); this laptop may hear that late or not
        at all in a flood, so its log, not the wire, is the record."""
        latches = self._latches()
        spread = max(latches.values()) - min(latches.values())
        self.notes.append(f"every board latched within {1e3 * spread:.1f} ms of the first")
        self._within("the last board latched", spread, seconds(limit) / 1e3, "of the first")

    @keyword("every axis is stopped within ${count} cycles of the latch")
    def stopped(self, count: str) -> None:
        """Every drive out of operation enabled, by the drives' own record (the emulator's)
        where there are drives, else by the motor driver's log, within `count` of its cycles
        of the motor driver's latch (its log)."""
        rig, cycles = self.ctx.rig, int(count)
        cycle_s = tomllib.loads(rig.board_file("pole").read_text())["motor_driver"]["cycle_s"]
        latched = wait_until(lambda: first_logged(rig, "motor_driver", LATCHED,
                                                  self.injected_s), 3.0,
                             lambda: f"the motor driver logged no latch: {self._states()}")
        if rig.namespaced:  # the drive emulator: the drives' own record
            stopped_s = wait_until(self._drives_stopped_s, 3.0,
                                   lambda: f"axes still running 3 s after the fault: "
                                           f"{self._moving(0.0)}")
            took = stopped_s - latched
            if took > cycles * cycle_s:  # which half was slow: the cycle, or the drives
                self._note_slow_stop(latched, stopped_s)
        else:
            logged = wait_until(lambda: self._logged_stop(latched), 3.0,
                                lambda: f"the motor driver never logged every drive out of "
                                        f"operation enabled: {self._states()}")
            took = logged * cycle_s
        self.notes.append(f"every axis stopped {1e3 * took:.1f} ms ({took / cycle_s:.1f} "
                          f"cycles) after the motor driver latched")
        self._within("every axis stopped", took, cycles * cycle_s, "of the latch")

    def _note_slow_stop(self, latched_s: float, stopped_s: float) -> None:
        """The motor driver's cycle that put the quick stop on the bus (its log), and what
        the drive emulator says of its own timing (stale frames dropped, its stalls)."""
        rig = self.ctx.rig
        cycle_s = first_logged(rig, "motor_driver", QUICK_STOP, latched_s)
        if cycle_s is not None:
            self.notes.append(f"the motor driver's cycle sent the quick stop "
                              f"{1e3 * (cycle_s - latched_s):.1f} ms after its latch, the "
                              f"drives left operation enabled {1e3 * (stopped_s - cycle_s):.1f}"
                              f" ms after that")
        timing = rig.emulator("timing")
        stalls = emulator_stalls(timing, latched_s, before_s=0.1, after_s=0.1, over_s=0.0)
        self.notes.append(f"drive emulator: {timing.get('stale_frames')} stale frames "
                          f"dropped in the run, stalls near the latch: {stalls or 'none'}")

    @keyword("the drives stop themselves within ${limit} ms of the injection")
    def drives_stop_themselves(self, limit: str) -> None:
        """The master cannot reach (all of) them: their own EtherCAT watchdog stops them.
        Timed by the drives' own record (the emulator) from the injection."""
        stopped_s = wait_until(self._drives_stopped_s, 3.0,
                               lambda: f"axes still running 3 s after the fault: "
                                       f"{self._moving(0.0)}")
        took = stopped_s - self.injected_s
        self.notes.append(f"the drives stopped themselves {1e3 * took:.1f} ms after the "
                          f"injection")
        self._within("every axis stopped", took, seconds(limit) / 1e3, "of the injection")

    @keyword("every axis is stopped within ${count} cycles of the latch "
             "or by the drives' watchdog within ${limit} ms")
    def axes_stop(self, count: str, limit: str) -> None:
        """As the fault allows: the motor driver quick-stops every drive it reaches; a drive
        it cannot reach (the master gone, the cable out, a deaf drive) stops itself."""
        if self._fault.drives_stop_themselves:
            self.drives_stop_themselves(limit)
        else:
            self.stopped(count)

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

    def _within(self, what: str, took: float, limit_s: float, after: str = "after the "
                "injection") -> None:
        """`took` (s) is no longer than `limit_s`, and not negative: an interval below zero
        is a clock or a log read wrong, not a fast system."""
        if took < 0.0:
            raise AssertionError(f"{what} {1e3 * took:.1f} ms {after}: a negative interval "
                                 f"(the times do not describe this fault); "
                                 f"{'; '.join(self.notes)}")
        if took > limit_s:
            raise AssertionError(f"{what} {1e3 * took:.1f} ms {after} (limit "
                                 f"{1e3 * limit_s:g} ms); {'; '.join(self.notes)}")

    def _latches(self, within_s: float = 3.0) -> dict[str, float]:
        """When each agent but the victim first latched FAULT after the injection, from its
        own log (waits until every one has)."""
        rig = self.ctx.rig
        expected = set(self.ctx.agents) - {self._fault.victim}

        def every() -> dict[str, float] | None:
            logged = latched_in_logs(rig, self.injected_s)
            return logged if expected <= logged.keys() else None
        return wait_until(every, within_s, lambda: (
            f"not every board latched FAULT within {within_s} s (their logs): latched "
            f"{sorted(latched_in_logs(rig, self.injected_s))} of {sorted(expected)}; "
            f"{self._states()}"))

    def _drives_stopped_s(self) -> float | None:
        """When the last drive left operation enabled after the injection (the drives' own
        record), once none is."""
        status = self.ctx.rig.emulator("status")
        if any(s.get("cia402_state") == ENABLED for s in status["slaves"]):
            return None
        left = [t for t in status["left_enabled_s"] if t is not None and t >= self.injected_s]
        return max(left) if left else None

    def _logged_stop(self, latched_s: float) -> int | None:
        """The motor driver's count of cycles from its latch to every drive out of operation
        enabled (its log), for the latch at `latched_s`."""
        for match in ALL_STOPPED.finditer(self.ctx.rig.log_text("motor_driver")):
            if float(match.group(1)) >= latched_s:
                return int(match.group(2))
        return None

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
