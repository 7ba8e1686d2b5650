"""Switching on: the drives aligned and homed, the game READY, every agent beating."""

from __future__ import annotations

import time

from robot.api import logger
from robot.api.deco import keyword

from foosball.wire.catalogue import (
    Agent,
    Alarm,
    DriveState,
    GameState,
    MotorStatus,
    SafetyState,
)
from rig_keywords.context import SimulatedTable
from rig_keywords.game import HOMED, state_named
from rig_keywords.waiting import hold_for, seconds, wait_until


def distinct(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        if not out or out[-1] != value:
            out.append(value)
    return out


class StartupKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx

    def _since_on(self) -> float:
        return time.monotonic() - self.ctx.switched_on_s

    @keyword("every axis is aligned and homed within ${limit} s of switching on")
    def aligned_and_homed(self, limit: str) -> None:
        ctx, within_s = self.ctx, seconds(limit)
        observer = ctx.observer
        homed = wait_until(lambda: next((h for h in observer.since(0.0, MotorStatus)
                                         if all(a.state in HOMED for a in h.message.axes)),
                                        None),
                           max(0.0, within_s - self._since_on()),
                           lambda: f"not every axis homed {within_s} s after switching on: "
                                   f"{self._axis_history()}")
        logger.info(f"every axis homed {homed.at_s - ctx.switched_on_s:.1f} s after switching "
                    f"on: {self._axis_history()}")
        # Each axis was aligned before it was ready; each translation axis (even: 2 * rod)
        # homed at its end-of-travel switch too (a rotation axis has no switch).
        history = self._axis_states()
        skipped = {axis: states for axis, states in history.items()
                   if not ({"ALIGNING"} | ({"HOMING"} if axis % 2 == 0 else set())
                           <= set(states[:states.index("READY")] if "READY" in states
                                  else states))}
        if skipped:
            raise AssertionError(f"axes ready without aligning (and homing, for translation) "
                                 f"first: {skipped}")

    @keyword("the game is ${state:[A-Z]+} within ${limit} s of switching on")
    def state_within(self, state: str, limit: str) -> None:
        ctx, wanted, within_s = self.ctx, state_named(state), seconds(limit)
        observer = ctx.observer
        heard = wait_until(lambda: next((h for h in observer.since(0.0, GameState)
                                         if h.message.state == wanted), None),
                           max(0.0, within_s - self._since_on()),
                           lambda: f"no GameState {wanted.name} {within_s} s after switching "
                                   f"on; heard {self._game_states()}")
        logger.info(f"GameState {wanted.name} {heard.at_s - ctx.switched_on_s:.1f} s after "
                    f"switching on")

    @keyword("the game was not READY before every axis was homed")
    def ready_after_homed(self) -> None:
        observer = self.ctx.observer
        ready = next((h for h in observer.since(0.0, GameState)
                      if h.message.state == SafetyState.READY), None)
        homed = next((h for h in observer.since(0.0, MotorStatus)
                      if all(a.state in HOMED for a in h.message.axes)), None)
        if ready is None or homed is None:
            raise AssertionError(f"never heard both: GameState READY {ready is not None}, "
                                 f"every axis homed {homed is not None}")
        # the game panel hears the MotorStatus the observer hears, one hop later
        if ready.at_s < homed.at_s:
            raise AssertionError(f"GameState READY {1e3 * (homed.at_s - ready.at_s):.0f} ms "
                                 f"before every axis was homed: {self._axis_history()}")
        logger.info(f"game states since switching on: {', '.join(self._game_states())}")

    @keyword("every agent beats its heart at least ${rate} times a second")
    def heartbeats(self, rate: str) -> None:
        """Each agent's Heartbeats heard here over the next two seconds."""
        wanted = float(rate)
        observer = self.ctx.observer
        since = time.monotonic()
        hold_for(lambda: "", 2.0)  # the observation window
        rates = {a: len(observer.heartbeats(Agent[a.upper()], since)) / 2.0
                 for a in self.ctx.agents}
        logger.info(f"heartbeats per second: {rates}")
        slow = {a: n for a, n in rates.items() if n < wanted}
        if slow:
            raise AssertionError(f"heartbeats per second below {wanted:g}: {slow} "
                                 f"(all: {rates})")

    @keyword("no alarm has been raised since switching on")
    def no_alarm(self) -> None:
        alarms = [h for h in self.ctx.observer.since(0.0, Alarm) if h.message.latched]
        if alarms:
            first = alarms[0]
            raise AssertionError(
                f"{len(alarms)} latched alarms since switching on, the first "
                f"{first.at_s - self.ctx.switched_on_s:.1f} s in from "
                f"{first.sender.name.lower()}: {first.message.code.name} {first.message.text}")

    # -- history ---------------------------------------------------------------------------
    def _game_states(self) -> list[str]:
        return distinct([h.message.state.name for h in self.ctx.observer.since(0.0, GameState)])

    def _axis_states(self) -> dict[int, list[str]]:
        history: dict[int, list[str]] = {}
        for h in self.ctx.observer.since(0.0, MotorStatus):
            for a in h.message.axes:
                history.setdefault(a.axis, []).append(DriveState(a.state).name)
        return {axis: distinct(states) for axis, states in history.items()}

    def _axis_history(self) -> str:
        return "; ".join(f"axis {axis} {' > '.join(states)}"
                         for axis, states in sorted(self._axis_states().items()))
