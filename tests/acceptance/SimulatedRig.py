"""Robot Framework keywords for the simulated rig: the six agents as processes on three
namespaced boards, the drive emulator under the real pysoem master, the live table and its
camera (foosball.rig). The real rig gets a library with the same keywords."""

from __future__ import annotations

import signal
import tempfile
import time
from pathlib import Path

from robot.api.deco import keyword, library

from foosball.agents.cli import AGENTS
from foosball.rig.faults import FaultMatrix
from foosball.rig.observer import Observer
from foosball.rig.rig import AGENT_BOARD, Rig, RigOptions
from foosball.wire.catalogue import (
    Alarm,
    AlarmCode,
    BallState,
    BallStatus,
    GameCommand,
    GameControl,
    GameState,
    MotorStatus,
    RodCommand,
    SafetyState,
)


@library(scope="SUITE", auto_keywords=False)
class SimulatedRig:
    def __init__(self, opponent: str = "club", fps: float = 50.0) -> None:
        self.opponent = opponent
        self.fps = float(fps)
        self.rig: Rig | None = None
        self.observer: Observer | None = None
        self.faults: FaultMatrix | None = None

    # -- set-up ----------------------------------------------------------------------------
    @keyword("Start The Simulated Rig")
    def start(self) -> None:
        agents = tuple(name for name in AGENT_BOARD if name in AGENTS)
        self.rig = Rig(RigOptions(run_dir=Path(tempfile.mkdtemp(prefix="fb-acceptance-")),
                                  agents=agents, fps=self.fps, opponent=self.opponent))
        self.rig.up()
        self.observer = Observer(self.rig)
        self.faults = FaultMatrix(self.rig, self.observer)
        if self.faults.recover(90.0) is None:
            raise AssertionError(f"the rig did not come up: {self.rig.describe()}")

    @keyword("Stop The Simulated Rig")
    def stop(self) -> None:
        if self.observer is not None:
            self.observer.close()
        if self.rig is not None:
            codes = self.rig.down()
            failed = {name: code for name, code in codes.items()
                      if name != "emulator" and code != 0}
            if failed:
                raise AssertionError(f"processes did not stop cleanly: {failed}")

    # -- what a person does ----------------------------------------------------------------
    @keyword("the game is ${command}")
    def game_control(self, command: str) -> None:
        """started | paused | stopped: as `foosball wire send GameControl command=...`."""
        verbs = {"started": GameCommand.START, "paused": GameCommand.PAUSE,
                 "stopped": GameCommand.STOP}
        if command not in verbs:
            raise ValueError(f"the game can be started, paused or stopped, not {command!r}")
        self._observer.send(GameControl(command=verbs[command]))

    @keyword("the agent ${agent} is killed")
    def kill(self, agent: str) -> None:
        self._rig.signal(agent, signal.SIGKILL)
        self._mark = time.monotonic()

    @keyword("the agent ${agent} is started again")
    def start_again(self, agent: str) -> None:
        self._rig.stop(agent)
        self._rig.start_agent(agent)

    @keyword("restart is pressed")
    def press_restart(self) -> None:
        self._asked = time.monotonic()
        self._observer.restart()

    # -- what must follow -----------------------------------------------------------------
    @keyword("every agent is running")
    def every_agent_running(self) -> None:
        if self._faults.wait_healthy(10.0) is None:
            raise AssertionError("not every agent is up, homed and out of FAULT")

    @keyword("the game state is ${state}")
    def game_state(self, state: str, within_s: float = 5.0) -> None:
        wanted = SafetyState[state.upper()]
        since = time.monotonic() - 0.2
        found = self._observer.wait_for(lambda: any(
            h.message.state == wanted for h in self._observer.since(since, GameState)),
            within_s)
        if not found:
            heard = [h.message.state.name for h in self._observer.since(since, GameState)]
            raise AssertionError(f"no GameState {wanted.name} within {within_s} s: {heard[-5:]}")

    @keyword("the strategy commands the rods")
    def strategy_commands(self, within_s: float = 3.0) -> None:
        since = time.monotonic()
        if not self._observer.wait_for(lambda: len(self._observer.since(since, RodCommand))
                                       >= 20, within_s):
            raise AssertionError("the strategy sent fewer than 20 RodCommands in "
                                 f"{within_s} s")

    @keyword("the strategy sends no rod commands")
    def strategy_silent(self, for_s: float = 1.0) -> None:
        time.sleep(0.3)  # commands already on the wire when the game paused
        since = time.monotonic()
        time.sleep(for_s)
        moving = [h for h in self._observer.since(since, RodCommand)
                  if any(t.translation_speed > 0 or t.rotation_speed > 0 for t in
                         h.message.rods)]
        if moving:
            raise AssertionError(f"{len(moving)} moving RodCommands in {for_s} s")

    @keyword("the robot's rods move")
    def rods_move(self, within_s: float = 5.0) -> None:
        since = time.monotonic()

        def moved() -> bool:
            statuses = self._observer.since(since, MotorStatus)
            if len(statuses) < 2:
                return False
            first, last = statuses[0].message, statuses[-1].message
            return any(abs(a.position - b.position) > 0.5
                       for a, b in zip(first.axes, last.axes, strict=False))
        if not self._observer.wait_for(moved, within_s):
            raise AssertionError(f"no motor moved by 0.5 rad within {within_s} s")

    @keyword("the ball is tracked")
    def ball_tracked(self, within_s: float = 5.0) -> None:
        since = time.monotonic()
        if not self._observer.wait_for(lambda: any(
                h.message.status == BallStatus.DETECTED
                for h in self._observer.since(since, BallState)), within_s):
            raise AssertionError(f"no detected BallState within {within_s} s")

    @keyword("every axis is quick stopped within ${limit_ms} ms")
    def quick_stopped(self, limit_ms: str) -> None:
        limit = float(limit_ms) / 1e3
        since = self._mark

        def stopped() -> bool:
            return any(all(a.state.name in ("QUICK_STOP", "FAULT") for a in h.message.axes)
                       for h in self._observer.since(since, MotorStatus))
        if not self._observer.wait_for(stopped, 2.0):
            raise AssertionError("the motor driver never reported every axis stopped")
        first = next(h for h in self._observer.since(since, MotorStatus)
                     if all(a.state.name in ("QUICK_STOP", "FAULT") for a in h.message.axes))
        # MotorStatus comes every 50 ms: the report is at most that late
        if first.at_s - since > limit + 0.05:
            raise AssertionError(f"every axis stopped {1e3 * (first.at_s - since):.0f} ms "
                                 f"after the fault (limit {limit_ms} ms + one status period)")

    @keyword("the restart is refused")
    def refused(self) -> None:
        if not self._observer.wait_for(lambda: self._observer.first(
                self._asked, lambda h: isinstance(h.message, Alarm)
                and h.message.code == AlarmCode.RESTART_REFUSED), 2.0):
            raise AssertionError("a RESTART was not refused while a cause was present")

    @keyword("the robot recovers")
    def recovers(self) -> None:
        if self._faults.recover(30.0) is None:
            raise AssertionError("no recovery (every agent out of FAULT, axes homed) in 30 s")

    # -- helpers -----------------------------------------------------------------------
    @property
    def _rig(self) -> Rig:
        if self.rig is None:
            raise AssertionError("the simulated rig is not started")
        return self.rig

    @property
    def _observer(self) -> Observer:
        if self.observer is None:
            raise AssertionError("the simulated rig is not started")
        return self.observer

    @property
    def _faults(self) -> FaultMatrix:
        if self.faults is None:
            raise AssertionError("the simulated rig is not started")
        return self.faults

    _mark: float = 0.0
    _asked: float = 0.0

