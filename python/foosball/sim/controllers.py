"""Team controllers: the interface a side of the simulated table is played through.

A controller is any object with::

    step(ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None

called once per camera frame that the tracker delivers, constructed once per team by a
factory ``factory(table: Table, seed: int) -> controller``. It always thinks in the ROBOT's
frame (x towards the opponent's goal, RodId GOALKEEPER..ATTACK = its own rods in role order);
for the human side the match runner mirrors everything (180 deg about the vertical axis:
x -> -x, y -> -y, translation -> -translation, rotation -> -rotation so that positive still
swings the feet towards the opponent's goal). `ball` is what the rig's tracker would send
(delayed, noisy, PREDICTED/LOST when occluded), never ground truth; `rods` is the measured
state of the controller's own four rods. A returned RodCommand takes effect after the
command latency; None leaves the rods where they were told to go last. RodTarget speeds are
caps for that move (0 means the axis maximum).

Optional, duck-typed extras the runner honours:
- ``rod_limits``: (translation AxisLimits, rotation AxisLimits) for this team's rods when
  it plays the human side (the scripted opponents' hands); otherwise the robot's drives;
- ``observe_opponents(rods: Callable[[], RodStatus])``: the other team's rods in this
  controller's frame, called before `step` (a human sees the whole table) with a function
  that makes the RodStatus of this frame when called (most frames nobody looks).
- ``wants_human_rods`` (true) and ``observe_human_rods(rods: HumanRods)``: the robot's
  controller is handed the human's rods as the ball tracker measures them (every fourth
  frame, with the ball's delay and the rod meter's noise: `perception.human_rods`), before
  the `step` of the ball state of the same frame.

`CONTROLLERS` is the registry the CLI and the match runner read: the scripted opponents,
and every strategy of foosball.strategy.registry (add a strategy there, not here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from foosball.geometry import Table
from foosball.sim.opponents import CLUB, PRO, ROOKIE, ScriptedOpponent
from foosball.strategy.registry import STRATEGIES
from foosball.wire.catalogue import BallState, RodCommand, RodStatus


class Controller(Protocol):
    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None: ...


ControllerFactory = Callable[[Table, int], Controller]


class Hold:
    """Leaves every rod where it is (tests, and a baseline that only blocks by standing)."""

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        return None


CONTROLLERS: dict[str, ControllerFactory] = {
    "hold": lambda table, seed: Hold(),
    "rookie": lambda table, seed: ScriptedOpponent(table, ROOKIE, seed),
    "club": lambda table, seed: ScriptedOpponent(table, CLUB, seed),
    "pro": lambda table, seed: ScriptedOpponent(table, PRO, seed),
    **STRATEGIES,  # every strategy of foosball.strategy.registry, by its name there
}


def make_controller(name: str, table: Table, seed: int) -> Controller:
    try:
        factory = CONTROLLERS[name]
    except KeyError:
        raise KeyError(f"no controller {name!r}; known: {sorted(CONTROLLERS)}") from None
    return factory(table, seed)
