"""The game panel core in the shared runtime on an in-process segment, turned by hand with a
fake clock: page actions become GameControls on the wire and come back to the panel once,
the runtime's latch decides a RESTART, and the panel's GameState follows."""

from __future__ import annotations

from typing import Any

from foosball.agents.game_panel import GamePanelCore
from foosball.geometry import default_table
from foosball.panels.server import PanelAction
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    AxisStatus,
    DriveState,
    GameCommand,
    GameControl,
    GameState,
    MotorStatus,
    SafetyState,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

KEY = bytes(range(32))
READY = MotorStatus(axes=tuple(AxisStatus(axis=a, state=DriveState.READY, position=0.0,
                                          velocity=0.0, current=0.0, fault_code=0)
                               for a in range(8)))


class Page:
    """The panel's hardware without a browser: actions queued by the test."""

    def __init__(self) -> None:
        self.actions: list[PanelAction] = []
        self.shown: Any = None

    def sense(self, timeout_s: float) -> tuple[PanelAction, ...] | None:
        actions, self.actions = tuple(self.actions), []
        return actions or None

    def act(self, actuation: Any) -> None:
        if actuation is not None:
            self.shown = actuation

    def close(self) -> None:
        pass


class Segment:
    def __init__(self) -> None:
        self.t = 100.0
        self.hub = MemoryHub()
        self.page = Page()
        self.runtime = AgentRuntime(
            GamePanelCore(default_table()), self.endpoint(Agent.GAME_PANEL),
            SafetySettings(deadlines={}), hardware=self.page, monotonic=lambda: self.t,
            wall_ns=self.wall, health=None)
        self.mda = self.endpoint(Agent.MOTOR_DRIVER)
        self.tool = self.endpoint(Agent.TOOL)
        self.listener = self.endpoint(Agent.STRATEGY)
        self.heard: list[Any] = []

    def wall(self) -> int:
        return round(self.t * 1e9) + 1_700_000_000 * 10**9

    def endpoint(self, agent: Agent) -> Endpoint:
        return Endpoint(MemoryTransport(self.hub), WireCodec(KEY, agent, clock=self.wall))

    def turn(self, dt: float = 0.01, action: str = "") -> None:
        self.t += dt
        if action:
            self.page.actions.append(PanelAction(action, {}, "192.0.2.1", 1.7e9))
        self.runtime.io_turn(0.0)
        self.runtime.work_turn(0.0)
        self.runtime.io_turn(0.0)
        self.heard += [r.message for r in self.listener.receive(0.0)]

    def states(self) -> list[SafetyState]:
        return [m.state for m in self.heard if isinstance(m, GameState)]

    def controls(self) -> list[GameCommand]:
        return [m.command for m in self.heard if isinstance(m, GameControl)]


def test_page_and_wire_controls_move_the_game_and_reach_every_agent():
    s = Segment()
    s.mda.send(READY)
    s.turn()
    assert s.states()[-1] == SafetyState.READY
    s.turn(action="start")
    s.turn()
    assert s.controls() == [GameCommand.START]  # on the wire for every agent
    assert s.states()[-1] == SafetyState.PLAYING
    s.tool.send(GameControl(command=GameCommand.PAUSE))  # foosball wire send GameControl
    s.turn()
    assert s.states()[-1] == SafetyState.PAUSED
    s.turn(action="start")
    s.turn()
    s.turn(action="stop")
    s.turn()
    assert s.controls() == [GameCommand.START, GameCommand.PAUSE,  # the tool's
                            GameCommand.START, GameCommand.STOP]
    assert s.states()[-1] == SafetyState.READY
    assert s.page.shown["game"]["match"] == "idle"


def test_a_peer_alarm_faults_the_game_and_restart_waits_for_the_cause_to_go():
    s = Segment()
    s.mda.send(READY)
    s.turn(action="start")
    s.turn()
    alarm = Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT, text="overcurrent",
                  latched=True, axis=2)
    for _ in range(10):  # the MDA repeats its alarm while the cause lasts
        s.mda.send(alarm)
        s.turn(0.05)
    assert s.states()[-1] == SafetyState.FAULT
    game = s.page.shown["game"]
    assert game["causes"] == ["motor_driver: overcurrent"] and not game["allowed"]["restart"]
    s.tool.send(GameControl(command=GameCommand.RESTART))  # refused by the latch
    s.turn()
    assert s.states()[-1] == SafetyState.FAULT
    for _ in range(10):  # no more repeats: the cause is gone after the latch's hold
        s.turn(0.05)
    assert s.page.shown["game"]["allowed"]["restart"]
    s.turn(action="restart")
    s.turn()
    assert s.controls()[-1] == GameCommand.RESTART
    assert not s.runtime.latch.faulted
    assert s.states()[-1] == SafetyState.PAUSED  # the match waits for a START
