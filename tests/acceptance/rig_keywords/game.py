"""The game as the agent LAN carries it: switching the rig on and off, what a person sends
(`foosball wire send GameControl command=...`, the panel's buttons), the GameState the game
panel owns, the agents' heartbeats, rod commands and motor status."""

from __future__ import annotations

import time

from robot.api import logger
from robot.api.deco import keyword
from robot.libraries.BuiltIn import BuiltIn

from foosball.wire.catalogue import (
    Agent,
    DriveState,
    GameCommand,
    GameControl,
    GameState,
    Heartbeat,
    MotorStatus,
    RodCommand,
    SafetyState,
)
from rig_keywords.context import SimulatedTable
from rig_keywords.waiting import hold_for, seconds, wait_until

HOMED = (DriveState.READY, DriveState.RUNNING)
STOPPED = (DriveState.OFF, DriveState.QUICK_STOP, DriveState.FAULT)
VERBS = {"started": GameCommand.START, "paused": GameCommand.PAUSE,
         "stopped": GameCommand.STOP}


def state_named(name: str) -> SafetyState:
    try:
        return SafetyState[name.upper()]
    except KeyError:
        raise ValueError(f"no game state {name!r}: one of "
                         f"{', '.join(s.name for s in SafetyState)}") from None


class GameKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx

    # -- the rig's life ------------------------------------------------------------------
    @keyword("Switch On The Rig")
    def switch_on(self) -> None:
        """Boards, drive emulator, agents, live table and camera, as `foosball rig up`."""
        self.ctx.switch_on()
        logger.info(self.ctx.rig.describe())

    @keyword("Switch Off The Rig")
    def switch_off(self) -> None:
        codes = self.ctx.switch_off()
        failed = {name: code for name, code in codes.items()
                  if name != "emulator" and code != 0}
        if failed:
            raise AssertionError(f"processes did not stop cleanly (exit codes): {failed}")

    @keyword("The Rig Is Switched On And Ready")
    def switched_on_and_ready(self, within_s: float = 90.0) -> None:
        self.switch_on()
        self.reset(within_s)

    @keyword("Reset The Game")
    def reset(self, within_s: float = 30.0) -> None:
        """Every fault restarted once its cause is gone, no match running: READY."""
        ctx = self.ctx
        if ctx.faults.wait_healthy(1.0) is None and ctx.faults.recover(within_s) is None:
            raise AssertionError(f"the rig did not become healthy (every agent beating, none "
                                 f"in FAULT, every axis homed) in {within_s} s; "
                                 f"{self._heard()}; {ctx.rig.describe()}")
        ctx.observer.send(GameControl(command=GameCommand.STOP))
        self.game_state_within("READY", 5.0)

    @keyword("The Rig Has What This Test Needs")
    def has_what_test_needs(self) -> None:
        """Skips, with the reason, a test this rig cannot run (tags needs-emulator,
        needs-namespaces on the single-host rig)."""
        self.ctx.require(list(BuiltIn().get_variable_value("@{TEST TAGS}")))

    # -- what a person does --------------------------------------------------------------
    @keyword("the game is ${command:started|paused|stopped}")
    def game_control(self, command: str) -> None:
        """As `foosball wire send GameControl command=START|PAUSE|STOP`."""
        if command == "started":
            self.ctx.mark_start()
        self.ctx.observer.send(GameControl(command=VERBS[command]))

    @keyword("the game is playing")
    def playing(self, within_s: float = 30.0) -> None:
        """Started and PLAYING. A precondition: a fault in the way (a false alarm before the
        test begins) is restarted once its cause is gone, and the game started again."""
        ctx, observer = self.ctx, self.ctx.observer
        deadline = time.monotonic() + within_s
        while True:
            if ctx.faults.wait_healthy(1.0) is None:
                ctx.faults.recover(max(1.0, deadline - time.monotonic()))
            self.game_control("started")
            since = time.monotonic()
            if observer.wait_for(lambda at=since: any(
                    h.message.state == SafetyState.PLAYING
                    for h in observer.since(at, GameState)), 3.0):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the game could not be started in {within_s} s; "
                                     f"{self._heard()}; {ctx.alarms_since(since - 3.0)}")

    @keyword("restart is pressed")
    def press_restart(self) -> None:
        self.ctx.restart_pressed_s = time.monotonic()
        self.ctx.observer.restart()

    # -- what must follow ----------------------------------------------------------------
    @keyword("the game state is ${state:[A-Z]+}")
    def game_state(self, state: str) -> None:
        self.game_state_within(state, 5.0)

    @keyword("the game state is ${state:[A-Z]+} within ${limit} s")
    def game_state_within(self, state: str, limit: str | float) -> None:
        """A GameState `state` heard from now (or the last 0.2 s) within the limit."""
        wanted, within_s = state_named(state), seconds(limit)
        since = time.monotonic() - 0.2
        observer = self.ctx.observer
        wait_until(lambda: any(h.message.state == wanted
                               for h in observer.since(since, GameState)), within_s,
                   lambda: f"no GameState {wanted.name} within {within_s} s; {self._heard()}")

    @keyword("every agent is running")
    def every_agent_running(self) -> None:
        if self.ctx.faults.wait_healthy(10.0) is None:
            raise AssertionError(f"not every agent is up, homed and out of FAULT: "
                                 f"{self._heard()}")

    @keyword("the strategy commands the rods")
    def strategy_commands(self, count: int = 20, within_s: float = 3.0) -> None:
        observer = self.ctx.observer
        since = time.monotonic()
        wait_until(lambda: len(observer.since(since, RodCommand)) >= count, within_s,
                   lambda: f"the strategy sent {len(observer.since(since, RodCommand))} "
                           f"RodCommands in {within_s} s (wanted {count}); {self._heard()}")

    @keyword("the strategy sends no moving rod command for ${limit} s")
    def strategy_silent(self, limit: str, ack_within_s: float = 1.0) -> None:
        """From the strategy's first heartbeat that says PAUSED: a command it computed
        before it took the PAUSE in may still be on the wire, none after. It must say
        PAUSED within `ack_within_s` of the game's PAUSED (its step takes the command in
        at its next turn; on a loaded two-core host that turn came 105 ms after)."""
        observer, for_s = self.ctx.observer, seconds(limit)
        paused = wait_until(lambda: next((h for h in observer.since(
            time.monotonic() - 1.0, GameState) if h.message.state == SafetyState.PAUSED),
            None), 5.0, lambda: f"the game never said PAUSED; {self._heard()}")
        acknowledged = wait_until(lambda: next((h for h in observer.heartbeats(
            Agent.STRATEGY, paused.at_s) if h.message.state == SafetyState.PAUSED), None),
            ack_within_s, lambda: f"the strategy did not say PAUSED within {ack_within_s} s "
                                  f"of the game's PAUSED; {self._heard()}")
        logger.info(f"the strategy said PAUSED {1e3 * (acknowledged.at_s - paused.at_s):.0f} "
                    "ms after the game")
        since = acknowledged.at_s

        def moving() -> str:
            commands = [h for h in observer.since(since, RodCommand)
                        if any(t.translation_speed > 0 or t.rotation_speed > 0
                               for t in h.message.rods)]
            return (f"{len(commands)} moving RodCommands after the strategy said PAUSED, the "
                    f"first {1e3 * (commands[0].at_s - since):.0f} ms after: "
                    f"{commands[0].message}") if commands else ""
        hold_for(moving, for_s)

    @keyword("the robot's rods move")
    def rods_move(self, within_s: float = 5.0) -> None:
        """Some motor turns by 0.5 rad (MotorStatus)."""
        observer = self.ctx.observer
        since = time.monotonic()

        def moved() -> bool:
            statuses = observer.since(since, MotorStatus)
            if len(statuses) < 2:
                return False
            first = statuses[0].message
            return any(any(abs(a.position - b.position) > 0.5
                           for a, b in zip(first.axes, s.message.axes, strict=False))
                       for s in statuses[1:])
        wait_until(moved, within_s,
                   lambda: f"no motor turned by 0.5 rad within {within_s} s; {self._heard()}")

    @keyword("every axis is homed")
    def every_axis_homed(self, within_s: float = 5.0) -> None:
        observer = self.ctx.observer
        since = time.monotonic() - 0.1
        wait_until(lambda: any(all(a.state in HOMED for a in h.message.axes)
                               for h in observer.since(since, MotorStatus)), within_s,
                   lambda: f"not every axis homed within {within_s} s; {self._heard()}")

    # -- for failure messages -------------------------------------------------------------
    def _heard(self) -> str:
        """What the LAN said in the last second: states, game, axes."""
        observer = self.ctx.observer
        recent = observer.since(time.monotonic() - 1.0)
        beats: dict[str, str] = {}
        game = axes = "none"
        for h in recent:
            if isinstance(h.message, Heartbeat):
                beats[h.sender.name.lower()] = h.message.state.name
            elif isinstance(h.message, GameState):
                m = h.message
                game = f"{m.state.name} {m.score_robot}:{m.score_human} {m.alarm_text!r}"
            elif isinstance(h.message, MotorStatus):
                axes = ",".join(a.state.name for a in h.message.axes)
        silent = [a.name.lower() for a in Agent
                  if a.name.lower() in self.ctx.agents and a.name.lower() not in beats]
        return (f"heard in the last second: GameState {game}; heartbeats {beats}"
                f"{'; silent ' + ', '.join(silent) if silent else ''}; axes {axes}")
